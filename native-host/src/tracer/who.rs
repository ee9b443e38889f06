//! Whom the tracer works for, and which processes are theirs: the invoking user from the
//! variables pkexec and sudo set (never from an argument), their process tree from `/proc`.

use std::collections::HashMap;
use std::ffi::OsStr;

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

/// The tasks to follow for process `root` (its threads, and every descendant process's
/// threads, from `/proc`), and those left out because their process is not wholly the user's
/// (a setuid program the tree ran), with what it started. `gid`: the group of `root`.
#[must_use]
pub fn tree(root: i32, uid: u32, gid: u32) -> (Vec<i32>, Vec<i32>) {
    let mut yours = HashMap::new();
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for pid in proc::pids() {
        if let Some(c) = credentials(pid) {
            yours.insert(pid, wholly(&c, uid, Some(gid)));
            children.entry(c.ppid).or_default().push(pid);
        }
    }
    let (mut follow, mut left_out) = (Vec::new(), Vec::new());
    let mut queue = vec![(root, true)];
    while let Some((pid, parent_yours)) = queue.pop() {
        // `remove`: each process once, even if pids reused during the look made a loop.
        let Some(own) = yours.remove(&pid) else {
            continue;
        };
        let tasks = proc::tasks(pid).unwrap_or_default();
        let ok = parent_yours && own;
        if ok { &mut follow } else { &mut left_out }.extend(tasks);
        let kids = children.get(&pid).into_iter().flatten();
        queue.extend(kids.map(|child| (*child, ok)));
    }
    (follow, left_out)
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
