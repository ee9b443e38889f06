//! The plan from stored startup traces (`--source trace`/`trace-reads`): the pages traced cold
//! starts read and then used, or every read of the newest trace in recorded order (seed 002's replay).
//! The used pages (`trace`) include what the traced start read of the user's own profile before
//! sessionRestored, under the rules of learn/plan/profile.rs.

use crate::firefox::install;
use crate::learn::plan::profile::{self, Launched, ProfilePlan, Scope, Verdict};
use crate::learn::plan::{
    byte_ranges, empty_plan, is_system_file, split_by_extents, Knobs, Plan, PlanSource, Read,
};
use crate::learn::workingset::Identity;
use crate::os::sys::{self, Extent};
use crate::pagecache::preload::Order;
use crate::state::StateDir;
use crate::trace::first_use::{self, TimedFile};
use crate::trace::plan_source::{self, Pages, Traced, TracedFile};
use crate::Error;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use super::make::finish;

/// The user's profile in a traced plan: the folders it may be read from, its files with the
/// pages the traces used before sessionRestored (trace/first_use.rs), and what the plan says of
/// it so far (left out, and why).
pub struct ProfileSource<'a> {
    pub scope: Option<&'a Scope>,
    pub files: &'a [TimedFile],
    pub plan: ProfilePlan,
}

/// Make the plan from stored traces ([`PlanSource::Trace`] or [`PlanSource::TraceReads`]):
/// the traced ranges of install files still as traced (same inode and size), whole files for
/// those replaced since, nothing for install files no traced start read; system files the
/// traces read where unchanged; other files never. The profile: [`make_traced_with`].
pub fn make_traced(traced: &Traced, install_dir: &Path, knobs: Knobs) -> Result<Plan, Error> {
    make_traced_with(traced, None, install_dir, knobs)
}

