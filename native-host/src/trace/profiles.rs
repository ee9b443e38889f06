//! Firefox's own startup profiles kept beside the traces they were recorded with (issue 21):
//! `<state folder>/profiles/<trace id>.gecko.json` (and the merged `<trace id>.profile.json`
//! that `launch --firefox-profile` writes there), written as the trace's owner like the trace
//! itself (crate::trace::store), at most [`MAX_PROFILES`] of each and only while their trace is
//! stored.
//! `trace export` and the page's "Open in the Firefox Profiler" merge the trace into it.

use std::path::{Path, PathBuf};

use super::user::{self, User};
use crate::Error;

/// Profiles kept (each 20–60 MB for a cold start).
pub const MAX_PROFILES: usize = 5;

/// `<state>/profiles` of `user` (or the current user).
pub fn dir(owner: Option<&User>) -> Result<PathBuf, Error> {
    Ok(user::state_dir(owner)?.join("profiles"))
}

fn path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.gecko.json"))
}

/// Store `bytes` as the Firefox profile of trace `id`; then prune: only the newest
/// [`MAX_PROFILES`] whose trace is still in `traces_dir` stay.
pub fn save(
    dir: &Path,
    id: &str,
    bytes: &[u8],
    owner: Option<&User>,
    traces_dir: &Path,
) -> Result<PathBuf, Error> {
    if !dir.exists() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io("create the profiles folder", e))?;
        user::chown(dir, owner);
    }
    let p = path(dir, id);
    super::store::write_owned(&p, bytes, owner)
        .map_err(|e| Error::io("write Firefox's profile", e))?;
    prune(dir, traces_dir, MAX_PROFILES);
    Ok(p)
}

/// The stored Firefox profile of trace `id`, if there is one.
#[must_use]
pub fn find(dir: &Path, id: &str) -> Option<PathBuf> {
    let p = path(dir, id);
    std::fs::symlink_metadata(&p)
        .is_ok_and(|m| m.is_file())
        .then_some(p)
}

/// Keep the newest `max` profiles whose trace (`<id>.json` in `traces_dir`) still exists.
pub fn prune(dir: &Path, traces_dir: &Path, max: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut found: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            let id = name
                .strip_suffix(".gecko.json")
                .or_else(|| name.strip_suffix(".profile.json"))?
                .to_owned();
            Some((id, e.path()))
        })
        .collect();
    // Ids start with the recording's wall-clock ms: newest first by number.
    found.sort_by_key(|(id, _)| {
        std::cmp::Reverse(
            id.split('-')
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0),
        )
    });
    let mut ids: Vec<&str> = found.iter().map(|(id, _)| id.as_str()).collect();
    ids.dedup();
    for (id, p) in &found {
        let rank = ids.iter().position(|i| i == id).unwrap_or(usize::MAX);
        if rank >= max || !traces_dir.join(format!("{id}.json")).exists() {
            let _ = std::fs::remove_file(p);
        }
    }
    // The page's exports (`page/<id>.json`) go with their trace too.
    if let Ok(entries) = std::fs::read_dir(dir.join("page")) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name
                .strip_suffix(".json")
                .is_none_or(|id| !traces_dir.join(format!("{id}.json")).exists())
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// A stored trace larger than this is refused (the store keeps at most 512 MiB in all; a cold
/// start's trace is a few MB).
pub const MAX_TRACE_BYTES: u64 = 256 * 1024 * 1024;

/// The JSON bytes of stored trace `id` (a store id: letters, digits, `-`, `_`), read through a
/// descriptor that follows no symlink, at most [`MAX_TRACE_BYTES`]; NotFound when not stored.
pub fn read_trace(traces_dir: &Path, id: &str) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let not_found = || {
        Error::io(
            format!("no stored trace {id}"),
            std::io::ErrorKind::NotFound.into(),
        )
    };
    if id.is_empty()
        || id.len() > 100
        || !id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(not_found());
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(traces_dir.join(format!("{id}.json")))
        .map_err(|e| Error::io(format!("read trace {id}"), e))?;
    let meta = file
        .metadata()
        .map_err(|e| Error::io(format!("read trace {id}"), e))?;
    if !meta.is_file() || meta.len() > MAX_TRACE_BYTES {
        return Err(Error::io(
            format!("trace {id} is not a regular file of at most {MAX_TRACE_BYTES} bytes"),
            std::io::ErrorKind::InvalidData.into(),
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_TRACE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(format!("read trace {id}"), e))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_beside_their_traces_and_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let traces = tmp.path().join("traces");
        let dir = tmp.path().join("profiles");
        std::fs::create_dir_all(&traces).unwrap();
        for i in 0..7u64 {
            std::fs::write(traces.join(format!("{i}-1-2.json")), b"{}").unwrap();
            save(&dir, &format!("{i}-1-2"), b"{}", None, &traces).unwrap();
        }
        let left: Vec<_> = (0..7u64)
            .filter(|i| find(&dir, &format!("{i}-1-2")).is_some())
            .collect();
        assert_eq!(left, [2, 3, 4, 5, 6]);
        std::fs::remove_file(traces.join("6-1-2.json")).unwrap();
        prune(&dir, &traces, MAX_PROFILES);
        assert!(
            find(&dir, "6-1-2").is_none(),
            "a profile goes with its trace"
        );
    }
}
