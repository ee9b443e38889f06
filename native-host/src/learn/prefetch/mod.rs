//! The launch prefetch (`about-startup-host launch --prefetch`): Firefox starts at once and,
//! beside it, a prefetcher reads what the start is going to need, in the order it needs it.
//!
//! - here: which plan ([`choose`]): the traced plan of this build (the pages traced cold starts
//!   read and then used, with the time each was first needed: trace/first_use.rs), else the
//!   traced plan of the build before an update, read by file name (issue 39 #11), else the
//!   learned working set (no times: disk order), saying which and why ([`PrefetchStatus`]);
//!   files replaced since they were planned are never read whole (an update's new files would
//!   cost more than the start reads by itself): after an update the traced ranges are read, cut
//!   to each file's size now, and the learned plan leaves them out. The traced plan covers the user's
//!   own profile too, under the rules of learn/plan/profile.rs (its files only while they are
//!   the files traced, read and nothing else);
//! - [`batch`]: first-use order cut into batches read in disk order (pure);
//! - [`run`]: the reader: skips what is cached (mincore where the kernel tells, else a
//!   non-blocking probe), stops when Firefox exits;
//! - [`launch`]: fork and exec, so Firefox is this very process and the prefetcher a detached
//!   one beside it; nothing the prefetcher does can stop Firefox from starting;
//! - [`record`]: `last-prefetch.json`, what the last prefetch did (the page, the benchmark);
//! - [`strategy`]: beside the start, or first where the disk's readahead window is large.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::firefox::install;
use crate::learn::plan::profile::{self, Launched, ProfilePlan, Scope, Verdict};
use crate::learn::plan::{byte_ranges, empty_plan, is_system_file, Read, GAP_BYTES};
use crate::learn::workingset::{self, Identity};
use crate::os::beneath::Folders;
use crate::os::sys;
use crate::state::StateDir;
use crate::trace::first_use::{self, TimedFile};
use crate::trace::plan_source::{self, Pages};
use crate::Error;

pub mod batch;
pub mod image;
pub mod launch;
pub mod record;
pub mod run;
pub mod strategy;

pub use batch::Sizes;

/// Where a prefetch plan comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Stored traces of this build: used pages in first-use order.
    Trace,
    /// The learned working set: no times, so one disk-ordered pass.
    Learned,
}

/// Why the traced plan is not used (the page and the CLI word it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "code")]
pub enum Fallback {
    /// No stored trace of this install.
    NoTrace,
    /// The traces are of another Firefox build: an update made them stale.
    OtherBuild { traced_build: Option<String> },
    /// Traces of this build exist but none says which pages were used (recorded without root).
    NoPageUse,
}

/// Which plan a prefetch would read now, and why (`desktop` status, `launch --prefetch`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrefetchStatus {
    /// `None`: nothing to read (no trace of this build and nothing learned that still applies).
    pub source: Option<Source>,
    /// The install's build now.
    pub build_id: Option<String>,
    /// Traces merged (for `trace`).
    pub traces: usize,
    /// Why not the traced plan; `None` when it is used.
    pub fallback: Option<Fallback>,
    /// The learned plan is of another build too (its changed files are left out).
    pub learned_stale: bool,
}

impl PrefetchStatus {
    /// The plan is stale: the newest trace is of another build than the install's now.
    #[must_use]
    pub fn stale(&self) -> bool {
        matches!(self.fallback, Some(Fallback::OtherBuild { .. })) || self.learned_stale
    }
}

/// A plan to prefetch: its files (opened beneath `folders`, with the identity they were planned
/// with), and its reads batch by batch, each batch in disk order.
#[derive(Debug)]
pub struct PrefetchPlan {
    pub files: Vec<PathBuf>,
    /// Inode and size of each file when planned: a file replaced since (an update during the
    /// launch) is skipped, not read.
    pub identities: Vec<(u64, u64)>,
    /// Per file: for a file of the user's profile, its modification time when planned (checked
    /// as inode and size are: a file Firefox wrote meanwhile is not read; and opened without
    /// touching its access time); `None` for Firefox's and the system's files.
    pub profile_mtimes: Vec<Option<i64>>,
    pub batches: Vec<Vec<Read>>,
    pub bytes_planned: u64,
    /// The profile's part: its bytes and files, what changed since the traces; `None` where the
    /// plan has nothing to say of a profile (the learned plan, traces that name none).
    pub profile: Option<ProfilePlan>,
    pub folders: Folders,
}

