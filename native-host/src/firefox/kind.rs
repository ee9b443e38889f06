//! What kind of install the host serves: a distribution package, a tarball, a Snap or a Flatpak.
//! Each gets something different (docs/PROTOCOL.md, `hello`'s `install`; README's install
//! table): a user-owned tarball gets exact residency without root, a root-owned package only as
//! root, a Snap has two caches (the decompressed file pages and the compressed image behind its
//! loop device), and a Flatpak's files sit in the sandbox's own tree.
//!
//! [`classify`] is a pure function of [`Facts`]; [`gather`] reads them from the system (owner,
//! mountinfo, dpkg's file lists, `FLATPAK_ID`). The scripts' `npm start` tells the same kinds
//! apart by path (scripts/lib/firefox-kind.mjs); this is the host's own reading, with the facts
//! only the host has (owner, mount, package database).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::firefox::mount::{self, LoopImage, MountEntry};

/// The kind of install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Installed by the system's package manager (Debian's `firefox-esr`, Mozilla's `.deb`,
    /// Fedora's `firefox`): root owns the files.
    Distribution,
    /// Mozilla's tarball unpacked somewhere (`~/firefox`, `/opt/firefox`).
    Tarball,
    /// A Snap: the files are a squashfs image on a loop device.
    Snap,
    /// A Flatpak: the files are in the sandbox's `/app`, kept under `…/flatpak/`.
    Flatpak,
}

/// Which fact decided the kind (a code for programs and translators; the CLI words it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// `FLATPAK_ID` is set in the host's environment: it runs inside a Flatpak sandbox.
    FlatpakEnv,
    /// The folder is `/app/…` or under `/var/lib/flatpak/` or `~/.local/share/flatpak/`.
    FlatpakPath,
    /// The folder is under `/snap/`.
    SnapPath,
    /// The folder is on a squashfs mount elsewhere (a Snap's layout; the project's Snap
    /// stand-in is such a mount).
    SquashfsMount,
    /// dpkg lists the folder as a package's (`package` names it).
    Dpkg,
    /// Root owns the folder and it is under `/usr/`: a package manager's, though dpkg does not
    /// list it (rpm, pacman).
    SystemFolder,
    /// A user (not root) owns the folder: an unpacked tarball.
    UserFolder,
    /// Root owns a folder outside `/usr/` (`/opt/firefox`): an unpacked tarball.
    OtherFolder,
}

/// What the host knows about the install folder's kind, reported in `hello` and `firefox`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstallKind {
    pub kind: Kind,
    pub reason: Reason,
    /// The dpkg package that owns the folder, if dpkg lists it.
    pub package: Option<String>,
    /// The folder's owner (uid); residency is exact without root only for files the user owns.
    pub owner_uid: Option<u32>,
    /// The filesystem the folder is on (`ext4`, `squashfs`, …).
    pub fs_type: Option<String>,
    /// For a loop-mounted folder (a Snap), the image behind it; `residency` reports its pages as
    /// the `image` group, and `preload`/`evict` act on it with `cache: "image"`.
    pub image: Option<LoopImage>,
    /// The folder is on a compressed mount (a Snap, a packed image): its format, its image, and
    /// what a prefetch and the login preload do there (firefox/compressed/); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compressed: Option<crate::firefox::compressed::Compressed>,
}

/// The facts [`classify`] decides from, gathered by [`gather`] (or made up by a test).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// The install folder (canonical).
    pub dir: PathBuf,
    pub owner_uid: Option<u32>,
    /// The mount holding `dir`.
    pub mount: Option<MountEntry>,
    /// The dpkg package whose file list names `dir`.
    pub dpkg_package: Option<String>,
    /// `FLATPAK_ID` of the host's environment.
    pub flatpak_id: Option<String>,
    /// The user's home folder (for `~/.local/share/flatpak`).
    pub home: Option<PathBuf>,
}

