//! Users: who a uid is (the C library's name service: passwd, group), and becoming that user for
//! good. Used by the sudo split (tracer/split.rs): root looks the invoking user up, then the
//! child that runs the command drops to them before it parses anything, and only then, as
//! them, takes on their environment (main.rs).

use std::ffi::{CStr, CString};
use std::io;
use std::path::PathBuf;

/// A user as the name service knows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub uid: u32,
    pub gid: u32,
    pub name: String,
    pub home: PathBuf,
    /// Supplementary groups (`getgrouplist`), the primary one included.
    pub groups: Vec<u32>,
}

/// The passwd entry and supplementary groups of `uid`; `None` without a passwd entry.
#[must_use]
pub fn lookup(uid: u32) -> Option<Account> {
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
    let mut n = libc::c_int::try_from(groups.len()).unwrap_or(256);
    // SAFETY: groups has room for n entries; n is updated to the count.
    let rc = unsafe { libc::getgrouplist(cname.as_ptr(), gid, groups.as_mut_ptr(), &mut n) };
    groups.truncate(if rc < 0 {
        0
    } else {
        usize::try_from(n).unwrap_or(0)
    });
    Some(Account {
        uid,
        gid,
        name,
        home: PathBuf::from(home),
        groups,
    })
}

/// Become `account` for good: its groups, then its gid, then its uid (real, effective and
/// saved), then check that there is no way back: `setuid(0)` must fail and every id must be
/// the account's. Process-wide (the C library applies set*id to every thread); call it while
/// the process has one thread.
pub fn become_user(account: &Account) -> io::Result<()> {
    let (uid, gid) = (account.uid, account.gid);
    let groups: Vec<libc::gid_t> = account.groups.clone();
    // SAFETY: each call takes plain integers or a pointer to `groups`, valid for its length.
    unsafe {
        if libc::setgroups(groups.len(), groups.as_ptr()) != 0
            || libc::setresgid(gid, gid, gid) != 0
            || libc::setresuid(uid, uid, uid) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    if uid != 0 {
        // SAFETY: setuid takes an integer; it must fail now.
        if unsafe { libc::setuid(0) } == 0 {
            return Err(io::Error::other("setuid(0) still works after the drop"));
        }
    }
    let (mut r, mut e, mut s) = (0, 0, 0);
    let (mut rg, mut eg, mut sg) = (0, 0, 0);
    // SAFETY: out-parameters to local integers.
    let ok = unsafe {
        libc::getresuid(&mut r, &mut e, &mut s) == 0
            && libc::getresgid(&mut rg, &mut eg, &mut sg) == 0
    };
    if !ok || [r, e, s] != [uid; 3] || [rg, eg, sg] != [gid; 3] {
        return Err(io::Error::other(format!(
            "after the drop the ids are uid {r}/{e}/{s} gid {rg}/{eg}/{sg}, not {uid}/{gid}"
        )));
    }
    // The kernel made this process undumpable when its ids changed, so its /proc files are
    // root's; it is the user's process now, with nothing of root's in it (it was forked before
    // anything was read), so it belongs to the user again: /proc/<pid> says so.
    // SAFETY: prctl with integer arguments.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
    }
    Ok(())
}

/// Take on `account`'s environment once this process is theirs (the sudo split's child, after
/// [`become_user`]): `HOME`, `USER` and `LOGNAME` theirs, sudo's `SUDO_*` gone. Call while the
/// process has one thread (nothing reads the environment meanwhile).
pub fn adopt_environment(account: &Account) {
    std::env::set_var("HOME", &account.home);
    std::env::set_var("USER", &account.name);
    std::env::set_var("LOGNAME", &account.name);
    let sudo: Vec<_> = std::env::vars_os()
        .map(|(k, _)| k)
        .filter(|k| k.to_string_lossy().starts_with("SUDO_"))
        .collect();
    for k in sudo {
        std::env::remove_var(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_nobody_are_known_by_the_name_service() {
        // passwd's own entries on every Debian: uid 0 is root, 65534 is nobody.
        let root = lookup(0).expect("root has a passwd entry");
        assert_eq!(root.name, "root");
        assert_eq!(root.gid, 0);
        assert!(root.groups.contains(&0));
        let nobody = lookup(65534).expect("nobody has a passwd entry");
        assert_eq!(nobody.name, "nobody");
        assert_eq!(lookup(4_000_000_000), None);
    }
}
