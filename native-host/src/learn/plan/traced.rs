//! The plan from stored startup traces (`--source trace`/`trace-reads`): the pages traced cold
//! starts read and then used, or every read of the newest trace in recorded order (seed 002's replay).

use crate::firefox::install;
use crate::learn::plan::{
    byte_ranges, empty_plan, is_system_file, split_by_extents, Knobs, Plan, PlanSource, Read,
};
use crate::learn::workingset::Identity;
use crate::os::sys::{self, Extent};
use crate::pagecache::preload::Order;
use crate::state::StateDir;
use crate::trace::plan_source::{self, Pages, Traced, TracedFile};
use crate::Error;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use super::make::finish;

/// Make the plan from stored traces ([`PlanSource::Trace`] or [`PlanSource::TraceReads`]):
/// the traced ranges of install files still as traced (same inode and size), whole files for
/// those replaced since, nothing for install files no traced start read; system files the
/// traces read where unchanged; profile and other files never.
pub fn make_traced(traced: &Traced, install_dir: &Path, knobs: Knobs) -> Result<Plan, Error> {
    // tracefs offsets are in 4 KiB pages (trace/event.rs), whatever the page size.
    const TRACE_PAGE: u64 = 4096;
    let (root, mut plan) = empty_plan(install_dir)?;
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
                "{why}; record one: {}",
                crate::trace::store::record_command()
            ),
            io::Error::from(io::ErrorKind::NotFound),
        ));
    }
    make_traced(&plan_source::merge(&picked, pages), &root, knobs)
}
