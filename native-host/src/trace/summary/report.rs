//! The summary of one trace: every figure the page, the CLI and the exports show of it,
//! computed once, here (issue 32). The page only lays it out (bins to pixels, rows to DOM).

use serde::Serialize;

use super::bins::{self, Disk, Pattern, ReadOverTime};
use super::code::{self, CodeRow, Coverage};
use super::files::{self, Agreement, EntryRow, FileRow};
use super::profile::{self, ProfileContext, ProfileSummary};
use crate::trace::model::{Source, Trace};

/// Bumped when a member changes meaning; members are only ever added otherwise.
pub const SUMMARY_VERSION: u32 = 1;

/// What the viewer asks for: where its milestones end the start, and which file's access
/// pattern to draw.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Options {
    /// ms since the process start where the viewer's milestones end the start (sessionRestored,
    /// else the last milestone); the trace's own milestones where `None`.
    pub axis_end_ms: Option<f64>,
    /// The file whose access pattern is drawn (an index into `files`); libxul.so, else the file
    /// read the most, where `None`.
    pub file: Option<u32>,
}

/// The page's chart sizes (bins, not pixels) and table lengths.
pub const READ_BINS: usize = 120;
pub const GRID_COLS: u32 = 180;
pub const GRID_ROWS: u32 = 110;
pub const CODE_ROWS: usize = 10;
pub const ENTRY_ROWS: usize = 15;

/// Every figure of a trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub version: u32,
    pub source: Source,
    /// The charts' time axis: 0 to `span_ms` (ms since the process started).
    pub span_ms: f64,
    pub last_read_ms: Option<f64>,
    pub agreement: Agreement,
    /// Every file, most bytes first.
    pub files: Vec<FileRow>,
    pub read_over_time: ReadOverTime,
    /// `None` where the trace has no file to draw.
    pub pattern: Option<Pattern>,
    pub disk: Disk,
    pub top_code: Vec<CodeRow>,
    pub code_coverage: Coverage,
    pub top_entries: Vec<EntryRow>,
    pub profile: ProfileSummary,
}

/// The file drawn by default: libxul.so, else the file read the most (not written).
#[must_use]
pub fn default_file(t: &Trace, rows: &[FileRow]) -> Option<u32> {
    t.files
        .iter()
        .position(|f| f.path == "libxul.so" || f.path.ends_with("/libxul.so"))
        .and_then(|i| u32::try_from(i).ok())
        .or_else(|| {
            rows.iter()
                .find(|r| !r.written && r.bytes_read > 0)
                .map(|r| r.index)
        })
}

/// The summary of `t` for `opts`, with what is known of its profile (`ctx`). Pure.
#[must_use]
pub fn summarize(t: &Trace, opts: Options, ctx: &ProfileContext) -> Summary {
    let parts = profile::parts_of(t, ctx);
    let axis_end = opts.axis_end_ms.or_else(|| t.session_restored());
    let span = bins::span(t, axis_end);
    let rows = files::file_rows(t, &parts);
    let file = opts
        .file
        .filter(|f| (*f as usize) < t.files.len())
        .or_else(|| default_file(t, &rows));
    Summary {
        version: SUMMARY_VERSION,
        source: t.source,
        span_ms: span,
        last_read_ms: bins::last_read_ms(t),
        agreement: files::agreement(t),
        read_over_time: bins::read_over_time(t, span, READ_BINS),
        pattern: file.and_then(|f| bins::pattern(t, f, span, GRID_COLS, GRID_ROWS)),
        disk: bins::disk(t, span, GRID_COLS, GRID_ROWS),
        top_code: code::top_code(t, CODE_ROWS),
        code_coverage: code::coverage(t),
        top_entries: code::top_entries(t, ENTRY_ROWS),
        profile: profile::summarize(t, ctx, &parts),
        files: rows,
    }
}

/// [`summarize`] with the profile found and read here ([`ProfileContext::locate`]).
#[must_use]
pub fn summarize_here(t: &Trace, opts: Options) -> Summary {
    summarize(t, opts, &ProfileContext::locate(t))
}
