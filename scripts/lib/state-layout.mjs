// The host's state folder as scripts and tests find it: the one JS home of its layout (the Rust
// side's is native-host/src/state/). `$XDG_STATE_HOME/about-startup/`, and
// `$HOME/.local/state/about-startup/` where XDG_STATE_HOME is unset. Pure.
import path from "node:path";

/** The folder's name under XDG_STATE_HOME. */
export const STATE_DIR_NAME = "about-startup";

/** The host's state folder under `stateHome` (an XDG_STATE_HOME). */
export function stateDir(stateHome) {
  return path.join(stateHome, STATE_DIR_NAME);
}

/** The host's state folder of a user whose HOME is `home` and whose XDG_STATE_HOME is unset. */
export function homeStateDir(home) {
  return stateDir(path.join(home, ".local", "state"));
}

