use std::cell::Cell;
use std::collections::HashSet;
use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::*;
use crate::learn::plan::Read;
use crate::os::beneath::{Folder, Folders};

const PAGE: u64 = 4096;

/// A folder with files `a` (64 pages) and `b` (16 pages) of known bytes.
fn folder() -> (tempfile::TempDir, Folders, Vec<PathBuf>, Vec<(u64, u64)>) {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut ids = Vec::new();
    for (name, pages) in [("a", 64u64), ("b", 16)] {
        let path = dir.path().canonicalize().unwrap().join(name);
        std::fs::write(&path, vec![7u8; (pages * PAGE) as usize]).unwrap();
        // Written back, so that evicting can drop the pages (dirty pages stay).
        File::open(&path).unwrap().sync_all().unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        ids.push((meta.ino(), meta.len()));
        files.push(path);
    }
    let mut folders = Folders::default();
    folders.push(Folder::open(dir.path()).unwrap());
    (dir, folders, files, ids)
}

fn read(file: usize, page: u64, pages: u64) -> Read {
    Read {
        file,
        offset: page * PAGE,
        len: pages * PAGE,
        physical: None,
    }
}

/// Pages (file, page) the fake cache holds; it answers like mincore, page by page.
struct FakeCache(HashSet<(usize, u64)>);

impl Cache for FakeCache {
    fn missing(&mut self, file: usize, _: &File, offset: u64, len: u64) -> Vec<[u64; 2]> {
        let mut out: Vec<[u64; 2]> = Vec::new();
        for page in offset / PAGE..(offset + len).div_ceil(PAGE) {
            if self.0.contains(&(file, page)) {
                continue;
            }
            match out.last_mut() {
                Some(last) if last[0] + last[1] == page * PAGE => last[1] += PAGE,
                _ => out.push([page * PAGE, PAGE]),
            }
        }
        out
    }
}

/// Records every read as (file size in pages, offset page, pages), and every queued read and
/// read in order in `.1` ('q' or 'r', offset page); reads "succeed".
#[derive(Default)]
struct Recorder(Vec<(u64, u64, u64)>, Vec<(char, u64)>);

impl Io for Recorder {
    fn queue(&mut self, _: &File, offset: u64, _: u64) {
        self.1.push(('q', offset / PAGE));
    }
    fn read(&mut self, f: &File, offset: u64, len: u64) -> io::Result<u64> {
        let pages = f.metadata()?.len() / PAGE;
        self.0.push((pages, offset / PAGE, len / PAGE));
        self.1.push(('r', offset / PAGE));
        Ok(len)
    }
}

fn plan(
    folders: Folders,
    files: Vec<PathBuf>,
    ids: Vec<(u64, u64)>,
    batches: Vec<Vec<Read>>,
) -> PrefetchPlan {
    let bytes_planned = batches.iter().flatten().map(|r| r.len).sum();
    PrefetchPlan {
        profile_mtimes: vec![None; files.len()],
        files,
        identities: ids,
        batches,
        bytes_planned,
        profile: None,
        folders,
    }
}

#[test]
fn reads_go_batch_by_batch_in_the_plans_order() {
    let (_dir, folders, files, ids) = folder();
    // Batch 0: b's first pages, then a's page 40; batch 1: a's start.
    let p = plan(
        folders,
        files,
        ids,
        vec![vec![read(1, 0, 2), read(0, 40, 4)], vec![read(0, 0, 8)]],
    );
    let mut io = Recorder::default();
    let out = run(&p, 0, &mut FakeCache(HashSet::new()), &mut io, &mut || None);
    assert_eq!(io.0, [(16, 0, 2), (64, 40, 4), (64, 0, 8)]);
    assert_eq!(out.bytes_read, 14 * PAGE);
    assert_eq!(
        (out.batches, out.batches_done, out.ended),
        (2, 2, Some(Ended::Done))
    );
}

#[test]
fn reads_are_queued_ahead_of_the_one_waited_for() {
    let (_dir, folders, files, ids) = folder();
    let p = plan(
        folders,
        files,
        ids,
        vec![(0..6).map(|i| read(0, i * 4, 4)).collect()],
    );
    let mut io = Recorder::default();
    // 8 pages in flight: each read (4 pages) is waited for with the next one on its way.
    run(
        &p,
        8 * PAGE,
        &mut FakeCache(HashSet::new()),
        &mut io,
        &mut || None,
    );
    let q = |o| ('q', o);
    let r = |o| ('r', o);
    assert_eq!(
        io.1,
        [
            q(0),
            q(4),
            r(0),
            q(8),
            r(4),
            q(12),
            r(8),
            q(16),
            r(12),
            q(20),
            r(16),
            r(20)
        ]
    );
    // Without a queue ahead, each read is queued just before it is waited for.
    let mut io = Recorder::default();
    let (_dir, folders, files, ids) = folder();
    let p = plan(
        folders,
        files,
        ids,
        vec![(0..2).map(|i| read(0, i * 4, 4)).collect()],
    );
    run(&p, 0, &mut FakeCache(HashSet::new()), &mut io, &mut || None);
    assert_eq!(io.1, [q(0), r(0), q(4), r(4)]);
}

