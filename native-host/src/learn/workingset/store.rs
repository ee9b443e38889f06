//! The working set on disk: `working-set.json` in the state folder (crate::state), read bounded
//! and written atomically there.

use crate::learn::workingset::{State, STATE_FILE, STATE_VERSION};

use crate::note::Note;
use crate::state::StateDir;
use crate::Error;

/// The most a state file may hold: 4 installs × 5 starts of page ranges are a few MiB; a file
/// past this is not one the host wrote, and is read as an empty state.
pub const MAX_STATE_BYTES: u64 = 64 * 1024 * 1024;

/// Read the state file; a missing file, another version, a corrupt or oversized file, or one
/// the state folder's rules refuse (crate::state) is an empty state (the next `learn` starts
/// over), so an old or damaged file never stops a preload.
#[must_use]
pub fn load(state: &StateDir) -> State {
    state
        .read(STATE_FILE, MAX_STATE_BYTES)
        .ok()
        .flatten()
        .map(|bytes| parse_state(&bytes))
        .unwrap_or_default()
}

/// [`load`] for the readers that report to someone (`plan_status`, `learn`, the CLI's `plan`
/// and `preload --plan`): a file that is not a state file at all (not JSON, not of this shape,
/// past its bound) is set aside as `working-set.json.corrupt.<ms>`, never deleted, and the note
/// says so (crate::state::aside); the state is then empty, as before.
pub fn load_or_set_aside(state: &StateDir) -> (State, Option<Note>) {
    let (loaded, note) =
        crate::state::aside::read_or_set_aside(state, STATE_FILE, MAX_STATE_BYTES, parse_or_other);
    (loaded.unwrap_or_default(), note)
}

/// A state file's bytes as a [`State`]: another version or anything that does not parse is an
/// empty state. Pure (the fuzz target `state` drives it).
#[must_use]
pub fn parse_state(bytes: &[u8]) -> State {
    parse_or_other(bytes).unwrap_or_default()
}

/// The state, an empty one for a file of another version (a newer host's: not damaged, and
/// left alone), `None` for bytes that are not a state file of any version.
fn parse_or_other(bytes: &[u8]) -> Option<State> {
    #[derive(serde::Deserialize)]
    struct Versioned {
        version: u32,
    }
    match serde_json::from_slice::<State>(bytes) {
        Ok(s) if s.version == STATE_VERSION => Some(s),
        Ok(_) => Some(State::default()),
        Err(_) => serde_json::from_slice::<Versioned>(bytes)
            .ok()
            .filter(|v| v.version != STATE_VERSION)
            .map(|_| State::default()),
    }
}

/// Write `state` as the state file, atomically.
pub fn save(dir: &StateDir, state: &State) -> Result<(), Error> {
    let bytes = serde_json::to_vec(state).map_err(|e| {
        Error::io(
            format!("cannot write {}", dir.path_of(STATE_FILE).display()),
            e.into(),
        )
    })?;
    dir.write(STATE_FILE, &bytes)
}
