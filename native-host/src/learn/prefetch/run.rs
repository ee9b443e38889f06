//! Reading a prefetch plan beside a starting Firefox: batch by batch, each in disk order; before
//! each read, what of it is already cached (Firefox got there first, or a hot cache) is skipped,
//! so nothing is read twice and a hot start costs a few probes. The next read is queued while
//! the current one is read, as `preload --plan` does. A problem with one file is noted and the
//! rest goes on; nothing here can fail the launch.
//!
//! What is cached: `mincore` where the kernel tells this user the truth (files they own or may
//! write, or CAP_FOWNER: pagecache/view.rs), else a non-blocking read of one page every
//! [`PROBE_EVERY`] bytes of the range (`RWF_NOWAIT`): a miss means "read it". The collaborators
//! ([`Cache`], [`Io`], the stop test) are parameters, so the order and the skipping are tested
//! with fakes.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::PrefetchPlan;
use crate::os::sys::{self, Advice, FileMap};
use crate::pagecache::pace::{self, Pacer};
use crate::pagecache::problem::{FileErrorCode, Problem};
use crate::pagecache::view::{run_lengths, Viewer};

/// Where the cache cannot be seen: one probed page per this many bytes of a range.
pub const PROBE_EVERY: u64 = 256 * 1024;
/// Reads are sliced so that stopping and pacing act within this many bytes.
const READ_BUF: usize = 1024 * 1024;
/// Queued reads are issued in slices of this size (see [`KernelIo::queue`]).
const QUEUE_SLICE: u64 = 1024 * 1024;
/// At most this many file problems are kept in the record.
const MAX_ERRORS: usize = 20;

/// What is cached of a range of a plan file.
pub trait Cache {
    /// The byte ranges `[offset, len]` of `len` bytes at `offset` of plan file `file` (open as
    /// `f`) that are not in the page cache, in file order.
    fn missing(&mut self, file: usize, f: &File, offset: u64, len: u64) -> Vec<[u64; 2]>;
}

/// How the prefetcher reads.
pub trait Io {
    /// Start reading a range without waiting for it (the next read, while this one runs).
    fn queue(&mut self, f: &File, offset: u64, len: u64);
    /// Read a range into the page cache; the bytes read (fewer if the file is shorter).
    fn read(&mut self, f: &File, offset: u64, len: u64) -> io::Result<u64>;
}

/// Why a prefetch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// Every read of the plan was done or found cached.
    Done,
    /// Firefox exited first: nothing left to prefetch for.
    FirefoxExited,
    /// It ran longer than a start takes.
    TimeLimit,
}

/// What one prefetch did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Bytes read from the files (only parts that were not cached when reached).
    pub bytes_read: u64,
    /// Bytes of the plan found cached when reached, and skipped.
    pub bytes_cached: u64,
    /// Of `bytes_read`, those of the user's profile (absent in an older host's records).
    #[serde(default)]
    pub bytes_read_profile: u64,
    pub batches: usize,
    pub batches_done: usize,
    pub elapsed_ms: u64,
    pub ended: Option<Ended>,
    /// Files whose cache state was read exactly (mincore) and probed (the kernel hides it).
    pub files_exact: u64,
    pub files_probed: u64,
    /// Files skipped or cut short: vanished, replaced since planned, unreadable.
    pub errors: Vec<Skipped>,
}

/// A plan file the prefetch skipped or cut short (at most [`MAX_ERRORS`] are kept).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// The path as text (a record for people and the page, not a path to open).
    pub path: String,
    pub error_code: FileErrorCode,
    /// English, for the CLI; the page words `error_code`.
    pub error: String,
}

