//! The summaries of a trace (issue 32, "one trace model"): the figures a person reads, computed
//! once for the page (the protocol's `trace_summary`), the CLI and the exports.
//!
//! - [`report`]: the [`Summary`] of one trace for one viewer (its axis and chosen file);
//! - [`files`]: the per-file table, the agreement with the kernel's count, archive entries;
//! - [`bins`]: the charts as bins: read over time, access pattern (and its text line), disk view;
//! - [`code`]: the code regions whose faults read the most, the entries read the most;
//! - [`profile`]: the user's profile's share of the start, part by part, and of its waiting;
//! - [`redact`]: the trace as it may leave the machine (profile files named by their part).

pub mod bins;
pub mod code;
pub mod files;
pub mod profile;
pub mod redact;
pub mod report;

pub use report::{summarize, summarize_here, Options, Summary, SUMMARY_VERSION};
