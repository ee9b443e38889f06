//! The record of the last planned preload (`last-run.json` in the state folder): written by every
//! `preload --plan` (`learn::plan`), read back by the autostart status. Its own module so that
//! the plan and the autostart each depend on it rather than on each other.

use serde::{Deserialize, Serialize};

use crate::os::clock::now_ms;
use crate::pagecache::preload::Summary;
use crate::state::StateDir;

/// The last planned preload, in the state folder.
pub const LAST_RUN_FILE: &str = "last-run.json";

/// The last planned preload (written by every `preload --plan`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastRun {
    pub at_ms: u64,
    pub bytes: u64,
    pub elapsed_ms: u64,
    pub planned: bool,
}

/// The most a last-run file holds: four numbers, a few dozen bytes.
pub const MAX_LAST_RUN_BYTES: u64 = 4096;

/// The last run recorded in `state`, if any, readable and well-formed.
pub fn read(state: &StateDir) -> Option<LastRun> {
    parse(&state.read(LAST_RUN_FILE, MAX_LAST_RUN_BYTES).ok()??)
}

/// A last-run file's bytes, if they are one. Pure (the fuzz target `last_run` drives it).
#[must_use]
pub fn parse(bytes: &[u8]) -> Option<LastRun> {
    serde_json::from_slice(bytes).ok()
}

/// Record a planned preload in the state folder (best effort: a read-only state folder must not
/// fail the preload itself).
pub fn write(state: &StateDir, summary: &Summary) {
    let last = LastRun {
        at_ms: now_ms(),
        bytes: summary.bytes,
        elapsed_ms: summary.elapsed_ms,
        planned: summary.planned,
    };
    if let Ok(bytes) = serde_json::to_vec(&last) {
        let _ = state.write(LAST_RUN_FILE, &bytes);
    }
}
