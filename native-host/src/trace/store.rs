//! Stored traces: `<state folder>/traces/`, one `<id>.json` (the whole trace) and one
//! `<id>.meta.json` (what `trace_list` shows) per recording. At most `MAX_TRACES` traces and
//! `MAX_BYTES` in all: the oldest are dropped when a new one is stored. The user's own, written
//! as the user (under sudo too: crate::state).
//!
//! Everything here goes through the traces folder's descriptor by plain names (crate::state):
//! the user writes this folder, so a name is only ever one the host made from a checked id, a
//! meta file names only its own trace, and every read is bounded and of a regular file.

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::model::{Source, Trace};
use crate::note::Note;
use crate::state::{self, StateDir};
use crate::Error;

pub const MAX_TRACES: usize = 20;
pub const MAX_BYTES: u64 = 512 * 1024 * 1024;
/// A `trace_fetch` page: JSON escaping at most doubles it (quotes), so a reply stays under the
/// 1 MiB frame limit.
pub const CHUNK: usize = 384 * 1024;
/// The traces folder's name in the state folder.
pub const FOLDER: &str = "traces";
/// The most a meta file holds: a dozen fields, a few hundred bytes.
pub const MAX_META_BYTES: u64 = 64 * 1024;
/// Names looked at in the traces folder: 20 traces make 40 files, plus the markers.
pub const MAX_NAMES: usize = 4096;

/// What the list shows of a stored trace.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Meta {
    pub id: String,
    pub pid: i32,
    pub process_start_ticks: u64,
    pub firefox_version: Option<String>,
    pub build_id: Option<String>,
    pub recorded_at_ms: u64,
    pub source: Source,
    pub traced_read_bytes: u64,
    pub tree_read_bytes: Option<u64>,
    pub lost_events: u64,
    pub bytes: u64,
}

/// `trace_list`'s data: the stored traces and which one is of the host's own Firefox process.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Listing {
    pub traces: Vec<Meta>,
    /// The id of the trace of the Firefox that started the host (same pid and process start).
    pub current: Option<String>,
    pub dir: String,
    /// The command that records one (the page shows it when there is none).
    pub record_command: String,
    /// Stored traces found damaged (cut short, not JSON) and set aside by this listing, one
    /// [`crate::note::STATE_FILE_SET_ASIDE`] each: said once, as for the other state files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub note_codes: Vec<Note>,
}

/// The start (clock ticks since boot) of process `pid`.
#[must_use]
pub fn process_start(pid: i32) -> Option<u64> {
    crate::os::proc::stat(pid).map(|s| s.starttime)
}

/// The traces folder of this user's state folder, made if missing.
pub fn open() -> Result<StateDir, Error> {
    in_state(&state::open()?)
}

/// The traces folder in the state folder `state`, made if missing.
pub fn in_state(state: &StateDir) -> Result<StateDir, Error> {
    state.sub(FOLDER, true)?.ok_or_else(|| {
        Error::io(
            format!("cannot make {}", state.path_of(FOLDER).display()),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )
    })
}

/// The list with the current process's trace marked.
#[must_use]
pub fn listing(dir: &StateDir, current: Option<(i32, u64)>) -> Listing {
    let (traces, note_codes) = list_checked(dir);
    let current = current.and_then(|(pid, ticks)| {
        traces
            .iter()
            .find(|m| m.pid == pid && m.process_start_ticks == ticks)
            .map(|m| m.id.clone())
    });
    Listing {
        traces,
        current,
        dir: dir.path().to_string_lossy().into_owned(),
        record_command: record_command(),
        note_codes,
    }
}

/// The name of the marker the host leaves in the traces folder when the extension has recorded
/// the start of Firefox `pid` (it sends `learn` after sessionRestored).
#[must_use]
pub fn recorded_marker(pid: i32, ticks: u64) -> String {
    format!("recorded-{pid}-{ticks}")
}

/// What a marker holds: the start's sessionRestored as the extension recorded it.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Recorded {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_restored_ms: Option<f64>,
}

