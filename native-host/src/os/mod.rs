//! The ground floor: what the operating system offers, in the terms the rest of the host needs,
//! and nothing of the host above it (it uses only `error`, none of the folders). Every folder may
//! use it; it uses none of them (tests/layering.rs checks).
//!
//! - [`sys`]: thin wrappers around the syscalls (mincore, fadvise, readahead, FIEMAP, ioprio,
//!   cachestat, flock, ids, page size, clock ticks): the only `unsafe` of the crate;
//! - [`beneath`]: opening a file beneath a folder held open by descriptor, never through a
//!   symlink: the one way the host opens a file it was asked about.

pub mod beneath;
pub mod binary;
pub mod clock;
pub mod proc;
pub mod sys;
