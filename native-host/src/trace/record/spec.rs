//! When a recording ends ([`Stop`]), and its pace.

use std::time::Duration;

/// The recording polls the tracer and /proc this often.
pub(super) const TICK: Duration = Duration::from_millis(10);
/// /proc sampling period with the tracer (cheap, for read_bytes and quiet detection)…
pub(super) const SAMPLE_TRACED: Duration = Duration::from_millis(50);
/// …and without (the only data then).
pub(super) const SAMPLE_FALLBACK: Duration = Duration::from_millis(10);
/// The start is over when the tree has read nothing for this long (documented in docs/design/trace.md)…
pub const QUIET_MS: u64 = 3000;
/// …but never before this, nor after `MAX_SECONDS`.
pub(super) const MIN_MS: u64 = 1500;
pub const MAX_SECONDS: f64 = 120.0;

/// How a recording ends.
#[derive(Debug, Clone, Copy)]
pub struct Stop {
    /// Stop after this many seconds (finite, positive: the CLI's parser checks) instead of
    /// when the tree is quiet.
    pub seconds: Option<f64>,
    pub quiet_ms: u64,
}

/// The file (in a traces folder) whose appearance means the extension recorded this start (see
/// store::mark_recorded).
pub type Marker = Option<(crate::state::StateDir, String)>;
