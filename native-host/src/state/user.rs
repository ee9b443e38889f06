//! Whom root acts for. Under `sudo` or `pkexec` the host runs as root but works for the user who
//! asked (SUDO_UID / PKEXEC_UID): their state folder holds what it keeps, what it creates there
//! belongs to them, and Firefox is started as them, never as root.
//!
//! Their state folder follows *their* `XDG_STATE_HOME`, which `sudo` (env_reset) and `pkexec`
//! (a cleared environment) do not pass on: it is read from the environment of the nearest
//! ancestor process that runs wholly as that user (the shell that ran `sudo`, the host that ran
//! `pkexec`), else from this process's environment (`sudo -E`), else `~/.local/state`.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use crate::os::proc;
use crate::os::proc::parse::{environ_var, parse_status};
use crate::Error;

/// How root came to act for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `sudo` (SUDO_UID).
    Sudo,
    /// `pkexec` (PKEXEC_UID), e.g. the page's "Restart cold and trace" through polkit.
    Pkexec,
}

/// A user to run Firefox as and to keep state for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub uid: u32,
    pub gid: u32,
    pub name: String,
    pub home: PathBuf,
    pub groups: Vec<u32>,
    /// Their `XDG_STATE_HOME` (absolute), where it could be found.
    pub state_home: Option<PathBuf>,
    pub via: Via,
}

/// The user this process acts for: `Some` only when it runs as root under `sudo` or `pkexec` for
/// another user; `None` means this process's own user (root included, when root asked itself).
///
/// An error, never a guess, when the variables say something root cannot act on: a uid that
/// does not parse, no passwd entry, or SUDO_UID and PKEXEC_UID naming two different users.
pub fn acting_for() -> Result<Option<User>, Error> {
    if crate::os::sys::geteuid() != 0 {
        return Ok(None);
    }
    let var = |name: &str| std::env::var_os(name).map(|v| (name.to_owned(), v));
    let Some((via, uid)) = from_vars(var("SUDO_UID"), var("PKEXEC_UID"))? else {
        return Ok(None);
    };
    let mut user = lookup(uid, via).ok_or_else(|| {
        Error::io(
            format!("root acts for uid {uid} (from {via:?}), which has no passwd entry"),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )
    })?;
    let parent = i32::try_from(std::os::unix::process::parent_id()).unwrap_or(0);
    user.state_home = session_state_home(parent, uid).or_else(|| absolute_env("XDG_STATE_HOME"));
    Ok(Some(user))
}

/// Which uid SUDO_UID / PKEXEC_UID name (uid 0 is root acting for itself: `None`). Pure.
fn from_vars(
    sudo: Option<(String, std::ffi::OsString)>,
    pkexec: Option<(String, std::ffi::OsString)>,
) -> Result<Option<(Via, u32)>, Error> {
    let parse = |(name, value): (String, std::ffi::OsString)| {
        value
            .to_str()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .ok_or_else(|| {
                Error::io(
                    format!(
                        "{name} is {value:?}, not a uid; unset it or run through sudo or pkexec"
                    ),
                    std::io::Error::from(std::io::ErrorKind::InvalidInput),
                )
            })
    };
    let sudo = sudo.map(parse).transpose()?;
    let pkexec = pkexec.map(parse).transpose()?;
    let chosen = match (sudo, pkexec) {
        (Some(s), Some(p)) if s != p => {
            return Err(Error::io(
                format!(
                "SUDO_UID ({s}) and PKEXEC_UID ({p}) name different users; run through one of them"
            ),
                std::io::Error::from(std::io::ErrorKind::InvalidInput),
            ))
        }
        (Some(s), _) => Some((Via::Sudo, s)),
        (None, Some(p)) => Some((Via::Pkexec, p)),
        (None, None) => None,
    };
    Ok(chosen.filter(|(_, uid)| *uid != 0))
}

