//! The primitives every page-cache user shares: who is looking ([`Viewer`], and whether mincore
//! tells them the truth), page arithmetic, and the run-length
//! encoding of a page bitmap that `resident_ranges` carries. Residency, preload, evict, the working set and the plan all use them.

use std::fs::{File, Metadata};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::os::sys;

/// Who is asking, which decides whether mincore tells the truth about a file.
#[derive(Debug, Clone)]
pub(crate) struct Viewer {
    euid: u32,
    fowner: bool,
    /// `Some` inside a user namespace (rootless podman, toolbox, `unshare -r`).
    userns: Option<sys::IdMaps>,
}

impl Viewer {
    pub(crate) fn current() -> Self {
        Self {
            euid: sys::geteuid(),
            fowner: sys::has_cap_fowner(),
            userns: sys::user_namespace(),
        }
    }

    /// The kernel's own rule (mm/mincore.c `can_do_mincore`, Linux ≥ 5.2): residency of a file
    /// mapping is reported only if the caller owns the inode or has CAP_FOWNER
    /// (`inode_owner_or_capable`), or may open it for writing (`file_permission(MAY_WRITE)`);
    /// otherwise mincore pretends every page is resident. CAP_FOWNER inside a user namespace
    /// counts only for inodes whose owner and group are mapped there (`capable_wrt_inode_uidgid`):
    /// "root" in a rootless container does not see a host-root-owned file.
    pub(crate) fn sees(&self, file: &File, meta: &Metadata, path: &Path) -> bool {
        let fowner = self.fowner
            && self
                .userns
                .as_ref()
                .is_none_or(|maps| maps.maps(meta.uid(), meta.gid()));
        fowner || meta.uid() == self.euid || sys::writable(file, path)
    }
}

/// Pages of the page cache a file of `size` bytes spans.
pub(crate) fn pages_of(size: u64, page: u64) -> u64 {
    size.div_ceil(page)
}

/// Resident pages in a mincore vector (bit 0 of each byte).
pub(crate) fn count_resident(core: &[u8]) -> u64 {
    core.iter().filter(|b| *b & 1 != 0).count() as u64
}

/// Run-length encoding of a page bitmap: `[first, count]` for each run of resident units.
pub(crate) fn run_lengths(resident: impl Iterator<Item = bool>) -> Vec<[u64; 2]> {
    let mut out: Vec<[u64; 2]> = Vec::new();
    let mut run_start: Option<u64> = None;
    let mut i = 0u64;
    for r in resident {
        match (r, run_start) {
            (true, None) => run_start = Some(i),
            (false, Some(s)) => {
                out.push([s, i - s]);
                run_start = None;
            }
            _ => {}
        }
        i += 1;
    }
    if let Some(s) = run_start {
        out.push([s, i - s]);
    }
    out
}

/// Ranges of a page bitmap (bit 0 of each byte), coarsened until at most `max_ranges` remain:
/// pages are grouped in units of a power of two, a unit counting as resident if any of its pages
/// is. Returns the ranges and the unit in pages.
pub(crate) fn encode(bits: &[u8], max_ranges: usize) -> (Vec<[u64; 2]>, u64) {
    let mut unit = 1usize;
    loop {
        let ranges = run_lengths(bits.chunks(unit).map(|c| c.iter().any(|b| b & 1 != 0)));
        if ranges.len() <= max_ranges || unit >= bits.len() {
            return (ranges, unit as u64);
        }
        unit *= 2;
    }
}
