//! The profile's share of a start (issue 31): the start's reads attributed to the user's
//! profile, part by part (the session store, places, favicons, each add-on by name and id, the
//! startup cache, storage, cookies, prefs, other), beside the install's and the system's.
//!
//! **Waiting.** The trace has no per-thread wait times; what it has is how each read came in.
//! A read of kind `sync` (a miss opened a readahead window), `fault` (a page fault with no
//! window) or `read` (seen neither way) is one a thread stopped for until the disk answered;
//! `async`, `forced` and `order` reads were started ahead of use. So the profile's share of the
//! waiting is its share of those *synchronous reads*, counted as reads (on a slow disk each is
//! a round trip; bytes say little: one miss may open a window of megabytes). Where the trace has
//! block requests with their latency and the files' extents place them on the disk, the
//! profile's share of that block time is given too (`block`): the disk's own time for it.
//!
//! Which folder is the profile: the trace's own `profile_dir` where the recording kept it; else
//! the running Firefox's (`firefox::process::profile_dir`: the `.parentlock` it holds, or its
//! `-profile` argument) when the trace is of that same process; else the folder the files a
//! start read and wrote point at (`profile_parts::infer_dir`). A trace exported without its
//! profile's paths carries each file's part (`profile.parts`): those are taken as they are.

use serde::Serialize;

use crate::firefox::profile_facts::{self, Facts, SessionFacts};
use crate::firefox::profile_parts::{classify, infer_dir, Part, Roots};
use crate::trace::model::{Source, Trace};

/// Kinds of read a thread waited for (see the module's doc).
pub const WAIT_KINDS: [&str; 3] = ["sync", "fault", "read"];

/// How the profile folder was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DirFrom {
    /// The trace kept it.
    Recorded,
    /// The traced Firefox is still running with it.
    Process,
    /// Inferred from the files the start read and wrote.
    Files,
}

/// What is known of the start's profile: where it is and what it says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProfileContext {
    pub roots: Option<Roots>,
    pub dir_from: Option<DirFrom>,
    pub facts: Facts,
}

impl ProfileContext {
    /// Finds the profile of `t` and reads what it says (I/O: `/proc` of the traced process, the
    /// profile's own files as their owner).
    #[must_use]
    pub fn locate(t: &Trace) -> ProfileContext {
        let recorded = t.profile.as_ref().and_then(|p| p.dir.clone());
        let (dir, from) = if let Some(dir) = recorded {
            (Some(dir), Some(DirFrom::Recorded))
        } else if let Some(dir) = same_process(t).and_then(crate::firefox::process::profile_dir) {
            (
                Some(dir.to_string_lossy().into_owned()),
                Some(DirFrom::Process),
            )
        } else {
            let dir = infer_dir(t.files.iter().map(|f| f.path.as_str()));
            let from = dir.as_ref().map(|_| DirFrom::Files);
            (dir, from)
        };
        let facts = dir
            .as_deref()
            .map(|d| profile_facts::read(std::path::Path::new(d)))
            .unwrap_or_default();
        ProfileContext {
            roots: dir.as_deref().map(Roots::of),
            dir_from: from,
            facts,
        }
    }
}

impl ProfileContext {
    /// What the trace itself tells of its profile, reading nothing on this machine: for a trace
    /// from elsewhere (an import), whose folder here, if any, is not its profile.
    #[must_use]
    pub fn from_files(t: &Trace) -> ProfileContext {
        let dir = t
            .profile
            .as_ref()
            .and_then(|p| p.dir.clone())
            .map(|d| (d, DirFrom::Recorded))
            .or_else(|| {
                infer_dir(t.files.iter().map(|f| f.path.as_str())).map(|d| (d, DirFrom::Files))
            });
        ProfileContext {
            roots: dir.as_ref().map(|(d, _)| Roots::of(d)),
            dir_from: dir.map(|(_, from)| from),
            facts: Facts::default(),
        }
    }
}

/// The traced process, if it still runs as the same process (pid and start time).
fn same_process(t: &Trace) -> Option<i32> {
    (crate::trace::store::process_start(t.pid) == Some(t.process_start_ticks)).then_some(t.pid)
}

/// The profile part of each of `t`'s files (`None` outside the profile).
#[must_use]
pub fn parts_of(t: &Trace, ctx: &ProfileContext) -> Vec<Option<Part>> {
    let named = t.profile.as_ref().and_then(|p| p.parts.as_ref());
    t.files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if let Some(named) = named {
                return named.get(i).cloned().flatten();
            }
            let rel = ctx.roots.as_ref()?.relative(&f.path)?;
            Some(classify(rel, &ctx.facts.addons))
        })
        .collect()
}