fn absolute_env(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// Bounds of what is read from /proc for the environment: a process's `status` is ~1.5 KiB; an
/// environment is at most ARG_MAX-sized, and XDG_STATE_HOME is found in the first MiB or not at
/// all.
const STATUS_LIMIT: u64 = 64 * 1024;
const ENVIRON_LIMIT: u64 = 1024 * 1024;
/// Ancestors looked at: sudo and pkexec sit one or two levels up.
const ANCESTORS: usize = 16;

/// `XDG_STATE_HOME` of the nearest process from `pid` up whose every uid (real, effective,
/// saved, filesystem) is `uid`: the user's own session, as it was when they ran sudo or pkexec.
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
                .map(|v| PathBuf::from(<std::ffi::OsString as OsStringExt>::from_vec(v)))
                .filter(|p| p.is_absolute());
        }
        pid = ppid;
    }
    None
}

/// The passwd entry and supplementary groups of `uid`.
#[must_use]
pub fn lookup(uid: u32, via: Via) -> Option<User> {
    let mut buf = vec![0 as libc::c_char; 16384];
    // SAFETY: zeroed passwd is a valid out-parameter for getpwuid_r.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; buf outlives the use of pw's strings below.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc != 0 || result.is_null() {
        return None;
    }
    // SAFETY: getpwuid_r succeeded, so pw_name and pw_dir are NUL-terminated strings in buf.
    let (name, home) = unsafe {
        (
            CStr::from_ptr(pw.pw_name).to_string_lossy().into_owned(),
            CStr::from_ptr(pw.pw_dir).to_string_lossy().into_owned(),
        )
    };
    let gid = pw.pw_gid;
    let cname = CString::new(name.clone()).ok()?;
    let mut groups = vec![0 as libc::gid_t; 256];
    let mut n = groups.len() as libc::c_int;
    // SAFETY: groups has room for n entries; n is updated to the count.
    let rc = unsafe { libc::getgrouplist(cname.as_ptr(), gid, groups.as_mut_ptr(), &mut n) };
    groups.truncate(if rc < 0 { 0 } else { n.max(0) as usize });
    Some(User {
        uid,
        gid,
        name,
        home: PathBuf::from(home),
        groups,
        state_home: None,
        via,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str, v: &str) -> Option<(String, std::ffi::OsString)> {
        Some((name.to_owned(), v.into()))
    }

    #[test]
    fn sudo_and_pkexec_name_the_user_and_disagreeing_ones_are_refused() {
        assert_eq!(from_vars(None, None).unwrap(), None);
        assert_eq!(
            from_vars(var("SUDO_UID", "1000"), None).unwrap(),
            Some((Via::Sudo, 1000))
        );
        assert_eq!(
            from_vars(None, var("PKEXEC_UID", "1001")).unwrap(),
            Some((Via::Pkexec, 1001))
        );
        assert_eq!(
            from_vars(var("SUDO_UID", "1000"), var("PKEXEC_UID", "1000")).unwrap(),
            Some((Via::Sudo, 1000))
        );
        // Root asking for itself acts for nobody else.
        assert_eq!(from_vars(var("SUDO_UID", "0"), None).unwrap(), None);
        let err = from_vars(var("SUDO_UID", "1000"), var("PKEXEC_UID", "1001")).unwrap_err();
        assert!(err.to_string().contains("different users"), "{err}");
        let err = from_vars(var("SUDO_UID", "10x"), None).unwrap_err();
        assert!(err.to_string().contains("not a uid"), "{err}");
    }

    /// Issue 20 #10 at its root: the user's XDG_STATE_HOME is found in their own process above
    /// root's, and root's own processes are passed over.
    #[test]
    fn the_users_xdg_state_home_is_read_from_their_process() {
        if crate::os::sys::geteuid() != 0 {
            eprintln!("needs root: skipped the_users_xdg_state_home_is_read_from_their_process");
            return;
        }
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
