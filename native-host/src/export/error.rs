//! Why an export failed: the one error type of both formats.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ExportError {
    #[error("not a Firefox (Gecko-format) profile this host merges: {0}")]
    NotGecko(String),
    #[error("this trace was recorded by an older host on the boot clock (no zero_mono_ns): it exports alone, but cannot be lined up with a Firefox profile")]
    OldClock,
    #[error("Firefox's profile is of another process (pid {profile_pid}) or another start than the trace's (pid {trace_pid}): record both at once with `launch --cold --trace --firefox-profile`")]
    OtherProcess { profile_pid: i64, trace_pid: i32 },
    #[error("encode the profile: {0}")]
    Encode(#[from] serde_json::Error),
}
