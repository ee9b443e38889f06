//! What tests of the folders that open files beneath an install share.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

/// tmp/ff (a.so "a", sub/b.so "b", link → ../outside) and an empty tmp/outside: a folder with a
/// way out through a symlink, for the caller to add to. Returns the folder's path as made (not
/// canonical).
pub(crate) fn folder_with_a_way_out() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ff = tmp.path().join("ff");
    fs::create_dir_all(ff.join("sub")).unwrap();
    fs::write(ff.join("a.so"), "a").unwrap();
    fs::write(ff.join("sub/b.so"), "b").unwrap();
    fs::create_dir(tmp.path().join("outside")).unwrap();
    symlink("../outside", ff.join("link")).unwrap();
    (tmp, ff)
}

/// `from` copied to `to` (replaced if there), mode 0755, for a test to run. Written by `install`
/// (coreutils) in a process of its own, never by this one: a file this process writes is open
/// for writing in every child another test thread forks meanwhile, until that child execs, and
/// exec of a file open for writing anywhere fails with ETXTBSY ("Text file busy", seen under
/// load). Once `install` has exited, no process holds the copy open for writing.
pub(crate) fn copy_executable(from: &std::path::Path, to: &std::path::Path) {
    let status = std::process::Command::new("install")
        .args(["-m", "0755"])
        .arg(from)
        .arg(to)
        .status()
        .expect("install (coreutils) runs");
    assert!(
        status.success(),
        "install {} {}: {status}",
        from.display(),
        to.display()
    );
}
