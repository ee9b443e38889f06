//! When a traced start first needed each page: the order the launch prefetch reads its plan in
//! (learn/prefetch/). The same pages as [`super::plan_source`]'s `Pages::Used` (read from disk
//! and then used, plus Firefox's own `readahead(2)` ranges), each with the time, in ms since the
//! Firefox process started, at which the trace saw it enter the page cache: the first time the
//! start asked for it. Over several traces of one build a page keeps its earliest time.
//!
//! Where a trace knows its start's sessionRestored (the extension sends it with `learn`), what
//! that start first needed after it is left out: on the 30 MiB/s benchmark disk those last
//! 12 MB, read beside the launch, delayed sessionRestored by 0.36 s (docs/benchmarks.md), and
//! Firefox reads them itself after its start, as it always did.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::model::Trace;

/// Pages of one file above this are ignored (a page index from a damaged or hand-made trace must
/// not make the prefetcher allocate gigabytes): 2^24 pages of 4 KiB is a 64 GiB file.
const MAX_PAGES: u64 = 1 << 24;

/// A run of pages of one file that the traces first needed at the same moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Piece {
    pub first: u64,
    pub count: u64,
    /// ms since the Firefox process started (the trace's axis).
    pub t: f64,
}

/// One file with its pieces, in page order, and its identity as the newest trace saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedFile {
    pub path: PathBuf,
    pub ino: u64,
    pub size: Option<u64>,
    /// Modification time (ns) when the newest trace resolved it (absent in older traces).
    pub mtime_ns: Option<i64>,
    pub pieces: Vec<Piece>,
}

/// The used pages of `traces` (newest first, one install and build: `plan_source::of_build` with
/// `Pages::Used`) with the time each was first needed, per file. Files created during a start,
/// files the trace could not name and older traces' versions of a replaced file (another inode)
/// are left out. Pure.
#[must_use]
pub fn first_use(traces: &[&(String, Trace)]) -> Vec<TimedFile> {
    // Per path: identity and, per page, the earliest time any trace needed it.
    // Per path: the file as the newest trace saw it (pieces filled in at the end), and per page
    // the earliest time.
    let mut by_path: BTreeMap<PathBuf, (TimedFile, Vec<f64>)> = BTreeMap::new();
    for (_, trace) in traces {
        for (fi, file) in trace.files.iter().enumerate() {
            if !file.resolved || file.written {
                continue;
            }
            // Used pages, and what the loader copied before writing (relocated data, the
            // GOT): needed by every start, invisible to the page flags (trace/used.rs).
            let mut used: Vec<[u64; 2]> = file.used.clone().unwrap_or_default();
            if file.used.is_some() {
                used.extend(super::used::loader_written_pages(&file.sections));
            }
            let used = super::used::join(&mut used);
            let pages = file
                .size
                .map(|s| s.div_ceil(4096))
                .unwrap_or_else(|| {
                    trace
                        .events
                        .iter()
                        .filter(|e| e.f as usize == fi)
                        .map(|e| e.o.saturating_add(e.n))
                        .max()
                        .unwrap_or(0)
                })
                .min(MAX_PAGES);
            let entry = by_path.entry(PathBuf::from(&file.path)).or_insert_with(|| {
                let seen = TimedFile {
                    path: PathBuf::from(&file.path),
                    ino: file.ino,
                    size: file.size,
                    mtime_ns: file.mtime_ns,
                    pieces: Vec::new(),
                };
                (seen, Vec::new())
            });
            if entry.0.ino != file.ino {
                continue; // an older trace of a file replaced since: its pages say nothing
            }
            if entry.1.len() < pages as usize {
                entry.1.resize(pages as usize, f64::INFINITY);
            }
            let times = &mut entry.1;
            let until = trace.session_restored().unwrap_or(f64::INFINITY);
            for e in trace
                .events
                .iter()
                .filter(|e| e.f as usize == fi && e.t <= until)
            {
                let (start, end) = (e.o.min(pages), e.o.saturating_add(e.n).min(pages));
                if e.k == "forced" {
                    // Firefox asks for these itself on every start: needed, used or not.
                    mark(times, start, end, e.t);
                    continue;
                }
                for &[first, count] in &used {
                    let (a, b) = (first.max(start), first.saturating_add(count).min(end));
                    if a < b {
                        mark(times, a, b, e.t);
                    }
                }
            }
        }
    }
    by_path
        .into_iter()
        .map(|(_, (file, times))| TimedFile {
            pieces: runs(&times),
            ..file
        })
        .filter(|f| !f.pieces.is_empty())
        .collect()
}

fn mark(times: &mut [f64], start: u64, end: u64, t: f64) {
    for slot in &mut times[start as usize..end as usize] {
        if t < *slot {
            *slot = t;
        }
    }
}

