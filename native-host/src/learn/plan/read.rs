//! Reading a plan: exactly its ranges, in its order, paced when asked (`preload --plan`).

use crate::learn::plan::profile::ProfilePlan;
use crate::learn::plan::{make_with, traced_plan, Knobs, Plan, PlanSource};
use crate::learn::workingset;
use crate::os::sys::{self, Advice};
use crate::pagecache::pace::{self, Pacer};
use crate::pagecache::preload::{self, FileError, Method, Progress, Summary};
use crate::pagecache::view::Viewer;
use crate::state::StateDir;
use crate::Error;
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Read buffer, reused for every range (large reads, as `preload`'s `read`).
const READ_BUF: usize = 1024 * 1024;
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// A plan file opened for reading, with its page-cache bitmap where this user sees it exactly.
struct Opened {
    file: File,
    /// mincore of the file when it was opened (`None` where residency is hidden from this user:
    /// then every range is read).
    core: Option<Vec<u8>>,
}

impl Opened {
    /// The parts of `len` bytes at `offset` that were not cached when the file was opened, as
    /// (offset, len) in order: all of it where residency is hidden from this user.
    fn uncached(&self, offset: u64, len: u64, page: u64) -> Vec<(u64, u64)> {
        let Some(core) = &self.core else {
            return vec![(offset, len)];
        };
        uncached_parts(core, offset, len, page)
    }
}

/// The parts of `len` bytes at `offset` whose pages are not resident in `core` (mincore's
/// vector: bit 0 of each page's byte), clipped to the range. A page past the vector (the file
/// grew) counts as not resident.
fn uncached_parts(core: &[u8], offset: u64, len: u64, page: u64) -> Vec<(u64, u64)> {
    let end = offset + len;
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut at = offset / page * page;
    while at < end {
        let index = usize::try_from(at / page).unwrap_or(usize::MAX);
        let resident = core.get(index).is_some_and(|b| b & 1 != 0);
        if !resident {
            let (from, to) = (at.max(offset), (at + page).min(end));
            match out.last_mut() {
                Some((o, l)) if *o + *l == from => *l += to - from,
                _ => out.push((from, to - from)),
            }
        }
        at += page;
    }
    out
}

/// Read the plan's ranges in its order (one reader: several would undo the disk order), the next
/// range queued with readahead(2) while the current one is read. The parts of a range already
/// cached (where this user sees residency exactly) are skipped before any read or pacing probe:
/// on a warm cache an idle run would otherwise probe the disk's pressure after every slice it
/// copies from memory (issue 19: 2 s of probes to read nothing).
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
    let mut open: HashMap<usize, Option<Opened>> = HashMap::new();
    let viewer = Viewer::current();
    let page = sys::page_size() as u64;
    let mut bytes_cached = 0u64;
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
            if let Some(Some(f)) = file_of(&mut open, plan, next.file, &mut errors, &viewer) {
                for (offset, len) in f.uncached(next.offset, next.len, page) {
                    let _ = sys::readahead(&f.file, offset, len);
                }
            }
        }
        if let Some(Some(f)) = file_of(&mut open, plan, read.file, &mut errors, &viewer) {
            let parts = f.uncached(read.offset, read.len, page);
            let missing: u64 = parts.iter().map(|(_, len)| len).sum();
            bytes_cached += read.len - missing;
            progress.bytes_done += read.len - missing;
            for (offset, len) in parts {
                let mut after_slice = |slice: Duration| {
                    if let Some(p) = pacer.as_mut() {
                        p.after_slice(slice);
                    }
                };
                match read_range(&f.file, offset, len, &mut buf, cancel, &mut after_slice) {
                    Ok(n) => progress.bytes_done += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                        return Err(Error::Cancelled)
                    }
                    Err(e) => {
                        errors.push(FileError {
                            path: plan.files[read.file].clone(),
                            problem: crate::pagecache::problem::Problem::read(&e),
                        });
                        open.insert(read.file, None);
                        break;
                    }
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
    let bytes_read = progress.bytes_done - bytes_cached;
    Ok(Summary {
        files: progress.files_done,
        bytes: bytes_read,
        elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        mb_per_s: preload::mb_per_s(bytes_read, elapsed),
        method: Method::Read,
        jobs: 1,
        idle,
        errors,
        errors_omitted: 0,
        planned: true,
        bytes_planned: Some(plan.bytes_planned),
        bytes_planned_system: Some(plan.bytes_planned_system),
        bytes_planned_install: Some(plan.bytes_planned_install()),
        bytes_planned_profile: plan.profile.as_ref().map(|p| p.bytes),
        profile_changed_files: plan.profile.as_ref().map(ProfilePlan::changed_files),
        bytes_install: plan.bytes_install,
        order: Some(plan.order),
        pace: pacer.map(|p| p.report()),
        cache: crate::pagecache::Cache::Files,
        bytes_cached: Some(bytes_cached),
        compressed: None,
    })
}

/// The open file of the plan's file `index`, opened on first use (`None` once it failed), with
/// its residency where `viewer` sees it exactly. A file of the user's profile is opened without
/// touching its access time, and only while it is still the planned file (Firefox may be writing
/// the profile now: learn/plan/profile.rs).
fn file_of<'a>(
    open: &'a mut HashMap<usize, Option<Opened>>,
    plan: &Plan,
    index: usize,
    errors: &mut Vec<FileError>,
    viewer: &Viewer,
) -> Option<&'a Option<Opened>> {
    Some(open.entry(index).or_insert_with(|| {
        let path = &plan.files[index];
        let profile = plan.profile_files.get(path);
        let opened = match profile {
            Some(_) => plan.folders.open_file_noatime(path),
            None => plan.folders.open_file(path),
        };
        match opened {
            Ok((_, meta)) if profile.is_some_and(|p| !p.matches(&meta)) => {
                errors.push(FileError {
                    path: path.clone(),
                    problem: crate::pagecache::problem::Problem::new(
                        crate::pagecache::problem::FileErrorCode::Changed,
                        "a profile file Firefox wrote or replaced since the plan was made: not read",
                    ),
                });
                None
            }
            Ok((f, meta)) => {
                // No kernel readahead around our reads (read_ahead_kb is 8 MiB on some disks):
                // read what the plan says, no more.
                let _ = sys::fadvise(&f, 0, 0, Advice::Random);
                let mut core = Vec::new();
                let core = (viewer.sees(&f, &meta, path)
                    && sys::mincore_file(&f, meta.len(), &mut core).is_ok())
                .then_some(core);
                Some(Opened { file: f, core })
            }
            Err(e) => {
                errors.push(FileError {
                    path: path.clone(),
                    problem: crate::pagecache::problem::Problem::open(&e),
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
    state_dir: &StateDir,
    idle: bool,
    knobs: Knobs,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<Summary, Error> {
    let plan = match knobs.source {
        PlanSource::Learned => {
            let state = workingset::load(state_dir);
            make_with(&state, install_dir, knobs)?
        }
        PlanSource::Trace | PlanSource::TraceReads => traced_plan(install_dir, state_dir, knobs)?,
    };
    let summary = run(&plan, idle, cancel, on_progress)?;
    crate::learn::last_run::write(state_dir, &summary);
    crate::learn::last_preload::write(state_dir, install_dir, summary.bytes, true);
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::uncached_parts;

    #[test]
    fn only_the_pages_not_cached_are_read() {
        // Pages 0 and 1 cached, 2 not, 3 cached, 4 and 5 not; the range starts inside page 0.
        let core = [1u8, 1, 0, 1, 0, 0];
        assert_eq!(uncached_parts(&core, 5, 55, 10), [(20, 10), (40, 20)]);
        assert_eq!(uncached_parts(&[1, 1], 0, 20, 10), []);
        // A range ending inside a page, and a page past the vector (the file grew): not cached.
        assert_eq!(uncached_parts(&[0], 5, 3, 10), [(5, 3)]);
        assert_eq!(uncached_parts(&[1], 5, 20, 10), [(10, 15)]);
    }
}
