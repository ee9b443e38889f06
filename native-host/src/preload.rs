//! Read files into the page cache ahead of time, with progress and cancel. OWNER: kernel helper.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The method measured fastest (docs/benchmarks.md).
    #[default]
    Auto,
    /// Large read(2) calls into a reused buffer, like `cat`.
    Read,
    /// readahead(2) over the whole file.
    Readahead,
    /// posix_fadvise(POSIX_FADV_WILLNEED).
    Fadvise,
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    pub method: Method,
    /// Idle I/O priority class (ionice -c3).
    pub idle: bool,
    /// Files read at once; `None` lets the host choose.
    pub jobs: Option<usize>,
}

/// One `progress` event.
#[derive(Debug, Clone, Serialize)]
pub struct Progress {
    pub bytes_done: u64,
    pub bytes_total: u64,
    pub files_done: u64,
    pub files_total: u64,
    pub current_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileError {
    pub path: PathBuf,
    pub error: String,
}

/// The final reply of `preload`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub files: u64,
    pub bytes: u64,
    pub elapsed_ms: u64,
    pub mb_per_s: f64,
    pub method: Method,
    pub jobs: usize,
    pub idle: bool,
    pub errors: Vec<FileError>,
}

/// Preload `files` (already confined). `on_progress` is called at most every 100 ms, at least
/// once per file and once at the end. Returns `Error::Cancelled` if `cancel` becomes true.
pub fn preload(
    files: &[PathBuf],
    opts: &Options,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<Summary, Error> {
    let _ = (files, opts, cancel, on_progress);
    todo!()
}

