//! Firefox's own startup profile (issue 21): the Gecko profiler started from the first instant
//! by its environment variables, and its profile collected **without quitting** through the
//! profiler's POSIX signal control: `SIGUSR2` to the parent process stops the profiler, gathers
//! every process's data over IPC and writes `profile_<n>_<pid>.json` into Firefox's downloads
//! folder (checked on ESR 153: a 19 MB Gecko-format profile in `$HOME/Downloads`, Firefox left
//! running). A graceful quit (`MOZ_PROFILER_SHUTDOWN`) would also write it, but `launch` leaves
//! the user's Firefox running, and SIGTERM writes nothing.
//!
//! The dump is a file in a folder the user owns, read by a host that may run as root: it is
//! found through the parent's open descriptors while Firefox writes it (else among the
//! downloads-folder candidates), opened without following a symlink, accepted only as a
//! regular file owned by the user Firefox runs as, bounded in size, parsed with serde_json,
//! then removed through a descriptor of its folder.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use thiserror::Error;

/// The features asked for: JS and native stacks, CPU use per thread, and Firefox's own
/// main-thread file I/O markers.
pub const FEATURES: &str = "js,stackwalk,cpu,fileio";
/// The threads that do a start's work: the main threads, painting, workers, the file-stream,
/// storage and background I/O pools. A `MOZ_PROFILER_STARTUP_FILTERS` of the caller wins.
pub const THREADS: &str =
    "GeckoMain,Compositor,Renderer,DOM Worker,StreamTrans,BgIOThreadPool,IndexedDB,mozStorage,Socket Thread";
/// Buffer entries (8 bytes each, allocated in chunks as used): room for a 120 s cold start at
/// 1 ms samples without the beginning being overwritten.
pub const ENTRIES: &str = "8000000";
/// A profile larger than this is refused rather than parsed (a cold start's is 20–60 MB).
pub const MAX_BYTES: u64 = 1024 * 1024 * 1024;
/// How long Firefox may take to gather and write it.
pub const WAIT: Duration = Duration::from_secs(90);
/// A dump whose size held this long without the gathering log is taken as finished.
pub const SETTLE: Duration = Duration::from_secs(5);

/// Whether the dump's last bytes hold the gathering log Firefox writes after the children's
/// profiles (a bounded read of the tail).
fn gathered(path: &Path) -> bool {
    use std::io::{Seek, SeekFrom};
    let Ok(mut f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    else {
        return false;
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut tail = Vec::new();
    f.seek(SeekFrom::Start(len.saturating_sub(1 << 20))).is_ok()
        && f.take(1 << 20).read_to_end(&mut tail).is_ok()
        && tail.windows(21).any(|w| w == b"\"profileGatheringLog\"")
}

#[derive(Debug, Error)]
pub enum ProfileError {
    #[error(
        "Firefox (pid {pid}) is gone: it exited or crashed before its profile could be collected"
    )]
    Gone { pid: i32 },
    #[error("Firefox wrote no profile within {secs} s of SIGUSR2 (looked for profile_*_{pid}.json in {looked})")]
    NotWritten { pid: i32, secs: u64, looked: String },
    #[error("Firefox's profile {path} is cut short or not JSON ({detail}): Firefox was killed or crashed while writing it")]
    Truncated { path: PathBuf, detail: String },
    #[error("{path} is not a profile this host reads: {why}")]
    Refused { path: PathBuf, why: String },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

/// The environment that starts the Gecko profiler with the process (caller's own values kept).
#[must_use]
pub fn env() -> Vec<(&'static str, String)> {
    let keep = |k: &str, v: &str| std::env::var(k).unwrap_or_else(|_| v.to_owned());
    vec![
        ("MOZ_PROFILER_STARTUP", "1".into()),
        (
            "MOZ_PROFILER_STARTUP_FEATURES",
            keep("MOZ_PROFILER_STARTUP_FEATURES", FEATURES),
        ),
        (
            "MOZ_PROFILER_STARTUP_FILTERS",
            keep("MOZ_PROFILER_STARTUP_FILTERS", THREADS),
        ),
        (
            "MOZ_PROFILER_STARTUP_ENTRIES",
            keep("MOZ_PROFILER_STARTUP_ENTRIES", ENTRIES),
        ),
    ]
}

/// Whether `name` is the dump of process `pid` (`profile_<n>_<pid>.json`).
#[must_use]
pub fn is_dump_name(name: &str, pid: i32) -> bool {
    name.strip_prefix("profile_")
        .and_then(|r| r.strip_suffix(".json"))
        .and_then(|r| r.rsplit_once('_'))
        .is_some_and(|(n, p)| n.bytes().all(|b| b.is_ascii_digit()) && p == pid.to_string())
}

/// The downloads folder of `home` from `~/.config/user-dirs.dirs` (`XDG_DOWNLOAD_DIR`), a pure
/// reading of that file's text.
#[must_use]
pub fn xdg_download_dir(user_dirs: &str, home: &Path) -> Option<PathBuf> {
    let line = user_dirs
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("XDG_DOWNLOAD_DIR="))?;
    let value = line["XDG_DOWNLOAD_DIR=".len()..].trim_matches('"');
    let path = match value.strip_prefix("$HOME") {
        Some(rest) => home.join(rest.trim_start_matches('/')),
        None => PathBuf::from(value),
    };
    path.is_absolute().then_some(path)
}

