//! The startup I/O trace (issue 11): which pages of which files a Firefox start read, when, by
//! which process, and where on the disk.
//!
//! - [`tracefs`]: the private tracefs instance, always removed (drop, Ctrl-C, panic);
//! - [`event`]: parsing of the kernel's event lines;
//! - [`build`]: from lines to reads of files by the Firefox tree (pure);
//! - [`record`]: arming, starting or attaching to Firefox, the /proc sampler (also the
//!   unprivileged fallback), resolution of dev+inode, FIEMAP extents;
//! - [`elf`]: section headers for the access-pattern chart;
//! - [`model`]: the serialized trace and its per-file table and text access map;
//! - [`store`]: stored traces in the state folder, bounded, paged for the protocol;
//! - [`user`]: the invoking user under sudo/pkexec;
//! - [`used`]: which read pages were then used (/proc/kpageflags for the traced page frames);
//! - [`plan_source`]: the page ranges stored traces of one install and build read and used, for
//!   `preload --plan --source trace` (learn/plan/traced.rs);

pub mod build;
pub mod elf;
pub mod event;
pub mod model;
pub mod plan_source;
pub mod record;
pub mod store;
pub mod tracefs;
pub mod used;

pub use model::{Trace, TRACE_VERSION};
