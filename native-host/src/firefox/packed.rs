//! The record of a packed Firefox (learn/pack/ makes it): the image of an install in the
//! state folder's `pack/`, of which build, mounted where. Here, below learning, so that knowing
//! the install (firefox/kind.rs: which image is behind a FUSE mount, which names none) can read
//! it; building, mounting and unpacking are learn/pack/'s.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::state::StateDir;

pub const FOLDER: &str = "pack";
pub const RECORD: &str = "pack.json";
pub const IMAGE: &str = "firefox.squashfs";
pub const MOUNT: &str = "mnt";
pub const MAX_RECORD_BYTES: u64 = 64 * 1024;

/// What `pack` made (`pack.json`; `pack status --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packed {
    /// The install folder packed (canonical).
    #[serde(flatten, with = "crate::path_text::install_dir")]
    pub install_dir: PathBuf,
    pub version: Option<String>,
    pub build_id: Option<String>,
    #[serde(flatten, with = "crate::path_text::image")]
    pub image: PathBuf,
    #[serde(flatten, with = "crate::path_text::mount_point")]
    pub mount_point: PathBuf,
    /// The image's inode and size when made: a file swapped in since is not mounted.
    pub image_ino: u64,
    pub compressor: String,
    /// mksquashfs's `-Xcompression-level`; `None`: the compressor's default (records made before
    /// `pack` chose a level: zstd's 15).
    #[serde(default)]
    pub level: Option<u32>,
    pub block_size: u32,
    /// Files ordered by the traced start (`mksquashfs -sort`), 0 when no trace of this build.
    pub sorted_files: u64,
    /// Bytes of the install's files, and of the image (the disk space packing costs).
    pub bytes_install: u64,
    pub bytes_image: u64,
    /// How long mksquashfs took (every Firefox update costs this again).
    pub build_ms: u64,
    pub built_at_ms: u64,
}

/// The pack folder, made if `create`.
pub fn folder(state: &StateDir, create: bool) -> Result<Option<StateDir>, crate::Error> {
    state.sub(FOLDER, create)
}

/// The record in `state`'s pack folder, if any.
#[must_use]
pub fn read(state: &StateDir) -> Option<Packed> {
    let pack = folder(state, false).ok()??;
    serde_json::from_slice(&pack.read(RECORD, MAX_RECORD_BYTES).ok()??).ok()
}

/// The packed image whose mount holds `dir` (for the prefetch of a FUSE mount, which names no
/// image): the user's own state folder's record, if its mount point is above `dir`.
#[must_use]
pub fn image_for(dir: &Path) -> Option<PathBuf> {
    // Never made here: a look-up must not create the state folder.
    let state = StateDir::existing(&crate::state::locate().ok()?).ok()??;
    read(&state)
        .filter(|p| dir.starts_with(&p.mount_point))
        .map(|p| p.image)
}
