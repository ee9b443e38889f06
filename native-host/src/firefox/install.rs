//! Which Firefox install folder, which files in it, and confinement of requests to it.

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::firefox::kind::{self, InstallKind};
use crate::firefox::{app_ini, process};
use crate::os::beneath::{Folder, Folders};
use crate::pagecache::Cache;
use crate::Error;

/// A Firefox install folder and how it was found (the CLI says which it chose).
#[derive(Debug, Clone, Serialize)]
pub struct Install {
    /// Real path (realpath) of the folder holding the Firefox executable and application.ini.
    #[serde(flatten, with = "crate::path_text::dir")]
    pub dir: PathBuf,
    /// How it was found: "--firefox", "parent process 123", "running process 123", "PATH: firefox-esr", "usual folder".
    pub found_by: String,
    pub version: Option<String>,
    pub build_id: Option<String>,
    /// What kind of install the folder is (package, tarball, Snap, Flatpak) and, for a Snap, the
    /// image behind it.
    pub kind: InstallKind,
}

/// Executable names of the Firefox flavours, looked up on PATH in this order.
const PATH_NAMES: [&str; 4] = [
    "firefox",
    "firefox-esr",
    "firefox-developer-edition",
    "firefox-nightly",
];

/// Where distributions and Mozilla's tarball usually put Firefox (`$HOME/firefox` is added).
const USUAL_DIRS: [&str; 7] = [
    "/usr/lib/firefox",
    "/usr/lib/firefox-esr",
    "/usr/lib64/firefox",
    "/usr/lib64/firefox-esr",
    "/opt/firefox",
    "/opt/firefox-esr",
    "/usr/local/lib/firefox",
];

/// Find the install folder: `explicit` if given (must look like a Firefox folder), else the
/// folder of `pid`'s executable if given, else a running Firefox, else `firefox`/`firefox-esr` on
/// PATH resolved to its real folder, else the usual folders.
pub fn locate(explicit: Option<&Path>, pid: Option<i32>) -> Result<Install, Error> {
    if let Some(dir) = explicit {
        return explicit_install(dir);
    }
    if let Some(pid) = pid {
        let how = if i64::from(pid) == i64::from(std::os::unix::process::parent_id()) {
            format!("parent process {pid}")
        } else {
            format!("running process {pid}")
        };
        return process_install(pid, how);
    }
    if let Some(pid) = process::find_running() {
        if let Ok(install) = process_install(pid, format!("running process {pid}")) {
            return Ok(install);
        }
    }
    installed("no running Firefox, ")
}

/// The Firefox a `launch` starts when not told which (`explicit`): the one the user starts by
/// name (the first of `firefox`, `firefox-esr`, … on PATH, resolved to its real folder, as the
/// desktop's entry and a terminal start it), else the system install in the usual folders.
/// Never a running process's install, as [`locate`] prefers: on a busy machine the oldest
/// running Firefox was another session's copy in /var/tmp, and `launch` started that one
/// (issue 39).
pub fn to_launch(explicit: Option<&Path>) -> Result<Install, Error> {
    match explicit {
        Some(dir) => explicit_install(dir),
        None => installed(""),
    }
}

/// The installed Firefox: PATH's, else the usual folders'. `looked`: what was looked at before,
/// for the error.
fn installed(looked: &str) -> Result<Install, Error> {
    if let Some((name, dir)) = on_path() {
        return Ok(install_at(dir, format!("PATH: {name}")));
    }
    usual_dirs()
        .into_iter()
        .find(|d| looks_like_firefox(d))
        .and_then(|d| d.canonicalize().ok())
        .map(|d| install_at(d, "usual folder".to_owned()))
        .ok_or_else(|| {
            Error::FirefoxNotFound(format!(
                "{looked}none of firefox, firefox-esr, firefox-developer-edition, \
                 firefox-nightly on PATH and no Firefox in the usual folders; name the folder \
                 Firefox is installed in (--firefox /path/to/firefox)"
            ))
        })
}

