//! Read files into the page cache ahead of time, with progress and cancel.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

#[cfg(test)]
use crate::os::beneath::Folder;
use crate::os::beneath::Opener;
use crate::os::sys::{self, Advice};
use crate::pagecache::problem::{FileErrorCode, Problem};
use crate::Error;

/// What `Method::Auto` means: measured fastest on an unthrottled disk (large reads, 2 jobs:
/// 0.85× cat; readahead/fadvise 1.1-1.2× cat) and equal to all others on a throttled one
/// (docs/benchmarks.md, "What the host I/O numbers say").
const AUTO_METHOD: Method = Method::Read;
/// Files read at once when the caller does not say: two keeps a queue on the disk while one
/// worker is between files, on a two-core machine.
const DEFAULT_JOBS: usize = 2;
/// Most files read at once: more parallel readers than this only thrash the disk. The protocol
/// and the CLI refuse larger values.
pub const MAX_JOBS: usize = 16;
/// One reused buffer per worker; large reads make the kernel's sync readahead issue large
/// requests, as `cat` does.
const READ_BUF: usize = 1024 * 1024;
/// readahead/fadvise are issued in slices of this size so that progress and cancel work on a
/// 180 MB libxul.so, one slice ahead of the one being waited for.
const QUEUE_CHUNK: u64 = 32 * 1024 * 1024;
/// The UI needs no more than ten progress events a second.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The method measured fastest (docs/benchmarks.md).
    #[default]
    Auto,
    /// Large read(2) calls into a reused buffer, like `cat`.
    Read,
    /// readahead(2) over the whole file.
    Readahead,
    /// posix_fadvise(POSIX_FADV_WILLNEED).
    Fadvise,
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    pub method: Method,
    /// Idle I/O priority class (ionice -c3).
    pub idle: bool,
    /// Files read at once; `None` lets the host choose.
    pub jobs: Option<usize>,
}

/// One `progress` event.
#[derive(Debug, Clone, Serialize)]
pub struct Progress {
    pub bytes_done: u64,
    pub bytes_total: u64,
    pub files_done: u64,
    pub files_total: u64,
    #[serde(flatten, with = "crate::path_text::current_file")]
    pub current_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileError {
    #[serde(flatten, with = "crate::path_text::path")]
    pub path: PathBuf,
    /// What went wrong (`error`, `error_code`, `error_params` on the wire).
    #[serde(flatten)]
    pub problem: Problem,
}

/// The final reply of `preload`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub files: u64,
    pub bytes: u64,
    pub elapsed_ms: u64,
    pub mb_per_s: f64,
    pub method: Method,
    /// Files read at once: the requested (or default) number, at most one per file.
    pub jobs: usize,
    pub idle: bool,
    pub errors: Vec<FileError>,
    /// Errors left out of `errors` to keep the reply bounded (the host keeps the first ones).
    #[serde(skip_serializing_if = "crate::pagecache::is_zero")]
    pub errors_omitted: u64,
    /// Whether only the planned ranges were read (`plan: true`, learn/plan/read.rs).
    pub planned: bool,
    /// Bytes the plan names (`null` for a whole-folder preload).
    pub bytes_planned: Option<u64>,
    /// The part of `bytes_planned` outside the install folder (system libraries and fonts), so
    /// that the rest can be set against `bytes_install`; `null` for a whole-folder preload.
    pub bytes_planned_system: Option<u64>,
    /// The part of `bytes_planned` in the install folder, the one to set against
    /// `bytes_install`: `bytes_planned` less the system libraries and the user's profile
    /// (learn/plan/make.rs `Plan::bytes_planned_install`); `null` for a whole-folder preload,
    /// absent from an older host.
    pub bytes_planned_install: Option<u64>,
    /// A traced plan: the part of `bytes_planned` in the user's own profile (learn/plan/profile.rs),
    /// and its files skipped because Firefox wrote or replaced them since the traces; absent
    /// elsewhere (and from an older host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_planned_profile: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile_changed_files: Option<u64>,
    /// Bytes of the files a whole-folder preload would read.
    pub bytes_install: u64,
    /// Order of a planned preload's reads (`null` for a whole-folder preload).
    pub order: Option<Order>,
    /// How an idle planned preload yielded to others' I/O (pace.rs); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pace: Option<crate::pagecache::pace::PaceReport>,
    /// Which cache was filled: `files`, `image` (a squashfs install's compressed image) or
    /// `all` (both); set by the caller that chose the paths.
    pub cache: crate::pagecache::Cache,
    /// A planned preload: bytes of the plan found cached already and not read again (counted
    /// only where this user sees residency exactly); `bytes` is what was read. Absent for a
    /// whole-folder preload, which reads everything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_cached: Option<u64>,
    /// A planned preload of an install on a compressed mount (a Snap, a packed Firefox): the
    /// verdict, firefox/compressed/'s `Compressed` as JSON (pagecache sits below firefox): the
    /// image's ranges read raw (`bytes` of the image), or left off and why (nothing read).
    /// Absent elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compressed: Option<serde_json::Value>,
}