/// A part's row: what the start read of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartRow {
    pub part: Part,
    /// [`Part::label`], in English (the CLI's; the page words `part` itself).
    pub label: String,
    pub bytes: u64,
    pub reads: u64,
    /// Of `reads`, those a thread waited for.
    pub sync_reads: u64,
    pub files: u64,
}

/// A count of the profile's against the whole start's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Share<T> {
    pub profile: T,
    pub total: T,
}

/// Whether the profile's share could be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileState {
    Ready,
    /// The /proc sampler: bytes of the tree, not of files.
    NoPerFileTrace,
    /// No profile folder is known and no file carries its part.
    NotFound,
}

/// The profile's share of the start.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileSummary {
    pub state: ProfileState,
    /// The profile folder (shown on this machine only: exports leave it out).
    pub dir: Option<String>,
    pub dir_from: Option<DirFrom>,
    /// Bytes read from disk (written files left out).
    pub bytes: Share<u64>,
    /// Reads (runs of pages entering the cache), and those a thread waited for.
    pub reads: Share<u64>,
    pub sync_reads: Share<u64>,
    /// Block-request time (ms) placed in the profile's files through their extents, where the
    /// trace has block requests with latencies; `None` otherwise.
    pub block_ms: Option<Share<f64>>,
    /// The parts, most bytes first.
    pub parts: Vec<PartRow>,
    /// The session a start restores (counts only), where the profile could be read.
    pub session: Option<SessionFacts>,
}

/// The profile's share of `t`, with `parts[i]` the part of file `i`.
#[must_use]
pub fn summarize(t: &Trace, ctx: &ProfileContext, parts: &[Option<Part>]) -> ProfileSummary {
    let state = if t.source == Source::ProcSampler && t.events.is_empty() {
        ProfileState::NoPerFileTrace
    } else if ctx.roots.is_none() && parts.iter().all(Option::is_none) {
        ProfileState::NotFound
    } else {
        ProfileState::Ready
    };
    let mut bytes = Share {
        profile: 0,
        total: 0,
    };
    let mut reads = Share {
        profile: 0,
        total: 0,
    };
    let mut sync = Share {
        profile: 0,
        total: 0,
    };
    let mut rows: Vec<PartRow> = Vec::new();
    let mut files_seen = vec![false; t.files.len()];
    for e in &t.events {
        let Some(file) = t.files.get(e.f as usize) else {
            continue;
        };
        if file.written {
            continue;
        }
        let waited = WAIT_KINDS.contains(&e.k.as_str());
        let b = e.n * 4096;
        bytes.total += b;
        reads.total += 1;
        sync.total += u64::from(waited);
        let Some(part) = parts.get(e.f as usize).cloned().flatten() else {
            continue;
        };
        bytes.profile += b;
        reads.profile += 1;
        sync.profile += u64::from(waited);
        let row = match rows.iter_mut().position(|r| r.part == part) {
            Some(i) => &mut rows[i],
            None => {
                rows.push(PartRow {
                    label: part.label(),
                    part,
                    bytes: 0,
                    reads: 0,
                    sync_reads: 0,
                    files: 0,
                });
                rows.last_mut().expect("just pushed")
            }
        };
        row.bytes += b;
        row.reads += 1;
        row.sync_reads += u64::from(waited);
        if !std::mem::replace(&mut files_seen[e.f as usize], true) {
            row.files += 1;
        }
    }
    rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.label.cmp(&b.label)));
    ProfileSummary {
        state,
        dir: ctx.roots.as_ref().map(|r| r.profile.clone()),
        dir_from: ctx.dir_from,
        bytes,
        reads,
        sync_reads: sync,
        block_ms: block_ms(t, parts),
        parts: rows,
        session: ctx.facts.session,
    }
}

/// Block time placed in profile files: each request with a latency is placed at the file
/// whose extent holds its first byte.
fn block_ms(t: &Trace, parts: &[Option<Part>]) -> Option<Share<f64>> {
    let timed: Vec<_> = t
        .block
        .iter()
        .filter_map(|b| Some((b, b.lat_ms?)))
        .collect();
    if timed.is_empty() {
        return None;
    }
    // (disk start, disk end, file index), by start.
    let mut extents: Vec<(u64, u64, usize)> = t
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.written)
        .flat_map(|(i, f)| {
            f.extents
                .iter()
                .map(move |[_, disk, len]| (*disk, disk + len, i))
        })
        .collect();
    extents.sort_unstable();
    let mut share = Share {
        profile: 0.0,
        total: 0.0,
    };
    for (b, lat) in timed {
        share.total += lat;
        let at = extents.partition_point(|e| e.0 <= b.pos);
        let file = at
            .checked_sub(1)
            .map(|i| extents[i])
            .filter(|e| b.pos < e.1)
            .map(|e| e.2);
        if file.is_some_and(|f| parts.get(f).is_some_and(Option::is_some)) {
            share.profile += lat;
        }
    }
    Some(share)
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