/// `--firefox DIR`: the folder itself, or the folder of an executable given instead (e.g.
/// /usr/bin/firefox-esr, a symlink into /usr/lib/firefox-esr).
fn explicit_install(given: &Path) -> Result<Install, Error> {
    let real = given.canonicalize().map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            Error::FirefoxNotFound(format!(
                "{} does not exist; name the folder Firefox is installed in",
                given.display()
            ))
        } else {
            Error::io(format!("cannot resolve {}", given.display()), e)
        }
    })?;
    let dir = if real.is_file() {
        real.parent().map(Path::to_path_buf).unwrap_or(real)
    } else {
        real
    };
    if !looks_like_firefox(&dir) {
        return Err(Error::FirefoxNotFound(format!(
            "{} holds neither application.ini nor a firefox executable; name the folder Firefox \
             is installed in (e.g. /usr/lib/firefox-esr, not /usr/bin)",
            dir.display()
        )));
    }
    Ok(install_at(dir, "--firefox".to_owned()))
}

fn process_install(pid: i32, how: String) -> Result<Install, Error> {
    let exe = crate::os::proc::exe(pid).map_err(|e| {
        Error::FirefoxNotFound(format!("cannot read the executable of process {pid}: {e}"))
    })?;
    let dir = exe
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| Error::FirefoxNotFound(format!("process {pid} has no executable folder")))?;
    Ok(install_at(dir, how))
}

fn install_at(dir: PathBuf, found_by: String) -> Install {
    let (version, build_id) = app_ini::read(&dir);
    let kind = kind::describe(&dir);
    Install {
        dir,
        found_by,
        version,
        build_id,
        kind,
    }
}

/// The first Firefox executable on PATH whose real folder looks like a Firefox install (a
/// /usr/bin/firefox shell-script wrapper, as Fedora ships, is skipped).
fn on_path() -> Option<(&'static str, PathBuf)> {
    let path = std::env::var_os("PATH")?;
    for name in PATH_NAMES {
        for dir in std::env::split_paths(&path) {
            let Ok(real) = dir.join(name).canonicalize() else {
                continue;
            };
            if let Some(folder) = real.parent().filter(|f| looks_like_firefox(f)) {
                return Some((name, folder.to_path_buf()));
            }
        }
    }
    None
}

fn usual_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = USUAL_DIRS.iter().map(PathBuf::from).collect();
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(Path::new(&home).join("firefox"));
    }
    dirs
}

/// A Firefox install folder holds application.ini or one of the Firefox executables. The
/// executable must be a real ELF binary, not a symlink or a script: Debian's /usr/bin holds a
/// `firefox` shell wrapper and a `firefox-esr` symlink, and /usr/bin is no install folder.
#[must_use]
pub fn looks_like_firefox(dir: &Path) -> bool {
    dir.join("application.ini").is_file()
        || ["firefox", "firefox-esr", "firefox-bin"]
            .iter()
            .any(|exe| is_elf_file(&dir.join(exe)))
}

fn is_elf_file(path: &Path) -> bool {
    use std::io::Read;
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file());
    let mut magic = [0u8; 4];
    regular
        && std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
        && magic == *b"\x7fELF"
}

