//! The Firefox process: the parent of the host in native-messaging mode, or a running one found
//! by the CLI, and its process tree. Reads /proc only, through `os::proc`.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::firefox::app_ini;
use crate::firefox::kind::{self, InstallKind};
use crate::os::proc::{self, Stat};
use crate::os::sys;
use crate::Error;

/// I/O the process did so far; `None` where the kernel does not expose it to this user.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessIo {
    pub read_bytes: Option<u64>,
    pub major_faults: Option<u64>,
    pub tree_read_bytes: Option<u64>,
    pub tree_major_faults: Option<u64>,
    pub processes: usize,
}

/// The `firefox` command's data (docs/PROTOCOL.md).
#[derive(Debug, Clone, Serialize)]
pub struct FirefoxInfo {
    pub pid: i32,
    #[serde(flatten, with = "crate::path_text::exe")]
    pub exe: PathBuf,
    #[serde(flatten, with = "crate::path_text::install_dir")]
    pub install_dir: PathBuf,
    pub version: Option<String>,
    pub build_id: Option<String>,
    pub started_at_ms: u64,
    pub start_precision_ms: u64,
    pub io: ProcessIo,
    /// The kind of install `install_dir` is (added after `io`: fields are only appended).
    pub install_kind: InstallKind,
    /// The launch prefetch that read for this very start (`launch --prefetch`, the desktop
    /// entry), or `None` (appended). Filled in by the host from `last-prefetch.json`, matched by
    /// pid and start time: a start it read for is no cold start, whatever it read (the reads of
    /// a prefetch run first are this process's own, before it became Firefox).
    pub prefetched: Option<Prefetched>,
    /// The preload this start followed (learn/last_preload.rs: the last preload of this install
    /// and build, in this boot, ended before this process began, claimed by no earlier start),
    /// or `None` (appended). Filled in by the host from `last-preload.json`.
    pub preloaded: Option<Preloaded>,
}

/// The preload a start followed (from the learned record, in this layer's words).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Preloaded {
    /// Wall clock (ms since the epoch) when the preload ended.
    pub at_ms: u64,
    /// Bytes it read (cached ones included).
    pub bytes: u64,
    /// Whether it read the plan (else the whole install folder).
    pub planned: bool,
}

/// What the launch prefetch did for a start (from the learned record, in this layer's words).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Prefetched {
    /// Wall clock (ms since the epoch) when the launch began.
    pub at_ms: u64,
    /// `first` (read in this process before Firefox started) or `beside` (a detached reader).
    pub strategy: Option<String>,
    pub bytes_planned: u64,
    /// Bytes the prefetch read (its record is written once it has ended).
    pub bytes_read: u64,
    /// Bytes of the plan it found cached already, so did not read (appended): a prefetch of a
    /// warm install reads 0 MB, and says what it found instead.
    pub bytes_cached: u64,
}

/// The parent process's pid if it is a Firefox (its executable's folder holds application.ini).
#[must_use]
pub fn parent_firefox() -> Option<i32> {
    let ppid = i32::try_from(std::os::unix::process::parent_id()).ok()?;
    let exe = proc::exe(ppid).ok()?;
    is_firefox_exe(&exe).then_some(ppid)
}

/// A running Firefox parent process of this user, if any (for the CLI).
///
/// Cheap on purpose (a residency scan calls it, and it once cost more than the scan, issue 20):
/// one `readlink` of `/proc/<pid>/exe` per process (another user's fails at once without root),
/// the Firefox test once per distinct executable, and `/proc/<pid>/stat` and the owner only for
/// the Firefox processes found.
#[must_use]
pub fn find_running() -> Option<i32> {
    find_running_in(None)
}

