//! Stored traces as a plan source (`preload --plan --source trace|trace-reads`, learn/plan/traced.rs):
//! per file, the pages the last traced starts of one install and build read from disk and then
//! used (trace/used.rs), merged; or every page the newest one read, in the order it read them
//! (the replay of seed 002's experiment).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::model::{Source, Trace};
use super::store;
use crate::state::StateDir;

/// How many of the newest traced starts of the same install and build are merged.
pub const TRACED_STARTS: usize = 3;

/// Which pages of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pages {
    /// Read from disk and then used, merged over the last [`TRACED_STARTS`] traces; plus what
    /// Firefox itself asked the kernel to read (`readahead(2)` of its libraries, kind
    /// "forced"): it asks again on every start, so those pages are read whether the plan holds
    /// them or not (measured: without them the start after the plan read 21 MB more).
    Used,
    /// Everything the newest trace read (readahead nobody used included): the replay.
    Read,
}

/// One file the traces read, as they saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedFile {
    pub path: PathBuf,
    pub ino: u64,
    /// Size when the trace resolved it.
    pub size: Option<u64>,
    /// Modification time (ns) when the trace resolved it; absent in an older host's traces.
    pub mtime_ns: Option<i64>,
    /// Page ranges `[first, count]`, sorted and joined.
    pub ranges: Vec<[u64; 2]>,
}

/// What the traces give a plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Traced {
    pub files: Vec<TracedFile>,
    /// The newest trace's reads in recorded order, contiguous ones grouped: `(index into
    /// files, first page, count)`. Only for [`Pages::Read`].
    pub recorded: Vec<(usize, u64, u64)>,
    /// Ids of the traces used, newest first.
    pub trace_ids: Vec<String>,
}

/// Traces of the install `install_dir` (canonical) stored in the state folder `state`, newest
/// first, with the build each was recorded from. Only tracefs traces (the sampler's have no
/// pages). A damaged trace reads as absent and is left where it is (the launch prefetch and the
/// login preload: nobody reads what they say); [`load_reporting`] sets it aside and says so.
#[must_use]
pub fn load(state: &StateDir, install_dir: &Path, limit: usize) -> Vec<(String, Trace)> {
    load_with(state, install_dir, limit, false).0
}

/// [`load`] for a reader that reports to someone (`plan --source trace`, the page's
/// `plan_status`): a damaged trace is set aside, and its note returned, never skipped in silence
/// (issue 39 #4).
#[must_use]
pub fn load_reporting(
    state: &StateDir,
    install_dir: &Path,
    limit: usize,
) -> (Vec<(String, Trace)>, Vec<crate::note::Note>) {
    load_with(state, install_dir, limit, true)
}

fn load_with(
    state: &StateDir,
    install_dir: &Path,
    limit: usize,
    report: bool,
) -> (Vec<(String, Trace)>, Vec<crate::note::Note>) {
    let Ok(Some(dir)) = state.sub(store::FOLDER, false) else {
        return (Vec::new(), Vec::new());
    };
    let (metas, mut notes) = if report {
        store::list_checked(&dir)
    } else {
        (store::list(&dir), Vec::new())
    };
    let mut out = Vec::new();
    for meta in metas {
        if out.len() >= limit || meta.source != Source::Tracefs {
            continue;
        }
        let trace = if report {
            let (trace, note) = store::read_or_set_aside(&dir, &meta.id);
            notes.extend(note);
            trace
        } else {
            store::read(&dir, &meta.id)
        };
        let Some(trace) = trace else {
            continue;
        };
        let same = Path::new(&trace.install_dir)
            .canonicalize()
            .is_ok_and(|d| d == install_dir);
        if same {
            out.push((meta.id, trace));
        }
    }
    (out, notes)
}

/// The newest traces of build `build_id` among `traces` (newest first), at most `limit`, and
/// for [`Pages::Used`] only those that know which pages were used; never one whose Firefox
/// failed (an older host stored them, and they fed the plan). Pure.
#[must_use]
pub fn of_build<'a>(
    traces: &'a [(String, Trace)],
    build_id: Option<&str>,
    pages: Pages,
) -> Vec<&'a (String, Trace)> {
    let limit = match pages {
        Pages::Used => TRACED_STARTS,
        Pages::Read => 1,
    };
    traces
        .iter()
        .filter(|(_, t)| t.build_id.as_deref() == build_id)
        .filter(|(_, t)| !t.firefox_failed())
        .filter(|(_, t)| pages == Pages::Read || t.use_counts.is_some())
        .take(limit)
        .collect()
}

