//! Whom the tracer works for, and which processes are theirs: the invoking user from the
//! variables pkexec and sudo set (never from an argument), their process tree from `/proc`.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::os::fd::OwnedFd;

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::process::{pidfd_open, Pid, PidfdFlags};

use crate::os::proc::{self, parse::Credentials};

/// How root's part was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `pkexec … tracer` (PKEXEC_UID): the page's "Restart cold and trace", the CLI of a user.
    Pkexec,
    /// `sudo …` (SUDO_UID): the sudo split (tracer/split.rs).
    Sudo,
    /// Root itself (neither variable): root's own commands.
    Root,
}

/// The invoking user from `SUDO_UID` and `PKEXEC_UID`: pkexec's wins where both are set and
/// agree; two different users, or a value that is not a uid, are refused; neither is root
/// itself. Pure.
pub fn invoker(sudo: Option<&OsStr>, pkexec: Option<&OsStr>) -> Result<(Route, u32), String> {
    let parse = |name: &str, value: &OsStr| {
        value
            .to_str()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .ok_or_else(|| format!("{name} is {value:?}, not a uid"))
    };
    let sudo = sudo.map(|v| parse("SUDO_UID", v)).transpose()?;
    let pkexec = pkexec.map(|v| parse("PKEXEC_UID", v)).transpose()?;
    match (sudo, pkexec) {
        (Some(s), Some(p)) if s != p => Err(format!(
            "SUDO_UID ({s}) and PKEXEC_UID ({p}) name different users"
        )),
        (_, Some(p)) => Ok((Route::Pkexec, p)),
        (Some(s), None) => Ok((Route::Sudo, s)),
        (None, None) => Ok((Route::Root, 0)),
    }
}

/// Whether a process with `creds` is wholly user `uid`'s: its four uids are `uid`, its four
/// gids one group (`gid` when given), and, unless the user is root, it has no effective
/// capability (a setuid, setgid or file-capability program it ran makes it someone else). Pure.
#[must_use]
pub fn wholly(creds: &Credentials, uid: u32, gid: Option<u32>) -> bool {
    let group = gid.unwrap_or(creds.gids[0]);
    creds.uids.iter().all(|u| *u == uid)
        && creds.gids.iter().all(|g| *g == group)
        && (uid == 0 || creds.cap_eff == 0)
}

/// `/proc/<pid>/status`'s credentials; `None` once the process is gone.
#[must_use]
pub fn credentials(pid: i32) -> Option<Credentials> {
    let text = proc::read(pid, "status", proc::SMALL_BYTES).ok()?;
    proc::parse::parse_credentials(&text)
}

/// A task of the tree, held by a pidfd opened before its process was looked at: while the pidfd
/// says it has not exited, its number is this task's (a number is free for reuse only once its
/// task is gone).
#[derive(Debug)]
pub struct Held {
    pub tid: i32,
    fd: OwnedFd,
}

impl Held {
    /// Whether the task has not exited (a pidfd of a thread, `PIDFD_THREAD`, polls readable
    /// once it has).
    #[must_use]
    pub fn alive(&self) -> bool {
        let mut fds = [PollFd::new(&self.fd, PollFlags::IN)];
        let zero = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        matches!(poll(&mut fds, Some(&zero)), Ok(0))
    }
}

/// Who the kernel says owns process `pid`'s files: its effective uid while it is dumpable, root
/// (task_dump_owner) while it is not. The folder `/proc/<pid>` itself always shows the
/// effective uid, so a file in it is asked.
#[must_use]
pub fn dump_owner(pid: i32) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let status = std::fs::symlink_metadata(format!("/proc/{pid}/status")).ok()?;
    Some(status.uid())
}

/// `PIDFD_THREAD` (Linux 6.9): a pidfd of one thread.
const PIDFD_THREAD: u32 = libc::O_EXCL as u32;

/// Whether user `uid` could ptrace process `pid` as the kernel decides it for them
/// (PTRACE_MODE_ATTACH, as opening `/proc/<pid>/mem` asks): the process is dumpable (the kernel
/// gives its `/proc` files to root otherwise: ssh-agent and gpg-agent make themselves so, and
/// so does a setuid or setgid exec) and Yama allows it (`ptrace_scope` 1: only a descendant of
/// the user's process `invoker`, the one that asked; 2 and 3: no one but root). Root itself
/// may (CAP_SYS_PTRACE).
#[must_use]
pub fn traceable(pid: i32, uid: u32, invoker: i32, yama: u8) -> bool {
    if uid == 0 {
        return true;
    }
    let descends = || {
        let mut p = pid;
        for _ in 0..4096 {
            if p == invoker {
                return true;
            }
            match credentials(p) {
                Some(c) if c.ppid > 1 => p = c.ppid,
                _ => return false,
            }
        }
        false
    };
    dump_owner(pid) == Some(uid) && (yama == 0 || (yama == 1 && descends()))
}