/// Gaps between planned ranges up to this many bytes are read through (see [`batch::chunks`]).
/// Measured alone on the 30 MiB/s, 150 IOPS throttle at 128 KiB readahead: the batched plan
/// read at 26.5 MB/s with no gap read through (600 reads, 440 of them under 200 KiB: bound by
/// requests) and at 30.6 MB/s with 16 KiB (400 reads, 1.6 MB more), as fast as 32 or 64 KiB.
pub const GAP: u64 = 16 << 10;
/// The grain of first-use order: regions are cut into chunks of at most this many bytes.
pub const CHUNK: u64 = 1 << 20;

/// Bytes the prefetcher keeps queued (the read it waits for included). A fault of Firefox on a
/// page outside the queue waits behind it (the throttle serves one group in order), so the
/// queue is short: 2 MiB, 0.07 s of the 30 MiB/s benchmark disk, was as fast as 4 and 16 MiB
/// alone and a little faster beside Firefox (docs/benchmarks.md).
pub const AHEAD: u64 = 2 << 20;

/// Tuning of the plan and its reading (the benchmark's knobs; the defaults are what was measured).
#[derive(Debug, Clone, Copy)]
pub struct Knobs {
    pub sizes: Sizes,
    pub gap: u64,
    pub chunk: u64,
    pub ahead: u64,
    pub until_ms: Option<f64>,
    /// On a FUSE mount, decompress ahead through the mount behind the image read
    /// (image/warm.rs); off only to compare (`launch --no-warm`, experiments).
    pub warm: bool,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            sizes: Sizes::default(),
            gap: GAP,
            chunk: CHUNK,
            ahead: AHEAD,
            until_ms: None,
            warm: true,
        }
    }
}

/// Choose the plan for the install `install_dir` from the state folder `state_dir`: the traced
/// plan of this build, else the learned one, else none; with what the page and CLI say about it.
/// `launched`: the profile the launch starts (its arguments), whose traced reads the plan holds.
pub fn choose(
    install_dir: &Path,
    state_dir: &StateDir,
    knobs: Knobs,
    launched: &Launched,
) -> Result<(Option<PrefetchPlan>, PrefetchStatus), Error> {
    decide(install_dir, state_dir, Some((knobs, launched)))
}

/// Which plan [`choose`] would read now, without making the traced one (the page's status).
pub fn status(install_dir: &Path, state_dir: &StateDir) -> Result<PrefetchStatus, Error> {
    decide(install_dir, state_dir, None).map(|(_, status)| status)
}

/// [`choose`]; with `make` `None` the traced plan is only found, not made.
fn decide(
    install_dir: &Path,
    state_dir: &StateDir,
    make: Option<(Knobs, &Launched)>,
) -> Result<(Option<PrefetchPlan>, PrefetchStatus), Error> {
    let knobs = make.map(|(k, _)| k);
    let root = install_dir
        .canonicalize()
        .map_err(|e| Error::io(format!("cannot resolve {}", install_dir.display()), e))?;
    let (_, build_id) = crate::firefox::app_ini::read(&root);
    let traces = plan_source::load(state_dir, &root, crate::trace::store::MAX_TRACES);
    let picked = plan_source::of_build(&traces, build_id.as_deref(), Pages::Used);
    let mut status = PrefetchStatus {
        source: None,
        build_id: build_id.clone(),
        traces: picked.len(),
        fallback: None,
        learned_stale: false,
    };
    if !picked.is_empty() {
        status.source = Some(Source::Trace);
        let plan = of_traces(&picked, &root, make, Replaced::LeftOut)?;
        return Ok((plan, status));
    }
    let old_build = plan_source::other_build(&traces, build_id.as_deref());
    status.fallback = Some(match &old_build {
        Some(old) => Fallback::OtherBuild {
            traced_build: Some(old.clone()).filter(|b| !b.is_empty()),
        },
        None if traces.is_empty() => Fallback::NoTrace,
        None => Fallback::NoPageUse,
    });
    // What the background learned of this build's own starts renews the plan from the first
    // start after an update (issue 39 #11: "the plan renews itself from the next start"),
    // before the older build's traces read by name below.
    let state = workingset::load(state_dir).for_install(&root);
    status.learned_stale = state
        .starts
        .last()
        .and_then(|s| s.build_id.as_deref())
        .zip(build_id.as_deref())
        .is_some_and(|(then, now)| then != now);
    let learned_plan = if state.starts.is_empty() {
        None
    } else {
        Some(learned(&state, &root, knobs.unwrap_or_default())?).filter(|p| p.bytes_planned > 0)
    };
    if learned_plan.is_some() && !status.learned_stale {
        status.source = Some(Source::Learned);
        return Ok((learned_plan, status));
    }
    // Firefox was updated since its starts were traced, and nothing of this build was learned
    // yet (issue 39 #11: every file of the plan changed, and a launch prefetched nothing until
    // the user traced again). The same files are read by name, each by its traced ranges cut
    // to its size now, until a start of this build is learned or traced.
    let by_name = old_build
        .as_deref()
        .map(|old| plan_source::of_build(&traces, Some(old).filter(|b| !b.is_empty()), Pages::Used))
        .unwrap_or_default();
    if !by_name.is_empty() {
        status.source = Some(Source::Trace);
        status.traces = by_name.len();
        let plan = of_traces(&by_name, &root, make, Replaced::ReadByName)?;
        return Ok((plan, status));
    }
    let Some(plan) = learned_plan else {
        return Ok((None, status));
    };
    status.source = Some(Source::Learned);
    Ok((Some(plan), status))
}

