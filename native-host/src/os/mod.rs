//! The ground floor: what the operating system offers, in the terms the rest of the host needs,
//! and nothing of the host above it (today not even `error`). Every folder may use it; it uses
//! none of them (tests/layering.rs checks).
//!
//! - [`sys`]: thin wrappers around the syscalls (mincore, fadvise, readahead, FIEMAP, ioprio,
//!   cachestat, flock, ids, page size, clock ticks), so callers stay safe code;
//! - [`beneath`]: opening a file beneath a folder held open by descriptor, never through a
//!   symlink: the one way the host opens a file it was asked about;
//! - [`proc`]: the one reader of `/proc` (bounded, `O_NOFOLLOW`) and its pure parsers;
//! - [`clock`]: the wall clock and the monotonic and boot clocks a recording lines up on;
//! - [`binary`]: this binary, Firefox's binary in an install folder, and the rule for a binary
//!   that another user or root will run.

pub mod account;
pub mod beneath;
pub mod binary;
pub mod clock;
pub mod held;
pub mod proc;
pub mod sys;
#[cfg(test)]
pub(crate) mod test_support;

/// A FIFO at `path` (what tests plant where a file is expected: a blocking open would wait for a
/// writer for ever).
#[cfg(test)]
pub(crate) fn mkfifo(path: &std::path::Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}
