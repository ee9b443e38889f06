//! Stored traces: `<state folder>/traces/`, one `<id>.json` (the whole trace) and one
//! `<id>.meta.json` (what `trace_list` shows) per recording. At most `MAX_TRACES` traces and
//! `MAX_BYTES` in all: the oldest are dropped when a new one is stored. Under sudo/pkexec the
//! folder and files belong to the invoking user.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::model::{Source, Trace};
use super::user::{self, User};
use crate::Error;

pub const MAX_TRACES: usize = 20;
pub const MAX_BYTES: u64 = 512 * 1024 * 1024;
/// A `trace_fetch` page: JSON escaping at most doubles it (quotes), so a reply stays under the
/// 1 MiB frame limit.
pub const CHUNK: usize = 384 * 1024;

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
}

/// The start (clock ticks since boot) of process `pid`.
#[must_use]
pub fn process_start(pid: i32) -> Option<u64> {
    crate::firefox::process::read_stat(pid).map(|s| s.starttime)
}

/// The list with the current process's trace marked.
#[must_use]
pub fn listing(dir: &Path, current: Option<(i32, u64)>) -> Listing {
    let traces = list(dir);
    let current = current.and_then(|(pid, ticks)| {
        traces
            .iter()
            .find(|m| m.pid == pid && m.process_start_ticks == ticks)
            .map(|m| m.id.clone())
    });
    Listing {
        traces,
        current,
        dir: dir.to_string_lossy().into_owned(),
        record_command: RECORD_COMMAND.into(),
    }
}

/// The marker the host leaves when the extension has recorded the start of Firefox `pid` (it
/// sends `learn` after sessionRestored): `<state>/traces/recorded-<pid>-<start ticks>`.
#[must_use]
pub fn recorded_marker(state_dir: &Path, pid: i32, ticks: u64) -> PathBuf {
    state_dir
        .join("traces")
        .join(format!("recorded-{pid}-{ticks}"))
}

/// Leave the marker for `pid` (best effort: a trace only stops earlier with it).
pub fn mark_recorded(state_dir: &Path, pid: i32) {
    if let Some(ticks) = process_start(pid) {
        let path = recorded_marker(state_dir, pid, ticks);
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(path, b"");
    }
}

/// What the page and `--help` tell people to run.
pub const RECORD_COMMAND: &str = "sudo about-startup-host launch --cold --trace";

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

/// `<state>/traces` of `user` (or the current user).
pub fn dir(user: Option<&User>) -> Result<PathBuf, Error> {
    Ok(user::state_dir(user)?.join("traces"))
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() < 100
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Store `trace`; returns its id and path. Drops the oldest beyond the bounds.
pub fn save(dir: &Path, trace: &Trace, owner: Option<&User>) -> Result<(String, PathBuf), Error> {
    let mut created = Vec::new();
    let mut p = dir.to_path_buf();
    while !p.exists() {
        created.push(p.clone());
        if !p.pop() {
            break;
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create the traces folder", e))?;
    for c in &created {
        user::chown(c, owner);
    }
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
    let path = dir.join(format!("{id}.json"));
    write_owned(&path, &body, owner).map_err(|e| Error::io("write the trace", e))?;
    let meta_path = dir.join(format!("{id}.meta.json"));
    write_owned(
        &meta_path,
        &serde_json::to_vec(&meta).unwrap_or_default(),
        owner,
    )
    .map_err(|e| Error::io("write the trace's summary", e))?;
    prune(dir, MAX_TRACES, MAX_BYTES);
    Ok((id, path))
}

/// Write `bytes` to `path` as `owner`'s file. Under sudo this runs as root in a folder the user
/// owns, so nothing goes by path: a new uniquely named temporary file (O_EXCL, never a planted
/// symlink), handed over with fchown on its descriptor, then renamed over `path` (which replaces
/// a symlink there instead of following it).
pub(crate) fn write_owned(path: &Path, bytes: &[u8], owner: Option<&User>) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".trace-")
        .tempfile_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    if let Some(u) = owner {
        std::os::unix::fs::fchown(tmp.as_file(), Some(u.uid), Some(u.gid))?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Stored traces, newest first.
#[must_use]
pub fn list(dir: &Path) -> Vec<Meta> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<Meta> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".meta.json"))
        .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
        .collect();
    out.sort_by(|a: &Meta, b: &Meta| {
        b.recorded_at_ms
            .cmp(&a.recorded_at_ms)
            .then(b.id.cmp(&a.id))
    });
    out
}

