//! "Restart cold": wait until every process of a running Firefox has exited, evict its install
//! folder from the page cache, and start it again with the same binary, arguments, environment
//! and working folder (so the same profile), as the same user. Nothing in the profile is
//! touched; tabs come back through Firefox's own session restore (the page asks Firefox for it
//! before quitting, docs/design/restart.md).
//!
//! The page cannot do this itself, and neither can a host that Firefox starts: Firefox closes
//! its hosts when it quits. So the host starts `about-startup-host relaunch --pid N` as a
//! process of its own session ([`detach`]), which outlives Firefox and records each step in
//! the state folder ([`status`]) for the page of the restarted Firefox to show.
//!
//! Here: what is read of the running Firefox ([`Snapshot`], [`capture`]), the wait
//! ([`wait_for_exit`]), the evict and what stayed ([`evict`], the launch pipeline's: one
//! function for every cold start), the start ([`start`]) and the whole run ([`run`]).

pub mod detach;
pub mod status;
pub mod traced;

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::firefox::process;
pub use crate::launch::cold::evict;
use crate::os::clock::now_ms;
use crate::os::proc::parse::{parse_environ, split_nul};
use crate::os::proc::{self, LARGE_BYTES};
use crate::Error;
use status::{Failure, Stage, Status, STATUS_VERSION};

/// How long to wait for Firefox to quit by default (a session with many tabs takes seconds;
/// the user may be asked about closing tabs).
pub const DEFAULT_TIMEOUT_S: u64 = 120;
/// A start that fails (profile locked, bad argument) exits within this long.
const EARLY_EXIT: Duration = Duration::from_secs(3);

/// What is needed to start a Firefox again as it was started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub pid: i32,
    /// `/proc/<pid>/stat` starttime: the same pid later is another process.
    pub start_ticks: u64,
    pub exe: PathBuf,
    /// The whole argv, argv[0] included.
    pub argv: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: Option<PathBuf>,
    pub install_dir: PathBuf,
    pub profile: Option<PathBuf>,
}

/// `/proc/<pid>/<name>` through the one reader, bounded as before (1 MiB), its error saying
/// which file.
fn read_proc(pid: i32, name: &str) -> Result<Vec<u8>, Error> {
    proc::read(pid, name, LARGE_BYTES)
        .map_err(|e| Error::io(format!("reading /proc/{pid}/{name}"), e))
}

/// Read what starting Firefox `pid` again needs. It must be a Firefox main process of this
/// user (the environment of another user's process is not readable anyway).
pub fn capture(pid: i32) -> Result<Snapshot, Error> {
    process::require_firefox(pid)?;
    let start_ticks = proc::stat(pid)
        .ok_or_else(|| Error::FirefoxNotFound(format!("process {pid} has exited")))?
        .starttime;
    let link = proc::read_link(pid, "exe")
        .map_err(|e| Error::io(format!("reading /proc/{pid}/exe"), e))?;
    if link.as_os_str().as_bytes().ends_with(b" (deleted)") {
        return Err(Error::FirefoxNotFound(format!(
            "the executable of process {pid} was replaced since it started (an update): \
             start Firefox again yourself"
        )));
    }
    let argv = split_nul(&read_proc(pid, "cmdline")?);
    if argv.is_empty() {
        return Err(Error::FirefoxNotFound(format!(
            "process {pid} has no command line (it is exiting)"
        )));
    }
    let env = parse_environ(&read_proc(pid, "environ")?);
    let install = crate::firefox::install::locate(None, Some(pid))?;
    Ok(Snapshot {
        pid,
        start_ticks,
        exe: link,
        argv,
        env,
        cwd: proc::read_link(pid, "cwd").ok(),
        install_dir: install.dir,
        profile: process::profile_dir(pid),
    })
}

/// A process's state letter and start time, or `None` once it is gone.
fn state_of(pid: i32) -> Option<(char, u64)> {
    proc::stat(pid).map(|stat| (stat.state, stat.starttime))
}

/// Whether process `pid` started at `ticks` still runs (a zombie has exited: proc::alive).
fn running(pid: i32, ticks: u64) -> bool {
    state_of(pid).is_some_and(|(_, start)| start == ticks) && proc::alive(pid)
}

/// The Firefox processes of the tree under `pid` (content, GPU, socket…), not this helper or
/// other programs Firefox started (native hosts).
fn firefox_tree(pid: i32) -> Vec<(i32, u64)> {
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    process::process_tree(pid)
        .into_iter()
        .filter(|p| *p != me)
        .filter(|p| proc::exe(*p).is_ok_and(|exe| crate::firefox::process::is_firefox_exe(&exe)))
        .filter_map(|p| Some((p, state_of(p)?.1)))
        .collect()
}