/// Yama's `ptrace_scope` (0 without Yama; 3 where unreadable).
#[must_use]
pub fn yama_scope() -> u8 {
    match proc::read_system("sys/kernel/yama/ptrace_scope", 16) {
        Ok(text) => String::from_utf8_lossy(&text).trim().parse().unwrap_or(3),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(_) => 3,
    }
}

/// The tasks to follow for process `root` (its threads, and every descendant process's
/// threads, from `/proc`), each held (a pidfd opened, then its process looked at again: wholly
/// the user's, `gid` its group, and traceable by them). A process that is not is left out with
/// what it started.
#[must_use]
pub fn tree(root: i32, uid: u32, gid: u32, invoker: i32) -> Vec<Held> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for pid in proc::pids() {
        if let Some(c) = credentials(pid) {
            children.entry(c.ppid).or_default().push(pid);
        }
    }
    let yama = yama_scope();
    let (mut follow, mut seen) = (Vec::new(), HashSet::new());
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        // Each process once, even if pids reused during the look made a loop.
        if !seen.insert(pid) {
            continue;
        }
        let flags = PidfdFlags::from_bits_retain(PIDFD_THREAD);
        let held: Vec<Held> = proc::tasks(pid)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|tid| {
                let fd = pidfd_open(Pid::from_raw(tid)?, flags).ok()?;
                Some(Held { tid, fd })
            })
            .collect();
        let own = credentials(pid).is_some_and(|c| wholly(&c, uid, Some(gid)))
            && traceable(pid, uid, invoker, yama);
        if own {
            follow.extend(held);
            queue.extend(children.get(&pid).into_iter().flatten());
        }
    }
    follow
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds(uid: u32, gid: u32, cap: u64) -> Credentials {
        Credentials {
            state: 'S',
            ppid: 1,
            uids: [uid; 4],
            gids: [gid; 4],
            cap_eff: cap,
        }
    }

    #[test]
    fn the_invoker_comes_from_pkexec_or_sudo_and_disagreement_is_refused() {
        let v = |s: &str| Some(OsStr::new(s).to_owned());
        let call = |a: Option<std::ffi::OsString>, b: Option<std::ffi::OsString>| {
            invoker(a.as_deref(), b.as_deref())
        };
        assert_eq!(call(None, None), Ok((Route::Root, 0)));
        assert_eq!(call(v("1000"), None), Ok((Route::Sudo, 1000)));
        assert_eq!(call(None, v("1001")), Ok((Route::Pkexec, 1001)));
        assert_eq!(call(v("1001"), v("1001")), Ok((Route::Pkexec, 1001)));
        assert!(call(v("1000"), v("1001"))
            .unwrap_err()
            .contains("different users"));
        assert!(call(v("10x"), None).unwrap_err().contains("not a uid"));
        assert!(call(None, v("-1")).unwrap_err().contains("not a uid"));
    }

    #[test]
    fn a_process_is_wholly_the_users_only_with_every_id_and_no_capability() {
        assert!(wholly(&creds(1000, 1000, 0), 1000, None));
        assert!(wholly(&creds(1000, 1000, 0), 1000, Some(1000)));
        assert!(!wholly(&creds(1000, 1000, 0), 1001, None));
        assert!(!wholly(&creds(1000, 1000, 0), 1000, Some(27)));
        // A file-capability program: the same ids, a capability.
        assert!(!wholly(&creds(1000, 1000, 1 << 13), 1000, None));
        // Root's own processes have every capability.
        assert!(wholly(&creds(0, 0, 0x1ff_feff_ffff), 0, None));
        // A setuid program: the effective uid is root's.
        let mut setuid = creds(1000, 1000, 0);
        setuid.uids[1] = 0;
        assert!(!wholly(&setuid, 1000, None));
        // A setgid program: one gid differs.
        let mut setgid = creds(1000, 1000, 0);
        setgid.gids[1] = 42;
        assert!(!wholly(&setgid, 1000, None));
    }
}
