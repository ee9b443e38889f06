//! The preload plan: from the merged working set (workingset.rs), the byte ranges to read per
//! file, joined across small gaps, in physical disk order (FIEMAP), and the reader that reads
//! exactly those ranges (`preload --plan`).
//!
//! Files that changed since they were learned (a Firefox update) and install files the set does
//! not know are read whole; install files the set knows but no start touched are skipped.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::firefox::install;
use crate::learn::workingset::{self, FileSet, Identity, State};
use crate::pagecache::beneath::{Folder, Folders};
use crate::pagecache::pace::{self, Pacer};
pub use crate::pagecache::preload::Order;
use crate::pagecache::preload::{self, FileError, Method, Progress, Summary};
use crate::pagecache::sys::{self, Advice, Extent};
use crate::pagecache::view::{pages_of, Viewer};
use crate::trace::plan_source::{self, Pages, Traced, TracedFile};
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
/// Read buffer, reused for every range (large reads, as `preload`'s `read`).
const READ_BUF: usize = 1024 * 1024;
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

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
    /// The part of `bytes_planned` outside the install folder: system libraries and fonts.
    pub bytes_planned_system: u64,
    pub bytes_install: u64,
    pub order: Order,
    /// Install files read whole because they changed since they were learned.
    pub changed: Vec<PathBuf>,
    /// The install folder and the system folders, held open: every file of the plan is opened
    /// beneath one of them, never by path.
    pub folders: Folders,
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
    /// The learned working set (workingset.rs): pagemap, and residency after a cold start.
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