/// [`find_running`] among the Firefox processes of the install folder `install_dir` only (its
/// executable sits there), when given: the oldest Firefox of another install is not this one's
/// (`residency --firefox DIR` reported nothing mapped while an older Firefox of another
/// install ran, as the oldest of all was picked and then dropped as "not this install").
#[must_use]
pub fn find_running_in(install_dir: Option<&Path>) -> Option<i32> {
    let euid = sys::geteuid();
    let mut is_firefox: HashMap<PathBuf, bool> = HashMap::new();
    let firefox: HashMap<i32, Stat> = proc::pids()
        .into_iter()
        .filter(|pid| {
            proc::exe(*pid).is_ok_and(|exe| {
                *is_firefox.entry(exe).or_insert_with_key(|exe| {
                    is_firefox_exe(exe) && install_dir.is_none_or(|dir| exe.parent() == Some(dir))
                })
            })
        })
        .filter(|pid| proc::owner(*pid) == Some(euid))
        .filter_map(|pid| Some((pid, proc::stat(pid)?)))
        .collect();
    // The main process is the one whose parent is not a Firefox (content processes are its
    // children); the oldest wins when several profiles run.
    firefox
        .iter()
        .filter(|(_, stat)| !firefox.contains_key(&stat.ppid))
        .min_by_key(|(pid, stat)| (stat.starttime, **pid))
        .map(|(pid, _)| *pid)
}

/// `pid` if it is a Firefox process (its executable sits in an install folder), else an error
/// saying what it is: `learn --pid` must not record another program's pages as a Firefox start.
pub fn require_firefox(pid: i32) -> Result<i32, Error> {
    match proc::exe(pid) {
        Ok(exe) if is_firefox_exe(&exe) => Ok(pid),
        Ok(exe) => Err(Error::FirefoxNotFound(format!(
            "process {pid} runs {}, which is not Firefox (no application.ini beside it); give the pid of Firefox's main process",
            exe.display()
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::FirefoxNotFound(format!(
            "process {pid} does not exist"
        ))),
        Err(e) => Err(Error::io(format!("cannot read the executable of process {pid}"), e)),
    }
}

/// Everything the `firefox` command reports about `pid`.
pub fn inspect(pid: i32) -> Result<FirefoxInfo, Error> {
    let exe = proc::exe(pid).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Error::FirefoxNotFound(format!("process {pid} does not exist")),
        _ => Error::io(format!("cannot read the executable of process {pid}"), e),
    })?;
    let install_dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    let (version, build_id) = app_ini::read(&install_dir);
    let stat = proc::stat(pid)
        .ok_or_else(|| Error::FirefoxNotFound(format!("process {pid} has exited")))?;
    let tck = sys::clk_tck();
    let btime = proc::boot_time().ok_or_else(|| {
        Error::io(
            "cannot read the boot time",
            io::Error::from(io::ErrorKind::InvalidData),
        )
    })?;
    Ok(FirefoxInfo {
        pid,
        exe,
        install_dir: install_dir.clone(),
        version,
        build_id,
        started_at_ms: start_ms(btime, stat.starttime, tck),
        start_precision_ms: 1000 / tck,
        io: process_io(pid, &stat),
        install_kind: kind::describe(&install_dir),
        prefetched: None,
        preloaded: None,
    })
}

/// Process start in ms since the epoch: boot time (s) + start time (ticks since boot).
fn start_ms(btime_s: u64, starttime_ticks: u64, tck: u64) -> u64 {
    btime_s * 1000 + starttime_ticks * 1000 / tck
}

fn process_io(pid: i32, stat: &Stat) -> ProcessIo {
    let own_read = proc::read_bytes(pid);
    let tree = descendants(pid, &all_stats());
    let mut tree_read: Option<u64> = own_read;
    let mut tree_faults = stat.majflt;
    for (child, child_stat) in &tree {
        // One unreadable process makes the sum unknown rather than silently too small.
        tree_read = tree_read.zip(proc::read_bytes(*child)).map(|(a, b)| a + b);
        tree_faults += child_stat.majflt;
    }
    ProcessIo {
        read_bytes: own_read,
        major_faults: Some(stat.majflt),
        tree_read_bytes: tree_read,
        tree_major_faults: Some(tree_faults),
        processes: tree.len() + 1,
    }
}

/// `pid` and every process below it (its content, GPU, socket processes…): the process tree a
/// start's working set is read from.
#[must_use]
pub fn process_tree(pid: i32) -> Vec<i32> {
    let mut tree = vec![pid];
    tree.extend(descendants(pid, &all_stats()).into_iter().map(|(p, _)| p));
    tree
}

/// Every process below `root` (children, grandchildren…) with its stat, following ppid links.
fn descendants(root: i32, procs: &[(i32, Stat)]) -> Vec<(i32, Stat)> {
    let mut out: Vec<(i32, Stat)> = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, stat) in procs.iter().filter(|(_, s)| s.ppid == parent) {
            if *pid != root && !out.iter().any(|(p, _)| p == pid) {
                frontier.push(*pid);
                out.push((*pid, stat.clone()));
            }
        }
    }
    out
}