/// Every regular file under `dir` (recursively, symlinks not followed), sorted.
pub fn list_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    walk(dir, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    let context = || format!("cannot list {}", dir.display());
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(context(), e))? {
        let entry = entry.map_err(|e| Error::io(context(), e))?;
        // DirEntry::file_type does not follow symlinks: a link pointing outside the folder
        // (Debian's browser/chrome → /usr/share/…) is neither listed nor entered.
        let kind = entry.file_type().map_err(|e| Error::io(context(), e))?;
        if kind.is_dir() {
            walk(&entry.path(), out)?;
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
    Ok(())
}

/// Most entries one request may name. Firefox's install folder holds ~150 files; naming more is
/// a mistake or an attack (a 1 MiB request holds ~200,000 `"."`s).
pub const MAX_REQUESTED_FILES: usize = 4096;

/// The files one request works on, and the install folder, held open, that every one of them
/// is opened beneath ([`Folder::open_file`]): a folder swapped for a symlink after selection
/// cannot lead an open outside.
#[derive(Debug)]
pub struct Selection {
    pub folder: Folder,
    pub files: Vec<PathBuf>,
}

/// Open the install folder (realpath, then one descriptor held for the request), resolve the
/// requested paths (relative to it, or absolute) with realpath and check each is inside it.
/// Empty `requested` means every file of the folder. No file is opened here.
pub fn select(install_dir: &Path, requested: &[PathBuf]) -> Result<Selection, Error> {
    if requested.len() > MAX_REQUESTED_FILES {
        return Err(Error::TooManyFiles {
            count: requested.len(),
            limit: MAX_REQUESTED_FILES,
        });
    }
    let folder = Folder::open(install_dir)
        .map_err(|e| Error::io(format!("cannot open {}", install_dir.display()), e))?;
    let files = select_in(folder.path(), requested)?;
    Ok(Selection { folder, files })
}

fn select_in(root: &Path, requested: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    if requested.is_empty() {
        return list_files(root);
    }
    // Resolve and confine every entry first, so one bad entry fails the request before any
    // folder is listed or file opened.
    let mut resolved = requested
        .iter()
        .map(|p| resolve(root, p))
        .collect::<Result<Vec<_>, _>>()?;
    // Duplicates go before any folder is listed: a folder named 1,000 times is listed once.
    let mut seen_entries = std::collections::HashSet::new();
    resolved.retain(|(real, _)| seen_entries.insert(real.clone()));
    let mut out = Vec::new();
    for (real, is_dir) in resolved {
        if is_dir {
            out.extend(list_files(&real)?);
        } else {
            out.push(real);
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    Ok(out)
}

/// realpath of one request, confined to `root` (canonical). Returns the path and whether it is
/// a folder.
fn resolve(root: &Path, requested: &Path) -> Result<(PathBuf, bool), Error> {
    let joined = root.join(requested); // an absolute `requested` replaces `root`
    let real = joined.canonicalize().map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Error::NoSuchFile {
            path: joined.clone(),
        },
        _ => Error::io(format!("cannot resolve {}", joined.display()), e),
    })?;
    if !is_inside(root, &real) {
        return Err(Error::OutsideInstallDir {
            path: real,
            install_dir: root.to_path_buf(),
        });
    }
    let meta = std::fs::metadata(&real)
        .map_err(|e| Error::io(format!("cannot stat {}", real.display()), e))?;
    if !meta.is_dir() && !meta.is_file() {
        return Err(Error::io(
            format!("{} is not a regular file", real.display()),
            io::Error::from(io::ErrorKind::InvalidInput),
        ));
    }
    Ok((real, meta.is_dir()))
}

/// The image file whose pages a start from this install reads and `--cache image|all` acts on:
/// the loop device's backing file (a Snap, root's squashfs mount) unless the loop device reads
/// it with direct I/O (never cached), else the image of a squashfuse mount, `pack`'s own, once
/// checked to be the filesystem mounted (compressed/image.rs). A FUSE daemon reads that image
/// through the page cache like any file: an `evict` that left it would leave a "cold" start of a
/// packed Firefox decompressing from memory.
#[must_use]
pub fn cache_image(kind: &crate::firefox::kind::InstallKind) -> Option<PathBuf> {
    if let Some(i) = &kind.image {
        return (!i.direct_io).then(|| i.image.clone());
    }
    let c = kind.compressed.as_ref()?;
    (c.format == crate::firefox::compressed::Format::Squashfuse
        && c.access == crate::firefox::compressed::Access::Readable)
        .then(|| c.image.clone())
        .flatten()
}

/// The paths a `preload` or `evict` of `cache` works on: the selected files, the image behind
/// the install's mount ([`cache_image`]: a squashfs install, a Snap, a packed Firefox), or both, and the cache that is
/// really acted on (`All` without an image is `Files`). `None` when `cache` is `Image` and the
/// install has no loop image, or when `Image` comes with named files (the image is one file,
/// read or dropped whole: there is nothing to name).
#[must_use]
pub fn with_cache(
    install: &Install,
    selected: Vec<PathBuf>,
    files_named: bool,
    cache: Cache,
) -> Option<(Vec<PathBuf>, Cache)> {
    match (cache, cache_image(&install.kind)) {
        (Cache::Files, _) | (Cache::All, None) => Some((selected, Cache::Files)),
        (Cache::Image, Some(image)) if !files_named => Some((vec![image], Cache::Image)),
        (Cache::Image, _) => None,
        (Cache::All, Some(image)) => {
            let mut paths = selected;
            paths.push(image);
            Some((paths, Cache::All))
        }
    }
}

/// The held folders the paths of [`with_cache`] are opened beneath: the selection's install
/// folder, and for the loop image (a path from the kernel, outside the install folder) its own
/// folder, realpath'ed and held the same way.
#[must_use]
pub fn cache_folders(install_folder: Option<Folder>, paths: &[PathBuf]) -> Folders {
    let mut folders = Folders::default();
    if let Some(folder) = install_folder {
        folders.push(folder);
    }
    for path in paths {
        if folders.holds(path) {
            continue;
        }
        if let Some(folder) = path.parent().and_then(|p| Folder::open(p).ok()) {
            folders.push(folder);
        }
    }
    folders
}

/// Component-wise containment of two canonical paths: /usr/lib/firefox-esr2 is *not* inside
/// /usr/lib/firefox-esr, although the string starts with it.
#[must_use]
pub fn is_inside(root: &Path, path: &Path) -> bool {
    path.starts_with(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::firefox::app_ini::tests::INI;
    use crate::os::test_support::folder_with_a_way_out;
    use std::fs;
    use std::os::unix::fs::symlink;

    /// tmp/ff (install: application.ini, a.so, sub/b.so, link → ../outside), tmp/ff2/x, tmp/outside
    fn fixture() -> (tempfile::TempDir, PathBuf) {
        let (tmp, ff) = folder_with_a_way_out();
        fs::write(ff.join("application.ini"), INI).unwrap();
        fs::write(tmp.path().join("outside/secret"), "s").unwrap();
        symlink("../../outside/secret", ff.join("sub/secret")).unwrap();
        fs::create_dir(tmp.path().join("ff2")).unwrap();
        fs::write(tmp.path().join("ff2/x"), "x").unwrap();
        let ff = ff.canonicalize().unwrap();
        (tmp, ff)
    }

    #[test]
    fn the_cached_image_is_the_loop_images_or_a_checked_squashfuse_image() {
        use crate::firefox::compressed::{self, Access, Facts, Format};
        use crate::firefox::kind::{InstallKind, Kind, Reason};
        use crate::firefox::mount::LoopImage;
        let squashfuse = |access: Access| {
            compressed::judge(&Facts {
                format: Format::Squashfuse,
                mount_point: "/s/about-startup/pack/mnt".into(),
                image: Some("/s/about-startup/pack/firefox.squashfs".into()),
                direct_io: false,
                access,
                rdsquashfs: true,
            })
        };
        let kind = |image: Option<LoopImage>, compressed| InstallKind {
            kind: Kind::Tarball,
            reason: Reason::UserFolder,
            package: None,
            owner_uid: Some(1000),
            fs_type: None,
            image,
            compressed,
        };
        let looped = |direct_io| LoopImage {
            loop_device: "/dev/loop3".into(),
            image: "/var/lib/snapd/snaps/ff.snap".into(),
            direct_io,
        };
        assert_eq!(
            cache_image(&kind(Some(looped(false)), None)),
            Some(PathBuf::from("/var/lib/snapd/snaps/ff.snap"))
        );
        assert_eq!(cache_image(&kind(Some(looped(true)), None)), None);
        // A packed Firefox on squashfuse: pack's image, once checked to be the one mounted.
        assert_eq!(
            cache_image(&kind(None, Some(squashfuse(Access::Readable)))),
            Some(PathBuf::from("/s/about-startup/pack/firefox.squashfs"))
        );
        let refused = Access::Refused {
            why: "planted".into(),
        };
        for access in [refused, Access::NotReadable, Access::Unknown] {
            assert_eq!(
                cache_image(&kind(None, Some(squashfuse(access.clone())))),
                None,
                "{access:?}"
            );
        }
        // Plain files: no image.
        assert_eq!(cache_image(&kind(None, None)), None);
    }

    #[test]
    fn list_skips_symlinks_and_sorts() {
        let (_tmp, ff) = fixture();
        let files = list_files(&ff).unwrap();
        let names: Vec<_> = files.iter().map(|p| p.strip_prefix(&ff).unwrap()).collect();
        assert_eq!(
            names,
            [
                Path::new("a.so"),
                Path::new("application.ini"),
                Path::new("sub/b.so")
            ]
        );
    }

    #[test]
    fn select_confines_requests() {
        let (_tmp, ff) = fixture();
        assert_eq!(select(&ff, &[]).unwrap().files.len(), 3);
        assert_eq!(
            select(&ff, &["a.so".into()]).unwrap().files,
            [ff.join("a.so")]
        );
        assert_eq!(
            select(&ff, &[ff.join("sub")]).unwrap().files,
            [ff.join("sub/b.so")]
        );
        // Duplicates collapse.
        assert_eq!(
            select(&ff, &["a.so".into(), "./a.so".into()])
                .unwrap()
                .files
                .len(),
            1
        );
        for bad in [
            "link",
            "link/secret",
            "sub/secret",
            "../ff2/x",
            "/etc/passwd",
            "..",
        ] {
            let err = select(&ff, &["a.so".into(), bad.into()]).unwrap_err();
            assert!(
                matches!(err, Error::OutsideInstallDir { .. }),
                "{bad}: {err}"
            );
        }
        let err = select(&ff, &["nope".into()]).unwrap_err();
        assert!(matches!(err, Error::NoSuchFile { .. }), "{err}");
    }

    #[test]
    fn entries_are_capped_and_a_folder_named_many_times_is_listed_once() {
        let (_tmp, ff) = fixture();
        let dots = vec![PathBuf::from("."); MAX_REQUESTED_FILES];
        assert_eq!(
            select(&ff, &dots).unwrap().files,
            select(&ff, &[]).unwrap().files
        );
        let too_many = vec![PathBuf::from("a.so"); MAX_REQUESTED_FILES + 1];
        let err = select(&ff, &too_many).unwrap_err();
        assert!(
            matches!(err, Error::TooManyFiles { count, limit } if count == MAX_REQUESTED_FILES + 1 && limit == MAX_REQUESTED_FILES),
            "{err}"
        );
        assert_eq!(err.code(), crate::error::ErrorCode::TooManyFiles);
    }

    #[test]
    fn prefix_is_not_containment() {
        let (_tmp, ff) = fixture();
        let ff2 = ff.with_file_name("ff2");
        assert!(!is_inside(&ff, &ff2));
        assert!(!is_inside(&ff, &ff2.join("x")));
        assert!(is_inside(&ff, &ff.join("sub/b.so")));
        let err = select(&ff, &[ff2.join("x")]).unwrap_err();
        assert!(matches!(err, Error::OutsideInstallDir { .. }));
    }

    #[test]
    fn explicit_folder_must_look_like_firefox() {
        let (tmp, ff) = fixture();
        let install = locate(Some(&ff), None).unwrap();
        assert_eq!(install.dir, ff);
        assert_eq!(install.found_by, "--firefox");
        assert_eq!(install.version.as_deref(), Some("153.7.0"));
        // A file inside the folder stands for its folder.
        assert_eq!(locate(Some(&ff.join("a.so")), None).unwrap().dir, ff);
        let err = locate(Some(&tmp.path().join("outside")), None).unwrap_err();
        assert!(err.to_string().contains("application.ini"), "{err}");
        assert!(locate(Some(&tmp.path().join("missing")), None).is_err());
    }

    #[test]
    fn wrappers_and_symlinks_do_not_make_an_install_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path();
        fs::write(bin.join("firefox"), "#!/bin/sh\nexec firefox-esr \"$@\"\n").unwrap();
        symlink("/proc/self/exe", bin.join("firefox-esr")).unwrap();
        assert!(!looks_like_firefox(bin));
        fs::write(bin.join("firefox-bin"), b"\x7fELF\x02\x01\x01").unwrap();
        assert!(looks_like_firefox(bin));
    }
}
