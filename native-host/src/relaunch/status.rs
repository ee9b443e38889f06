//! The record of the last restart (`relaunch.json` in the state folder): written by the detached
//! `relaunch` at each step, read by the page on its next load (`relaunch_status`) and by
//! `relaunch --status`, so a restart that failed while no page was open is still reported.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::state::StateDir;

/// The file in the state folder.
pub const STATUS_FILE: &str = "relaunch.json";
/// Largest status file read back (it is a few KiB; a bigger one is not ours).
const MAX_BYTES: u64 = 256 * 1024;

/// Where a restart got to. `Failed` carries the reason in [`Status::error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Waiting for every process of the old Firefox to exit.
    Waiting,
    /// Dropping Firefox's files from the page cache.
    Evicting,
    /// The traced restart runs: pkexec asks for root's tracer, then Firefox is started (as the
    /// user) and its start recorded.
    Tracing,
    /// Firefox was started again (`new_pid`).
    Started,
    Failed,
}

/// Why a restart failed: a code the extension words (append-only), the values it names, and the
/// English for the CLI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub code: String,
    pub message: String,
    #[serde(default)]
    pub params: serde_json::Value,
}

/// Firefox was still running when the wait ended (params: `seconds`, `pids`).
pub const FIREFOX_DID_NOT_QUIT: &str = "firefox_did_not_quit";
/// Firefox could not be started again, or exited at once (params: `detail`).
pub const LAUNCH_FAILED: &str = "launch_failed";
/// The running Firefox could not be read (params: `detail`).
pub const CAPTURE_FAILED: &str = "capture_failed";
/// The evict failed as a whole (Firefox was started all the same; params: `detail`).
pub const EVICT_FAILED: &str = "evict_failed";
/// The traced restart's trace could not be had (pkexec refused, no package, the tracer failed)
/// or stored; Firefox was restarted all the same (params: `reason`, `detail`, `command`).
pub const TRACE_FAILED: &str = "trace_failed";

pub use crate::launch::cold::{Evicted, Mapper, Stayed, MAX_LISTED};

/// `relaunch.json`, and the `relaunch_status` reply's `last`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub version: u32,
    pub stage: Stage,
    pub cold: bool,
    pub trace: bool,
    /// When the restart was asked for, and when this record last changed (ms since the epoch).
    pub requested_at_ms: u64,
    pub updated_at_ms: u64,
    pub old_pid: i32,
    pub install_dir: String,
    pub profile: Option<String>,
    /// Where Firefox's own working folder could not be entered by the user: what was used
    /// instead, and why (English; relaunch::working_folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_folder: Option<String>,
    /// How long the old Firefox took to exit.
    pub waited_ms: Option<u64>,
    pub evicted: Option<Evicted>,
    /// The Firefox started again.
    pub new_pid: Option<i32>,
    pub error: Option<Failure>,
    /// The stored trace's id (the traced restart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
}

pub const STATUS_VERSION: u32 = 1;

/// The last restart recorded in the state folder, if any and readable (bounded; a symlink,
/// FIFO or another version is no record: `StateDir` refuses anything but a plain file).
#[must_use]
pub fn read(dir: &StateDir) -> Option<Status> {
    parse(&dir.read(STATUS_FILE, MAX_BYTES).ok()??)
}

/// The last restart recorded in the state folder at `path` (`None` when there is no folder).
#[must_use]
pub fn read_at(path: &Path) -> Option<Status> {
    read(&StateDir::existing(path).ok()??)
}

/// [`read_at`] for the readers that report to someone (`relaunch_status`, `relaunch --status`):
/// a file that is not a restart record of any version is set aside as
/// `relaunch.json.corrupt.<ms>`, and the note says so (crate::state::aside).
#[must_use]
pub fn read_at_or_set_aside(path: &Path) -> (Option<Status>, Option<crate::note::Note>) {
    let Some(dir) = StateDir::existing(path).ok().flatten() else {
        return (None, None);
    };
    let (read, note) = crate::state::aside::read_or_set_aside(&dir, STATUS_FILE, MAX_BYTES, |b| {
        // Another version's record (JSON with another `version`) is no record, not damage.
        parse(b).map(Some).or_else(|| {
            serde_json::from_slice::<serde_json::Value>(b)
                .ok()
                .and_then(|v| v.get("version")?.as_u64())
                .filter(|v| *v != u64::from(STATUS_VERSION))
                .map(|_| None)
        })
    });
    (read.flatten(), note)
}

/// A status file's bytes, or `None` for anything else. Pure.
#[must_use]
pub fn parse(bytes: &[u8]) -> Option<Status> {
    serde_json::from_slice::<Status>(bytes)
        .ok()
        .filter(|s| s.version == STATUS_VERSION)
}

/// Write `status` atomically into the state folder at `path` (made if missing).
pub fn write(path: &Path, status: &Status) -> Result<(), crate::Error> {
    let dir = StateDir::create_at(path)?;
    let mut bytes = serde_json::to_vec_pretty(status)
        .map_err(|e| crate::Error::io("encoding the restart record", e.into()))?;
    bytes.push(b'\n');
    dir.write(STATUS_FILE, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Status {
        Status {
            version: STATUS_VERSION,
            stage: Stage::Failed,
            cold: true,
            trace: false,
            requested_at_ms: 1,
            updated_at_ms: 2,
            old_pid: 10,
            install_dir: "/usr/lib/firefox-esr".into(),
            profile: None,
            working_folder: None,
            waited_ms: None,
            evicted: None,
            new_pid: None,
            error: Some(Failure {
                code: FIREFOX_DID_NOT_QUIT.into(),
                message: "still running".into(),
                params: serde_json::json!({"seconds": 120}),
            }),
            trace_id: None,
        }
    }

    #[test]
    fn a_status_round_trips_and_anything_else_is_none() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &sample()).unwrap();
        assert_eq!(read_at(dir.path()), Some(sample()));
        assert_eq!(parse(b"{}"), None);
        assert_eq!(parse(b"\xff"), None);
        let mut other = serde_json::to_value(sample()).unwrap();
        other["version"] = 99.into();
        assert_eq!(parse(other.to_string().as_bytes()), None);
    }

    #[test]
    fn a_symlink_or_fifo_in_place_of_the_file_is_no_record() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.path().join(STATUS_FILE)).unwrap();
        assert_eq!(read_at(dir.path()), None);
        std::fs::remove_file(dir.path().join(STATUS_FILE)).unwrap();
        let fifo =
            std::ffi::CString::new(dir.path().join(STATUS_FILE).as_os_str().as_encoded_bytes())
                .unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert_eq!(read_at(dir.path()), None);
    }
}