/// [`make_traced`], and with `profile` the profile's files still as traced (inode, size and
/// modification time), their used pages, for [`PlanSource::Trace`].
pub fn make_traced_with(
    traced: &Traced,
    profile: Option<ProfileSource<'_>>,
    install_dir: &Path,
    knobs: Knobs,
) -> Result<Plan, Error> {
    // tracefs offsets are in 4 KiB pages (trace/event.rs), whatever the page size.
    const TRACE_PAGE: u64 = 4096;
    let (root, mut plan) = empty_plan(install_dir)?;
    // The profile's files and their ranges, judged first: a profile is never "system".
    let mut profile_wanted: Vec<(PathBuf, Vec<[u64; 2]>)> = Vec::new();
    let scope = profile.as_ref().and_then(|p| p.scope);
    if let Some(src) = profile {
        let mut part = src.plan;
        if let Some(scope) = src.scope {
            scope.hold_in(&mut plan.folders);
            for f in src.files {
                let id = profile::Traced {
                    ino: f.ino,
                    size: f.size,
                    mtime_ns: f.mtime_ns,
                };
                match scope.judge(&f.path, &id) {
                    Verdict::Plan(planned) => {
                        let pages: Vec<[u64; 2]> =
                            f.pieces.iter().map(|p| [p.first, p.count]).collect();
                        let mut pages = pages;
                        pages.sort_unstable();
                        let ranges =
                            byte_ranges(&pages, TRACE_PAGE, planned.size, knobs.gap_bytes());
                        plan.profile_files.insert(f.path.clone(), planned);
                        profile_wanted.push((f.path.clone(), ranges));
                    }
                    Verdict::Changed(p) => part.note_changed(p),
                    Verdict::Never | Verdict::Outside => {}
                }
            }
        }
        plan.profile = Some(part);
    }
    let by_path: HashMap<&Path, &TracedFile> =
        traced.files.iter().map(|f| (f.path.as_path(), f)).collect();
    let same =
        |t: &TracedFile, now: &Identity| t.ino == now.ino && t.size.is_none_or(|s| s == now.size);
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
    for t in traced.files.iter().filter(|t| {
        !install::is_inside(&root, &t.path)
            && scope.is_none_or(|s| s.relative(&t.path).is_none())
            && is_system_file(&t.path)
    }) {
        if let Ok(now) = Identity::current_in(&plan.folders, &t.path) {
            if same(t, &now) {
                chosen.push((t.path.clone(), Some(t), now.size));
            }
        }
    }
    chosen.sort_by(|a, b| a.0.cmp(&b.0));
    if !(knobs.recorded_order && knobs.source == PlanSource::TraceReads) {
        let mut wanted: Vec<(PathBuf, Vec<[u64; 2]>)> = chosen
            .into_iter()
            .map(|(path, t, size)| {
                let ranges = t.map_or_else(
                    || vec![[0, size]],
                    |t| byte_ranges(&t.ranges, TRACE_PAGE, size, knobs.gap_bytes()),
                );
                (path, ranges)
            })
            .collect();
        wanted.extend(profile_wanted);
        wanted.sort_by(|a, b| a.0.cmp(&b.0));
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

/// The traced plan for the install `install_dir` from the traces stored in `state`.
/// Fails, naming what to do, when no stored trace is of this install and build (or, for
/// [`PlanSource::Trace`], none knows which pages were used).
pub fn traced_plan(install_dir: &Path, state: &StateDir, knobs: Knobs) -> Result<Plan, Error> {
    let root = install_dir
        .canonicalize()
        .map_err(|e| Error::io(format!("cannot resolve {}", install_dir.display()), e))?;
    let (_, build_id) = crate::firefox::app_ini::read(&root);
    let traces = plan_source::load(state, &root, crate::trace::store::MAX_TRACES);
    let pages = if knobs.source == PlanSource::TraceReads {
        Pages::Read
    } else {
        Pages::Used
    };
    let picked = plan_source::of_build(&traces, build_id.as_deref(), pages);
    if picked.is_empty() {
        // None to plan from: a damaged trace may be why. Named and set aside here, as `trace
        // list` does, rather than read as no trace at all (issue 39 #4: a truncated trace gave
        // "no stored trace of this Firefox" and stayed to be passed over again).
        let (_, damaged) =
            plan_source::load_reporting(state, &root, crate::trace::store::MAX_TRACES);
        let damaged: String = damaged
            .iter()
            .map(|note| format!("{}; ", note.english()))
            .collect();
        let why = match plan_source::other_build(&traces, build_id.as_deref()) {
            Some(old) => format!(
                "the stored traces are of Firefox build {old}, this one is build {}",
                build_id.as_deref().unwrap_or("unknown")
            ),
            None if traces.is_empty() => "no stored trace of this Firefox".to_owned(),
            None => "no stored trace of this Firefox build says which pages were used (recorded without root or /proc/kpageflags)".to_owned(),
        };
        return Err(Error::io(
            format!(
                "{damaged}{why}; record one: {}",
                crate::trace::store::record_command()
            ),
            io::Error::from(io::ErrorKind::NotFound),
        ));
    }
    let traced = plan_source::merge(&picked, pages);
    if knobs.source != PlanSource::Trace {
        // The replay is of Firefox's own files: an experiment on the install's layout.
        return make_traced(&traced, &root, knobs);
    }
    // What the traced starts read of their profile before sessionRestored: the used pages of
    // first-use order, cut there (trace/first_use.rs), of the profile a start with no profile
    // argument opens (a preload knows no other).
    let dir = plan_source::profile_dir(&picked);
    let (scope, part) = profile::scope_for(dir.as_deref(), &Launched::Default, sys::geteuid());
    let files = match &scope {
        Some(s) => first_use::first_use(&picked)
            .into_iter()
            .filter(|f| s.relative(&f.path).is_some())
            .collect(),
        None => Vec::new(),
    };
    let profile = part.map(|plan| ProfileSource {
        scope: scope.as_ref(),
        files: &files,
        plan,
    });
    make_traced_with(&traced, profile, &root, knobs)
}
