//! Drop files' clean pages from the page cache (fadvise DONTNEED). OWNER: kernel helper.

use std::path::PathBuf;

use serde::Serialize;

use crate::residency::Status;

/// One file's result.
#[derive(Debug, Clone, Serialize)]
pub struct FileResult {
    pub path: PathBuf,
    pub pages: u64,
    pub status: Status,
    pub resident_before: Option<u64>,
    pub resident_after: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The final reply of `evict`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub files: Vec<FileResult>,
    /// Sum over exact files; hidden files are not counted.
    pub pages_dropped: u64,
    pub elapsed_ms: u64,
}

/// Evict `files` (already confined). Per-file problems go into that file's result.
#[must_use]
pub fn evict(files: &[PathBuf]) -> Summary {
    let _ = files;
    todo!()
}