/// The kind of install `facts` describe, and the fact that decided it. First match wins:
/// Flatpak, Snap, a package (dpkg, or root's folder under /usr), else a tarball.
#[must_use]
pub fn classify(facts: &Facts) -> (Kind, Reason) {
    let dir = facts.dir.as_path();
    if facts.flatpak_id.as_deref().is_some_and(|id| !id.is_empty()) {
        return (Kind::Flatpak, Reason::FlatpakEnv);
    }
    let user_flatpak = facts.home.as_ref().map(|h| h.join(".local/share/flatpak"));
    if dir.starts_with("/app")
        || dir.starts_with("/var/lib/flatpak")
        || user_flatpak.is_some_and(|f| dir.starts_with(f))
    {
        return (Kind::Flatpak, Reason::FlatpakPath);
    }
    if dir.starts_with("/snap") {
        return (Kind::Snap, Reason::SnapPath);
    }
    if facts
        .mount
        .as_ref()
        .is_some_and(|m| m.fs_type == "squashfs")
    {
        return (Kind::Snap, Reason::SquashfsMount);
    }
    if facts.dpkg_package.is_some() {
        return (Kind::Distribution, Reason::Dpkg);
    }
    match facts.owner_uid {
        Some(0) if dir.starts_with("/usr") => (Kind::Distribution, Reason::SystemFolder),
        Some(0) | None => (Kind::Tarball, Reason::OtherFolder),
        Some(_) => (Kind::Tarball, Reason::UserFolder),
    }
}

/// The facts about `dir` (canonical) on this system.
#[must_use]
pub fn gather(dir: &Path) -> Facts {
    use std::os::unix::fs::MetadataExt;
    let owner_uid = std::fs::metadata(dir).ok().map(|m| m.uid());
    // dpkg installs as root: a folder a user owns is never a package's, so skip reading the lists.
    let dpkg_package = if owner_uid == Some(0) {
        dpkg_package(Path::new("/var/lib/dpkg/info"), dir)
    } else {
        None
    };
    Facts {
        dir: dir.to_path_buf(),
        owner_uid,
        mount: mount::find(dir),
        dpkg_package,
        flatpak_id: std::env::var("FLATPAK_ID").ok(),
        home: std::env::var_os("HOME").map(PathBuf::from),
    }
}

/// Gather, classify and, for a loop mount, find the image behind it.
#[must_use]
pub fn describe(dir: &Path) -> InstallKind {
    let facts = gather(dir);
    let mut kind = from_facts(&facts, Path::new("/sys/block"));
    if let Some(entry) = &facts.mount {
        let known = crate::firefox::packed::image_for(dir);
        kind.compressed =
            crate::firefox::compressed::detect_in(entry, Path::new("/sys/block"), known.as_deref());
    }
    kind
}

/// [`InstallKind`] of `facts`, the loop image read from `sys_block`.
#[must_use]
pub fn from_facts(facts: &Facts, sys_block: &Path) -> InstallKind {
    let (kind, reason) = classify(facts);
    InstallKind {
        kind,
        reason,
        package: facts.dpkg_package.clone(),
        owner_uid: facts.owner_uid,
        fs_type: facts.mount.as_ref().map(|m| m.fs_type.clone()),
        image: facts
            .mount
            .as_ref()
            .and_then(|m| mount::loop_image(sys_block, &m.source)),
        compressed: None,
    }
}

/// The package whose dpkg file list (`<info_dir>/<package>[:arch].list`, one path per line)
/// names `dir`. The lists named after the folder (`/usr/lib/firefox-esr` → `firefox-esr.list`)
/// and Debian's Firefox packages are tried by name first: listing `/var/lib/dpkg/info` (thousands
/// of entries) cost a sixth of a residency scan. Every other list is read only when those miss.
#[must_use]
pub fn dpkg_package(info_dir: &Path, dir: &Path) -> Option<String> {
    let wanted = dir.as_os_str().as_encoded_bytes();
    let names = |list: &Path| -> Option<String> {
        let text = std::fs::read(list).ok()?;
        if !text.split(|b| *b == b'\n').any(|line| line == wanted) {
            return None;
        }
        let stem = list.file_stem()?.to_string_lossy().into_owned();
        // Multi-arch packages' lists are named `name:arch.list`.
        Some(stem.split(':').next().unwrap_or(&stem).to_owned())
    };
    let mut first: Vec<PathBuf> = Vec::new();
    let folder_name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    for name in folder_name
        .iter()
        .map(String::as_str)
        .chain(["firefox-esr", "firefox"])
    {
        let list = info_dir.join(format!("{name}.list"));
        if !first.contains(&list) {
            first.push(list);
        }
    }
    if let Some(found) = first.iter().find_map(|list| names(list)) {
        return Some(found);
    }
    let mut lists: Vec<PathBuf> = std::fs::read_dir(info_dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "list") && !first.contains(p))
        .collect();
    lists.sort_by_key(|p| {
        !p.file_name()
            .is_some_and(|n| n.to_string_lossy().contains("firefox"))
    });
    lists.iter().find_map(|list| names(list))
}

