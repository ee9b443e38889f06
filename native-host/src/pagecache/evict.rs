//! Drop files' clean pages from the page cache (fadvise DONTNEED).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::os::beneath::Opener;
use crate::os::sys::{self, Advice};
use crate::pagecache::problem::{FileErrorCode, Problem};
use crate::pagecache::residency::{Status, HIDDEN_REASON};
use crate::pagecache::view::{count_resident, pages_of, Viewer};

/// Why `resident_after` can stay above 0: DONTNEED skips pages mapped by a process
/// (mm/truncate.c `mapping_try_invalidate` leaves mapped folios alone) and dirty or writeback
/// pages (it only starts writeback; a file just copied stays cached until it is on disk).
const MAPPED_NOTE: &str = crate::note::PAGES_STAYED_EN;

/// One file's result.
#[derive(Debug, Clone, Serialize)]
pub struct FileResult {
    #[serde(flatten, with = "crate::path_text::path")]
    pub path: PathBuf,
    pub pages: u64,
    pub status: Status,
    pub resident_before: Option<u64>,
    pub resident_after: Option<u64>,
    /// English, for the CLI and older extensions; `note_code` is what to word (crate::note).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note_code: Option<&'static str>,
    /// What went wrong (`error`, `error_code`, `error_params` on the wire).
    #[serde(flatten)]
    pub problem: Option<Problem>,
}

/// The final reply of `evict`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub files: Vec<FileResult>,
    /// Files left out of `files` to keep the reply bounded (`pages_dropped` still counts them).
    #[serde(skip_serializing_if = "crate::pagecache::is_zero")]
    pub files_omitted: u64,
    /// Sum over exact files; hidden files are not counted.
    pub pages_dropped: u64,
    pub elapsed_ms: u64,
    /// Which cache was dropped: `files`, `image` (a squashfs install's compressed image) or
    /// `all` (both); set by the caller that chose the paths.
    pub cache: crate::pagecache::Cache,
}

/// Evict `files` (already confined), each opened beneath `folder`. Per-file problems go into
/// that file's result.
#[must_use]
pub fn evict(folder: &dyn Opener, files: &[PathBuf]) -> Summary {
    let started = Instant::now();
    let viewer = Viewer::current();
    let mut core = Vec::new();
    let results: Vec<FileResult> = files
        .iter()
        .map(|p| evict_file(folder, p, &viewer, &mut core))
        .collect();
    let pages_dropped = results
        .iter()
        .filter_map(|r| Some(r.resident_before?.saturating_sub(r.resident_after?)))
        .sum();
    Summary {
        files: results,
        files_omitted: 0,
        pages_dropped,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        cache: crate::pagecache::Cache::Files,
    }
}

fn evict_file(folder: &dyn Opener, path: &Path, viewer: &Viewer, core: &mut Vec<u8>) -> FileResult {
    let mut result = FileResult {
        path: path.to_path_buf(),
        pages: 0,
        status: Status::Error,
        resident_before: None,
        resident_after: None,
        note: None,
        note_code: None,
        problem: None,
    };
    let (file, meta) = match folder.open_file(path) {
        Ok(opened) => opened,
        Err(e) => {
            result.problem = Some(Problem::open(&e));
            return result;
        }
    };
    result.pages = pages_of(meta.len(), sys::page_size() as u64);
    let exact = viewer.sees(&file, &meta, path);
    let mut resident = || {
        exact
            .then(|| resident_pages(&file, meta.len(), core))
            .flatten()
    };
    result.resident_before = resident();
    // fadvise works for anyone who can read the file, even where the result is hidden.
    if let Err(e) = sys::fadvise(&file, 0, 0, Advice::DontNeed) {
        result.problem = Some(Problem::io(
            FileErrorCode::FadviseFailed,
            format!("fadvise(DONTNEED) failed: {e}"),
            &e,
        ));
        result.resident_before = None;
        return result;
    }
    result.resident_after = resident();
    result.status = if exact { Status::Exact } else { Status::Hidden };
    if !exact {
        result.note = Some(format!("evicted, but {HIDDEN_REASON}"));
        result.note_code = Some(crate::note::EVICTED_HIDDEN);
    } else if result.resident_after.is_some_and(|n| n > 0) {
        result.note = Some(MAPPED_NOTE.to_owned());
        result.note_code = Some(crate::note::PAGES_STAYED);
    }
    result
}

fn resident_pages(file: &File, len: u64, core: &mut Vec<u8>) -> Option<u64> {
    sys::mincore_file(file, len, core).ok()?;
    Some(count_resident(core))
}