/// Leave the marker for `pid`, with its sessionRestored when the extension sent one (best
/// effort: a trace only stops earlier with it, and its prefetch plan is cut there), and remove
/// the markers of processes that have ended, which nothing reads any more (one per start, else).
pub fn mark_recorded(state: &StateDir, pid: i32, session_restored_ms: Option<f64>) {
    if let (Some(ticks), Ok(dir)) = (process_start(pid), in_state(state)) {
        // Kept as sent: [`take_recorded`] checks it, as it would a marker written by anyone.
        let bytes = serde_json::to_vec(&Recorded {
            session_restored_ms,
        })
        .unwrap_or_default();
        let _ = dir.write(&recorded_marker(pid, ticks), &bytes);
        if let Ok(names) = dir.names(MAX_NAMES) {
            let running = |pid, ticks| process_start(pid) == Some(ticks);
            for name in stale_markers(&names, running) {
                let _ = dir.remove(&name);
            }
        }
    }
}

/// Take the marker of the start `(pid, ticks)` if the extension left one: removed, its
/// sessionRestored returned (`None`: no marker, an empty or older one, or nonsense in it).
pub fn take_recorded(dir: &StateDir, pid: i32, ticks: u64) -> Option<f64> {
    let name = recorded_marker(pid, ticks);
    let bytes = dir.read(&name, 4096).ok().flatten();
    let _ = dir.remove(&name);
    serde_json::from_slice::<Recorded>(&bytes?)
        .ok()?
        .session_restored_ms
        .filter(|ms| ms.is_finite() && *ms > 0.0)
}

/// What the page and `--help` tell people to run to record a trace: as root, by the name or path
/// that runs this binary for the user who reads it (crate::invocation).
#[must_use]
pub fn record_command() -> String {
    crate::invocation::current().run_as_root(RECORD_ARGS)
}

/// [`record_command`] as the page of a Firefox run from the install `dir` prints it: with
/// `--firefox DIR` always, so that the command, run as printed, records a start of the install
/// the page shows. Without it `launch` starts the Firefox PATH finds (sudo's secure_path, not
/// the user's), which need not be the page's: a page of a private copy printed a command that
/// traced the system install (test.restart.js).
#[must_use]
pub fn record_command_for(dir: &std::path::Path) -> String {
    crate::invocation::current().run_as_root(&format!(
        "{RECORD_ARGS} --firefox {}",
        crate::invocation::quote(dir)
    ))
}

/// The arguments of [`record_command`].
pub const RECORD_ARGS: &str = "launch --cold --trace";

/// What errors about a stored trace tell people to run to see the stored traces' ids.
#[must_use]
pub fn list_command() -> String {
    format!("{} trace list", crate::invocation::current().plain)
}

/// The markers among `names` whose process is no longer the one that left them (`running(pid,
/// ticks)` false: ended, or its pid reused). Names that are not markers are never returned. Pure.
#[must_use]
pub fn stale_markers(names: &[String], running: impl Fn(i32, u64) -> bool) -> Vec<String> {
    names
        .iter()
        .filter(|name| {
            let Some((pid, ticks)) = name
                .strip_prefix("recorded-")
                .and_then(|rest| rest.split_once('-'))
            else {
                return false;
            };
            match (pid.parse::<i32>(), ticks.parse::<u64>()) {
                (Ok(pid), Ok(ticks)) => {
                    *name == &recorded_marker(pid, ticks) && !running(pid, ticks)
                }
                _ => false,
            }
        })
        .cloned()
        .collect()
}

/// One page of a stored trace's JSON text.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Chunk {
    pub id: String,
    pub offset: u64,
    pub total: u64,
    /// Where the next page starts; `None` after the last.
    pub next_offset: Option<u64>,
    pub data: String,
}

/// An id the host makes (`<ms>-<pid>-<ticks>`) or could have: ASCII letters, digits, `-`, `_`.
#[must_use]
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() < 100
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Store `trace`; returns its id and path. Drops the oldest beyond the bounds.
pub fn save(dir: &StateDir, trace: &Trace) -> Result<(String, PathBuf), Error> {
    let id = format!(
        "{}-{}-{}",
        trace.recorded_at_ms, trace.pid, trace.process_start_ticks
    );
    let body = serde_json::to_vec(trace)
        .map_err(|e| Error::io("encode the trace", std::io::Error::other(e)))?;
    let meta = Meta {
        id: id.clone(),
        pid: trace.pid,
        process_start_ticks: trace.process_start_ticks,
        firefox_version: trace.firefox_version.clone(),
        build_id: trace.build_id.clone(),
        recorded_at_ms: trace.recorded_at_ms,
        source: trace.source,
        traced_read_bytes: trace.traced_read_bytes,
        tree_read_bytes: trace.tree_read_bytes,
        lost_events: trace.lost_events,
        bytes: body.len() as u64,
    };
    let name = format!("{id}.json");
    dir.write(&name, &body)?;
    dir.write(
        &format!("{id}.meta.json"),
        &serde_json::to_vec(&meta).unwrap_or_default(),
    )?;
    prune(dir, MAX_TRACES, MAX_BYTES);
    Ok((id, dir.path_of(&name)))
}

