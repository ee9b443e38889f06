//! `application.ini`: the `Version` and `BuildID` of a Firefox install, read by both the install
//! discovery and the process inspection (so neither needs the other for it).

use std::io::Read;
use std::path::Path;

use crate::os::beneath::Folder;

/// The most of an application.ini that is read: Firefox's is under 1 KiB. The install folder
/// may be one a user controls (`launch --firefox ~/ff` as root), so its file is read bounded,
/// beneath the folder's descriptor, never through a symlink, never a FIFO or a device (a link
/// to /proc/self/pagemap once ran 60 s and grew to 22 GB).
pub const MAX_BYTES: u64 = 64 * 1024;

/// Version and BuildID from `dir/application.ini`, `None` where missing or refused.
#[must_use]
pub fn read(dir: &Path) -> (Option<String>, Option<String>) {
    read_text(dir).map(|text| parse(&text)).unwrap_or_default()
}

fn read_text(dir: &Path) -> Option<String> {
    let (file, _) = Folder::open(dir)
        .ok()?
        .open_file(Path::new("application.ini"))
        .ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// `Version` and `BuildID` of the `[App]` section of an application.ini text.
#[must_use]
pub fn parse(text: &str) -> (Option<String>, Option<String>) {
    (app_value(text, "Version"), app_value(text, "BuildID"))
}

/// The `RemotingName` of the install in `dir` (`firefox-esr` for Debian's ESR), lowercased as
/// Firefox uses it (nsRemoteService::SetProgram): the name of its startup lock's folder
/// (process::profile_lock_dir). `None` where missing or refused.
#[must_use]
pub fn remoting_name(dir: &Path) -> Option<String> {
    app_value(&read_text(dir)?, "RemotingName").map(|n| n.to_lowercase())
}

/// The value of `key` in the `[App]` section of an application.ini text (the last one, as
/// Firefox's INI parser keeps it); `None` where missing or empty.
fn app_value(text: &str, key: &str) -> Option<String> {
    let mut found = None;
    let mut in_app = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_app = line == "[App]";
            continue;
        }
        if !in_app || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        let Some((k, value)) = line.split_once('=') else {
            continue;
        };
        if k.trim() == key {
            found = Some(value.trim().to_owned()).filter(|v| !v.is_empty());
        }
    }
    found
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const INI: &str =
        "; comment\n[App]\nVendor=Mozilla\nVersion=153.7.0\nBuildID=20261103151912\n\
                       [Gecko]\nVersion=999\n";

    /// Issue 20 #4: a link to /proc/self/pagemap (or /dev/zero) as application.ini ran for a
    /// minute and grew to gigabytes; a FIFO would hang. Each is refused at once.
    #[test]
    fn links_devices_fifos_and_huge_files_are_not_read_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let ff = tmp.path();
        std::os::unix::fs::symlink("/dev/zero", ff.join("application.ini")).unwrap();
        assert_eq!(read(ff), (None, None));
        std::fs::remove_file(ff.join("application.ini")).unwrap();
        crate::os::mkfifo(&ff.join("application.ini"));
        let (tx, rx) = std::sync::mpsc::channel();
        let dir = ff.to_path_buf();
        std::thread::spawn(move || tx.send(read(&dir)));
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("a FIFO blocked the read");
        assert_eq!(got, (None, None));
        std::fs::remove_file(ff.join("application.ini")).unwrap();
        let mut big = INI.to_owned();
        big.push_str(&"; padding\n".repeat(20_000));
        big.push_str("[App]\nVersion=999\n");
        std::fs::write(ff.join("application.ini"), big).unwrap();
        assert_eq!(
            read(ff).0.as_deref(),
            Some("153.7.0"),
            "read up to the bound"
        );
    }

    /// The startup lock's folder is named by `RemotingName`, lowercased as Firefox does.
    #[test]
    fn the_remoting_name_is_read_lowercased() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("application.ini"),
            "[App]\nName=Firefox\nRemotingName=Firefox-ESR\n[Gecko]\nRemotingName=x\n",
        )
        .unwrap();
        assert_eq!(remoting_name(tmp.path()).as_deref(), Some("firefox-esr"));
        std::fs::write(tmp.path().join("application.ini"), INI).unwrap();
        assert_eq!(remoting_name(tmp.path()), None, "none written: unknown");
    }

    #[test]
    fn ini_reads_app_section_only() {
        assert_eq!(
            parse(INI),
            (Some("153.7.0".into()), Some("20261103151912".into()))
        );
        assert_eq!(parse("[Gecko]\nVersion=1\n"), (None, None));
        assert_eq!(
            parse("[App]\r\nVersion = 1.0 \r\nBuildID=\r\n"),
            (Some("1.0".into()), None)
        );
    }
}