/// Keep the newest `max_count` traces within `max_bytes`.
pub fn prune(dir: &Path, max_count: usize, max_bytes: u64) {
    let mut total = 0u64;
    for (i, m) in list(dir).iter().enumerate() {
        total += m.bytes;
        if i >= max_count || (i > 0 && total > max_bytes) {
            let _ = std::fs::remove_file(dir.join(format!("{}.json", m.id)));
            let _ = std::fs::remove_file(dir.join(format!("{}.meta.json", m.id)));
        }
    }
}

/// One page of trace `id` from byte `offset` (on a UTF-8 boundary), at most `CHUNK` bytes.
pub fn fetch(dir: &Path, id: &str, offset: u64) -> Result<Chunk, Error> {
    if !valid_id(id) {
        return Err(Error::io(
            "no such trace",
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    let mut file = std::fs::File::open(dir.join(format!("{id}.json")))
        .map_err(|e| Error::io(format!("read trace {id}"), e))?;
    let total = file
        .metadata()
        .map_err(|e| Error::io(format!("read trace {id}"), e))?
        .len();
    let start = offset.min(total);
    file.seek(SeekFrom::Start(start))
        .map_err(|e| Error::io(format!("read trace {id}"), e))?;
    let mut buf = Vec::with_capacity(CHUNK);
    file.take(CHUNK as u64)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(format!("read trace {id}"), e))?;
    // Cut on a UTF-8 boundary: drop a trailing partial character (the next page starts there).
    let mut end = buf.len();
    if start + (buf.len() as u64) < total {
        while end > 0 && (buf[end - 1] & 0xC0) == 0x80 {
            end -= 1;
        }
        if end > 0 && buf[end - 1] >= 0xC0 {
            end -= 1;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::model::tests::fake;

    #[test]
    fn a_symlink_planted_at_the_traces_name_is_replaced_not_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("traces");
        std::fs::create_dir(&dir).unwrap();
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let trace = fake();
        let id = format!(
            "{}-{}-{}",
            trace.recorded_at_ms, trace.pid, trace.process_start_ticks
        );
        for name in [format!("{id}.json"), format!("{id}.meta.json")] {
            std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
        }
        // As root, hand the files to nobody as `sudo … launch --trace` does for its user.
        let nobody = (crate::pagecache::sys::geteuid() == 0).then(|| User {
            uid: 65534,
            gid: 65534,
            name: "nobody".into(),
            home: tmp.path().into(),
            groups: vec![],
        });
        let (saved_id, path) = save(&dir, &trace, nobody.as_ref()).unwrap();
        assert_eq!(saved_id, id);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        use std::os::unix::fs::MetadataExt;
        let victim_meta = std::fs::metadata(&victim).unwrap();
        assert_eq!(
            victim_meta.uid(),
            crate::pagecache::sys::geteuid(),
            "the victim kept its owner"
        );
        for p in [path.clone(), dir.join(format!("{id}.meta.json"))] {
            let meta = std::fs::symlink_metadata(&p).unwrap();
            assert!(meta.is_file(), "{} is a new regular file", p.display());
            if nobody.is_some() {
                assert_eq!(meta.uid(), 65534, "{} belongs to the user", p.display());
            }
        }
    }

    #[test]
    fn the_recorded_marker_names_pid_and_process_start() {
        let tmp = tempfile::tempdir().unwrap();
        let pid = i32::try_from(std::process::id()).unwrap();
        let ticks = process_start(pid).unwrap();
        let marker = recorded_marker(tmp.path(), pid, ticks);
        assert!(!marker.exists());
        mark_recorded(tmp.path(), pid);
        assert!(marker.exists());
        assert!(!recorded_marker(tmp.path(), pid, ticks + 1).exists());
    }

    #[test]
    fn save_list_fetch_and_prune() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/traces");
        let mut t = fake();
        t.notes.push("é".repeat(CHUNK)); // multi-byte text across a page boundary
        let (id, _) = save(&dir, &t, None).unwrap();
        let l = list(&dir);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].id, id);
        let mut text = String::new();
        let mut off = 0;
        let mut pages = 0;
        loop {
            let c = fetch(&dir, &id, off).unwrap();
            assert!(c.data.len() <= CHUNK);
            text.push_str(&c.data);
            pages += 1;
            match c.next_offset {
                Some(n) => off = n,
                None => break,
            }
        }
        assert!(pages >= 3);
        let back: Trace = serde_json::from_str(&text).unwrap();
        assert_eq!(back.notes, t.notes);
        assert!(fetch(&dir, "../x", 0).is_err());
        for i in 0..3 {
            let mut t = fake();
            t.recorded_at_ms = 10 + i;
            save(&dir, &t, None).unwrap();
        }
        prune(&dir, 2, u64::MAX);
        let l = list(&dir);
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].recorded_at_ms, 12);
    }
}