/// Runs of consecutive pages with the same (finite) time. Pure.
fn runs(times: &[f64]) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    for (i, &t) in times.iter().enumerate() {
        if !t.is_finite() {
            continue;
        }
        let page = i as u64;
        match out.last_mut() {
            #[allow(clippy::float_cmp)] // the same event's time, copied: equal bit for bit
            Some(last) if last.first + last.count == page && last.t == t => last.count += 1,
            _ => out.push(Piece {
                first: page,
                count: 1,
                t,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::model::tests::fake;
    use crate::trace::model::Read;

    fn read(t: f64, f: u32, o: u64, n: u64, k: &str) -> Read {
        Read {
            t,
            f,
            o,
            n,
            p: 10,
            k: k.into(),
            c: None,
        }
    }

    #[test]
    fn used_pages_take_the_time_they_entered_the_cache() {
        // libxul (10 pages): read 0 at 5 ms and 8-9 at 95 ms; pages 0 and 9 were used, 8 was
        // readahead nobody touched. omni.ja: Firefox's own readahead of pages 5-6 at 1 ms.
        let mut t = fake();
        t.files[0].used = Some(vec![[0, 1], [9, 1]]);
        t.files[2].used = Some(vec![]);
        t.events.push(read(1.0, 2, 5, 2, "forced"));
        let traces = [("new".to_owned(), t)];
        let picked: Vec<_> = traces.iter().collect();
        let files = first_use(&picked);
        let got: Vec<_> = files
            .iter()
            .map(|f| (f.path.to_str().unwrap(), f.pieces.clone()))
            .collect();
        let p = |first, count, t| Piece { first, count, t };
        assert_eq!(
            got,
            [
                ("/ff/libxul.so", vec![p(0, 1, 5.0), p(9, 1, 95.0)]),
                ("/ff/omni.ja", vec![p(5, 2, 1.0)]),
            ]
        );
    }

    #[test]
    fn pages_the_loader_copies_before_writing_count_as_used() {
        // libxul: pages 0-9 read at 5 ms, none "used" by the page flags, but pages 4-5 are its
        // .data.rel.ro (relocated: copied on write, so never mapped themselves).
        let mut t = fake();
        t.files[0].used = Some(vec![]);
        t.files[0].sections = vec![
            crate::trace::model::Section {
                name: ".text".into(),
                offset: 0,
                size: 4 * 4096,
            },
            crate::trace::model::Section {
                name: ".data.rel.ro".into(),
                offset: 4 * 4096 + 100,
                size: 4096,
            },
        ];
        t.events = vec![read(5.0, 0, 0, 10, "order")];
        let traces = [("x".to_owned(), t)];
        let picked: Vec<_> = traces.iter().collect();
        let files = first_use(&picked);
        assert_eq!(
            files[0].pieces,
            [Piece {
                first: 4,
                count: 2,
                t: 5.0
            }]
        );
        // A trace without page flags says nothing of use: no guess from sections either.
        let mut blind = traces[0].1.clone();
        blind.files[0].used = None;
        let blind = [("y".to_owned(), blind)];
        let picked: Vec<_> = blind.iter().collect();
        assert!(first_use(&picked).is_empty());
    }

    #[test]
    fn over_several_traces_a_page_keeps_its_earliest_time_and_replaced_files_are_skipped() {
        let mut newest = fake();
        newest.files[0].used = Some(vec![[0, 4]]);
        newest.events = vec![read(50.0, 0, 0, 4, "sync")];
        let mut older = fake();
        older.files[0].used = Some(vec![[2, 2]]);
        older.events = vec![read(10.0, 0, 2, 2, "sync")];
        // The oldest trace saw another libxul.so (another inode): it must not count.
        let mut replaced = fake();
        replaced.files[0].ino = 99;
        replaced.files[0].used = Some(vec![[0, 1]]);
        replaced.events = vec![read(1.0, 0, 0, 1, "sync")];
        let traces = [
            ("a".to_owned(), newest),
            ("b".to_owned(), older),
            ("c".to_owned(), replaced),
        ];
        let picked: Vec<_> = traces.iter().collect();
        let files = first_use(&picked);
        let p = |first, count, t| Piece { first, count, t };
        assert_eq!(files.len(), 1, "{files:?}");
        assert_eq!(files[0].pieces, [p(0, 2, 50.0), p(2, 2, 10.0)]);
    }

    #[test]
    fn what_a_start_first_needed_after_its_session_restored_is_left_out() {
        // libxul pages 0-3 used: 0-1 read at 40 ms, 2-3 at 900 ms, after sessionRestored (800).
        let mut t = fake();
        t.files[0].used = Some(vec![[0, 4]]);
        t.events = vec![read(40.0, 0, 0, 2, "sync"), read(900.0, 0, 2, 2, "sync")];
        t.note_session_restored(Some(800.0));
        let p = |first, count, t| Piece { first, count, t };
        let cut = [("x".to_owned(), t.clone())];
        let picked: Vec<_> = cut.iter().collect();
        assert_eq!(first_use(&picked)[0].pieces, [p(0, 2, 40.0)]);
        // Another trace that needed pages 2-3 before its own sessionRestored brings them back.
        let mut early = t.clone();
        early.events = vec![read(500.0, 0, 2, 2, "sync")];
        early.note_session_restored(Some(700.0));
        let both = [("x".to_owned(), t.clone()), ("y".to_owned(), early)];
        let picked: Vec<_> = both.iter().collect();
        assert_eq!(
            first_use(&picked)[0].pieces,
            [p(0, 2, 40.0), p(2, 2, 500.0)]
        );
        // Without a sessionRestored (no extension, an older host) nothing is cut.
        t.milestones = None;
        let whole = [("x".to_owned(), t)];
        let picked: Vec<_> = whole.iter().collect();
        assert_eq!(
            first_use(&picked)[0].pieces,
            [p(0, 2, 40.0), p(2, 2, 900.0)]
        );
    }

    #[test]
    fn a_page_index_past_the_file_is_clipped_not_allocated() {
        let mut t = fake();
        t.files[0].used = Some(vec![[0, u64::MAX / 2]]);
        t.events = vec![read(1.0, 0, u64::MAX / 4, u64::MAX / 2, "forced")];
        let traces = [("x".to_owned(), t)];
        let picked: Vec<_> = traces.iter().collect();
        // libxul is 10 pages: nothing past them, nothing allocated for them.
        assert!(first_use(&picked).is_empty());
    }
}