/// Per file: its path and identity now, for files still as they were planned.
struct Chosen {
    path: PathBuf,
    ino: u64,
    size: u64,
    /// A profile file's modification time (checked again when it is opened).
    mtime_ns: Option<i64>,
    /// `(offset, len, t)` byte ranges.
    ranges: Vec<(u64, u64, f64)>,
}

/// What a traced plan does with an install or system file replaced since it was traced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Replaced {
    /// Left to the start (an update during the launch): the traces are of this build.
    LeftOut,
    /// Read by name all the same, by the traced ranges cut to its size now: the traces are of
    /// an older build (Firefox was updated since; an update changes most files a little, and
    /// the start still needs much the same parts of them). The profile's files keep their rules.
    ReadByName,
}

/// The traced plan of `picked` (traces of one build, newest first), made when `make` asks for
/// it: the one path of this build's traces and of an older build's read by name.
fn of_traces(
    picked: &[&(String, crate::trace::model::Trace)],
    root: &Path,
    make: Option<(Knobs, &Launched)>,
    replaced: Replaced,
) -> Result<Option<PrefetchPlan>, Error> {
    let Some((knobs, launched)) = make else {
        return Ok(None);
    };
    let dir = plan_source::profile_dir(picked);
    let (scope, profile) = profile::scope_for(dir.as_deref(), launched, sys::geteuid());
    let files = first_use::first_use(picked);
    traced(&files, root, scope.as_ref(), profile, knobs, replaced).map(Some)
}

