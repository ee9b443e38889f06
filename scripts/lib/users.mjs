// The one way scripts and tests run something as another user (issue 32): setpriv, the real and
// effective ids switched, no supplementary groups, optionally a clean environment. Root only
// (for another uid); for one's own uid the command runs as it is. The skip reason for suites
// that need it is here too, so each says the same thing the same way.
import { spawnSync } from "node:child_process";

/** The ordinary user tests switch to: `nobody`. */
export const NOBODY = 65534;

export const isRoot = process.getuid?.() === 0;

/**
 * `argv` as `uid` (group `gid`): `setpriv --reuid --regid --clear-groups -- …`, or `argv` itself
 * for this process's own uid. With `env`, the command gets only those variables (`env -i`), as
 * a login would give it a clean environment. Pure.
 */
export function asUser(uid, argv, { gid = uid, env = null, self = process.getuid?.() } = {}) {
  const command = env ? ["env", "-i", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...argv] : argv;
  return uid === self ? command : ["setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--", ...command];
}

/**
 * `argv` as root without the two capabilities that let root read any file (CAP_DAC_OVERRIDE,
 * CAP_DAC_READ_SEARCH), dropped from the bounding and inheritable sets so that nothing it execs
 * gets them back: a file root does not own is then closed to it by its mode alone, as to an
 * ordinary user (the benchmark's Snap stand-in, whose image is 0600 and another user's). Pure.
 */
export function withoutDacOverride(argv) {
  const caps = "-dac_override,-dac_read_search";
  return ["setpriv", `--inh-caps=${caps}`, `--bounding-set=${caps}`, "--", ...argv];
}

/** Whether setpriv (util-linux) is there to switch users with. */
export function hasSetpriv() {
  return spawnSync("setpriv", ["--version"]).status === 0;
}

/**
 * Why a suite that switches to another user cannot run here, or false: `rootReason` says what it
 * needs root for.
 */
export function switchUserSkip(rootReason) {
  if (!isRoot) return rootReason;
  if (!hasSetpriv()) return "setpriv is missing (util-linux)";
  return false;
}