/// Read `plan` batch by batch, skipping what `cache` finds cached, until done or `stop` says
/// why to end (it is asked before every read). Up to `ahead` bytes are queued ([`Io::queue`]),
/// the read being waited for included, so that what Firefox needs next is already on its way
/// (a fault on a page being read waits for that read instead of issuing its own), and the disk
/// never idles between reads.
pub fn run(
    plan: &PrefetchPlan,
    ahead: u64,
    cache: &mut dyn Cache,
    io: &mut dyn Io,
    stop: &mut dyn FnMut() -> Option<Ended>,
) -> Outcome {
    let started = Instant::now();
    let mut out = Outcome {
        batches: plan.batches.len(),
        ..Outcome::default()
    };
    let mut open: HashMap<usize, Option<File>> = HashMap::new();
    let reads: Vec<_> = plan
        .batches
        .iter()
        .enumerate()
        .flat_map(|(b, reads)| reads.iter().map(move |r| (b, r)))
        .collect();
    // The missing parts of reads[i..queued], found (and queued) ahead of their turn.
    let mut missing: std::collections::VecDeque<Vec<[u64; 2]>> = std::collections::VecDeque::new();
    let mut queued = 0;
    let mut queued_bytes = 0u64;
    for (i, &(batch, read)) in reads.iter().enumerate() {
        if let Some(why) = stop() {
            out.ended = Some(why);
            break;
        }
        // Queue until `ahead` bytes are on their way (at least this read).
        while queued < reads.len() && (queued == i || queued_bytes < ahead) {
            let next = reads[queued].1;
            let m = missing_of(
                plan,
                cache,
                &mut open,
                &mut out.errors,
                next.file,
                next.offset,
                next.len,
            );
            if let Some(Some(f)) = open.get(&next.file) {
                for &[offset, len] in &m {
                    io.queue(f, offset, len);
                }
            }
            queued_bytes += m.iter().map(|r| r[1]).sum::<u64>();
            missing.push_back(m);
            queued += 1;
        }
        let mine = missing.pop_front().unwrap_or_default();
        let wanted: u64 = mine.iter().map(|m| m[1]).sum();
        queued_bytes = queued_bytes.saturating_sub(wanted);
        out.bytes_cached += read.len - wanted.min(read.len);
        if let Some(Some(f)) = open.get(&read.file) {
            for &[offset, len] in &mine {
                match io.read(f, offset, len) {
                    Ok(n) => {
                        out.bytes_read += n;
                        if plan
                            .profile_mtimes
                            .get(read.file)
                            .copied()
                            .flatten()
                            .is_some()
                        {
                            out.bytes_read_profile += n;
                        }
                    }
                    Err(e) => {
                        push_error(&mut out.errors, plan, read.file, Problem::read(&e));
                        open.insert(read.file, None);
                        break;
                    }
                }
            }
        }
        let last_of_batch = reads.get(i + 1).is_none_or(|&(b, _)| b != batch);
        if last_of_batch {
            out.batches_done = batch + 1;
        }
    }
    if out.ended.is_none() {
        out.ended = Some(Ended::Done);
    }
    out.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    out
}

/// The missing parts of a read, opening its file on first use (an unopenable or replaced file
/// has nothing to read: its reads are skipped).
fn missing_of(
    plan: &PrefetchPlan,
    cache: &mut dyn Cache,
    open: &mut HashMap<usize, Option<File>>,
    errors: &mut Vec<Skipped>,
    file: usize,
    offset: u64,
    len: u64,
) -> Vec<[u64; 2]> {
    let f = open
        .entry(file)
        .or_insert_with(|| open_planned(plan, file, errors));
    match f {
        Some(f) => cache.missing(file, f, offset, len),
        None => Vec::new(),
    }
}

/// Open a plan file beneath its folder, if it is still the file that was planned. A file of
/// the user's profile must also have its planned modification time (Firefox may be writing the
/// profile now: a file it wrote since the plan is not read), and is opened without touching its
/// access time (learn/plan/profile.rs).
fn open_planned(plan: &PrefetchPlan, file: usize, errors: &mut Vec<Skipped>) -> Option<File> {
    let path = &plan.files[file];
    let profile_mtime = plan.profile_mtimes.get(file).copied().flatten();
    let opened = match profile_mtime {
        Some(_) => plan.folders.open_file_noatime(path),
        None => plan.folders.open_file(path),
    };
    let (f, meta) = match opened {
        Ok(opened) => opened,
        Err(e) => {
            push_error(errors, plan, file, Problem::open(&e));
            return None;
        }
    };
    let (ino, size) = plan.identities[file];
    let written = profile_mtime.is_some_and(|t| t != crate::learn::plan::profile::mtime_ns(&meta));
    if meta.ino() != ino || meta.len() != size || written {
        let problem = Problem::new(
            FileErrorCode::Changed,
            if profile_mtime.is_some() {
                "a profile file Firefox wrote or replaced since the plan was made: not prefetched"
            } else {
                "replaced since the plan was made (an update?): not prefetched"
            },
        );
        push_error(errors, plan, file, problem);
        return None;
    }
    // Read what the plan says, no more: no kernel readahead around it.
    let _ = sys::fadvise(&f, 0, 0, Advice::Random);
    Some(f)
}

fn push_error(errors: &mut Vec<Skipped>, plan: &PrefetchPlan, file: usize, problem: Problem) {
    if errors.len() < MAX_ERRORS {
        errors.push(Skipped {
            path: plan.files[file].to_string_lossy().into_owned(),
            error_code: problem.error_code,
            error: problem.error,
        });
    }
}

/// The kernel's answer: mincore where it is exact for this user, else `RWF_NOWAIT` probes.
pub struct KernelCache<'a> {
    viewer: Viewer,
    files: &'a [std::path::PathBuf],
    /// Per plan file: its mapping (exact) or `None` (probed).
    maps: HashMap<usize, Option<FileMap>>,
    page_bits: Vec<u8>,
    probe: Vec<u8>,
    pub exact: u64,
    pub probed: u64,
}

