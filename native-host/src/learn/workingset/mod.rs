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
//! Here: the files and what they export. `model.rs` holds the limits and names of the state and the types (a file's identity and
//! pages, a start, the kept starts and their merge), `record.rs` the recording of a start from
//! the process tree and `learn`, `store.rs` the state file in the state folder (crate::state:
//! where, safe to write, atomic writes, the lock).

mod model;
mod record;
mod store;

pub use model::{
    changed_files, union, FileSet, Identity, Start, State, KEEP_INSTALLS, KEEP_STARTS, STATE_FILE,
    STATE_VERSION,
};
pub use record::{learn, record, LearnSummary, ResidentUse, Sources, RESIDENT_EVIDENCE_BYTES};
pub use store::{load, load_or_set_aside, parse_state, save, MAX_STATE_BYTES};