/// A meta file's bytes, if they are the meta of the trace its name says: the `id` inside must
/// be a valid id and the file's own (`<id>.meta.json`), so a planted meta file can name no other
/// file. Pure (the fuzz target `trace_store` drives it).
#[must_use]
pub fn parse_meta(name: &str, bytes: &[u8]) -> Option<Meta> {
    let stem = name.strip_suffix(".meta.json")?;
    let meta: Meta = serde_json::from_slice(bytes).ok()?;
    (valid_id(&meta.id) && meta.id == stem).then_some(meta)
}

/// Stored traces, newest first. A meta file that is not a regular file of the folder's owner,
/// is over [`MAX_META_BYTES`], or does not parse (see [`parse_meta`]) is left out.
#[must_use]
pub fn list(dir: &StateDir) -> Vec<Meta> {
    let Ok(names) = dir.names(MAX_NAMES) else {
        return Vec::new();
    };
    let mut out: Vec<Meta> = names
        .iter()
        .filter(|n| n.ends_with(".meta.json"))
        .filter_map(|n| parse_meta(n, &dir.read(n, MAX_META_BYTES).ok()??))
        .collect();
    sort_newest_first(&mut out);
    out
}

/// [`list`], with each trace whose file is not the size its meta says (cut short, grown) read
/// through [`read_or_set_aside`]: a damaged one is set aside and said, and left out of the list;
/// one that reads after all stays. For the readers that report to someone (`trace list`, the
/// page's `trace_list`, `plan --source trace`): issue 39 #4, a truncated trace was listed, then
/// "no such trace" to `trace show`, and skipped in silence by the plan.
#[must_use]
pub fn list_checked(dir: &StateDir) -> (Vec<Meta>, Vec<Note>) {
    let mut notes = Vec::new();
    let metas = list(dir)
        .into_iter()
        .filter(|meta| {
            let size = dir
                .open_read(&format!("{}.json", meta.id))
                .ok()
                .flatten()
                .map(|(_, size)| size);
            if size.is_none_or(|size| size == meta.bytes) {
                return true;
            }
            let (trace, note) = read_or_set_aside(dir, &meta.id);
            notes.extend(note);
            trace.is_some()
        })
        .collect();
    (metas, notes)
}

fn sort_newest_first(metas: &mut [Meta]) {
    metas.sort_by(|a: &Meta, b: &Meta| {
        b.recorded_at_ms
            .cmp(&a.recorded_at_ms)
            .then(b.id.cmp(&a.id))
    });
}

/// The ids to drop to keep the newest `max_count` traces within `max_bytes` (the newest is
/// always kept). Pure.
#[must_use]
pub fn to_prune(metas: &[Meta], max_count: usize, max_bytes: u64) -> Vec<String> {
    let mut total = 0u64;
    let mut out = Vec::new();
    for (i, m) in metas.iter().enumerate() {
        total = total.saturating_add(m.bytes);
        if i >= max_count || (i > 0 && total > max_bytes) {
            out.push(m.id.clone());
        }
    }
    out
}

/// Keep the newest `max_count` traces within `max_bytes`. Only names made from checked ids, in
/// this folder (unlinkat beneath its descriptor).
pub fn prune(dir: &StateDir, max_count: usize, max_bytes: u64) {
    for id in to_prune(&list(dir), max_count, max_bytes) {
        if valid_id(&id) {
            let _ = dir.remove(&format!("{id}.json"));
            let _ = dir.remove(&format!("{id}.meta.json"));
        }
    }
}

fn no_such_trace() -> Error {
    Error::io(
        "no such trace",
        std::io::Error::from(std::io::ErrorKind::NotFound),
    )
}

