//! Which mount a folder is on (`/proc/self/mountinfo`) and, for a loop device, which file backs
//! it (`/sys/block/loopN/loop/backing_file`). A Snap's files sit on a squashfs image mounted
//! through a loop device: the page cache holds both the decompressed file pages and the
//! compressed image's pages, and the host reports (and preloads, and evicts) each.
//!
//! The parser is a pure function over the kernel's text, tested on literal samples; the rest
//! is thin I/O.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// One line of mountinfo, the fields this crate uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub mount_point: PathBuf,
    pub fs_type: String,
    pub source: String,
}

/// The compressed image behind a squashfs (or any loop-mounted) install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoopImage {
    /// The loop device, e.g. `/dev/loop3`.
    #[serde(flatten, with = "crate::path_text::loop_device")]
    pub loop_device: PathBuf,
    /// The file the loop device reads, e.g. `/var/lib/snapd/snaps/firefox_1234.snap`.
    #[serde(flatten, with = "crate::path_text::image")]
    pub image: PathBuf,
    /// Whether the loop device reads its file with direct I/O (`losetup --direct-io=on`): then
    /// the image's pages do not enter the page cache at all, and only the file pages matter.
    pub direct_io: bool,
}

/// Parse `/proc/<pid>/mountinfo`: `id parent major:minor root mount_point options [optional…] -
/// fs_type source super_options`. Octal escapes (`\040` for a space) are decoded.
#[must_use]
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let mount_point = fields.get(4)?;
            let dash = fields.iter().position(|f| *f == "-")?;
            Some(MountEntry {
                mount_point: PathBuf::from(unescape(mount_point)),
                fs_type: unescape(fields.get(dash + 1)?),
                source: unescape(fields.get(dash + 2)?),
            })
        })
        .collect()
}

/// The kernel escapes space, tab, newline and backslash in mountinfo as `\ooo`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal.map(|d| d.iter().fold(0u32, |n, c| n * 8 + u32::from(c - b'0'))) {
            Some(n) if n <= 0xff => {
                out.push(u8::try_from(n).unwrap_or(b'?'));
                i += 4;
            }
            _ => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount holding `path` (canonical): the entry with the longest mount point above it; the
/// last such line wins, as the kernel stacks later mounts on top.
#[must_use]
pub fn mount_of<'a>(mounts: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    mounts
        .iter()
        .enumerate()
        .filter(|(_, m)| path.starts_with(&m.mount_point))
        .max_by_key(|(i, m)| (m.mount_point.components().count(), *i))
        .map(|(_, m)| m)
}

/// The most of `/proc/self/mountinfo` that is read.
pub const MAX_MOUNTINFO_BYTES: u64 = 16 * 1024 * 1024;

/// The mount holding `path`, from this process's mountinfo.
#[must_use]
pub fn find(path: &Path) -> Option<MountEntry> {
    // Bounded: a mount namespace may hold many mounts (containers), never this many bytes.
    let bytes = crate::os::proc::read_system("self/mountinfo", MAX_MOUNTINFO_BYTES).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    mount_of(&parse_mountinfo(&text), path).cloned()
}

/// `loopN` of a source such as `/dev/loop3`, or `None` if it is no loop device. The name is
/// checked to be `loop` and digits, so it cannot walk elsewhere in /sys.
#[must_use]
pub fn loop_name(source: &str) -> Option<&str> {
    let name = source.strip_prefix("/dev/")?;
    let digits = name.strip_prefix("loop")?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(name)
}

