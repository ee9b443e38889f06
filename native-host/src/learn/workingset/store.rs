//! The working set on disk: `working-set.json` in the state folder (crate::state), read bounded
//! and written atomically there.

use crate::learn::workingset::{State, STATE_FILE, STATE_VERSION};

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

/// A state file's bytes as a [`State`]: another version or anything that does not parse is an
/// empty state. Pure (the fuzz target `state` drives it).
#[must_use]
pub fn parse_state(bytes: &[u8]) -> State {
    serde_json::from_slice::<State>(bytes)
        .ok()
        .filter(|s| s.version == STATE_VERSION)
        .unwrap_or_default()
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
