//! The record of the last planned preload (`last-run.json` in the state folder): written by every
//! `preload --plan` (`learn::plan`), read back by the autostart status. Its own module so that
//! the plan and the autostart each depend on it rather than on each other.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::learn::workingset;
use crate::pagecache::preload::Summary;

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

/// The last run recorded in `state_dir`, if any and readable.
pub fn read(state_dir: &Path) -> Option<LastRun> {
    let bytes = std::fs::read(state_dir.join(LAST_RUN_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Record a planned preload in the state folder (best effort: a read-only state folder must not
/// fail the preload itself).
pub fn write(state_dir: &Path, summary: &Summary) {
    let last = LastRun {
        at_ms: workingset::now_ms(),
        bytes: summary.bytes,
        elapsed_ms: summary.elapsed_ms,
        planned: summary.planned,
    };
    let _ = workingset::save_json(&state_dir.join(LAST_RUN_FILE), &last);
}