impl Summary {
    /// A whole-folder preload (no plan) by `method` with `jobs` at once that has read nothing
    /// yet: the plan's fields `null` or absent, the files cache filled.
    #[must_use]
    pub fn whole_folder(method: Method, jobs: usize, idle: bool) -> Self {
        Summary {
            files: 0,
            bytes: 0,
            elapsed_ms: 0,
            mb_per_s: 0.0,
            method,
            jobs,
            idle,
            errors: Vec::new(),
            errors_omitted: 0,
            planned: false,
            bytes_planned: None,
            bytes_planned_system: None,
            bytes_planned_install: None,
            bytes_planned_profile: None,
            profile_changed_files: None,
            bytes_install: 0,
            order: None,
            pace: None,
            cache: crate::pagecache::Cache::Files,
            bytes_cached: None,
            compressed: None,
        }
    }
}

/// Preload `files` (already confined). `on_progress` is called at most every 100 ms, at least
/// once per file and once at the end. Returns `Error::Cancelled` if `cancel` becomes true.
///
/// "At least once per file" within the 100 ms limit means: every file start and end is
/// reflected by an event no later than 100 ms after it happened (several small files finishing
/// within 100 ms share one event). `on_progress` runs on the calling thread only.
pub fn preload(
    folder: &dyn Opener,
    files: &[PathBuf],
    opts: &Options,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<Summary, Error> {
    let started = Instant::now();
    let method = resolve(opts.method);
    let mut errors = Vec::new();
    let work = largest_first(folder, files, &mut errors);
    let jobs = opts.jobs.unwrap_or(DEFAULT_JOBS).clamp(1, MAX_JOBS);
    let workers = jobs.min(work.len()).max(1);
    let job = Job {
        folder,
        work: &work,
        method,
        idle: opts.idle,
        cancel,
        next: AtomicUsize::new(0),
        bytes_done: AtomicU64::new(0),
    };
    let files_done = std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        for _ in 0..workers {
            let tx = tx.clone();
            let job = &job;
            s.spawn(move || job.worker(&tx));
        }
        drop(tx);
        report(&job, &rx, &mut errors, on_progress)
    });
    if cancel.load(Ordering::Relaxed) {
        return Err(Error::Cancelled);
    }
    errors.sort_by(|a, b| a.path.cmp(&b.path));
    let bytes = job.bytes_done.load(Ordering::Relaxed);
    let bytes_install = work.iter().map(|(_, size)| size).sum();
    let elapsed = started.elapsed();
    Ok(Summary {
        files: files_done,
        bytes,
        elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        mb_per_s: mb_per_s(bytes, elapsed),
        errors,
        bytes_install,
        ..Summary::whole_folder(method, workers, opts.idle)
    })
}

/// The concrete method `Auto` stands for.
#[must_use]
pub fn resolve(method: Method) -> Method {
    match method {
        Method::Auto => AUTO_METHOD,
        other => other,
    }
}

pub(crate) fn mb_per_s(bytes: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64().max(1e-6);
    // Decimal megabytes, as disk vendors and `dd` count them.
    (bytes as f64 / 1e6 / secs * 10.0).round() / 10.0
}

/// Files with their sizes, largest first: the big files start at once and the small ones fill
/// the gaps at the end, so the workers finish together. Files that cannot be stat'ed become
/// errors right away. The size comes from `stat` beneath `folder` (no symlink followed, so no
/// size of a file elsewhere gets into `bytes_install`); the worker opens the file beneath it.
fn largest_first(
    folder: &dyn Opener,
    files: &[PathBuf],
    errors: &mut Vec<FileError>,
) -> Vec<(PathBuf, u64)> {
    let mut work = Vec::with_capacity(files.len());
    for path in files {
        match folder.stat(path) {
            Ok(m) if m.is_file() => work.push((path.clone(), m.len())),
            Ok(_) => errors.push(FileError {
                path: path.clone(),
                problem: Problem::new(FileErrorCode::NotRegular, "not a regular file"),
            }),
            Err(e) => errors.push(FileError {
                path: path.clone(),
                problem: Problem::open(&e),
            }),
        }
    }
    work.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    work
}

/// What a worker tells the calling thread.
enum Event {
    Started(usize),
    Finished(usize, Result<(), Stop>),
}