/// The install folder (its real path) and the system folders, opened and held: every file a
/// plan reads is opened beneath one of them, never by path.
fn plan_folders(install_dir: &Path) -> Result<(PathBuf, Folders), Error> {
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
    Ok((root, folders))
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
    let (root, folders) = plan_folders(install_dir)?;
    // Only this install's starts: another Firefox's files are not this one's plan.
    let merged: HashMap<PathBuf, FileSet> = state
        .for_install(&root)
        .merged()
        .into_iter()
        .map(|f| (f.id.path.clone(), f))
        .collect();
    let page = state.page_size();
    let installed = install::list_files(&root)?;
    let mut plan = Plan {
        files: Vec::new(),
        reads: Vec::new(),
        bytes_planned: 0,
        bytes_planned_system: 0,
        bytes_install: 0,
        order: Order::File,
        changed: Vec::new(),
        folders,
    };
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
fn finish(
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
        let system = !install::is_inside(root, &path);
        plan.files.push(path);
        for [offset, len] in ranges {
            plan.bytes_planned += len;
            if system {
                plan.bytes_planned_system += len;
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

/// Make the plan from stored traces ([`PlanSource::Trace`] or [`PlanSource::TraceReads`]):
/// the traced ranges of install files still as traced (same inode and size), whole files for
/// those replaced since, nothing for install files no traced start read; system files the
/// traces read where unchanged; profile and other files never.
pub fn make_traced(traced: &Traced, install_dir: &Path, knobs: Knobs) -> Result<Plan, Error> {
    // tracefs offsets are in 4 KiB pages (trace/event.rs), whatever the page size.
    const TRACE_PAGE: u64 = 4096;
    let (root, folders) = plan_folders(install_dir)?;
    let by_path: HashMap<&Path, &TracedFile> =
        traced.files.iter().map(|f| (f.path.as_path(), f)).collect();
    let same =
        |t: &TracedFile, now: &Identity| t.ino == now.ino && t.size.is_none_or(|s| s == now.size);
    let mut plan = Plan {
        files: Vec::new(),
        reads: Vec::new(),
        bytes_planned: 0,
        bytes_planned_system: 0,
        bytes_install: 0,
        order: Order::File,
        changed: Vec::new(),
        folders,
    };
    // Per file: its traced page ranges (None: read whole) and its size now.
    let mut chosen: Vec<(PathBuf, Option<&TracedFile>, u64)> = Vec::new();
    for path in install::list_files(&root)? {
        let Ok(now) = Identity::current_in(&plan.folders, &path) else {
            continue;
        };
        plan.bytes_install += now.size;
        match by_path.get(path.as_path()) {
            Some(t) if same(t, &now) => chosen.push((path, Some(t), now.size)),
            Some(_) => {
                plan.changed.push(path.clone());
                chosen.push((path, None, now.size));
            }
            None => {} // no traced start read it
        }
    }
    for t in traced
        .files
        .iter()
        .filter(|t| !install::is_inside(&root, &t.path) && is_system_file(&t.path))
    {
        if let Ok(now) = Identity::current_in(&plan.folders, &t.path) {
            if same(t, &now) {
                chosen.push((t.path.clone(), Some(t), now.size));
            }
        }
    }
    chosen.sort_by(|a, b| a.0.cmp(&b.0));
    if !(knobs.recorded_order && knobs.source == PlanSource::TraceReads) {
        let wanted = chosen
            .into_iter()
            .map(|(path, t, size)| {
                let ranges = t.map_or_else(
                    || vec![[0, size]],
                    |t| byte_ranges(&t.ranges, TRACE_PAGE, size, knobs.gap_bytes()),
                );
                (path, ranges)
            })
            .collect();
        return finish(plan, wanted, knobs, &root);
    }
    // The replay in recorded order: the trace's reads one after the other, contiguous ones
    // grouped (as seed 002 did), split at extents for their disk positions; changed files last.
    let mut index_of: HashMap<PathBuf, usize> = HashMap::new();
    let mut extents: Vec<Vec<Extent>> = Vec::new();
    let mut whole: Vec<(usize, u64)> = Vec::new();
    for (path, t, size) in &chosen {
        let i = plan.files.len();
        plan.files.push(path.clone());
        extents.push(
            plan.folders
                .open_file(path)
                .and_then(|(f, _)| sys::fiemap(&f))
                .unwrap_or_default(),
        );
        match t {
            Some(_) => {
                index_of.insert(path.clone(), i);
            }
            None => whole.push((i, *size)),
        }
    }
    let push = |plan: &mut Plan, file: usize, offset: u64, len: u64| {
        plan.bytes_planned += len;
        if !install::is_inside(&root, &plan.files[file]) {
            plan.bytes_planned_system += len;
        }
        for (offset, len, physical) in split_by_extents(offset, len, &extents[file]) {
            plan.reads.push(Read {
                file,
                offset,
                len,
                physical,
            });
        }
    };
    for &(fi, first, count) in &traced.recorded {
        let Some(&file) = index_of.get(&traced.files[fi].path) else {
            continue;
        };
        let size = chosen[file].2;
        let [[offset, len]] = byte_ranges(&[[first, count]], TRACE_PAGE, size, 0)[..] else {
            continue;
        };
        push(&mut plan, file, offset, len);
    }
    for (file, size) in whole {
        push(&mut plan, file, 0, size);
    }
    plan.order = Order::Recorded;
    Ok(plan)
}

/// The traced plan for the install `install_dir` from the traces stored in `state_dir`.
/// Fails, naming what to do, when no stored trace is of this install and build (or, for
/// [`PlanSource::Trace`], none knows which pages were used).
pub fn traced_plan(install_dir: &Path, state_dir: &Path, knobs: Knobs) -> Result<Plan, Error> {
    let root = install_dir
        .canonicalize()
        .map_err(|e| Error::io(format!("cannot resolve {}", install_dir.display()), e))?;
    let (_, build_id) = crate::firefox::app_ini::read(&root);
    let traces = plan_source::load(
        &state_dir.join("traces"),
        &root,
        crate::trace::store::MAX_TRACES,
    );
    let pages = if knobs.source == PlanSource::TraceReads {
        Pages::Read
    } else {
        Pages::Used
    };
    let picked = plan_source::of_build(&traces, build_id.as_deref(), pages);
    if picked.is_empty() {
        let why = match plan_source::other_build(&traces, build_id.as_deref()) {
            Some(old) => format!(
                "the stored traces are of Firefox build {old}, this one is build {}",
                build_id.as_deref().unwrap_or("unknown")
            ),
            None if traces.is_empty() => "no stored trace of this Firefox".to_owned(),
            None => "no stored trace of this Firefox build says which pages were used (recorded without root or /proc/kpageflags)".to_owned(),
        };
        return Err(Error::io(
            format!("{why}; record one: {}", crate::trace::store::RECORD_COMMAND),
            io::Error::from(io::ErrorKind::NotFound),
        ));
    }
    make_traced(&plan_source::merge(&picked, pages), &root, knobs)
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
fn is_system_file(path: &Path) -> bool {
    SYSTEM_PREFIXES.iter().any(|p| path.starts_with(p))
        && path.canonicalize().is_ok_and(|real| real == path)
}

/// Read the plan's ranges in its order (one reader: several would undo the disk order), the next
/// range queued with readahead(2) while the current one is read.
pub fn run(
    plan: &Plan,
    idle: bool,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<Summary, Error> {
    let started = Instant::now();
    if idle {
        // As in preload.rs: honoured by mq-deadline and BFQ; not worth failing over.
        let _ = sys::ioprio_set_idle_thread();
    }
    // An idle preload also yields by itself (pace.rs): priority classes alone did not keep it
    // out of a user's way at login.
    let mut pacer = idle.then(|| Pacer::new(pace::read_pressure, std::thread::sleep));
    let mut open: HashMap<usize, Option<File>> = HashMap::new();
    let mut errors: Vec<FileError> = Vec::new();
    let mut reads_left: Vec<usize> = vec![0; plan.files.len()];
    for r in &plan.reads {
        reads_left[r.file] += 1;
    }
    let mut progress = Progress {
        bytes_done: 0,
        bytes_total: plan.reads.iter().map(|r| r.len).sum(),
        files_done: 0,
        files_total: plan.files.len() as u64,
        current_file: None,
    };
    let mut buf = vec![0u8; READ_BUF];
    let mut last_emit: Option<Instant> = None;
    for (i, read) in plan.reads.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        // Queue the next range while this one is read, unless pacing: a read in flight during a
        // probe would count as somebody else's stall.
        if let (Some(next), None) = (plan.reads.get(i + 1), &pacer) {
            if let Some(Some(f)) = file_of(&mut open, plan, next.file, &mut errors) {
                let _ = sys::readahead(f, next.offset, next.len);
            }
        }
        if let Some(Some(f)) = file_of(&mut open, plan, read.file, &mut errors) {
            let mut after_slice = |slice: Duration| {
                if let Some(p) = pacer.as_mut() {
                    p.after_slice(slice);
                }
            };
            match read_range(f, read.offset, read.len, &mut buf, cancel, &mut after_slice) {
                Ok(n) => progress.bytes_done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(Error::Cancelled),
                Err(e) => {
                    errors.push(FileError {
                        path: plan.files[read.file].clone(),
                        error: e.to_string(),
                    });
                    open.insert(read.file, None);
                }
            }
        }
        reads_left[read.file] -= 1;
        if reads_left[read.file] == 0 {
            progress.files_done += u64::from(matches!(open.remove(&read.file), Some(Some(_))));
        }
        progress.current_file = Some(plan.files[read.file].clone());
        if last_emit.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY) {
            on_progress(&progress);
            last_emit = Some(Instant::now());
        }
    }
    progress.current_file = None;
    on_progress(&progress);
    errors.sort_by(|a, b| a.path.cmp(&b.path));
    errors.dedup_by(|a, b| a.path == b.path);
    let elapsed = started.elapsed();
    Ok(Summary {
        files: progress.files_done,
        bytes: progress.bytes_done,
        elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        mb_per_s: preload::mb_per_s(progress.bytes_done, elapsed),
        method: Method::Read,
        jobs: 1,
        idle,
        errors,
        errors_omitted: 0,
        planned: true,
        bytes_planned: Some(plan.bytes_planned),
        bytes_planned_system: Some(plan.bytes_planned_system),
        bytes_install: plan.bytes_install,
        order: Some(plan.order),
        pace: pacer.map(|p| p.report()),
        cache: crate::pagecache::Cache::Files,
    })
}

/// The open file of the plan's file `index`, opened on first use (`None` once it failed).
fn file_of<'a>(
    open: &'a mut HashMap<usize, Option<File>>,
    plan: &Plan,
    index: usize,
    errors: &mut Vec<FileError>,
) -> Option<&'a Option<File>> {
    Some(open.entry(index).or_insert_with(|| {
        match plan.folders.open_file(&plan.files[index]) {
            Ok((f, _)) => {
                // No kernel readahead around our reads (read_ahead_kb is 8 MiB on some disks):
                // read what the plan says, no more.
                let _ = sys::fadvise(&f, 0, 0, Advice::Random);
                Some(f)
            }
            Err(e) => {
                errors.push(FileError {
                    path: plan.files[index].clone(),
                    error: crate::pagecache::view::open_error(&e),
                });
                None
            }
        }
    }))
}

/// pread `len` bytes at `offset` into `buf`, slice by slice, calling `after_slice` with each
/// slice's time; returns the bytes read (fewer when the file shrank). A raised `cancel` is
/// reported as `Interrupted`.
fn read_range(
    f: &File,
    offset: u64,
    len: u64,
    buf: &mut [u8],
    cancel: &AtomicBool,
    after_slice: &mut dyn FnMut(Duration),
) -> io::Result<u64> {
    let end = offset + len;
    let mut at = offset;
    while at < end {
        if cancel.load(Ordering::Relaxed) {
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
        let want = usize::try_from(end - at)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let slice = Instant::now();
        match f.read_at(&mut buf[..want], at) {
            Ok(0) => break,
            Ok(n) => {
                at += n as u64;
                after_slice(slice.elapsed());
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(at - offset)
}

/// Make the plan from the state in `state_dir`, read it, and record the run as the last run.
pub fn preload_planned(
    install_dir: &Path,
    state_dir: &Path,
    idle: bool,
    knobs: Knobs,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<Summary, Error> {
    let plan = match knobs.source {
        PlanSource::Learned => {
            let state = workingset::load(&state_dir.join(workingset::STATE_FILE));
            make_with(&state, install_dir, knobs)?
        }
        PlanSource::Trace | PlanSource::TraceReads => traced_plan(install_dir, state_dir, knobs)?,
    };
    let summary = run(&plan, idle, cancel, on_progress)?;
    crate::learn::last_run::write(state_dir, &summary);
    Ok(summary)
}

/// An install file with no page in the cache.
#[derive(Debug, Clone, Serialize)]
pub struct Uncached {
    #[serde(flatten, with = "crate::path_text::path")]
    pub path: PathBuf,
    pub size: u64,
}

/// `plan_status`'s data (docs/PROTOCOL.md).
#[derive(Debug, Clone, Serialize)]
pub struct PlanStatus {
    pub learned: bool,
    pub starts: usize,
    pub planned_bytes: u64,
    pub planned_files: u64,
    pub install_bytes: u64,
    /// `planned_bytes` split: the part inside the install folder (to set against
    /// `install_bytes`) and the system libraries and fonts outside it.
    pub planned_install_bytes: u64,
    pub planned_system_bytes: u64,
    #[serde(flatten, with = "crate::path_text::changed_files")]
    pub changed_files: Vec<PathBuf>,
    /// Changed files left out of `changed_files` to keep the reply bounded.
    #[serde(skip_serializing_if = "crate::pagecache::is_zero")]
    pub changed_files_omitted: u64,
    /// `None` when the kernel hides residency of some install file from this user.
    pub uncached_files: Option<Vec<Uncached>>,
    /// Files left out of `uncached_files` to keep the reply bounded.
    #[serde(skip_serializing_if = "crate::pagecache::is_zero")]
    pub uncached_files_omitted: u64,
    pub autostart: crate::learn::autostart::Status,
    /// Which plan this is (`plan_status`'s `source`).
    pub source: PlanSource,
    /// The install's build now (application.ini's BuildID).
    pub build_id: Option<String>,
    /// The build the newest learned start (or, for a traced source, the newest trace) was of;
    /// `None` where it was not recorded.
    pub learned_build_id: Option<String>,
    /// The plan was learned for another build than the install's now (BuildID differs, or,
    /// for starts without a BuildID, libxul.so is another file): a Firefox update. The learned
    /// plan then reads the changed files whole, and the next start is learned again.
    pub stale: bool,
}

/// Whether the learned `start` is of another build than `build_id` of the install `root`.
fn start_is_stale(start: &workingset::Start, root: &Path, build_id: Option<&str>) -> bool {
    if let (Some(then), Some(now)) = (start.build_id.as_deref(), build_id) {
        return then != now;
    }
    let libxul = root.join("libxul.so");
    start
        .files
        .iter()
        .find(|f| f.id.path == libxul)
        .is_some_and(|f| Identity::current(&f.id.path).map_or(true, |now| now != f.id))
}

/// What `plan_status` reports for the install folder `install_dir` (the learned plan).
pub fn status(install_dir: &Path, state_dir: &Path) -> Result<PlanStatus, Error> {
    status_of(install_dir, state_dir, PlanSource::Learned)
}

/// What `plan_status` reports for the plan of `source`.
pub fn status_of(
    install_dir: &Path,
    state_dir: &Path,
    source: PlanSource,
) -> Result<PlanStatus, Error> {
    let root = install_dir
        .canonicalize()
        .map_err(|e| Error::io(format!("cannot resolve {}", install_dir.display()), e))?;
    let (_, build_id) = crate::firefox::app_ini::read(&root);
    // "Learned" and the count of starts are this install's, not another Firefox's.
    let state = workingset::load(&state_dir.join(workingset::STATE_FILE)).for_install(&root);
    let (plan, learned, starts, learned_build_id, stale) = if source == PlanSource::Learned {
        let newest = state.starts.last();
        (
            make(&state, install_dir)?,
            newest.is_some(),
            state.starts.len(),
            newest.and_then(|s| s.build_id.clone()),
            newest.is_some_and(|s| start_is_stale(s, &root, build_id.as_deref())),
        )
    } else {
        let traces = plan_source::load(
            &state_dir.join("traces"),
            &root,
            crate::trace::store::MAX_TRACES,
        );
        let pages = if source == PlanSource::TraceReads {
            Pages::Read
        } else {
            Pages::Used
        };
        let used = plan_source::of_build(&traces, build_id.as_deref(), pages).len();
        let knobs = Knobs {
            source,
            ..Knobs::default()
        };
        let plan = match traced_plan(install_dir, state_dir, knobs) {
            Ok(plan) => plan,
            // Nothing traced for this build: what the install holds, nothing planned.
            Err(_) => make(&workingset::State::default(), install_dir)?,
        };
        (
            plan,
            used > 0,
            used,
            traces.first().and_then(|(_, t)| t.build_id.clone()),
            plan_source::other_build(&traces, build_id.as_deref()).is_some(),
        )
    };
    Ok(PlanStatus {
        source,
        build_id,
        learned_build_id,
        stale,
        learned,
        starts,
        planned_bytes: if learned { plan.bytes_planned } else { 0 },
        planned_files: if learned { plan.files.len() as u64 } else { 0 },
        install_bytes: plan.bytes_install,
        planned_install_bytes: if learned {
            plan.bytes_planned - plan.bytes_planned_system
        } else {
            0
        },
        planned_system_bytes: if learned {
            plan.bytes_planned_system
        } else {
            0
        },
        changed_files: plan.changed,
        changed_files_omitted: 0,
        // The install folder the plan holds open: one descriptor for the whole request.
        uncached_files: plan.folders.first().and_then(uncached),
        uncached_files_omitted: 0,
        autostart: crate::learn::autostart::status(state_dir),
    })
}

/// Install files with no resident page, or `None` if residency of any is hidden.
fn uncached(folder: &Folder) -> Option<Vec<Uncached>> {
    let viewer = Viewer::current();
    let page = sys::page_size() as u64;
    let mut core = Vec::new();
    let mut out = Vec::new();
    for path in install::list_files(folder.path()).ok()? {
        let Ok((file, meta)) = folder.open_file(&path) else {
            continue;
        };
        if !viewer.sees(&file, &meta, &path) {
            return None;
        }
        if meta.len() > 0
            && pages_of(meta.len(), page) > 0
            && sys::mincore_file(&file, meta.len(), &mut core).is_ok()
            && core.iter().all(|b| b & 1 == 0)
        {
            out.push(Uncached {
                path,
                size: meta.len(),
            });
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::workingset::Start;

    /// `plan_status` over a folder with nothing learned: the whole folder, opened beneath the
    /// folder the plan holds; files just written are cached, so none is listed as uncached.
    #[test]
    fn status_without_a_plan_counts_the_folder_and_scans_it_for_uncached_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.so"), [1u8; 5000]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b.so"), [2u8; 7000]).unwrap();
        let state = tempfile::tempdir().unwrap();
        let s = status(dir.path(), state.path()).unwrap();
        assert!(!s.learned);
        assert_eq!((s.install_bytes, s.planned_bytes), (12_000, 0));
        assert_eq!(s.uncached_files.map(|u| u.len()), Some(0));
    }

    #[test]
    fn only_real_paths_under_system_folders_are_planned_outside_the_install() {
        assert!(is_system_file(Path::new("/usr/bin/env")));
        for refused in [
            "/etc/shadow",
            "/etc/passwd",
            "/tmp",
            "/proc/self/status",
            "/usr/../etc/passwd",
        ] {
            assert!(!is_system_file(Path::new(refused)), "{refused}");
        }
        // A symlink under /usr (e.g. /usr/lib64 on merged-/usr systems, or lib links) is
        // refused unless it is the real path.
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_system_file(dir.path()));
    }

    #[test]
    fn small_gaps_are_read_large_ones_skipped() {
        let page = 4096;
        // Pages 0-1, 3 (gap of 1 page), 200 (gap of ~780 KiB), last page clipped to the size.
        let ranges = [[0, 2], [3, 1], [200, 1], [300, 5]];
        let size = 302 * page + 10;
        assert_eq!(
            byte_ranges(&ranges, page, size, GAP_BYTES),
            [
                [0, 4 * page],
                [200 * page, page],
                [300 * page, 2 * page + 10]
            ]
        );
        // No gap allowed: only touching ranges join.
        assert_eq!(
            byte_ranges(&[[0, 1], [1, 1], [3, 1]], page, 1 << 20, 0),
            [[0, 2 * page], [3 * page, page]]
        );
        assert_eq!(
            byte_ranges(&[[10, 1]], page, 4096, GAP_BYTES),
            Vec::<[u64; 2]>::new()
        );
    }

    fn ext(logical: u64, physical: Option<u64>, length: u64) -> Extent {
        Extent {
            logical,
            physical,
            length,
        }
    }

    #[test]
    fn ranges_split_at_extent_boundaries() {
        let extents = [
            ext(0, Some(1000), 100),
            ext(100, Some(50), 100),
            ext(300, None, 10),
        ];
        assert_eq!(
            split_by_extents(50, 200, &extents),
            [(50, 50, Some(1050)), (100, 100, Some(50)), (200, 50, None)]
        );
        assert_eq!(split_by_extents(0, 10, &[]), [(0, 10, None)]);
    }

    fn read(file: usize, offset: u64, physical: Option<u64>) -> Read {
        Read {
            file,
            offset,
            len: 1,
            physical,
        }
    }

    #[test]
    fn reads_go_in_disk_order_unknown_last() {
        let mut reads = vec![
            read(0, 0, Some(900)),
            read(1, 0, None),
            read(1, 5, Some(100)),
            read(0, 8, Some(500)),
        ];
        assert_eq!(order_reads(&mut reads), Order::Disk);
        let got: Vec<_> = reads.iter().map(|r| (r.file, r.offset)).collect();
        assert_eq!(got, [(1, 5), (0, 8), (0, 0), (1, 0)]);
        let mut no_fiemap = vec![read(1, 3, None), read(0, 9, None), read(0, 1, None)];
        assert_eq!(order_reads(&mut no_fiemap), Order::File);
        let got: Vec<_> = no_fiemap.iter().map(|r| (r.file, r.offset)).collect();
        assert_eq!(got, [(0, 1), (0, 9), (1, 3)]);
    }

    /// A system library this install's start mapped is planned, and `plan_status` counts it
    /// apart from the install folder's part (the page says both, not one share of the install).
    #[test]
    fn plan_status_splits_install_and_system_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let state_dir = tempfile::tempdir().unwrap();
        let page = sys::page_size() as u64;
        let install_dir = dir.path().canonicalize().unwrap();
        let lib = install_dir.join("libxul.so");
        std::fs::write(&lib, vec![1u8; usize::try_from(10 * page).unwrap()]).unwrap();
        let env = Path::new("/usr/bin/env");
        let mut state = State::default();
        state.push(Start {
            at_ms: 1,
            pid: 1,
            install_dir: install_dir.clone(),
            page_size: page,
            build_id: None,
            files: vec![
                FileSet {
                    id: Identity::current(&lib).unwrap(),
                    install: true,
                    resident: false,
                    ranges: vec![[0, 4]],
                    mapped_ranges: None,
                },
                FileSet {
                    id: Identity::current(env).unwrap(),
                    install: false,
                    resident: false,
                    ranges: vec![[0, 1]],
                    mapped_ranges: None,
                },
            ],
        });
        workingset::save_json(&state_dir.path().join(workingset::STATE_FILE), &state).unwrap();
        let status = status(&install_dir, state_dir.path()).unwrap();
        assert!(status.learned);
        assert_eq!(status.install_bytes, 10 * page);
        assert_eq!(status.planned_install_bytes, 4 * page);
        assert_eq!(status.planned_system_bytes, page);
        assert_eq!(
            status.planned_bytes,
            status.planned_install_bytes + status.planned_system_bytes
        );
    }

    /// A fake install folder: a learned file read in part, a changed one read whole, a new one
    /// read whole, an untouched one skipped; then the plan is read for real.
    #[test]
    fn plan_reads_learned_ranges_and_whole_changed_files() {
        let dir = tempfile::tempdir().unwrap();
        let page = sys::page_size() as u64;
        let mk = |name: &str, pages: u64| {
            let p = dir.path().canonicalize().unwrap().join(name);
            std::fs::write(&p, vec![1u8; usize::try_from(pages * page).unwrap()]).unwrap();
            p
        };
        let (big, changed, untouched) = (mk("big", 400), mk("changed", 3), mk("untouched", 9));
        let learned = |p: &Path, ranges: Vec<[u64; 2]>| FileSet {
            id: Identity::current(p).unwrap(),
            install: true,
            resident: false,
            ranges,
            mapped_ranges: None,
        };
        let mut state = State::default();
        state.push(Start {
            at_ms: 1,
            pid: 1,
            install_dir: dir.path().into(),
            page_size: page,
            build_id: None,
            files: vec![
                learned(&big, vec![[0, 2], [300, 10]]),
                learned(&changed, vec![[0, 1]]),
                learned(&untouched, vec![]),
            ],
        });
        // Another Firefox's start (a system file it mapped): never part of this install's plan.
        let env = Path::new("/usr/bin/env");
        state.push(Start {
            at_ms: 2,
            pid: 2,
            install_dir: "/opt/other-firefox".into(),
            page_size: page,
            build_id: None,
            files: vec![FileSet {
                install: false,
                ..learned(env, vec![[0, 1]])
            }],
        });
        std::fs::remove_file(&changed).unwrap();
        let changed = mk("changed", 3);
        let new = mk("new", 2);
        let plan = make(&state, dir.path()).unwrap();
        assert_eq!(plan.changed, std::slice::from_ref(&changed));
        assert_eq!(plan.bytes_install, (400 + 3 + 9 + 2) * page);
        assert_eq!(plan.bytes_planned, (2 + 10 + 3 + 2) * page);
        assert_eq!(plan.files, [big, changed, new]);
        let mut events = 0;
        let summary = run(&plan, true, &AtomicBool::new(false), &mut |_| events += 1).unwrap();
        assert_eq!(summary.bytes, plan.bytes_planned);
        assert_eq!((summary.files, summary.planned), (3, true));
        assert!(summary.errors.is_empty() && events >= 1);
        let knobs = Knobs {
            file_order: true,
            mapped_only: true,
            ..Knobs::default()
        };
        let unsorted = make_with(&state, dir.path(), knobs).unwrap();
        assert_eq!(unsorted.order, Order::File);
        assert_eq!(unsorted.bytes_planned, plan.bytes_planned);
        let err = run(&plan, false, &AtomicBool::new(true), &mut |_| {}).unwrap_err();
        assert!(matches!(err, Error::Cancelled));
    }

    /// A fake install folder (application.ini, libxul.so, omni.ja) in a temporary folder.
    fn fake_install(build: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        set_build(&root, build);
        std::fs::write(root.join("libxul.so"), vec![1u8; 64 * 4096]).unwrap();
        std::fs::write(root.join("omni.ja"), vec![2u8; 16 * 4096]).unwrap();
        (dir, root)
    }

    fn set_build(root: &Path, build: &str) {
        std::fs::write(
            root.join("application.ini"),
            format!("[App]\nVersion=153.0\nBuildID={build}\n"),
        )
        .unwrap();
    }

    /// An update as a package manager does it: new files renamed over the old ones.
    fn replace(path: &Path, bytes: usize) {
        let tmp = path.with_extension("new");
        std::fs::write(&tmp, vec![3u8; bytes]).unwrap();
        std::fs::rename(&tmp, path).unwrap();
    }

    fn learned_start(root: &Path, build: Option<&str>) -> Start {
        let set = |name: &str, ranges: Vec<[u64; 2]>| FileSet {
            id: Identity::current(&root.join(name)).unwrap(),
            install: true,
            resident: false,
            ranges,
            mapped_ranges: None,
        };
        Start {
            at_ms: 1,
            pid: 1,
            install_dir: root.to_path_buf(),
            page_size: 4096,
            files: vec![set("libxul.so", vec![[0, 2]]), set("omni.ja", vec![[1, 1]])],
            build_id: build.map(str::to_owned),
        }
    }

    #[test]
    fn an_update_makes_the_plan_stale_and_the_new_build_is_read_not_the_old_ranges() {
        let (_dir, root) = fake_install("20260101000000");
        let state_dir = tempfile::tempdir().unwrap();
        let mut state = State::default();
        state.push(learned_start(&root, Some("20260101000000")));
        workingset::save_json(&state_dir.path().join(workingset::STATE_FILE), &state).unwrap();
        let before = status(&root, state_dir.path()).unwrap();
        assert!(before.learned && !before.stale);
        assert_eq!(before.learned_build_id.as_deref(), Some("20260101000000"));
        // application.ini was never learned: read whole, like any file a start did not show.
        let ini = || {
            std::fs::metadata(root.join("application.ini"))
                .unwrap()
                .len()
        };
        assert_eq!(before.planned_bytes, 2 * 4096 + 4096 + ini());

        // Firefox is updated: a new BuildID and a new libxul.so (another inode, another size).
        set_build(&root, "20260202000000");
        replace(&root.join("libxul.so"), 80 * 4096);
        let after = status(&root, state_dir.path()).unwrap();
        assert!(after.stale, "{after:?}");
        assert_eq!(after.build_id.as_deref(), Some("20260202000000"));
        assert_eq!(after.learned_build_id.as_deref(), Some("20260101000000"));
        assert_eq!(after.changed_files, [root.join("libxul.so")]);
        // The preload reads the new libxul.so whole (not the two pages learned of the old one)
        // and still only the learned page of the unchanged omni.ja.
        let plan = make(&state, &root).unwrap();
        let xul = plan
            .files
            .iter()
            .position(|p| p.ends_with("libxul.so"))
            .unwrap();
        let xul_bytes: u64 = plan
            .reads
            .iter()
            .filter(|r| r.file == xul)
            .map(|r| r.len)
            .sum();
        assert_eq!(xul_bytes, 80 * 4096);
        assert_eq!(plan.bytes_planned, 80 * 4096 + 4096 + ini());

        // The next start is learned for the new build: no longer stale.
        state.push(learned_start(&root, Some("20260202000000")));
        workingset::save_json(&state_dir.path().join(workingset::STATE_FILE), &state).unwrap();
        let relearned = status(&root, state_dir.path()).unwrap();
        assert!(!relearned.stale && relearned.changed_files.is_empty());

        // A start learned before BuildIDs were recorded: libxul.so replaced also means stale.
        let mut old = State::default();
        old.push(learned_start(&root, None));
        workingset::save_json(&state_dir.path().join(workingset::STATE_FILE), &old).unwrap();
        assert!(!status(&root, state_dir.path()).unwrap().stale);
        replace(&root.join("libxul.so"), 81 * 4096);
        assert!(status(&root, state_dir.path()).unwrap().stale);
    }

    #[test]
    fn a_traced_plan_reads_used_ranges_whole_changed_files_and_skips_untraced_ones() {
        let (_dir, root) = fake_install("B1");
        std::fs::write(root.join("untraced.so"), vec![0u8; 4096]).unwrap();
        let traced_file = |name: &str, ranges: Vec<[u64; 2]>| {
            let meta = std::fs::metadata(root.join(name)).unwrap();
            TracedFile {
                path: root.join(name),
                ino: std::os::unix::fs::MetadataExt::ino(&meta),
                size: Some(meta.len()),
                ranges,
            }
        };
        let traced = Traced {
            // libxul: pages 0-1, 4 (gap of 2 pages), 40; omni.ja: page 3.
            files: vec![
                traced_file("libxul.so", vec![[0, 2], [4, 1], [40, 1]]),
                traced_file("omni.ja", vec![[3, 1]]),
            ],
            recorded: vec![(0, 40, 1), (1, 3, 1), (0, 0, 2), (0, 4, 1)],
            trace_ids: vec!["t".into()],
        };
        let knobs = |gap: u64| Knobs {
            source: PlanSource::Trace,
            gap: Some(gap),
            ..Knobs::default()
        };
        let exact = make_traced(&traced, &root, knobs(0)).unwrap();
        assert_eq!(exact.bytes_planned, 5 * 4096);
        assert!(!exact.files.iter().any(|p| p.ends_with("untraced.so")));
        // An 8 KiB gap is read through, the 35-page one is not.
        let joined = make_traced(&traced, &root, knobs(8192)).unwrap();
        assert_eq!(joined.bytes_planned, 7 * 4096);
        // The replay in recorded order keeps the trace's order.
        let replay = make_traced(
            &traced,
            &root,
            Knobs {
                source: PlanSource::TraceReads,
                gap: Some(0),
                recorded_order: true,
                ..Knobs::default()
            },
        )
        .unwrap();
        assert_eq!(replay.order, Order::Recorded);
        let seq: Vec<_> = replay
            .reads
            .iter()
            .map(|r| {
                (
                    replay.files[r.file].file_name().unwrap().to_owned(),
                    r.offset,
                )
            })
            .collect();
        let name = |n: &str| std::ffi::OsString::from(n);
        assert_eq!(
            seq,
            [
                (name("libxul.so"), 40 * 4096),
                (name("omni.ja"), 3 * 4096),
                (name("libxul.so"), 0),
                (name("libxul.so"), 4 * 4096)
            ]
        );
        // omni.ja replaced since the trace: read whole, reported as changed.
        replace(&root.join("omni.ja"), 20 * 4096);
        let after = make_traced(&traced, &root, knobs(0)).unwrap();
        assert_eq!(after.changed, [root.join("omni.ja")]);
        assert_eq!(after.bytes_planned, 4 * 4096 + 20 * 4096);
    }
}