impl<'a> KernelCache<'a> {
    #[must_use]
    pub fn new(plan: &'a PrefetchPlan) -> Self {
        KernelCache {
            viewer: Viewer::current(),
            files: &plan.files,
            maps: HashMap::new(),
            page_bits: Vec::new(),
            probe: vec![0; sys::page_size()],
            exact: 0,
            probed: 0,
        }
    }
}

impl Cache for KernelCache<'_> {
    fn missing(&mut self, file: usize, f: &File, offset: u64, len: u64) -> Vec<[u64; 2]> {
        let (viewer, path) = (
            &self.viewer,
            self.files.get(file).map_or(Path::new(""), |p| p.as_path()),
        );
        let (exact, probed) = (&mut self.exact, &mut self.probed);
        let map = self.maps.entry(file).or_insert_with(|| {
            let seen = f.metadata().ok().filter(|m| viewer.sees(f, m, path));
            let map = seen.and_then(|m| FileMap::new(f, m.len()).ok());
            *if map.is_some() { exact } else { probed } += 1;
            map
        });
        match map {
            Some(map) => exact_missing(map, offset, len, &mut self.page_bits),
            None => probe_missing(f, offset, len, &mut self.probe),
        }
    }
}

/// The non-resident pages of the range as byte ranges clipped to it (a failed mincore: all).
fn exact_missing(map: &FileMap, offset: u64, len: u64, bits: &mut Vec<u8>) -> Vec<[u64; 2]> {
    let page = sys::page_size() as u64;
    if map.resident(offset, len, bits).is_err() {
        return vec![[offset, len]];
    }
    let base = offset / page * page;
    let end = offset + len;
    run_lengths(bits.iter().map(|b| b & 1 == 0))
        .into_iter()
        .filter_map(|[first, count]| {
            let a = (base + first * page).max(offset);
            let b = (base + (first + count) * page).min(end);
            (a < b).then_some([a, b - a])
        })
        .collect()
}

/// The whole range if any probed page of it is not cached, else nothing.
fn probe_missing(f: &File, offset: u64, len: u64, buf: &mut [u8]) -> Vec<[u64; 2]> {
    let page = buf.len() as u64;
    let last = (offset + len).saturating_sub(1) / page * page;
    let mut at = offset / page * page;
    loop {
        match sys::pread_nowait(f, buf, at) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return vec![[offset, len]],
            Err(_) => return vec![[offset, len]], // no RWF_NOWAIT here: read it
        }
        if at >= last {
            return Vec::new();
        }
        at = (at + PROBE_EVERY).min(last);
    }
}

/// The real pacer: the kernel's pressure file and a real sleep.
type RealPacer = Pacer<fn() -> Option<u64>, fn(Duration)>;

/// Reads into a reused buffer; paced (PSI, pagecache/pace.rs) when asked.
pub struct KernelIo {
    buf: Vec<u8>,
    pacer: Option<RealPacer>,
}

impl KernelIo {
    #[must_use]
    pub fn new(paced: bool) -> Self {
        KernelIo {
            buf: vec![0; READ_BUF],
            pacer: paced.then(|| {
                Pacer::new(
                    pace::read_pressure as fn() -> Option<u64>,
                    std::thread::sleep as fn(Duration),
                )
            }),
        }
    }

    #[must_use]
    pub fn pace_report(&self) -> Option<pace::PaceReport> {
        self.pacer.as_ref().map(Pacer::report)
    }
}

impl Io for KernelIo {
    fn queue(&mut self, f: &File, offset: u64, len: u64) {
        // A paced read keeps nothing in flight during its probes (pace.rs).
        if self.pacer.is_some() {
            return;
        }
        // readahead(2) reads at most the device's largest request per call (max_sectors_kb,
        // often 1-4 MiB): slices no larger than that.
        let mut at = offset;
        while at < offset + len {
            let n = (offset + len - at).min(QUEUE_SLICE);
            let _ = sys::readahead(f, at, n);
            at += n;
        }
    }

    fn read(&mut self, f: &File, offset: u64, len: u64) -> io::Result<u64> {
        let end = offset + len;
        let mut at = offset;
        while at < end {
            let want = usize::try_from(end - at)
                .unwrap_or(usize::MAX)
                .min(self.buf.len());
            let slice = Instant::now();
            match f.read_at(&mut self.buf[..want], at) {
                Ok(0) => break,
                Ok(n) => at += n as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            if let Some(p) = self.pacer.as_mut() {
                p.after_slice(slice.elapsed());
            }
        }
        Ok(at - offset)
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
