//! Firefox's own startup profiles kept beside the traces they were recorded with (issue 21), in
//! the state folder's `profiles/` (crate::state: held open, files of the state's owner, atomic
//! writes that follow no symlink): `<trace id>.gecko.json` (Firefox's profile as it wrote it),
//! `<trace id>.profile.json` (the merged profile `launch --firefox-profile` writes) and
//! `page/<trace id>.json` (what `trace_profile` wrote for the page). At most [`MAX_PROFILES`]
//! traces keep theirs, and only while the trace itself is stored.

use crate::state::StateDir;
use crate::Error;

/// The sub-folder of the state folder.
pub const FOLDER: &str = "profiles";
/// Traces whose profiles are kept (each 20–60 MB for a cold start).
pub const MAX_PROFILES: usize = 5;
/// Names listed at most when pruning.
const MAX_NAMES: usize = 4096;

/// The profiles folder of this user's state folder, made if missing.
pub fn open() -> Result<StateDir, Error> {
    in_state(&crate::state::open()?)
}

/// The profiles folder in the state folder `state`, made if missing.
pub fn in_state(state: &StateDir) -> Result<StateDir, Error> {
    sub(state, FOLDER)
}

/// The page's exports, `profiles/page/`, made if missing.
pub fn page(profiles: &StateDir) -> Result<StateDir, Error> {
    sub(profiles, "page")
}

fn sub(dir: &StateDir, name: &str) -> Result<StateDir, Error> {
    dir.sub(name, true)?.ok_or_else(|| {
        Error::io(
            format!("cannot make {}", dir.path_of(name).display()),
            std::io::ErrorKind::NotFound.into(),
        )
    })
}

/// The name of trace `id`'s Firefox profile.
#[must_use]
pub fn gecko_name(id: &str) -> String {
    format!("{id}.gecko.json")
}

/// The name of trace `id`'s merged profile.
#[must_use]
pub fn merged_name(id: &str) -> String {
    format!("{id}.profile.json")
}

/// Keep `bytes` as the Firefox profile of trace `id`, then prune against `traces`.
pub fn save(dir: &StateDir, id: &str, bytes: &[u8], traces: &StateDir) -> Result<(), Error> {
    dir.write(&gecko_name(id), bytes)?;
    prune(dir, traces, MAX_PROFILES);
    Ok(())
}

/// The stored Firefox profile of trace `id` (at most `limit` bytes), if there is one.
pub fn read(dir: &StateDir, id: &str, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    if !crate::trace::store::valid_id(id) {
        return Ok(None);
    }
    dir.read(&gecko_name(id), limit)
}

fn id_of(name: &str) -> Option<&str> {
    name.strip_suffix(".gecko.json")
        .or_else(|| name.strip_suffix(".profile.json"))
}

/// Keep the profiles of the newest `max` traces that `traces` still holds; the page's exports
/// only while their trace is held.
pub fn prune(dir: &StateDir, traces: &StateDir, max: usize) {
    let held = |id: &str| traces.exists(&format!("{id}.json"));
    let Ok(names) = dir.names(MAX_NAMES) else {
        return;
    };
    let mut ids: Vec<&str> = names.iter().filter_map(|n| id_of(n)).collect();
    // Ids start with the recording's wall-clock ms: newest first by that number.
    ids.sort_by_key(|id| {
        std::cmp::Reverse(
            id.split('-')
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0),
        )
    });
    ids.dedup();
    for name in &names {
        let Some(id) = id_of(name) else { continue };
        let rank = ids.iter().position(|i| *i == id).unwrap_or(usize::MAX);
        if rank >= max || !held(id) {
            let _ = dir.remove(name);
        }
    }
    if let Ok(Some(page)) = dir.sub("page", false) {
        for name in page.names(MAX_NAMES).unwrap_or_default() {
            if name.strip_suffix(".json").is_none_or(|id| !held(id)) {
                let _ = page.remove(&name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_beside_their_traces_and_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let state = StateDir::create_at(&tmp.path().join("s")).unwrap();
        let traces = crate::trace::store::in_state(&state).unwrap();
        let dir = in_state(&state).unwrap();
        for i in 0..7u64 {
            traces.write(&format!("{i}-1-2.json"), b"{}").unwrap();
            save(&dir, &format!("{i}-1-2"), b"{}", &traces).unwrap();
        }
        let left: Vec<u64> = (0..7u64)
            .filter(|i| read(&dir, &format!("{i}-1-2"), 10).unwrap().is_some())
            .collect();
        assert_eq!(left, [2, 3, 4, 5, 6]);
        page(&dir).unwrap().write("6-1-2.json", b"{}").unwrap();
        traces.remove("6-1-2.json").unwrap();
        prune(&dir, &traces, MAX_PROFILES);
        assert!(
            read(&dir, "6-1-2", 10).unwrap().is_none(),
            "a profile goes with its trace"
        );
        assert!(
            !page(&dir).unwrap().exists("6-1-2.json"),
            "and the page's export too"
        );
        assert!(read(&dir, "../x", 10).unwrap().is_none());
    }
}
