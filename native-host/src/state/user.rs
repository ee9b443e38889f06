//! Under sudo the command runs as the user who asked (tracer/split.rs: root stays only the
//! tracer), and keeps its state where that user's own session does: their `XDG_STATE_HOME`,
//! which sudo (env_reset) does not pass on. It is read from the environment of the nearest
//! ancestor process that runs wholly as that user (the shell that ran `sudo`), else this
//! process's own (`sudo -E`) is kept, else `~/.local/state` is used.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use crate::os::proc;
use crate::os::proc::parse::{environ_var, parse_status};

/// Bounds of what is read from /proc for the environment: a process's `status` is ~1.5 KiB; an
/// environment is at most ARG_MAX-sized, and XDG_STATE_HOME is found in the first MiB or not at
/// all.
const STATUS_LIMIT: u64 = 64 * 1024;
const ENVIRON_LIMIT: u64 = 1024 * 1024;
/// Ancestors looked at: sudo sits one or two levels up, the split's root parent one more.
const ANCESTORS: usize = 16;

/// `XDG_STATE_HOME` of the nearest process from `pid` up whose every uid (real, effective,
/// saved, filesystem) is `uid`: the user's own session, as it was when they ran sudo.
fn session_state_home(mut pid: i32, uid: u32) -> Option<PathBuf> {
    for _ in 0..ANCESTORS {
        if pid <= 1 {
            return None;
        }
        let status = proc::read(pid, "status", STATUS_LIMIT).ok()?;
        let (ppid, uids) = parse_status(&status)?;
        if uids.iter().all(|u| *u == uid) {
            let environ = proc::read(pid, "environ", ENVIRON_LIMIT).ok()?;
            return environ_var(&environ, b"XDG_STATE_HOME")
                .map(|v| PathBuf::from(OsString::from_vec(v)))
                .filter(|p| p.is_absolute());
        }
        pid = ppid;
    }
    None
}

/// In the command the sudo split runs as the user: take the user's session's
/// `XDG_STATE_HOME` (else keep this environment's, else none: `~/.local/state`). Call while the
/// process has one thread (it sets an environment variable).
pub fn adopt_session_state_home() {
    let parent = i32::try_from(std::os::unix::process::parent_id()).unwrap_or(0);
    let uid = crate::os::sys::geteuid();
    if let Some(home) = session_state_home(parent, uid) {
        std::env::set_var("XDG_STATE_HOME", home);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 20 #10 at its root: the user's XDG_STATE_HOME is found in their own process above
    /// root's, and root's own processes are passed over.
    #[test]
    #[ignore = "needs root (a process of uid 65534 through setpriv): the root-only stage runs it"]
    fn the_users_xdg_state_home_is_read_from_their_process() {
        assert!(
            crate::os::sys::geteuid() == 0,
            "needs root: run with --ignored as root"
        );
        let mut child = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .args(["env", "XDG_STATE_HOME=/srv/nobody-state", "sleep", "30"])
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        // setpriv execs env, which execs sleep: the pid keeps its environment from env's exec.
        let mut found = None;
        for _ in 0..100 {
            found = session_state_home(pid, 65534);
            if found.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found, Some(PathBuf::from("/srv/nobody-state")));
        let me = i32::try_from(std::process::id()).unwrap();
        assert_eq!(
            session_state_home(me, 65534),
            None,
            "root's own tree is passed over"
        );
    }
}