impl Kind {
    /// The kind in a sentence's words, for the CLI.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Kind::Distribution => "a distribution package",
            Kind::Tarball => "a tarball",
            Kind::Snap => "a Snap (squashfs image)",
            Kind::Flatpak => "a Flatpak",
        }
    }
}

impl InstallKind {
    /// One line for the CLI: the kind, why, and what it means for residency, preload and evict.
    #[must_use]
    pub fn describe_line(&self) -> String {
        let why = match self.reason {
            Reason::FlatpakEnv => "FLATPAK_ID is set".to_owned(),
            Reason::FlatpakPath => "under a Flatpak folder".to_owned(),
            Reason::SnapPath => "under /snap".to_owned(),
            Reason::SquashfsMount => "on a squashfs mount".to_owned(),
            Reason::Dpkg => format!(
                "dpkg package {}",
                self.package.as_deref().unwrap_or("unknown")
            ),
            Reason::SystemFolder => "root's folder under /usr".to_owned(),
            Reason::UserFolder => "a folder its user owns".to_owned(),
            Reason::OtherFolder => "root's folder outside /usr".to_owned(),
        };
        let gets = match self.kind {
            Kind::Snap => match &self.image {
                Some(img) if img.direct_io => format!(
                    "file pages and its image {} (read with direct I/O: never cached)",
                    img.image.display()
                ),
                Some(img) => format!(
                    "two caches: the file pages and its compressed image {} ({})",
                    img.image.display(),
                    img.loop_device.display()
                ),
                None => "file pages only (no loop image found)".to_owned(),
            },
            _ => {
                let euid = crate::os::sys::geteuid();
                match self.owner_uid {
                    _ if euid == 0 => "exact residency (root)".to_owned(),
                    Some(uid) if uid == euid => "exact residency (you own the files)".to_owned(),
                    _ => "residency hidden (another user owns the files; run as root)".to_owned(),
                }
            }
        };
        format!("{} ({why}): {gets}", self.kind.words())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(dir: &str, owner: u32) -> Facts {
        Facts {
            dir: dir.into(),
            owner_uid: Some(owner),
            mount: Some(MountEntry {
                mount_point: "/".into(),
                fs_type: "ext4".into(),
                source: "/dev/vda1".into(),
            }),
            home: Some("/home/ann".into()),
            ..Facts::default()
        }
    }

    #[test]
    fn distribution_packages() {
        let debian = Facts {
            dpkg_package: Some("firefox-esr".into()),
            ..facts("/usr/lib/firefox-esr", 0)
        };
        assert_eq!(classify(&debian), (Kind::Distribution, Reason::Dpkg));
        // Fedora's /usr/lib64/firefox: rpm, not dpkg, but root's folder under /usr.
        assert_eq!(
            classify(&facts("/usr/lib64/firefox", 0)),
            (Kind::Distribution, Reason::SystemFolder)
        );
        // A user's folder under /usr (odd, but theirs) is no package.
        assert_eq!(
            classify(&facts("/usr/local/ff", 1000)),
            (Kind::Tarball, Reason::UserFolder)
        );
    }

    #[test]
    fn tarballs() {
        assert_eq!(
            classify(&facts("/home/ann/firefox", 1000)),
            (Kind::Tarball, Reason::UserFolder)
        );
        assert_eq!(
            classify(&facts("/opt/firefox", 0)),
            (Kind::Tarball, Reason::OtherFolder)
        );
        let unknown_owner = Facts {
            owner_uid: None,
            ..facts("/opt/firefox", 0)
        };
        assert_eq!(classify(&unknown_owner).0, Kind::Tarball);
    }

    #[test]
    fn snaps() {
        let mut snap = facts("/snap/firefox/5000/usr/lib/firefox", 0);
        snap.mount = Some(MountEntry {
            mount_point: "/snap/firefox/5000".into(),
            fs_type: "squashfs".into(),
            source: "/dev/loop0".into(),
        });
        assert_eq!(classify(&snap), (Kind::Snap, Reason::SnapPath));
        let mut stand_in = snap.clone();
        stand_in.dir = "/var/tmp/ff-squash/mnt".into();
        // Even if a package list named it, the squashfs mount decides.
        stand_in.dpkg_package = Some("firefox-esr".into());
        assert_eq!(classify(&stand_in), (Kind::Snap, Reason::SquashfsMount));
    }

    #[test]
    fn flatpaks() {
        assert_eq!(
            classify(&facts("/app/lib/firefox", 0)),
            (Kind::Flatpak, Reason::FlatpakPath)
        );
        let system = "/var/lib/flatpak/app/org.mozilla.firefox/x86_64/stable/abc/files/lib/firefox";
        assert_eq!(classify(&facts(system, 0)).0, Kind::Flatpak);
        let user =
            "/home/ann/.local/share/flatpak/app/org.mozilla.firefox/current/active/files/lib/firefox";
        assert_eq!(
            classify(&facts(user, 1000)),
            (Kind::Flatpak, Reason::FlatpakPath)
        );
        // Another user's home does not count as this user's Flatpak folder.
        let other = "/home/bob/.local/share/flatpak/app/x/files";
        assert_eq!(classify(&facts(other, 1001)).0, Kind::Tarball);
        let env = Facts {
            flatpak_id: Some("org.mozilla.firefox".into()),
            ..facts("/usr/lib/firefox", 0)
        };
        assert_eq!(classify(&env), (Kind::Flatpak, Reason::FlatpakEnv));
        // "/application" is not "/app".
        assert_eq!(classify(&facts("/application/ff", 0)).0, Kind::Tarball);
    }

    #[test]
    fn dpkg_lists_are_matched_by_whole_line() {
        let info = tempfile::tempdir().unwrap();
        std::fs::write(
            info.path().join("firefox-esr.list"),
            "/.\n/usr\n/usr/lib\n/usr/lib/firefox-esr\n/usr/lib/firefox-esr/libxul.so\n",
        )
        .unwrap();
        std::fs::write(info.path().join("libc6:amd64.list"), "/usr/lib/x86_64\n").unwrap();
        std::fs::write(info.path().join("firefox-esr.md5sums"), "/usr/lib/ff\n").unwrap();
        let find = |dir: &str| dpkg_package(info.path(), Path::new(dir));
        assert_eq!(find("/usr/lib/firefox-esr").as_deref(), Some("firefox-esr"));
        assert_eq!(find("/usr/lib/x86_64").as_deref(), Some("libc6"));
        assert_eq!(find("/usr/lib/ff"), None);
        // A list named after the folder, but not naming it, does not claim it.
        std::fs::write(info.path().join("ff.list"), "/usr/lib/ffx\n").unwrap();
        std::fs::write(info.path().join("other.list"), "/usr/lib/ff\n").unwrap();
        assert_eq!(find("/usr/lib/ff").as_deref(), Some("other"));
        assert_eq!(find("/usr/lib/firefox"), None);
        assert_eq!(
            dpkg_package(Path::new("/nonexistent"), Path::new("/usr")),
            None
        );
    }

    #[test]
    fn loop_image_is_reported_for_a_loop_mount() {
        let sys = tempfile::tempdir().unwrap();
        let dir = sys.path().join("loop7/loop");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("backing_file"), "/var/tmp/ff.squashfs\n").unwrap();
        let mut f = facts("/mnt/ff", 0);
        f.mount = Some(MountEntry {
            mount_point: "/mnt/ff".into(),
            fs_type: "squashfs".into(),
            source: "/dev/loop7".into(),
        });
        let kind = from_facts(&f, sys.path());
        assert_eq!(
            (kind.kind, kind.reason),
            (Kind::Snap, Reason::SquashfsMount)
        );
        assert_eq!(kind.fs_type.as_deref(), Some("squashfs"));
        let image = kind.image.as_ref().unwrap();
        assert_eq!(image.image, Path::new("/var/tmp/ff.squashfs"));
        assert!(!image.direct_io);
        assert!(
            kind.describe_line().contains("two caches"),
            "{}",
            kind.describe_line()
        );
        let plain = from_facts(&facts("/opt/firefox", 0), sys.path());
        assert_eq!(plain.image, None);
    }

    #[test]
    fn this_system_gathers_without_failing() {
        let dir = std::env::temp_dir().canonicalize().unwrap();
        let f = gather(&dir);
        assert!(f.mount.is_some());
        assert!(f.owner_uid.is_some());
    }
}
