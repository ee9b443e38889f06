//! What a recording records ([`Launch`]) and when it ends ([`Stop`]), and its pace.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::firefox::install::Install;
use crate::state::user::User;

/// Per-CPU ring buffer: 32 MiB holds a cold start's ~100k events between 10 ms drains.
pub(super) const BUFFER_KB: u32 = 32 * 1024;
/// The recording polls the pipe and /proc this often.
pub(super) const TICK: Duration = Duration::from_millis(10);
/// /proc sampling period with tracefs (cheap, for read_bytes and quiet detection)…
pub(super) const SAMPLE_TRACED: Duration = Duration::from_millis(50);
/// …and without (the only data then).
pub(super) const SAMPLE_FALLBACK: Duration = Duration::from_millis(10);
/// The start is over when the tree has read nothing for this long (documented in README)…
pub const QUIET_MS: u64 = 3000;
/// …but never before this, nor after `MAX_SECONDS`.
pub(super) const MIN_MS: u64 = 1500;
pub const MAX_SECONDS: f64 = 120.0;

/// How a recording ends.
#[derive(Debug, Clone, Copy)]
pub struct Stop {
    pub seconds: Option<f64>,
    pub quiet_ms: u64,
}

/// The file (in a traces folder) whose appearance means the extension recorded this start (see
/// store::mark_recorded).
pub(super) type Marker = Option<(crate::state::StateDir, String)>;

/// What `launch` starts.
#[derive(Debug)]
pub struct Launch {
    pub install: Install,
    pub binary: PathBuf,
    pub args: Vec<OsString>,
    pub cold: bool,
    pub trace: bool,
    /// Also trace which instructions faulted (exceptions:page_fault_user; issue 21).
    pub faults: bool,
    /// Start Firefox with its own startup profiler on and collect its profile (issue 21).
    pub firefox_profile: bool,
    pub user: Option<User>,
    /// The whole environment to start Firefox with (a traced restart starts it as the user had
    /// it: relaunch/request.rs), instead of this process's, adjusted for `user`.
    pub env: Option<Vec<(OsString, OsString)>>,
    /// Its working folder (a traced restart: the old Firefox's).
    pub cwd: Option<PathBuf>,
}
