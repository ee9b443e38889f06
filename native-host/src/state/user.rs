//! Who the trace is for. Under `sudo`/`pkexec` the recording runs as root but the trace belongs
//! to the invoking user (SUDO_UID / PKEXEC_UID): it is stored in their state folder, owned by
//! them, and Firefox is started as them, never as root.

use std::ffi::{CStr, CString};
use std::path::PathBuf;

/// A user to run Firefox as and to store the trace for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub uid: u32,
    pub gid: u32,
    pub name: String,
    pub home: PathBuf,
    pub groups: Vec<u32>,
}

/// The invoking user when running as root under sudo or pkexec; `None` otherwise (then the
/// current user is meant).
#[must_use]
pub fn invoking() -> Option<User> {
    if crate::pagecache::sys::geteuid() != 0 {
        return None;
    }
    let uid: u32 = std::env::var("SUDO_UID")
        .or_else(|_| std::env::var("PKEXEC_UID"))
        .ok()?
        .parse()
        .ok()?;
    if uid == 0 {
        return None;
    }
    lookup(uid)
}

/// The passwd entry and supplementary groups of `uid`.
#[must_use]
pub fn lookup(uid: u32) -> Option<User> {
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
    })
}

/// The state folder of `user` (their `~/.local/state/about-startup`), or the current user's.
pub fn state_dir(user: Option<&User>) -> Result<PathBuf, crate::Error> {
    match user {
        Some(u) => Ok(u.home.join(".local/state/about-startup")),
        None => crate::learn::workingset::state_dir(),
    }
}

/// Give the folder `path` to `user` (no-op without one). `lchown`: the folder sits in the user's
/// own state folder, so root never follows a symlink the user may have put in its place.
pub fn chown(path: &std::path::Path, user: Option<&User>) {
    if let Some(u) = user {
        let _ = std::os::unix::fs::lchown(path, Some(u.uid), Some(u.gid));
    }
}
