//! Page-cache residency, page by page (mincore), with the kernel's blind spot made explicit:
//! since Linux 5.2 mincore reports every page resident for files the caller neither owns nor may
//! write, so those files are `hidden`, never 100%. OWNER: kernel helper.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use serde::Serialize;

use crate::Error;

/// What this host can measure for this user (part of `hello`).
#[derive(Debug, Clone, Serialize)]
pub struct Capabilities {
    pub kernel: String,
    pub euid: u32,
    pub root: bool,
    /// "all" or "owned_or_writable".
    pub mincore_exact: &'static str,
    pub cachestat: bool,
}

#[must_use]
pub fn capabilities() -> Capabilities {
    todo!()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// Under the install folder.
    Install,
    /// Mapped by Firefox from elsewhere (system libraries, fonts).
    System,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Exact,
    Hidden,
    Error,
}

/// Pages of a file the running Firefox has mapped in (what an ordinary user *can* see).
#[derive(Debug, Clone, Serialize)]
pub struct Mapped {
    /// "pagemap" or "smaps".
    pub source: &'static str,
    pub pid: i32,
    pub pages: u64,
    pub ranges: Option<Vec<[u64; 2]>>,
    pub range_unit_pages: u64,
}

/// One `file` event (docs/PROTOCOL.md, `residency`).
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub path: PathBuf,
    pub group: Group,
    pub size: u64,
    pub pages: u64,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub resident_pages: Option<u64>,
    pub resident_ranges: Option<Vec<[u64; 2]>>,
    pub range_unit_pages: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapped: Option<Mapped>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct GroupTotals {
    pub files: u64,
    pub size: u64,
    pub pages: u64,
    pub exact_files: u64,
    pub hidden_files: u64,
    pub error_files: u64,
    /// `None` as soon as one file of the group is hidden.
    pub resident_pages: Option<u64>,
    pub exact_pages: u64,
    pub mapped_pages: u64,
}

/// The final reply of `residency`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub install_dir: PathBuf,
    pub page_size: u64,
    pub groups: std::collections::BTreeMap<&'static str, GroupTotals>,
    pub elapsed_ms: u64,
}

pub struct ScanOptions {
    /// The Firefox process whose mappings are reported (and whose system libraries are scanned).
    pub pid: Option<i32>,
    /// Also scan files `pid` maps from outside the install folder.
    pub include_mapped: bool,
}

/// Scan `files` (already confined by `files::select`) and, if asked, the files `opts.pid` maps
/// from elsewhere. Calls `on_file` once per file, in order; checks `cancel` between files.
pub fn scan(
    install_dir: &Path,
    files: &[PathBuf],
    opts: &ScanOptions,
    cancel: &AtomicBool,
    on_file: &mut dyn FnMut(&FileReport),
) -> Result<Summary, Error> {
    let _ = (install_dir, files, opts, cancel, on_file);
    todo!()
}
