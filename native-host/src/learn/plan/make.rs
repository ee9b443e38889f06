//! The plan from the merged working set: the byte ranges to read per file, joined across small gaps, in disk order (FIEMAP); what the plan's files and reads are.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::firefox::install;
use crate::learn::plan::profile::{Planned, ProfilePlan};
use crate::learn::workingset::{FileSet, Identity, State};
use crate::os::beneath::{Folder, Folders};
use crate::os::sys::{self, Extent};
pub use crate::pagecache::preload::Order;
use crate::Error;

/// Gaps between needed ranges shorter than this are read rather than skipped.
///
/// Reasoning from the throttled benchmark disk (30 MiB/s, 150 IOPS, docs/benchmarks.md): every
/// separate request costs one of 150 I/Os a second, i.e. 1/150 s, in which the disk would have
/// moved 30 MiB / 150 = 205 KiB. Skipping a gap shorter than that costs more (an extra request)
/// than reading it. A real hard disk (≈100 MB/s, ≈100 seeks/s) breaks even near 1 MB, an SSD
/// far below 64 KiB; 256 KiB is the round power of two just above the throttled disk's break-even,
/// and also the size the kernel's own readahead would have read around a needed page anyway
/// (ondemand readahead ramps up to read_ahead_kb, 128 KiB by default).
pub const GAP_BYTES: u64 = 256 * 1024;

/// The gap read through for the traced plan ([`PlanSource::Trace`]), **measured**: swept on the
/// throttled disk at 128 KiB readahead (docs/benchmarks.md, "The gap, swept"), preload + start
/// grew with the gap: 0 < 64 KiB < 256 KiB < 1 MiB. The traced ranges are exact pages, and with
/// one reader that queues the next range (readahead(2)) while it reads the current one, a
/// request saved does not pay for the bytes read through on this disk.
pub const TRACE_GAP_BYTES: u64 = 0;

/// One read of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub file: usize,
    pub offset: u64,
    pub len: u64,
    /// Physical byte position of `offset`, where known.
    pub physical: Option<u64>,
}

/// The plan for one run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub files: Vec<PathBuf>,
    pub reads: Vec<Read>,
    pub bytes_planned: u64,
    /// The part of `bytes_planned` outside the install folder and the profile: system libraries
    /// and fonts.
    pub bytes_planned_system: u64,
    /// The files of the user's profile the plan reads, with the identity they were planned with
    /// (checked again when each is opened: learn/plan/profile.rs); empty but for a traced plan.
    pub profile_files: BTreeMap<PathBuf, Planned>,
    /// The profile's part: bytes, files, what changed since the traces; `None` where the plan
    /// says nothing of a profile (the learned plan, traces that name none).
    pub profile: Option<ProfilePlan>,
    pub bytes_install: u64,
    pub order: Order,
    /// Install files read whole because they changed since they were learned.
    pub changed: Vec<PathBuf>,
    /// The install folder and the system folders, held open: every file of the plan is opened
    /// beneath one of them, never by path.
    pub folders: Folders,
}

impl Plan {
    /// The part of `bytes_planned` in the install folder: what is set against `bytes_install`
    /// (the system libraries and the user's profile lie outside it). The one definition, for
    /// `plan`, `preload --plan` and the page.
    #[must_use]
    pub fn bytes_planned_install(&self) -> u64 {
        self.bytes_planned
            .saturating_sub(self.bytes_planned_system)
            .saturating_sub(self.profile.as_ref().map_or(0, |p| p.bytes))
    }
}

/// Byte ranges `[offset, len]` of the pages `ranges` (`[first, count]`), with gaps shorter than
/// `gap` joined, clipped to `size`. Pure.
#[must_use]
pub fn byte_ranges(ranges: &[[u64; 2]], page: u64, size: u64, gap: u64) -> Vec<[u64; 2]> {
    let mut out: Vec<[u64; 2]> = Vec::new();
    for &[first, count] in ranges {
        let start = first * page;
        let end = ((first + count) * page).min(size);
        if start >= end {
            continue;
        }
        match out.last_mut() {
            Some(last) if start <= last[0] + last[1] + gap => {
                last[1] = end.max(last[0] + last[1]) - last[0];
            }
            _ => out.push([start, end - start]),
        }
    }
    out
}