/// The image behind a loop-device mount source, read from `sys_block` (`/sys/block` in
/// production, a fake folder in tests): `loopN/loop/backing_file` and `loopN/loop/dio`.
#[must_use]
pub fn loop_image(sys_block: &Path, source: &str) -> Option<LoopImage> {
    let name = loop_name(source)?;
    let dir = sys_block.join(name).join("loop");
    let backing = std::fs::read_to_string(dir.join("backing_file")).ok()?;
    let backing = backing.trim_end_matches('\n');
    // A backing file deleted after the loop device was set up reads " (deleted)": the image is
    // then unreachable by path, so there is nothing to report or act on.
    if backing.is_empty() || backing.ends_with(" (deleted)") {
        return None;
    }
    let direct_io = std::fs::read_to_string(dir.join("dio")).is_ok_and(|d| d.trim() == "1");
    Some(LoopImage {
        loop_device: PathBuf::from(source),
        image: PathBuf::from(backing),
        direct_io,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro
25 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
40 22 7:0 / /snap/firefox/5000 ro,nodev,relatime shared:20 - squashfs /dev/loop0 ro,errors=continue
41 22 7:1 / /mnt/my\\040ff ro,relatime - squashfs /dev/loop1 ro
42 22 0:40 / /snap rw - tmpfs tmpfs rw
";

    #[test]
    fn mountinfo_parses_and_unescapes() {
        let mounts = parse_mountinfo(MOUNTINFO);
        assert_eq!(mounts.len(), 5);
        assert_eq!(
            mounts[2],
            MountEntry {
                mount_point: "/snap/firefox/5000".into(),
                fs_type: "squashfs".into(),
                source: "/dev/loop0".into()
            }
        );
        assert_eq!(mounts[3].mount_point, Path::new("/mnt/my ff"));
        assert_eq!(unescape("a\\134b\\011"), "a\\b\t");
        assert_eq!(unescape("\\9x\\04"), "\\9x\\04");
    }

    #[test]
    fn the_deepest_mount_holds_a_path() {
        let mounts = parse_mountinfo(MOUNTINFO);
        let ff = Path::new("/snap/firefox/5000/usr/lib/firefox");
        assert_eq!(mount_of(&mounts, ff).unwrap().fs_type, "squashfs");
        assert_eq!(
            mount_of(&mounts, Path::new("/snap/other")).unwrap().fs_type,
            "tmpfs"
        );
        assert_eq!(
            mount_of(&mounts, Path::new("/usr/lib/firefox-esr"))
                .unwrap()
                .source,
            "/dev/vda1"
        );
        // Component-wise: /snap/firefox/50001 is not under /snap/firefox/5000.
        assert_eq!(
            mount_of(&mounts, Path::new("/snap/firefox/50001"))
                .unwrap()
                .fs_type,
            "tmpfs"
        );
    }

    #[test]
    fn loop_images_come_from_sysfs() {
        let sys = tempfile::tempdir().unwrap();
        let loop0 = sys.path().join("loop0/loop");
        std::fs::create_dir_all(&loop0).unwrap();
        std::fs::write(loop0.join("backing_file"), "/var/lib/snapd/snaps/ff.snap\n").unwrap();
        std::fs::write(loop0.join("dio"), "0\n").unwrap();
        let loop1 = sys.path().join("loop1/loop");
        std::fs::create_dir_all(&loop1).unwrap();
        std::fs::write(loop1.join("backing_file"), "/tmp/gone.img (deleted)\n").unwrap();
        assert_eq!(
            loop_image(sys.path(), "/dev/loop0"),
            Some(LoopImage {
                loop_device: "/dev/loop0".into(),
                image: "/var/lib/snapd/snaps/ff.snap".into(),
                direct_io: false
            })
        );
        std::fs::write(loop0.join("dio"), "1\n").unwrap();
        assert!(loop_image(sys.path(), "/dev/loop0").unwrap().direct_io);
        assert_eq!(loop_image(sys.path(), "/dev/loop1"), None);
        assert_eq!(loop_image(sys.path(), "/dev/loop9"), None);
        for source in [
            "/dev/vda1",
            "/dev/loop",
            "/dev/loop0/../vda",
            "loop0",
            "tmpfs",
        ] {
            assert_eq!(loop_name(source), None, "{source}");
        }
    }
}