/// The most of `~/.config/user-dirs.dirs` read: the file is a few hundred bytes.
const USER_DIRS_MAX: u64 = 64 * 1024;

/// `~/.config/user-dirs.dirs` of `home`: a regular file (a link to one is followed, as the
/// desktop's own tools do), opened without blocking and read bounded; anything else (a FIFO,
/// a link to /dev/zero: issue 29) is no file.
fn user_dirs(home: &Path) -> Option<String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(home.join(".config/user-dirs.dirs"))
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(USER_DIRS_MAX).read_to_string(&mut text).ok()?;
    Some(text)
}

fn candidates(home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(text) = user_dirs(home) {
        out.extend(xdg_download_dir(&text, home));
    }
    out.push(home.join("Downloads"));
    out.dedup();
    out
}

/// The dump `pid` holds open right now, if any (from /proc/<pid>/fd).
fn open_dump(pid: i32) -> Option<PathBuf> {
    crate::os::proc::fd_targets(pid).into_iter().find(|t| {
        t.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| is_dump_name(n, pid))
    })
}

/// Whether a dump whose size has held for `held` is whole. With the gathering log (written
/// after the child processes' profiles), once it held a moment. Without it, only for a Firefox
/// with no child process, once it held for [`SETTLE`]: the children answer after the parent's
/// part is closed, on a loaded machine later than any settle time (CI, issue 37: a 43.8 MB
/// parent-only dump was taken after its size held 5 s, and the merged profile had no child
/// process). Pure.
fn finished(held: Duration, gathered: bool, children: bool) -> bool {
    (gathered && held >= Duration::from_millis(300)) || (!children && held >= SETTLE)
}