/// The profile folder of Firefox process `pid`: the folder of the `.parentlock` it holds open
/// (Firefox keeps that lock file open for the whole session) that is not its startup lock
/// ([`profile_lock_dir`]), else the `-profile` argument.
#[must_use]
pub fn profile_dir(pid: i32) -> Option<PathBuf> {
    profile_lock(pid, &proc::fd_targets(pid)).or_else(|| {
        let cmdline = proc::cmdline(pid).ok()?;
        profile_argument(&cmdline)
    })
}

/// The most of a Firefox's `/proc/<pid>/environ` read for its temporary folder.
const ENVIRON_LIMIT: u64 = 1024 * 1024;

/// The profile folder among `targets`, the open descriptors of Firefox process `pid`
/// ([`profile_lock_dir`] with what `pid`'s environment and install say of its startup lock).
/// Reads /proc and application.ini only when a `.parentlock` is among them.
#[must_use]
pub fn profile_lock(pid: i32, targets: &[PathBuf]) -> Option<PathBuf> {
    if !targets.iter().any(|t| is_parentlock(t)) {
        return None;
    }
    let environ = proc::read(pid, "environ", ENVIRON_LIMIT).unwrap_or_default();
    let remoting = proc::exe(pid)
        .ok()
        .and_then(|exe| app_ini::remoting_name(exe.parent()?));
    let temp = temp_dir(&environ);
    let temp = std::fs::canonicalize(&temp).unwrap_or(temp);
    profile_lock_dir(targets, &temp, remoting.as_deref())
}

fn is_parentlock(target: &Path) -> bool {
    target.is_absolute() && target.file_name().is_some_and(|n| n == ".parentlock")
}

/// The temporary folder Firefox uses, from its environment block: `TMPDIR`, else `TMP`, else
/// `TEMP`, else `/tmp` (xpcom's GetSpecialSystemDirectory(OS_TemporaryDirectory) on Unix; an
/// empty one is skipped as there). Pure.
fn temp_dir(environ: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    [&b"TMPDIR"[..], b"TMP", b"TEMP"]
        .into_iter()
        .find_map(|name| proc::parse::environ_var(environ, name).filter(|v| !v.is_empty()))
        .map_or_else(
            || PathBuf::from("/tmp"),
            |v| PathBuf::from(std::ffi::OsStr::from_bytes(&v)),
        )
}

/// Of the `.parentlock`s among `targets` (a Firefox's open descriptors), the folder of the one
/// that locks its profile. Pure.
///
/// Firefox holds a second `.parentlock` while it starts: its startup lock, which serialises
/// starts of one program (toolkit/components/remote/nsRemoteService.cpp, LockStartup: an
/// nsProfileLock, the same `.parentlock` a profile gets, on the folder
/// `GetSpecialSystemDirectory(OS_TemporaryDirectory)` + the lowercased `RemotingName` of
/// application.ini, e.g. `$TMPDIR/firefox-esr`; held at least while it starts). It is taken
/// before the profile is chosen, so early in a start it can be the only one, and which
/// descriptor comes first is not ordered either way. That folder never holds a profile's
/// checkpoints: a recording that waited for them there ran to its limit (CI, 29 Nov).
/// So the startup lock is told by its path, which is provable from Firefox's source: the folder
/// `temp/remoting`. Where the remoting name is unknown (`None`: the install's application.ini
/// unreadable or without it), no folder directly in `temp` is taken for a profile: unknown
/// rather than wrong (a profile right in the temporary folder is then found by `-profile`).
#[must_use]
pub fn profile_lock_dir(
    targets: &[PathBuf],
    temp: &Path,
    remoting: Option<&str>,
) -> Option<PathBuf> {
    targets
        .iter()
        .filter(|t| is_parentlock(t))
        .filter_map(|t| t.parent())
        .find(|dir| match remoting {
            Some(name) => *dir != temp.join(name),
            None => dir.parent() != Some(temp),
        })
        .map(Path::to_path_buf)
}

/// The folder after `-profile` / `--profile` in a NUL-separated command line. Pure.
#[must_use]
pub fn profile_argument(cmdline: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut args = cmdline.split(|b| *b == 0);
    while let Some(arg) = args.next() {
        if arg == b"-profile" || arg == b"--profile" {
            let dir = args.next().filter(|d| d.starts_with(b"/"))?;
            return Some(PathBuf::from(std::ffi::OsStr::from_bytes(dir)));
        }
    }
    None
}