/// Why a file was not read to the end.
enum Stop {
    Cancelled,
    Failed(Problem),
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Self {
        Stop::Failed(Problem::read(&e))
    }
}

/// State shared by the workers: a work queue (an index into `work`) and the byte counter.
struct Job<'a> {
    folder: &'a dyn Opener,
    work: &'a [(PathBuf, u64)],
    method: Method,
    idle: bool,
    cancel: &'a AtomicBool,
    next: AtomicUsize,
    bytes_done: AtomicU64,
}

impl Job<'_> {
    fn worker(&self, tx: &Sender<Event>) {
        if self.idle {
            // I/O priority is per thread (who = 0). mq-deadline (Linux ≥ 5.14) and BFQ honour the
            // class, the `none` scheduler does not; failing to set it is not worth stopping.
            let _ = sys::ioprio_set_idle_thread();
        }
        let mut buf = vec![0u8; READ_BUF];
        while !self.cancel.load(Ordering::Relaxed) {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some((path, size)) = self.work.get(i) else {
                break;
            };
            let _ = tx.send(Event::Started(i));
            let result = self.preload_file(path, *size, &mut buf);
            let _ = tx.send(Event::Finished(i, result));
        }
    }

    fn preload_file(&self, path: &Path, size: u64, buf: &mut [u8]) -> Result<(), Stop> {
        let (file, _) = self
            .folder
            .open_file(path)
            .map_err(|e| Stop::Failed(Problem::open(&e)))?;
        match self.method {
            Method::Read | Method::Auto => self.read_all(&file, buf),
            Method::Readahead | Method::Fadvise => self.queue_and_wait(&file, size, buf),
        }
    }

    fn check(&self) -> Result<(), Stop> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(Stop::Cancelled);
        }
        Ok(())
    }

    /// Plain reads to the end of the file, like `cat`.
    fn read_all(&self, mut file: &File, buf: &mut [u8]) -> Result<(), Stop> {
        // Doubles the readahead window: fewer, larger requests to the disk.
        let _ = sys::fadvise(file, 0, 0, Advice::Sequential);
        loop {
            self.check()?;
            match file.read(buf) {
                Ok(0) => return Ok(()),
                Ok(n) => {
                    self.bytes_done.fetch_add(n as u64, Ordering::Relaxed);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// readahead(2) or fadvise(WILLNEED) one slice ahead, then read the current slice. The
    /// kernel only *queues* those reads (both end in `force_page_cache_readahead`); reading the
    /// slice waits until its pages have arrived, so the summary's time means "in the cache", as
    /// for `read`, and the copy from the cache costs little next to the disk.
    fn queue_and_wait(&self, file: &File, size: u64, buf: &mut [u8]) -> Result<(), Stop> {
        self.queue(file, 0)?;
        let mut off = 0;
        while off < size {
            self.check()?;
            let next = off + QUEUE_CHUNK;
            if next < size {
                self.queue(file, next)?;
            }
            self.wait_for(file, off, next.min(size), buf)?;
            off = next;
        }
        Ok(())
    }

    fn queue(&self, file: &File, off: u64) -> io::Result<()> {
        match self.method {
            Method::Fadvise => sys::fadvise(file, off, QUEUE_CHUNK, Advice::WillNeed),
            _ => sys::readahead(file, off, QUEUE_CHUNK),
        }
    }

    fn wait_for(&self, file: &File, mut off: u64, end: u64, buf: &mut [u8]) -> Result<(), Stop> {
        while off < end {
            self.check()?;
            let want = usize::try_from(end - off)
                .unwrap_or(usize::MAX)
                .min(buf.len());
            match file.read_at(&mut buf[..want], off) {
                Ok(0) => return Ok(()), // shrank meanwhile: nothing more to wait for
                Ok(n) => {
                    off += n as u64;
                    self.bytes_done.fetch_add(n as u64, Ordering::Relaxed);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}

/// The calling thread's loop: collect the workers' events, emit progress at most every 100 ms
/// (and whenever something changed since the last one), and once at the end. Returns the number
/// of files read to the end.
fn report(
    job: &Job<'_>,
    rx: &mpsc::Receiver<Event>,
    errors: &mut Vec<FileError>,
    on_progress: &mut dyn FnMut(&Progress),
) -> u64 {
    let bytes_total = job.work.iter().map(|(_, size)| size).sum();
    let mut progress = Progress {
        bytes_done: 0,
        bytes_total,
        files_done: 0,
        files_total: job.work.len() as u64,
        current_file: None,
    };
    let mut last_emit: Option<Instant> = None;
    let mut dirty = false;
    loop {
        let wait = last_emit.map_or(PROGRESS_EVERY, |t| {
            PROGRESS_EVERY.saturating_sub(t.elapsed())
        });
        match rx.recv_timeout(wait.max(Duration::from_millis(1))) {
            Ok(Event::Started(i)) => {
                progress.current_file = Some(job.work[i].0.clone());
                dirty = true;
            }
            Ok(Event::Finished(i, result)) => {
                match result {
                    Ok(()) => progress.files_done += 1,
                    Err(Stop::Failed(problem)) => {
                        errors.push(FileError {
                            path: job.work[i].0.clone(),
                            problem,
                        });
                    }
                    Err(Stop::Cancelled) => {}
                }
                dirty = true;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        let bytes = job.bytes_done.load(Ordering::Relaxed);
        dirty |= bytes != progress.bytes_done;
        if dirty && last_emit.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY) {
            progress.bytes_done = bytes;
            on_progress(&progress);
            last_emit = Some(Instant::now());
            dirty = false;
        }
    }
    progress.bytes_done = job.bytes_done.load(Ordering::Relaxed);
    progress.current_file = None;
    on_progress(&progress);
    progress.files_done
}

/// How a planned preload's reads are ordered (reported in its summary; chosen by `learn::plan`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// By physical position on the device (FIEMAP).
    Disk,
    /// File after file, offset after offset (no FIEMAP on this filesystem).
    File,
    /// In the order a traced start read them (the replay, `--source trace-reads --recorded-order`).
    Recorded,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_resolves_to_a_concrete_method() {
        assert_ne!(resolve(Method::Auto), Method::Auto);
        assert_eq!(resolve(Method::Fadvise), Method::Fadvise);
    }

    #[test]
    fn rate_is_decimal_megabytes() {
        assert!((mb_per_s(30_000_000, Duration::from_secs(2)) - 15.0).abs() < 1e-9);
        assert!(mb_per_s(0, Duration::ZERO).abs() < 1e-9);
    }

    #[test]
    fn work_is_largest_first_and_missing_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, [0u8; 10]).unwrap();
        std::fs::write(&b, [0u8; 20]).unwrap();
        let mut errors = Vec::new();
        let folder = Folder::open(dir.path()).unwrap();
        let (a, b) = (folder.path().join("a"), folder.path().join("b"));
        let work = largest_first(
            &folder,
            &[a.clone(), folder.path().join("gone"), b.clone()],
            &mut errors,
        );
        assert_eq!(work, [(b, 20), (a, 10)]);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].problem.error_code, FileErrorCode::Vanished);
        assert!(
            errors[0].problem.error.contains("vanished"),
            "{:?}",
            errors[0].problem
        );
    }

    #[test]
    fn progress_reaches_the_end_and_errors_do_not_stop_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let folder = Folder::open(dir.path()).unwrap();
        let mut files: Vec<PathBuf> = (0..5)
            .map(|i| folder.path().join(format!("f{i}")))
            .collect();
        for (i, f) in files.iter().enumerate() {
            std::fs::write(f, vec![1u8; 100_000 * (i + 1)]).unwrap();
        }
        files.push(folder.path().join("missing"));
        for method in [
            Method::Auto,
            Method::Read,
            Method::Readahead,
            Method::Fadvise,
        ] {
            let mut events = Vec::new();
            let opts = Options {
                method,
                idle: true,
                jobs: Some(3),
            };
            let summary = preload(&folder, &files, &opts, &AtomicBool::new(false), &mut |p| {
                events.push(p.clone());
            })
            .unwrap();
            assert_eq!(summary.files, 5);
            assert_eq!(summary.jobs, 3);
            assert_eq!(summary.bytes, 1_500_000);
            assert_eq!(summary.errors.len(), 1);
            let last = events.last().unwrap();
            assert_eq!(
                (last.bytes_done, last.files_done, last.files_total),
                (1_500_000, 5, 5)
            );
        }
    }

    #[test]
    fn jobs_reported_are_the_jobs_used() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, [0u8; 4096]).unwrap();
        let opts = Options {
            jobs: Some(4),
            ..Options::default()
        };
        let folder = Folder::open(dir.path()).unwrap();
        let summary = preload(
            &folder,
            &[PathBuf::from("f")],
            &opts,
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(summary.jobs, 1, "one file is never read by several jobs");
    }

    #[test]
    fn cancel_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, [0u8; 4096]).unwrap();
        let err = preload(
            &Folder::open(dir.path()).unwrap(),
            &[PathBuf::from("f")],
            &Options::default(),
            &AtomicBool::new(true),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(matches!(err, Error::Cancelled));
    }
}