/// Merge `traces` (newest first) into per-file page ranges. Written files (created during the
/// start) and files the trace could not name are left out. Pure.
#[must_use]
pub fn merge(traces: &[&(String, Trace)], pages: Pages) -> Traced {
    let mut by_path: BTreeMap<PathBuf, TracedFile> = BTreeMap::new();
    for (_, t) in traces {
        // Per file: every read (the replay), or only Firefox's own forced readahead.
        let mut read: Vec<Vec<[u64; 2]>> = vec![Vec::new(); t.files.len()];
        for e in &t.events {
            if pages == Pages::Read || e.k == "forced" {
                if let Some(r) = read.get_mut(e.f as usize) {
                    r.push([e.o, e.n]);
                }
            }
        }
        for (fi, f) in t.files.iter().enumerate() {
            if !f.resolved || f.written {
                continue;
            }
            let mut ranges: Vec<[u64; 2]> = std::mem::take(&mut read[fi]);
            if pages == Pages::Used {
                ranges.extend(f.used.iter().flatten());
                // Pages the loader copies before writing look unused (trace/used.rs): the
                // ones this trace read are needed all the same.
                if f.used.is_some() {
                    let written = super::used::loader_written_pages(&f.sections);
                    ranges.extend(
                        t.events
                            .iter()
                            .filter(|e| e.f as usize == fi)
                            .flat_map(|e| {
                                written.iter().filter_map(move |&[a, n]| {
                                    let (lo, hi) = (a.max(e.o), (a + n).min(e.o + e.n));
                                    (lo < hi).then(|| [lo, hi - lo])
                                })
                            }),
                    );
                }
            }
            if ranges.is_empty() {
                continue;
            }
            let entry = by_path
                .entry(PathBuf::from(&f.path))
                .or_insert_with(|| TracedFile {
                    path: PathBuf::from(&f.path),
                    ino: f.ino,
                    size: f.size,
                    mtime_ns: f.mtime_ns,
                    ranges: Vec::new(),
                });
            // The newest trace names the file's identity; an older one of a replaced file
            // (another inode) adds nothing.
            if entry.ino == f.ino {
                entry.ranges.extend(ranges);
            }
        }
    }
    let mut out = Traced {
        trace_ids: traces.iter().map(|(id, _)| id.clone()).collect(),
        ..Traced::default()
    };
    for (_, mut f) in by_path {
        f.ranges = super::used::join(&mut f.ranges);
        out.files.push(f);
    }
    if let (Pages::Read, Some((_, newest))) = (pages, traces.first()) {
        let index: BTreeMap<&str, usize> = out
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.to_str().unwrap_or(""), i))
            .collect();
        let mut events: Vec<&crate::trace::model::Read> = newest.events.iter().collect();
        events.sort_by(|a, b| a.t.total_cmp(&b.t)); // stored in time order; made sure
        for e in events {
            let Some(name) = newest
                .files
                .get(e.f as usize)
                .filter(|f| f.resolved && !f.written)
                .map(|f| f.path.as_str())
            else {
                continue;
            };
            let Some(&i) = index.get(name) else { continue };
            match out.recorded.last_mut() {
                Some((fi, first, count)) if *fi == i && *first + *count == e.o => *count += e.n,
                _ => out.recorded.push((i, e.o, e.n)),
            }
        }
    }
    out
}

/// The profile folder of the newest of `traces` (newest first): the one it recorded, else the
/// one the files it read and wrote point at (firefox/profile_parts.rs); `None` where neither
/// says. Pure.
#[must_use]
pub fn profile_dir(traces: &[&(String, Trace)]) -> Option<String> {
    let (_, newest) = traces.first()?;
    newest
        .profile
        .as_ref()
        .and_then(|p| p.dir.clone())
        .or_else(|| {
            crate::firefox::profile_parts::infer_dir(newest.files.iter().map(|f| f.path.as_str()))
        })
}

