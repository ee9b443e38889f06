//! Reading a plan: exactly its ranges, in its order, paced when asked (`preload --plan`).

use super::*;

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
                        problem: crate::pagecache::problem::Problem::read(&e),
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
    Ok(summary)
}