/// Split the range `[offset, len]` at extent boundaries, each piece with its physical position
/// (`None` where the extents say nothing, e.g. a hole). Pure.
#[must_use]
pub fn split_by_extents(offset: u64, len: u64, extents: &[Extent]) -> Vec<(u64, u64, Option<u64>)> {
    let end = offset + len;
    let mut out = Vec::new();
    let mut at = offset;
    for e in extents {
        let (e_start, e_end) = (e.logical, e.logical + e.length);
        if e_end <= at || e_start >= end {
            continue;
        }
        if e_start > at {
            out.push((at, e_start - at, None));
            at = e_start;
        }
        let piece_end = e_end.min(end);
        out.push((at, piece_end - at, e.physical.map(|p| p + (at - e_start))));
        at = piece_end;
    }
    if at < end {
        out.push((at, end - at, None));
    }
    out
}

/// Sort reads by physical position (unknown positions last, in file order); keep file order if
/// no read has a position. Returns the order used. Pure.
pub fn order_reads(reads: &mut [Read]) -> Order {
    if reads.iter().all(|r| r.physical.is_none()) {
        reads.sort_by_key(|r| (r.file, r.offset));
        return Order::File;
    }
    reads.sort_by_key(|r| (r.physical.is_none(), r.physical, r.file, r.offset));
    Order::Disk
}

/// Where a plan's pages come from (`preload --plan --source`, the protocol's `source`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanSource {
    /// The learned working set (workingset/record.rs): pagemap, and residency after a cold start.
    #[default]
    Learned,
    /// Stored traces of this install and build: the pages a cold start read from disk and then
    /// used (/proc/kpageflags), merged over the last traced starts (trace/plan_source.rs).
    Trace,
    /// Every page the newest trace of this build read, used or not: seed 002's replay.
    TraceReads,
}

/// Knobs of the plan (`preload --plan --source … --gap-kib … --mapped-only --file-order
/// --recorded-order`): the source, the gap read through, what a user who cannot see residency
/// would plan, and the orders the benchmark compares.
#[derive(Debug, Clone, Copy)]
pub struct Knobs {
    pub source: PlanSource,
    /// Gaps between needed ranges up to this many bytes are read through; `None`: the source's
    /// default ([`GAP_BYTES`] for the learned plan, [`TRACE_GAP_BYTES`] for traced ones).
    pub gap: Option<u64>,
    /// Use only the pagemap part of the learned set.
    pub mapped_only: bool,
    /// Read in file order even where FIEMAP gives positions.
    pub file_order: bool,
    /// With `TraceReads`: in the order the trace read them (grouped where contiguous).
    pub recorded_order: bool,
}

impl Knobs {
    /// The gap in bytes: the one asked for, else the source's default.
    #[must_use]
    pub fn gap_bytes(&self) -> u64 {
        self.gap.unwrap_or(match self.source {
            PlanSource::Learned => GAP_BYTES,
            PlanSource::Trace | PlanSource::TraceReads => TRACE_GAP_BYTES,
        })
    }
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            source: PlanSource::Learned,
            gap: None,
            mapped_only: false,
            file_order: false,
            recorded_order: false,
        }
    }
}

/// Make the plan for the install folder `install_dir` from the learned `state`.
pub fn make(state: &State, install_dir: &Path) -> Result<Plan, Error> {
    make_with(state, install_dir, Knobs::default())
}

/// The install folder's real path, and an empty plan holding the install folder and the system
/// folders open: every file a plan reads is opened beneath one of them, never by path.
pub(in crate::learn) fn empty_plan(install_dir: &Path) -> Result<(PathBuf, Plan), Error> {
    let install_folder = Folder::open(install_dir)
        .map_err(|e| Error::io(format!("cannot open {}", install_dir.display()), e))?;
    let root = install_folder.path().to_path_buf();
    let mut folders = Folders::default();
    folders.push(install_folder);
    for prefix in SYSTEM_PREFIXES {
        // Only a prefix that is its own real path (on merged-/usr systems /lib is a symlink, and
        // learned paths, which are the kernel's real paths, never start with it).
        if let Ok(folder) = Folder::open_exact(Path::new(prefix.trim_end_matches('/'))) {
            folders.push(folder);
        }
    }
    let plan = Plan {
        files: Vec::new(),
        reads: Vec::new(),
        bytes_planned: 0,
        bytes_planned_system: 0,
        profile_files: BTreeMap::new(),
        profile: None,
        bytes_install: 0,
        order: Order::File,
        changed: Vec::new(),
        folders,
    };
    Ok((root, plan))
}