#[test]
fn cached_pages_are_skipped_and_counted() {
    let (_dir, folders, files, ids) = folder();
    let p = plan(
        folders,
        files,
        ids,
        vec![vec![read(0, 0, 8), read(1, 0, 4)]],
    );
    // a's pages 2-3 and all of b's first four are cached (Firefox got there first).
    let cached: HashSet<_> = [(0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3)]
        .into_iter()
        .collect();
    let mut io = Recorder::default();
    let out = run(&p, 0, &mut FakeCache(cached), &mut io, &mut || None);
    assert_eq!(
        io.0,
        [(64, 0, 2), (64, 4, 4)],
        "only the missing parts of a, nothing of b"
    );
    assert_eq!((out.bytes_read, out.bytes_cached), (6 * PAGE, 6 * PAGE));
}

#[test]
fn it_stops_when_told_that_firefox_exited() {
    let (_dir, folders, files, ids) = folder();
    let p = plan(
        folders,
        files,
        ids,
        vec![
            vec![read(0, 0, 1)],
            vec![read(0, 1, 1)],
            vec![read(0, 2, 1)],
        ],
    );
    let asked = Cell::new(0);
    let mut stop = || {
        asked.set(asked.get() + 1);
        (asked.get() > 1).then_some(Ended::FirefoxExited)
    };
    let mut io = Recorder::default();
    let out = run(&p, 0, &mut FakeCache(HashSet::new()), &mut io, &mut stop);
    assert_eq!(io.0, [(64, 0, 1)]);
    assert_eq!(
        (out.batches_done, out.ended),
        (1, Some(Ended::FirefoxExited))
    );
}

#[test]
fn a_file_replaced_since_planned_is_skipped_and_the_rest_is_read() {
    let (dir, folders, files, ids) = folder();
    // An update replaces `a` (a new inode) after the plan was made.
    let tmp = dir.path().join("a.new");
    std::fs::write(&tmp, vec![1u8; (64 * PAGE) as usize]).unwrap();
    std::fs::rename(&tmp, &files[0]).unwrap();
    let p = plan(
        folders,
        files,
        ids,
        vec![vec![read(0, 0, 4), read(1, 0, 4)]],
    );
    let mut io = Recorder::default();
    let out = run(&p, 0, &mut FakeCache(HashSet::new()), &mut io, &mut || None);
    assert_eq!(io.0, [(16, 0, 4)]);
    assert_eq!(out.errors.len(), 1);
    assert_eq!(out.errors[0].error_code, FileErrorCode::Changed);
    assert!(out.errors[0].path.ends_with("/a"));
    // A vanished file the same way.
    std::fs::remove_file(dir.path().join("b")).unwrap();
    let ids2 = p.identities.clone();
    let p2 = plan(p.folders, p.files, ids2, vec![vec![read(1, 0, 4)]]);
    let out = run(
        &p2,
        0,
        &mut FakeCache(HashSet::new()),
        &mut Recorder::default(),
        &mut || None,
    );
    assert_eq!(out.errors[0].error_code, FileErrorCode::Vanished);
}

/// Drop a file's pages (the file is ours: fadvise DONTNEED works, mincore is exact).
fn evict(path: &Path) {
    let f = File::open(path).unwrap();
    sys::fadvise(&f, 0, 0, Advice::DontNeed).unwrap();
}

#[test]
fn the_kernels_answer_skips_what_is_resident_exactly_or_by_probing() {
    let (_dir, folders, files, ids) = folder();
    let p = plan(folders, files.clone(), ids, vec![vec![read(0, 0, 64)]]);
    evict(&files[0]);
    // Read pages 8..16 back into the cache.
    let f = File::open(&files[0]).unwrap();
    let mut buf = vec![0u8; (8 * PAGE) as usize];
    f.read_exact_at(&mut buf, 8 * PAGE).unwrap();
    let mut cache = KernelCache::new(&p);
    let missing = cache.missing(0, &f, 0, 64 * PAGE);
    assert_eq!(cache.exact, 1, "our own file: exact");
    // Everything but 8..16 (the kernel may have read a little ahead around them).
    assert_eq!(missing[0], [0, 8 * PAGE], "{missing:?}");
    assert!(
        missing
            .iter()
            .all(|m| m[0] + m[1] <= 8 * PAGE || m[0] >= 16 * PAGE),
        "{missing:?}"
    );
    // The probe: cached pages 8..16 probe as cached; a range reaching past them does not.
    let mut probe = vec![0u8; PAGE as usize];
    assert!(probe_missing(&f, 8 * PAGE, 8 * PAGE, &mut probe).is_empty());
    evict(&files[0]);
    assert_eq!(
        probe_missing(&f, 40 * PAGE, 4 * PAGE, &mut probe),
        [[40 * PAGE, 4 * PAGE]]
    );
}