/// The profile folder Firefox's arguments `args` name (`-profile DIR`, `--profile DIR`, or
/// `--profile=DIR`), relative ones taken from `cwd` (where Firefox will run). Pure.
#[must_use]
pub fn profile_in_args(args: &[std::ffi::OsString], cwd: &Path) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let bytes = arg.as_bytes();
        let dir = if bytes == b"-profile" || bytes == b"--profile" {
            it.next().map(PathBuf::from)
        } else {
            bytes
                .strip_prefix(b"--profile=")
                .or_else(|| bytes.strip_prefix(b"-profile="))
                .map(|d| PathBuf::from(std::ffi::OsStr::from_bytes(d)))
        };
        if let Some(dir) = dir {
            return Some(cwd.join(dir));
        }
    }
    None
}

/// Why Firefox must not be started with the profile folder `dir`, or `None`: a folder that does
/// not exist makes Firefox (ESR 153, checked) wait on a dialog for ever instead of starting,
/// invisible when headless; the start would never come (issue 30 #5).
#[must_use]
pub fn profile_problem(dir: &Path) -> Option<String> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => None,
        Ok(_) => Some(format!(
            "Firefox's profile {} is not a folder: name a profile folder after -profile",
            dir.display()
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some(format!(
            "Firefox's profile folder {} does not exist: Firefox would not create it, it would \
             wait for ever on a dialog (invisible when headless) instead of starting. Create it \
             first (mkdir -p {}) for a new profile, or name an existing one",
            dir.display(),
            dir.display()
        )),
        Err(e) => Some(format!(
            "Firefox's profile folder {} cannot be reached ({e}): Firefox could not start on it",
            dir.display()
        )),
    }
}

/// A Firefox executable: its folder holds application.ini, and its name starts with "firefox"
/// or the folder has omni.ja (renamed or rebranded builds).
pub(crate) fn is_firefox_exe(exe: &Path) -> bool {
    let Some(dir) = exe.parent() else {
        return false;
    };
    let named = exe
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("firefox"));
    dir.join("application.ini").is_file() && (named || dir.join("omni.ja").is_file())
}

