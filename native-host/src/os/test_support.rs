//! What tests of the folders that open files beneath an install share.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

// `copy_executable`: the integration tests' own file (tests/support/), since they cannot reach
// the crate's cfg(test) items; one copy for both.
#[path = "../../tests/support/executable.rs"]
mod executable;
pub(crate) use executable::copy_executable;

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