/// Trace `id` whole, at most [`MAX_BYTES`]; `None` if missing, refused or not a trace. Reads a
/// damaged one as absent and leaves it where it is (for the readers nobody reads: the launch
/// prefetch); those that report use [`read_or_set_aside`].
#[must_use]
pub fn read(dir: &StateDir, id: &str) -> Option<Trace> {
    if !valid_id(id) {
        return None;
    }
    let bytes = dir.read(&format!("{id}.json"), MAX_BYTES).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// Trace `id`, as [`read`]; but a trace file that is not JSON (cut short: `truncate -s 500`, a
/// disk error) or past [`MAX_BYTES`] is damaged: it is set aside as `<id>.json.corrupt.<ms>`
/// with its meta file, never deleted, and the note says so (crate::state::aside, as
/// `working-set.json` and `last-prefetch.json`). JSON that is no trace this host reads (another
/// version's) is left where it is: `(None, None)`, as a missing one.
#[must_use]
pub fn read_or_set_aside(dir: &StateDir, id: &str) -> (Option<Trace>, Option<Note>) {
    if !valid_id(id) {
        return (None, None);
    }
    let (read, note) =
        crate::state::aside::read_or_set_aside(dir, &format!("{id}.json"), MAX_BYTES, |bytes| {
            match serde_json::from_slice::<Trace>(bytes) {
                Ok(trace) => Some(Some(trace)),
                Err(_) if serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok() => {
                    Some(None)
                }
                Err(_) => None,
            }
        });
    if note.is_some() {
        // Its meta goes aside with it: the list no longer names a trace that is not there.
        let _ = dir.set_aside(&format!("{id}.meta.json"));
    }
    (read.flatten(), note)
}

/// The error of a trace a reader asked for by id and did not get: set aside as damaged (the
/// note's words), else not there.
#[must_use]
pub fn unread_error(dir: &StateDir, id: &str, set_aside: Option<&Note>) -> String {
    match set_aside {
        Some(note) => format!("trace {id} cannot be read: {}", note.english()),
        None => format!(
            "no stored trace {id} in {} (or not one this host reads): `{}` lists them",
            dir.path().display(),
            list_command()
        ),
    }
}

/// One page of trace `id` from byte `offset` (on a UTF-8 boundary), at most `CHUNK` bytes.
pub fn fetch(dir: &StateDir, id: &str, offset: u64) -> Result<Chunk, Error> {
    if !valid_id(id) {
        return Err(no_such_trace());
    }
    let context = || format!("read trace {id}");
    let (mut file, total) = dir
        .open_read(&format!("{id}.json"))
        .map_err(|e| Error::io(context(), e))?
        .ok_or_else(no_such_trace)?;
    let start = offset.min(total);
    file.seek(SeekFrom::Start(start))
        .map_err(|e| Error::io(context(), e))?;
    let mut buf = Vec::with_capacity(CHUNK);
    file.take(CHUNK as u64)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(context(), e))?;
    chunk(id, &buf, start, total)
}

/// The page of `buf` (the bytes of the trace from `start`, of `total` in all) up to the last
/// whole UTF-8 character; the next page starts there. Bytes that are not UTF-8 are an error
/// naming the offset, never an empty page that points at itself (which had the page ask for
/// it forever). Pure (the fuzz target `trace_store` drives it).
pub fn chunk(id: &str, buf: &[u8], start: u64, total: u64) -> Result<Chunk, Error> {
    let at_end = start + buf.len() as u64 >= total;
    let end = match std::str::from_utf8(buf) {
        Ok(_) => buf.len(),
        // A character cut by the page's end: the next page starts with it.
        Err(e) if e.error_len().is_none() && !at_end => e.valid_up_to(),
        Err(e) => return Err(not_text(id, start + e.valid_up_to() as u64)),
    };
    if end == 0 && start < total {
        return Err(if buf.is_empty() {
            Error::io(
                format!("trace {id} ended at byte {start} of {total}: it changed while read; fetch it again"),
                std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
            )
        } else {
            not_text(id, start)
        });
    }
    let data = String::from_utf8_lossy(&buf[..end]).into_owned();
    let next = start + end as u64;
    Ok(Chunk {
        id: id.to_owned(),
        offset: start,
        total,
        next_offset: (next < total).then_some(next),
        data,
    })
}

fn not_text(id: &str, at: u64) -> Error {
    Error::io(
        format!(
            "trace {id} is damaged: it is not UTF-8 text at byte {at}; remove it and record again"
        ),
        std::io::Error::from(std::io::ErrorKind::InvalidData),
    )
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