/// Every process's stat (processes that exit meanwhile are skipped).
fn all_stats() -> Vec<(i32, Stat)> {
    proc::pids()
        .into_iter()
        .filter_map(|pid| Some((pid, proc::stat(pid)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_is_boot_time_plus_ticks() {
        assert_eq!(start_ms(1_763_768_000, 12_345, 100), 1_763_768_123_450);
    }

    /// CI, 29 Nov: a Firefox started without `-profile` held `$TMPDIR/firefox-esr/.parentlock`
    /// (its startup lock) beside its profile's, and the profile was taken to be that folder;
    /// no checkpoint ever came there. The fd listings here are the two locks in both orders
    /// (descriptor numbers are reused, so neither order is given), and the startup lock alone
    /// (early in a start, before the profile is locked).
    #[test]
    fn the_startup_lock_is_not_taken_for_the_profile() {
        let temp = Path::new("/tmp/run");
        let startup = PathBuf::from("/tmp/run/firefox-esr/.parentlock");
        let profile = PathBuf::from("/home/me/.mozilla/firefox/x.default-esr/.parentlock");
        let other = PathBuf::from("/usr/lib/firefox-esr/omni.ja");
        let want = Some(PathBuf::from("/home/me/.mozilla/firefox/x.default-esr"));
        for fds in [
            vec![other.clone(), startup.clone(), profile.clone()],
            vec![profile.clone(), other.clone(), startup.clone()],
        ] {
            assert_eq!(profile_lock_dir(&fds, temp, Some("firefox-esr")), want);
            assert_eq!(profile_lock_dir(&fds, temp, None), want, "name unknown");
        }
        let early = [other.clone(), startup.clone()];
        assert_eq!(profile_lock_dir(&early, temp, Some("firefox-esr")), None);
        assert_eq!(profile_lock_dir(&early, temp, None), None);
        // Another program's startup folder, or a profile of its own right in the temporary
        // folder, is a profile when the remoting name is known; unknown (None) when it is not.
        let in_temp = [
            startup.clone(),
            PathBuf::from("/tmp/run/tmp.x1/.parentlock"),
        ];
        assert_eq!(
            profile_lock_dir(&in_temp, temp, Some("firefox-esr")),
            Some(PathBuf::from("/tmp/run/tmp.x1"))
        );
        assert_eq!(profile_lock_dir(&in_temp, temp, None), None);
        // Only a `.parentlock` names a profile; the temporary folder is compared whole.
        assert_eq!(profile_lock_dir(&[other], temp, None), None);
        let elsewhere = [PathBuf::from("/tmp/firefox-esr/.parentlock")];
        assert_eq!(
            profile_lock_dir(&elsewhere, temp, Some("firefox-esr")),
            Some(PathBuf::from("/tmp/firefox-esr"))
        );
    }

    /// Firefox's temporary folder: TMPDIR, TMP, TEMP, /tmp, in that order, empty ones skipped.
    #[test]
    fn the_temporary_folder_is_firefoxs_own() {
        assert_eq!(
            temp_dir(b"A=1\0TMP=/t2\0TMPDIR=/t1\0"),
            PathBuf::from("/t1")
        );
        assert_eq!(
            temp_dir(b"TMPDIR=\0TEMP=/t3\0TMP=/t2\0"),
            PathBuf::from("/t2")
        );
        assert_eq!(temp_dir(b"TEMP=/t3\0"), PathBuf::from("/t3"));
        assert_eq!(temp_dir(b"XTMPDIR=/x\0"), PathBuf::from("/tmp"));
        assert_eq!(temp_dir(b""), PathBuf::from("/tmp"));
    }

    #[test]
    fn profile_from_the_command_line() {
        assert_eq!(
            profile_argument(b"/usr/lib/firefox-esr/firefox-esr\0-profile\0/tmp/p x\0-headless\0"),
            Some(PathBuf::from("/tmp/p x"))
        );
        assert_eq!(profile_argument(b"firefox\0--profile\0relative\0"), None);
        assert_eq!(profile_argument(b"firefox\0-profile\0"), None);
        assert_eq!(profile_argument(b"firefox\0"), None);
    }

    #[test]
    fn profile_from_firefoxs_arguments() {
        let args = |a: &[&str]| a.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        let cwd = Path::new("/home/me");
        assert_eq!(
            profile_in_args(&args(&["--headless", "-profile", "/tmp/p"]), cwd),
            Some(PathBuf::from("/tmp/p"))
        );
        assert_eq!(
            profile_in_args(&args(&["--profile", "p"]), cwd),
            Some(PathBuf::from("/home/me/p"))
        );
        assert_eq!(
            profile_in_args(&args(&["--profile=/x"]), cwd),
            Some(PathBuf::from("/x"))
        );
        assert_eq!(profile_in_args(&args(&["-P", "default"]), cwd), None);
        assert_eq!(profile_in_args(&args(&["-profile"]), cwd), None);
    }

    /// Issue 30 #5: what Firefox does with a missing profile folder (NOTES.md, round 4: ESR
    /// 153 waits on an invisible dialog) is refused up front, naming the folder.
    #[test]
    fn a_missing_profile_folder_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(profile_problem(tmp.path()), None);
        let missing = tmp.path().join("gone");
        let problem = profile_problem(&missing).unwrap();
        assert!(
            problem.contains(&missing.display().to_string()) && problem.contains("mkdir -p"),
            "{problem}"
        );
        std::fs::write(&missing, "").unwrap();
        assert!(profile_problem(&missing).unwrap().contains("not a folder"));
    }

    #[test]
    fn tree_follows_ppid_links() {
        let st = |ppid| Stat {
            comm: String::new(),
            ppid,
            majflt: 1,
            starttime: 0,
            state: 'S',
        };
        let procs = vec![
            (10, st(1)),
            (11, st(10)),
            (12, st(11)),
            (13, st(1)),
            (14, st(10)),
        ];
        let mut tree: Vec<i32> = descendants(10, &procs)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        tree.sort_unstable();
        assert_eq!(tree, [11, 12, 14]);
    }

    #[test]
    fn inspect_self_reports_start_and_io() {
        let info = inspect(std::process::id() as i32).unwrap();
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        assert!(info.started_at_ms <= now_ms + 1000 && info.started_at_ms + 3_600_000 > now_ms);
        assert!(info.io.read_bytes.is_some());
        assert!(info.io.processes >= 1);
    }
}