/// Wait until the main process and every Firefox process seen below it have exited. `Ok` with
/// the time waited; `Err` with the pids still running when `timeout` passed.
pub fn wait_for_exit(snap: &Snapshot, timeout: Duration) -> Result<Duration, Vec<i32>> {
    let started = Instant::now();
    let mut seen: HashMap<i32, u64> = HashMap::from([(snap.pid, snap.start_ticks)]);
    loop {
        if running(snap.pid, snap.start_ticks) {
            seen.extend(firefox_tree(snap.pid));
        }
        let mut alive: Vec<i32> = seen
            .iter()
            .filter(|(p, t)| running(**p, **t))
            .map(|(p, _)| *p)
            .collect();
        if alive.is_empty() {
            return Ok(started.elapsed());
        }
        if started.elapsed() >= timeout {
            alive.sort_unstable();
            return Err(alive);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The folder to start Firefox again in: its own working folder where this user can enter it,
/// else the first of its `HOME` and `/` that they can, with why (English, for the record and
/// the CLI). A working folder the user cannot enter (a checkout in a 0700 home, as Debian 12
/// makes them, when Firefox was started there by someone else) made the start fail as
/// "starting …/firefox-esr: Permission denied", naming the binary (issue 30 #7).
#[must_use]
pub fn working_folder(snap: &Snapshot) -> (PathBuf, Option<String>) {
    let enter = |dir: &Path| {
        rustix::fs::access(dir, rustix::fs::Access::EXEC_OK)
            .map_err(std::io::Error::from)
            .and_then(|()| {
                if dir.is_dir() {
                    Ok(())
                } else {
                    Err(std::io::Error::other("not a folder"))
                }
            })
    };
    let wanted = snap.cwd.clone().unwrap_or_else(|| PathBuf::from("/"));
    let why = match enter(&wanted) {
        Ok(()) => return (wanted, None),
        Err(e) => e,
    };
    let home = snap
        .env
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| PathBuf::from(v))
        .filter(|h| h.is_absolute());
    let fallback = home
        .into_iter()
        .chain(std::iter::once(PathBuf::from("/")))
        .find(|d| enter(d).is_ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    let said = format!(
        "Firefox's working folder {} cannot be entered by you ({why}): it was started in {} instead",
        wanted.display(),
        fallback.display()
    );
    (fallback, Some(said))
}

/// Why Firefox cannot start again on its profile, or `None`: the folder is gone since it quit
/// (`npm start`'s temporary profile is removed when that Firefox ends). Firefox would wait for
/// ever on a dialog instead of starting (issue 30 #5).
#[must_use]
pub fn profile_gone(snap: &Snapshot) -> Option<String> {
    snap.profile
        .as_deref()
        .and_then(process::profile_problem)
        .map(|problem| format!("{problem}; it was there when Firefox {} ran", snap.pid))
}

/// Start Firefox again as `snap` was started, in a session of its own (it must not end with
/// this helper), with `extra` arguments appended, in `cwd` ([`working_folder`]).
pub fn start(
    snap: &Snapshot,
    extra: &[OsString],
    cwd: &Path,
) -> Result<std::process::Child, String> {
    let mut cmd = Command::new(&snap.exe);
    cmd.arg0(&snap.argv[0])
        .args(&snap.argv[1..])
        .args(extra)
        .env_clear()
        .envs(snap.env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd.spawn()
        .map_err(|e| format!("starting {} in {}: {e}", snap.exe.display(), cwd.display()))
}

/// Why a just-started Firefox failed: it exited within a few seconds (profile locked, a bad
/// argument). `None` when it is still running then.
pub fn early_exit(child: &mut std::process::Child, exe: &Path) -> Option<String> {
    let until = Instant::now() + EARLY_EXIT;
    while Instant::now() < until {
        match child.try_wait() {
            Ok(Some(exit)) => {
                return Some(format!(
                    "{} exited at once ({exit}); is another Firefox using the profile?",
                    exe.display()
                ))
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(_) => return None,
        }
    }
    None
}

/// What to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub cold: bool,
    pub timeout: Duration,
    /// Arguments added to Firefox's own (the page's URL, where session restore does not bring
    /// it back).
    pub open: Vec<OsString>,
    /// Where the record goes (`None`: not recorded, e.g. a test).
    pub state_dir: Option<PathBuf>,
}

/// A fresh record for a restart of `snap`.
#[must_use]
pub fn begin(snap: &Snapshot, cold: bool, trace: bool) -> Status {
    let now = now_ms();
    Status {
        version: STATUS_VERSION,
        stage: Stage::Waiting,
        cold,
        trace,
        requested_at_ms: now,
        updated_at_ms: now,
        old_pid: snap.pid,
        install_dir: snap.install_dir.display().to_string(),
        profile: snap.profile.as_ref().map(|p| p.display().to_string()),
        working_folder: None,
        waited_ms: None,
        evicted: None,
        new_pid: None,
        error: None,
        trace_id: None,
    }
}

/// Record `status` (best effort: a state folder that cannot be written must not stop the
/// restart; the CLI prints every step anyway).
pub fn record(opts: &Options, status: &mut Status, progress: &mut dyn FnMut(&Status)) {
    status.updated_at_ms = now_ms();
    if let Some(dir) = &opts.state_dir {
        if let Err(e) = status::write(dir, status) {
            eprintln!("about-startup-host: warning: could not record the restart: {e}");
        }
    }
    progress(status);
}

/// Mark `status` failed with `code` and record it.
pub fn fail(
    opts: &Options,
    status: &mut Status,
    progress: &mut dyn FnMut(&Status),
    code: &str,
    message: String,
    params: serde_json::Value,
) {
    status.stage = Stage::Failed;
    status.error = Some(Failure {
        code: code.to_owned(),
        message,
        params,
    });
    record(opts, status, progress);
}

/// The whole restart of `snap`: wait, evict (if cold), start. Every step is recorded and
/// passed to `progress`; the final record is returned.
pub fn run(snap: &Snapshot, opts: &Options, progress: &mut dyn FnMut(&Status)) -> Status {
    let mut status = begin(snap, opts.cold, false);
    record(opts, &mut status, progress);
    if wait_step(snap, opts, &mut status, progress)
        && profile_step(snap, opts, &mut status, progress)
    {
        evict_and_start(snap, opts, &mut status, progress);
    }
    status
}

/// After the quit: `false` (recorded as a failure, nothing evicted or started) when the profile
/// is gone ([`profile_gone`]).
pub fn profile_step(
    snap: &Snapshot,
    opts: &Options,
    status: &mut Status,
    progress: &mut dyn FnMut(&Status),
) -> bool {
    let Some(problem) = profile_gone(snap) else {
        return true;
    };
    fail(
        opts,
        status,
        progress,
        status::LAUNCH_FAILED,
        format!("Firefox could not be started again: {problem}; nothing was evicted or started"),
        json!({ "detail": problem }),
    );
    false
}

/// Wait for the old Firefox to exit; `false` (recorded as a failure) when it did not in time.
pub fn wait_step(
    snap: &Snapshot,
    opts: &Options,
    status: &mut Status,
    progress: &mut dyn FnMut(&Status),
) -> bool {
    match wait_for_exit(snap, opts.timeout) {
        Ok(waited) => {
            status.waited_ms = Some(u64::try_from(waited.as_millis()).unwrap_or(0));
            true
        }
        Err(pids) => {
            let seconds = opts.timeout.as_secs();
            fail(
                opts,
                status,
                progress,
                status::FIREFOX_DID_NOT_QUIT,
                format!("Firefox was still running after {seconds} s (processes {pids:?}); nothing was evicted or started"),
                json!({ "seconds": seconds, "pids": pids }),
            );
            false
        }
    }
}

/// Evict (if cold) and start Firefox again, as the user this process runs as.
pub fn evict_and_start(
    snap: &Snapshot,
    opts: &Options,
    status: &mut Status,
    progress: &mut dyn FnMut(&Status),
) {
    if opts.cold {
        status.stage = Stage::Evicting;
        record(opts, status, progress);
        match evict(&snap.install_dir) {
            Ok(evicted) => status.evicted = Some(evicted),
            // Not fatal: Firefox is started again all the same, the record says the evict failed.
            Err(e) => {
                status.error = Some(Failure {
                    code: status::EVICT_FAILED.to_owned(),
                    message: format!("the evict failed: {e}"),
                    params: json!({ "detail": e.to_string() }),
                });
            }
        }
    }
    // Recorded as started at once, so the restarted Firefox's page finds its own pid there; a
    // start that fails within seconds then turns the record into a failure.
    let (cwd, moved) = working_folder(snap);
    if let Some(said) = &moved {
        eprintln!("about-startup-host: note: {said}");
        status.working_folder = Some(said.clone());
    }
    let started = start(snap, &opts.open, &cwd).and_then(|mut child| {
        status.stage = Stage::Started;
        status.new_pid = i32::try_from(child.id()).ok();
        record(opts, status, progress);
        early_exit(&mut child, &snap.exe).map_or(Ok(()), Err)
    });
    if let Err(detail) = started {
        fail(
            opts,
            status,
            progress,
            status::LAUNCH_FAILED,
            format!("Firefox could not be started again: {detail}"),
            json!({ "detail": detail }),
        );
    }
}

#[cfg(test)]
mod tests;
