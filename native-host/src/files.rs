//! Which Firefox install folder, which files in it, and confinement of requests to it.
//! OWNER: kernel helper.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::Error;

/// A Firefox install folder and how it was found (the CLI says which it chose).
#[derive(Debug, Clone, Serialize)]
pub struct Install {
    /// Real path (realpath) of the folder holding the Firefox executable and application.ini.
    pub dir: PathBuf,
    /// How it was found: "--firefox", "parent process 123", "running process 123", "PATH: firefox-esr", "usual folder".
    pub found_by: String,
    pub version: Option<String>,
    pub build_id: Option<String>,
}

/// Find the install folder: `explicit` if given (must look like a Firefox folder), else the
/// folder of `pid`'s executable if given, else a running Firefox, else `firefox`/`firefox-esr` on
/// PATH resolved to its real folder, else the usual folders.
pub fn locate(explicit: Option<&Path>, pid: Option<i32>) -> Result<Install, Error> {
    let _ = (explicit, pid);
    todo!()
}

/// Every regular file under `dir` (recursively, symlinks not followed), sorted.
pub fn list_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let _ = dir;
    todo!()
}

/// Resolve the requested paths (relative to `install_dir`, or absolute) with realpath and check
/// each is inside `install_dir`. Empty `requested` means every file of the folder.
/// Nothing is opened before all entries have passed.
pub fn select(install_dir: &Path, requested: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let _ = (install_dir, requested);
    todo!()
}
