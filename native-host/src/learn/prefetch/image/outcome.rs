//! What the image prefetch mapped and read: filled by the mapping (map.rs) and the reads
//! (mod.rs), both of which use it, so it lives apart from them.

use serde::{Deserialize, Serialize};

use super::super::run::Ended;

/// What the image prefetch mapped and read (`last-prefetch.json`'s `image_read`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageOutcome {
    /// Files of the plan on the mount whose blocks were mapped.
    pub files_mapped: u64,
    /// Image bytes the mapped ranges cover (whole compressed blocks, gaps read through).
    pub bytes_image_planned: u64,
    /// Of them, read.
    pub bytes_image_read: u64,
    /// Plan bytes (of the files, uncompressed) that were mapped.
    pub bytes_files_mapped: u64,
    /// Plan bytes in fragment tails or files rdsquashfs could not map: left to the start.
    pub bytes_unmapped: u64,
    /// Plan bytes of files outside the mount (system libraries, the profile): not read here.
    pub bytes_outside: u64,
    /// Batches of image ranges (the plan's first-use batches, each in image order; a batch whose
    /// blocks an earlier one already holds is dropped), and of them read to the end.
    #[serde(default)]
    pub batches: usize,
    #[serde(default)]
    pub batches_done: usize,
    pub elapsed_ms: u64,
    /// On a FUSE mount (squashfuse), the plan's file bytes to read through the mount as their
    /// image bytes come in (whole blocks, decompressed by the mount's daemon while Firefox still
    /// waits on the disk: image/warm.rs); of them, read; and when that reading ended, ms after
    /// the image read began. 0 and `None` elsewhere (the kernel's mount, a Snap: nothing is read
    /// through the mount).
    #[serde(default)]
    pub bytes_warm_planned: u64,
    #[serde(default)]
    pub bytes_warmed: u64,
    #[serde(default)]
    pub warm_ms: Option<u64>,
    /// Why the warming stopped before its end after the image was read (Firefox exited, the
    /// time limit); `None` if it ran to its end or the image read itself stopped (`ended`).
    #[serde(default)]
    pub warm_ended: Option<Ended>,
    pub ended: Option<Ended>,
    /// Files that could not be mapped, in English (at most [`MAX_ERRORS`]).
    pub errors: Vec<String>,
}

/// Errors kept, at most (each in English).
pub(super) const MAX_ERRORS: usize = 20;
