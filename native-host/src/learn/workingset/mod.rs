//! The working set of a Firefox start: which pages of which files the start needed, recorded from
//! the Firefox process tree, kept for the last [`KEEP_STARTS`] starts and merged (union of page
//! ranges) in `$XDG_STATE_HOME/about-startup/working-set.json`.
//!
//! Two sources, and the reply says which were used:
//! - `mapped`: pages the Firefox processes have present in their page tables (pagemap), which
//!   every user can see for their own processes (pagecache/residency/proc_maps.rs `ProcMaps`);
//! - `resident`: the page cache itself (mincore), unioned in for install files where residency
//!   is exact (root, or a Firefox the user owns) **and** the start really read from storage.
//!   Firefox `readahead`s whole libraries before loading them, so after a cold start the cache
//!   holds what the start read, mapped or not. After a warm start (a full preload, a hot cache)
//!   residency says nothing about the start: it is ignored, or one full preload would teach the
//!   plan "everything".
//!
//! Each file carries its identity (size, mtime, inode, device): a Firefox update changes it, and
//! the plan falls back to a full read of that file until the next `learn`.
//!
//! Here: the limits and names of the state. `model.rs` holds the types (a file's identity and
//! pages, a start, the kept starts and their merge), `record.rs` the recording of a start from
//! the process tree and `learn`, `store.rs` the state file in the state folder (crate::state:
//! where, safe to write, atomic writes, the lock).

use std::collections::BTreeMap;
use std::fs::Metadata;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::firefox::{install, process};
use crate::os::beneath::{Folder, Folders};
use crate::os::sys;
use crate::pagecache::residency::ProcMaps;
use crate::pagecache::view::{pages_of, run_lengths, Viewer};
use crate::state::StateDir;
use crate::Error;

/// The state file's format version; a file of another version is ignored (and replaced).
pub const STATE_VERSION: u32 = 1;
/// Starts kept and merged: enough to cover a start that opened a rarely used dialog or a
/// session with other tabs, few enough that a page no start uses any more soon drops out.
pub const KEEP_STARTS: usize = 5;
/// Install folders whose starts are kept (ESR beside a tarball Nightly, say): more than a person
/// runs, few enough to bound the state file.
pub const KEEP_INSTALLS: usize = 4;
/// The state file's name in the state folder.
pub const STATE_FILE: &str = "working-set.json";
/// A start whose process tree read less than this from storage was warm: the cache's content is
/// not evidence of what it needed (a cold ESR 153 start reads ~270 MB, a hot one a few MB).
/// The figure is the tree's `read_bytes`, which counts every read (the profile's too), not only
/// the install folder's: a gate, not a measurement of the install's coldness.
pub const RESIDENT_EVIDENCE_BYTES: u64 = 32 * 1024 * 1024;

mod model;
mod record;
mod store;

pub use model::{changed_files, union, FileSet, Identity, Start, State};
pub use record::{learn, record, LearnSummary, ResidentUse, Sources};
pub use store::{load, parse_state, save, MAX_STATE_BYTES};