/// The traced plan: pieces of install files still as traced (same inode and size, or by name:
/// [`Replaced`]), of unchanged system files and of the profile's files still as traced (inode,
/// size and time: learn/plan/profile.rs), with their first-use times. `profile`: what the plan
/// says of the profile so far (left out, and why), completed here.
fn traced(
    files: &[TimedFile],
    root: &Path,
    scope: Option<&Scope>,
    mut profile: Option<ProfilePlan>,
    knobs: Knobs,
    replaced: Replaced,
) -> Result<PrefetchPlan, Error> {
    let by_name = replaced == Replaced::ReadByName;
    const TRACE_PAGE: u64 = 4096; // tracefs offsets are 4 KiB pages (trace/event.rs)
    let (_, mut empty) = empty_plan(root)?;
    if let Some(scope) = scope {
        scope.hold_in(&mut empty.folders);
    }
    let mut chosen = Vec::new();
    for f in files {
        let traced_id = profile::Traced {
            ino: f.ino,
            size: f.size,
            mtime_ns: f.mtime_ns,
        };
        let mut mtime_ns = None;
        let mut ours = false;
        match scope.map_or(Verdict::Outside, |s| s.judge(&f.path, &traced_id)) {
            Verdict::Plan(planned) => mtime_ns = Some(planned.mtime_ns),
            Verdict::Changed(part) => {
                if let Some(p) = profile.as_mut() {
                    p.note_changed(part);
                }
                continue;
            }
            Verdict::Never => continue,
            Verdict::Outside => {
                if !install::is_inside(root, &f.path) && !is_system_file(&f.path) {
                    continue; // outside the install, the system folders and the profile: never
                }
                ours = true;
            }
        }
        let Ok(now) = Identity::current_in(&empty.folders, &f.path) else {
            continue;
        };
        let replaced = now.ino != f.ino || f.size.is_some_and(|s| s != now.size);
        if replaced && !(by_name && ours) {
            continue; // replaced since traced (an update during the launch): left to the start
        }
        let ranges = f
            .pieces
            .iter()
            .filter(|p| knobs.until_ms.is_none_or(|until| p.t <= until))
            .filter_map(|p| {
                let [[offset, len]] =
                    byte_ranges(&[[p.first, p.count]], TRACE_PAGE, now.size, 0)[..]
                else {
                    return None;
                };
                Some((offset, len, p.t))
            })
            .collect();
        chosen.push(Chosen {
            path: f.path.clone(),
            ino: now.ino,
            size: now.size,
            mtime_ns,
            ranges,
        });
    }
    Ok(assemble(empty.folders, chosen, profile, knobs))
}

/// The learned plan: the merged working set's ranges of files still as learned (gaps under
/// [`GAP_BYTES`] read through, as `preload --plan`), no times; changed and unknown files left out.
fn learned(state: &workingset::State, root: &Path, knobs: Knobs) -> Result<PrefetchPlan, Error> {
    let (_, empty) = empty_plan(root)?;
    let page = state.page_size();
    let mut chosen = Vec::new();
    for f in state.merged() {
        let path = f.id.path.clone();
        if !install::is_inside(root, &path) && !is_system_file(&path) {
            continue;
        }
        if !Identity::current_in(&empty.folders, &path).is_ok_and(|now| now == f.id) {
            continue;
        }
        let ranges = byte_ranges(&f.ranges, page, f.id.size, GAP_BYTES)
            .into_iter()
            .map(|[offset, len]| (offset, len, f64::NAN))
            .collect();
        chosen.push(Chosen {
            path,
            ino: f.id.ino,
            size: f.id.size,
            mtime_ns: None,
            ranges,
        });
    }
    Ok(assemble(empty.folders, chosen, None, knobs))
}

/// Files, extents, batches; the profile's bytes and files counted into `profile`.
fn assemble(
    folders: Folders,
    mut chosen: Vec<Chosen>,
    mut profile: Option<ProfilePlan>,
    knobs: Knobs,
) -> PrefetchPlan {
    chosen.sort_by(|a, b| a.path.cmp(&b.path));
    chosen.retain(|c| !c.ranges.is_empty());
    let mut pieces = Vec::new();
    let mut extents = Vec::new();
    for (file, c) in chosen.iter().enumerate() {
        extents.push(
            folders
                .open_file(&c.path)
                .and_then(|(f, _)| sys::fiemap(&f))
                .unwrap_or_default(),
        );
        for &(offset, len, t) in &c.ranges {
            pieces.push(batch::Timed {
                file,
                offset,
                len,
                t,
            });
        }
    }
    let pieces = batch::chunks(pieces, knobs.gap, knobs.chunk);
    let bytes_planned = pieces.iter().map(|p| p.len).sum();
    if let Some(p) = profile.as_mut() {
        p.files = chosen.iter().filter(|c| c.mtime_ns.is_some()).count() as u64;
        p.bytes = pieces
            .iter()
            .filter(|piece| chosen[piece.file].mtime_ns.is_some())
            .map(|piece| piece.len)
            .sum();
    }
    let batches = batch::cut(pieces, knobs.sizes)
        .iter()
        .map(|b| batch::disk_order(b, &extents))
        .collect();
    PrefetchPlan {
        identities: chosen.iter().map(|c| (c.ino, c.size)).collect(),
        profile_mtimes: chosen.iter().map(|c| c.mtime_ns).collect(),
        files: chosen.into_iter().map(|c| c.path).collect(),
        batches,
        bytes_planned,
        profile,
        folders,
    }
}