/// Ask Firefox `pid` (running as `uid`, home `home`) for its profile and wait until it is
/// written; returns the dump's path.
pub fn request(pid: i32, home: &Path, wait: Duration) -> Result<PathBuf, ProfileError> {
    let asked = SystemTime::now();
    // A zombie counts as gone: a Firefox the host started and has not reaped yet stays in
    // /proc after it died, and waiting for its profile waited the whole `wait` (issue 29 #5).
    if !crate::os::proc::alive(pid) {
        return Err(ProfileError::Gone { pid });
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid).ok_or(ProfileError::Gone { pid })?,
        rustix::process::Signal::USR2,
    )
    .map_err(|e| ProfileError::Io {
        what: format!("send SIGUSR2 to Firefox (pid {pid})"),
        source: e.into(),
    })?;
    let start = Instant::now();
    let mut seen: Option<PathBuf> = None;
    let mut stable: Option<(u64, Instant)> = None;
    while start.elapsed() < wait {
        std::thread::sleep(Duration::from_millis(100));
        if !crate::os::proc::alive(pid) {
            return Err(ProfileError::Gone { pid });
        }
        if let Some(p) = open_dump(pid) {
            seen = Some(p);
            stable = None;
            continue; // being written
        }
        let found = seen.clone().or_else(|| {
            candidates(home).into_iter().find_map(|dir| {
                std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
                    let name = e.file_name();
                    let fresh = e
                        .metadata()
                        .and_then(|m| m.modified())
                        .is_ok_and(|m| m >= asked);
                    (fresh && name.to_str().is_some_and(|n| is_dump_name(n, pid))).then(|| e.path())
                })
            })
        });
        let Some(p) = found else { continue };
        seen = Some(p.clone());
        // Firefox writes the dump in two steps (checked on ESR 153): the parent's profile,
        // closed, then the child processes' appended once they answer, ending with
        // `profileGatheringLog`.
        let size = std::fs::symlink_metadata(&p).map(|m| m.len()).unwrap_or(0);
        match stable {
            Some((s, since)) if s == size => {
                let children = crate::firefox::process::process_tree(pid).len() > 1;
                if finished(since.elapsed(), gathered(&p), children) {
                    return Ok(p);
                }
            }
            _ => stable = Some((size, Instant::now())),
        }
    }
    Err(ProfileError::NotWritten {
        pid,
        secs: wait.as_secs(),
        looked: candidates(home)
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// Read and parse the dump at `path` as `uid`'s regular file (no symlink followed), at most
/// `max` bytes.
pub fn read(path: &Path, uid: u32, max: u64) -> Result<serde_json::Value, ProfileError> {
    let io = |what: &str| {
        let what = format!("{what} {}", path.display());
        move |source| ProfileError::Io { what, source }
    };
    let refused = |why: String| ProfileError::Refused {
        path: path.to_path_buf(),
        why,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(io("open"))?;
    let meta = file.metadata().map_err(io("stat"))?;
    if !meta.is_file() {
        return Err(refused("not a regular file".into()));
    }
    if meta.uid() != uid {
        return Err(refused(format!(
            "owned by uid {}, not by the user Firefox runs as ({uid})",
            meta.uid()
        )));
    }
    if meta.len() > max {
        return Err(refused(format!(
            "{} bytes, more than the {max}-byte bound",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(io("read"))?;
    parse(&bytes).map_err(|detail| ProfileError::Truncated {
        path: path.to_path_buf(),
        detail,
    })
}

/// Parse a Gecko profile's bytes: JSON with a `meta.version`, or why not.
pub fn parse(bytes: &[u8]) -> Result<serde_json::Value, String> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Err("a gzip-compressed profile: decompress it first (gunzip)".into());
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if value
        .pointer("/meta/version")
        .and_then(serde_json::Value::as_u64)
        .is_none()
    {
        return Err("no meta.version: not a Gecko-format profile".into());
    }
    Ok(value)
}

/// Remove the dump: through a descriptor of its folder, only if that folder and the file are
/// `uid`'s and the name is still the same regular file (best effort; a warning otherwise).
pub fn remove(path: &Path, uid: u32) -> Result<(), ProfileError> {
    use rustix::fs::{openat, statat, unlinkat, AtFlags, Mode, OFlags, CWD};
    let err = |what: &str| {
        let what = format!("{what} {}", path.display());
        move |e: rustix::io::Errno| ProfileError::Io {
            what,
            source: e.into(),
        }
    };
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(());
    };
    let dirfd = openat(
        CWD,
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(err("open the folder of"))?;
    let dir_stat = rustix::fs::fstat(&dirfd).map_err(err("stat the folder of"))?;
    let file_stat = statat(&dirfd, name, AtFlags::SYMLINK_NOFOLLOW).map_err(err("stat"))?;
    let regular = rustix::fs::FileType::from_raw_mode(file_stat.st_mode).is_file();
    if dir_stat.st_uid != uid || file_stat.st_uid != uid || !regular {
        return Err(ProfileError::Refused {
            path: path.to_path_buf(),
            why: "left in place: the file or its folder is not the user's".into(),
        });
    }
    unlinkat(&dirfd, name, AtFlags::empty()).map_err(err("remove"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_is_whole_with_the_gathering_log_or_when_no_child_process_is_left_to_answer() {
        let moment = Duration::from_millis(300);
        // The parent's part alone, held long past SETTLE, while children run: not whole.
        assert!(!finished(SETTLE * 4, false, true));
        // The gathering log is there: whole once it held a moment.
        assert!(finished(moment, true, true));
        assert!(!finished(Duration::from_millis(100), true, true));
        // No child process: the size holding for SETTLE is all there is.
        assert!(finished(SETTLE, false, false));
        assert!(!finished(SETTLE - moment, false, false));
    }

    #[test]
    fn dump_names() {
        assert!(is_dump_name("profile_0_26732.json", 26732));
        assert!(!is_dump_name("profile_0_26732.json", 2673));
        assert!(!is_dump_name("profile_x_1.json", 1));
        assert!(!is_dump_name("profile_0_1.json.part", 1));
    }

    #[test]
    fn downloads_folder_from_user_dirs() {
        let home = Path::new("/home/a");
        let text = "# comment\nXDG_DESKTOP_DIR=\"$HOME/Desktop\"\nXDG_DOWNLOAD_DIR=\"$HOME/Téléchargements\"\n";
        assert_eq!(
            xdg_download_dir(text, home),
            Some(PathBuf::from("/home/a/Téléchargements"))
        );
        assert_eq!(
            xdg_download_dir("XDG_DOWNLOAD_DIR=\"/data/dl\"", home),
            Some(PathBuf::from("/data/dl"))
        );
        assert_eq!(xdg_download_dir("XDG_DOWNLOAD_DIR=\"rel\"", home), None);
        assert_eq!(xdg_download_dir("", home), None);
    }

    /// Issue 29: `~/.config/user-dirs.dirs` as a FIFO blocked the read for ever, as a link to
    /// /dev/zero read without end. Neither is read now; a link to a real file still is.
    #[test]
    fn a_fifo_or_an_endless_user_dirs_file_is_no_file() {
        let home = tempfile::tempdir().unwrap();
        let config = home.path().join(".config");
        std::fs::create_dir(&config).unwrap();
        let dirs = config.join("user-dirs.dirs");
        std::os::unix::fs::symlink("/dev/zero", &dirs).unwrap();
        assert_eq!(user_dirs(home.path()), None);
        std::fs::remove_file(&dirs).unwrap();
        crate::os::mkfifo(&dirs);
        // Returns at once: a blocking open would wait for a writer for ever.
        assert_eq!(user_dirs(home.path()), None);
        assert_eq!(candidates(home.path()), vec![home.path().join("Downloads")]);
        std::fs::remove_file(&dirs).unwrap();
        let real = home.path().join("dirs");
        std::fs::write(&real, "XDG_DOWNLOAD_DIR=\"/data/dl\"\n").unwrap();
        std::os::unix::fs::symlink(&real, &dirs).unwrap();
        assert_eq!(candidates(home.path())[0], PathBuf::from("/data/dl"));
    }

    #[test]
    fn truncated_foreign_and_hostile_dumps_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let uid = crate::os::sys::geteuid();
        let good = dir.path().join("profile_0_7.json");
        std::fs::write(&good, br#"{"meta":{"version":34},"threads":[]}"#).unwrap();
        assert!(read(&good, uid, MAX_BYTES).is_ok());
        // Cut short, as when Firefox is killed while writing.
        let cut = dir.path().join("profile_0_8.json");
        std::fs::write(&cut, br#"{"meta":{"version":34},"threads":[{"na"#).unwrap();
        let e = read(&cut, uid, MAX_BYTES).unwrap_err();
        assert!(matches!(e, ProfileError::Truncated { .. }), "{e}");
        assert!(e.to_string().contains("killed or crashed"));
        // Not a Gecko profile, too large, someone else's, a symlink.
        std::fs::write(&cut, br#"{"a":1}"#).unwrap();
        assert!(read(&cut, uid, MAX_BYTES)
            .unwrap_err()
            .to_string()
            .contains("meta.version"));
        assert!(matches!(
            read(&good, uid, 5),
            Err(ProfileError::Refused { .. })
        ));
        assert!(matches!(
            read(&good, uid + 1, MAX_BYTES),
            Err(ProfileError::Refused { .. })
        ));
        let link = dir.path().join("profile_0_9.json");
        std::os::unix::fs::symlink(&good, &link).unwrap();
        assert!(matches!(
            read(&link, uid, MAX_BYTES),
            Err(ProfileError::Io { .. })
        ));
        // Removal goes through the folder and refuses what is not the user's.
        assert!(matches!(
            remove(&good, uid + 1),
            Err(ProfileError::Refused { .. })
        ));
        remove(&good, uid).unwrap();
        assert!(!good.exists());
    }

    #[test]
    fn a_gone_process_is_said() {
        let e = request(
            i32::MAX - 1,
            Path::new("/nonexistent"),
            Duration::from_millis(10),
        );
        assert!(matches!(e, Err(ProfileError::Gone { .. })), "{e:?}");
    }

    /// Issue 29 #5: `launch --firefox-profile` waited the whole 90 s on a Firefox that had
    /// died: the host's own child, not yet reaped, is a zombie and /proc/<pid> stays. A zombie
    /// is gone: the answer comes before the (generous) wait is over, and says so.
    #[test]
    fn a_zombie_is_gone() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        // Not reaped: it stays a zombie until `wait` below (liveness bound only).
        let until = std::time::Instant::now() + Duration::from_secs(60);
        while crate::os::proc::stat(pid).is_none_or(|s| s.state != 'Z') {
            assert!(std::time::Instant::now() < until, "`true` never exited");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(crate::os::proc::exists(pid), "a zombie is still in /proc");
        assert!(!crate::os::proc::alive(pid));
        let e = request(pid, Path::new("/nonexistent"), Duration::from_secs(30));
        child.wait().unwrap();
        assert!(matches!(e, Err(ProfileError::Gone { .. })), "{e:?}");
    }
}