/// The build of the newest trace of this install whose build differs from `build_id`, if the
/// newest trace of the install is of another build (the plan is stale: Firefox was updated).
#[must_use]
pub fn other_build(traces: &[(String, Trace)], build_id: Option<&str>) -> Option<String> {
    let (_, newest) = traces.first()?;
    (newest.build_id.as_deref() != build_id).then(|| newest.build_id.clone().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::model::tests::fake;
    use crate::trace::model::UseCounts;

    fn traced(id: &str, build: &str, used: &[Option<Vec<[u64; 2]>>]) -> (String, Trace) {
        let mut t = fake();
        t.build_id = Some(build.into());
        for (f, u) in t.files.iter_mut().zip(used) {
            f.used.clone_from(u);
        }
        t.use_counts = Some(UseCounts::default());
        (id.into(), t)
    }

    #[test]
    fn used_pages_merge_over_the_same_build_only() {
        let traces = vec![
            traced("new", "B2", &[Some(vec![[0, 1]]), None, Some(vec![[0, 1]])]),
            traced(
                "mid",
                "B2",
                &[Some(vec![[1, 2], [8, 1]]), None, Some(vec![])],
            ),
            traced("old", "B1", &[Some(vec![[5, 1]]), None, None]),
        ];
        let mut traces = traces;
        // Firefox's own readahead(2) of omni.ja pages 5-6 in the newest trace: planned too.
        traces[0].1.events.push(crate::trace::model::Read {
            t: 1.0,
            f: 2,
            o: 5,
            n: 2,
            p: 10,
            k: "forced".into(),
            c: None,
        });
        let picked = of_build(&traces, Some("B2"), Pages::Used);
        assert_eq!(picked.len(), 2);
        let m = merge(&picked, Pages::Used);
        assert_eq!(m.trace_ids, ["new", "mid"]);
        // libxul: [0,1] ∪ [1,2] ∪ [8,1] joined; the written sqlite left out; omni.ja kept, with
        // the forced pages.
        let files: Vec<_> = m
            .files
            .iter()
            .map(|f| (f.path.to_str().unwrap(), f.ranges.clone()))
            .collect();
        assert_eq!(
            files,
            [
                ("/ff/libxul.so", vec![[0, 3], [8, 1]]),
                ("/ff/omni.ja", vec![[0, 1], [5, 2]])
            ]
        );
        // A start whose Firefox failed (stored by an older host) is no start to plan from
        // (issue 39 #3); one that ended cleanly before it was over still counts.
        let mut failed = traces.clone();
        failed[0].1.note_codes.push(
            crate::note::Note::new(crate::note::START_INCOMPLETE).with("status", "exit status: 1"),
        );
        let ids = |t: &[(String, Trace)]| -> Vec<String> {
            of_build(t, Some("B2"), Pages::Used)
                .iter()
                .map(|(id, _)| id.clone())
                .collect()
        };
        assert_eq!(ids(&failed), ["mid"]);
        failed[0].1.note_codes[0] =
            crate::note::Note::new(crate::note::START_INCOMPLETE).with("status", "exit status 0");
        assert_eq!(ids(&failed), ["new", "mid"]);
        // A trace without page flags cannot give used pages.
        let mut blind = traces.clone();
        blind[0].1.use_counts = None;
        assert_eq!(of_build(&blind, Some("B2"), Pages::Used).len(), 1);
        assert_eq!(other_build(&traces, Some("B2")), None);
        assert_eq!(other_build(&traces, Some("B3")), Some("B2".into()));
    }

    #[test]
    fn the_loaders_copied_pages_that_were_read_are_planned_as_used() {
        // libxul: pages 8-9 read at 95 ms are its .data (copied on write: flags say unused).
        let mut t = fake();
        t.files[0].used = Some(vec![[0, 1]]);
        t.files[0].sections = vec![crate::trace::model::Section {
            name: ".data".into(),
            offset: 7 * 4096,
            size: 3 * 4096,
        }];
        t.use_counts = Some(UseCounts::default());
        let traces = vec![("only".to_owned(), t)];
        let m = merge(&of_build(&traces, None, Pages::Used), Pages::Used);
        // Page 7 of .data was never read: not planned.
        assert_eq!(m.files[0].ranges, [[0, 1], [8, 2]]);
    }

    #[test]
    fn read_pages_replay_the_newest_trace_in_recorded_order() {
        let mut t = fake();
        t.events.push(crate::trace::model::Read {
            t: 30.0,
            f: 0,
            o: 1,
            n: 2,
            p: 10,
            k: "sync".into(),
            c: None,
        });
        let traces = vec![("only".to_owned(), t)];
        let picked = of_build(&traces, None, Pages::Read);
        let m = merge(&picked, Pages::Read);
        assert_eq!(m.files[0].ranges, [[0, 3], [8, 2]]);
        // Recorded order: libxul 0 (5 ms), omni.ja 0 (20 ms), libxul 1-2 (30 ms: not grouped
        // with page 0, omni.ja came between), libxul 8-9 (95 ms); the sqlite was written.
        assert_eq!(m.recorded, [(0, 0, 1), (1, 0, 1), (0, 1, 2), (0, 8, 2)]);
    }
}