/// [`make`] with the benchmark's knobs.
pub fn make_with(state: &State, install_dir: &Path, knobs: Knobs) -> Result<Plan, Error> {
    let ranges_of = |f: &FileSet| -> Vec<[u64; 2]> {
        if knobs.mapped_only {
            f.mapped().to_vec()
        } else {
            f.ranges.clone()
        }
    };
    let (root, mut plan) = empty_plan(install_dir)?;
    // Only this install's starts: another Firefox's files are not this one's plan.
    let merged: HashMap<PathBuf, FileSet> = state
        .for_install(&root)
        .merged()
        .into_iter()
        .map(|f| (f.id.path.clone(), f))
        .collect();
    let page = state.page_size();
    let installed = install::list_files(&root)?;
    let mut wanted: Vec<(PathBuf, Vec<[u64; 2]>)> = Vec::new();
    for path in &installed {
        let Ok(now) = Identity::current_in(&plan.folders, path) else {
            continue;
        };
        plan.bytes_install += now.size;
        let whole = vec![[0, now.size]];
        let ranges = match merged.get(path) {
            Some(learned) if learned.id == now => {
                byte_ranges(&ranges_of(learned), page, now.size, knobs.gap_bytes())
            }
            Some(_) => {
                plan.changed.push(path.clone());
                whole
            }
            None => whole, // new since the last learn (or never learned)
        };
        wanted.push((path.clone(), ranges));
    }
    // System libraries and fonts the starts mapped: their ranges when unchanged (a changed
    // system file is a package update: not ours to read whole).
    for learned in merged
        .values()
        .filter(|f| !install::is_inside(&root, &f.id.path) && is_system_file(&f.id.path))
    {
        if Identity::current_in(&plan.folders, &learned.id.path).is_ok_and(|now| now == learned.id)
        {
            let ranges = byte_ranges(
                &ranges_of(learned),
                page,
                learned.id.size,
                knobs.gap_bytes(),
            );
            wanted.push((learned.id.path.clone(), ranges));
        }
    }
    wanted.sort();
    finish(plan, wanted, knobs, &root)
}

/// The plan's reads from the byte ranges `wanted` per file: split at extents, with their disk
/// positions, in disk order (or file order).
pub(super) fn finish(
    mut plan: Plan,
    wanted: Vec<(PathBuf, Vec<[u64; 2]>)>,
    knobs: Knobs,
    root: &Path,
) -> Result<Plan, Error> {
    for (path, ranges) in wanted {
        if ranges.is_empty() {
            continue;
        }
        let extents = plan
            .folders
            .open_file(&path)
            .and_then(|(f, _)| sys::fiemap(&f))
            .unwrap_or_default();
        let index = plan.files.len();
        let in_profile = plan.profile_files.contains_key(&path);
        let system = !install::is_inside(root, &path) && !in_profile;
        plan.files.push(path);
        if in_profile {
            if let Some(p) = plan.profile.as_mut() {
                p.files += 1;
            }
        }
        for [offset, len] in ranges {
            plan.bytes_planned += len;
            if system {
                plan.bytes_planned_system += len;
            }
            if in_profile {
                if let Some(p) = plan.profile.as_mut() {
                    p.bytes += len;
                }
            }
            for (offset, len, physical) in split_by_extents(offset, len, &extents) {
                plan.reads.push(Read {
                    file: index,
                    offset,
                    len,
                    physical,
                });
            }
        }
    }
    if knobs.file_order {
        for r in &mut plan.reads {
            r.physical = None;
        }
    }
    plan.order = order_reads(&mut plan.reads);
    Ok(plan)
}

/// Folders whose files a plan may read besides the install folder: where a distribution puts
/// the libraries and fonts Firefox maps. The state file names these paths; a state file edited
/// to name /etc/shadow or a FIFO must not make a (root) preload open it.
const SYSTEM_PREFIXES: [&str; 6] = [
    "/usr/",
    "/lib/",
    "/lib64/",
    "/lib32/",
    "/opt/",
    "/var/cache/fontconfig/",
];

/// A learned system file the plan may read: under [`SYSTEM_PREFIXES`] and its own real path
/// (no symlink anywhere on the way).
pub(in crate::learn) fn is_system_file(path: &Path) -> bool {
    SYSTEM_PREFIXES.iter().any(|p| path.starts_with(p))
        && path.canonicalize().is_ok_and(|real| real == path)
}
