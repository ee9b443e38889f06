//! The Firefox process: the parent of the host in native-messaging mode, or a running one found
//! by the CLI. Reads /proc only. OWNER: kernel helper.

use std::path::PathBuf;

use serde::Serialize;

use crate::Error;

/// I/O the process did so far; `None` where the kernel does not expose it to this user.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessIo {
    pub read_bytes: Option<u64>,
    pub major_faults: Option<u64>,
    pub tree_read_bytes: Option<u64>,
    pub tree_major_faults: Option<u64>,
    pub processes: usize,
}

/// The `firefox` command's data (docs/PROTOCOL.md).
#[derive(Debug, Clone, Serialize)]
pub struct FirefoxInfo {
    pub pid: i32,
    pub exe: PathBuf,
    pub install_dir: PathBuf,
    pub version: Option<String>,
    pub build_id: Option<String>,
    pub started_at_ms: u64,
    pub start_precision_ms: u64,
    pub io: ProcessIo,
}

/// The parent process's pid if it is a Firefox (its executable's folder holds application.ini).
#[must_use]
pub fn parent_firefox() -> Option<i32> {
    todo!()
}

/// A running Firefox parent process of this user, if any (for the CLI).
#[must_use]
pub fn find_running() -> Option<i32> {
    todo!()
}

/// Everything the `firefox` command reports about `pid`.
pub fn inspect(pid: i32) -> Result<FirefoxInfo, Error> {
    let _ = pid;
    todo!()
}
