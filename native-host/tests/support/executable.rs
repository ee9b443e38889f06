//! Copies of programs that a test then runs, made so that running them cannot fail with ETXTBSY.
//!
//! A file this process writes is open for writing in every child another test thread forks
//! meanwhile, until that child execs (O_CLOEXEC closes it only then), and the kernel refuses to
//! exec a file open for writing anywhere: "Text file busy", as launch_edges.rs saw under load.
//! `install` (coreutils) writes the copy in a process of its own, which forks nothing; once it
//! has exited, no descriptor open for writing on the copy exists in any process.
//!
//! One file for both kinds of test: the integration tests include it with `#[path]`, and so does
//! the crate's unit tests' `os::test_support` (`crate::os::test_support::copy_executable`), since integration
//! tests cannot reach the crate's cfg(test) items.

#![allow(dead_code)] // each includer uses part of it

use std::path::Path;
use std::process::Command;

/// `from` copied to `to` (replaced if there), mode 0755, by `install`: see the module's note.
pub fn copy_executable(from: &Path, to: &Path) {
    let status = Command::new("install")
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
