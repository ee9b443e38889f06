//! The startup I/O trace (issue 11): which pages of which files a Firefox start read, when, by
//! which process, and where on the disk.
//!
//! - [`event`]: parsing of the kernel's event lines;
//! - [`build`]: from lines to reads of files by the Firefox tree (pure);
//! - [`record`]: a recording of a process tree, as the user: the tracer's lines through its
//!   link (root's part is `tracer/`), the /proc sampler (also the unprivileged fallback),
//!   resolution of dev+inode, FIEMAP extents;
//! - [`elf`]: section headers for the access-pattern chart;
//! - [`code`]: which code faulted (a fault's instruction named as library, section, symbol);
//! - [`disk_time`]: how long each read took on the disk (its block requests, issue to completion);
//! - [`entries`]: which of omni.ja's entries the reads covered;
//! - [`model`]: the serialized trace;
//! - [`summary`]: every figure a person reads of a trace (files, charts as bins, code, entries,
//!   the profile's share), computed once for the page, the CLI and the exports;
//! - [`store`]: stored traces in the state folder, bounded, paged for the protocol;
//! - [`profiles`]: Firefox's own startup profiles stored beside their traces;
//! - [`used`]: which read pages were then used (/proc/kpageflags for the traced page frames);
//! - [`plan_source`]: the page ranges stored traces of one install and build read and used, for
//!   `preload --plan --source trace` (learn/plan/traced.rs);
//! - [`first_use`]: the same used pages with the time the start first needed each, for the
//!   launch prefetch's order (learn/prefetch/);

pub mod build;
pub mod code;
pub mod disk_time;
pub mod elf;
pub mod entries;
pub mod event;
pub mod first_use;
pub mod model;
pub mod plan_source;
pub mod profiles;
pub mod record;
pub mod store;
pub mod summary;
pub mod used;

pub use model::{Trace, TRACE_VERSION};
