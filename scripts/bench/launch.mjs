// Launching one Firefox for the startup benchmark, without WebDriver or Marionette in the
// measured start (docs/benchmarks.md, "How a launch works"):
//   firefox -profile <root>/profile -no-remote --headless   with HOME=<root>/home
// The profile is the template made once per run, restored in place before each launch (the
// same bytes and times, each file keeping its inode: restoreTree): the unsigned full .xpi
// sideloaded in profile/extensions/, the prefs below in user.js, and one start already behind
// it, so every measured launch is an ordinary start of an existing profile. The native host is
// registered in the throwaway HOME. ABOUT_STARTUP_BENCH_OUT names the file the host writes the
// extension's record of the start to (`bench_record`, docs/PROTOCOL.md); the extension then
// quits Firefox by closing its window. A Firefox that has not quit 30 s after its record gets
// SIGTERM, then SIGKILL (both counted: on ESR 153 SIGTERM is not a clean quit).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { withoutPrefs, userJs } from "../lib/prefs-js.mjs";
import { EXTENSION_ID } from "../lib/project.mjs";
import { processesWithHome, signal } from "../lib/processes.mjs";

/**
 * Prefs of the benchmark's profile. The first four let the sideloaded, unsigned full flavour load
 * enabled and with its experiment API (checked on ESR 153: without autoDisableScopes = 0 a
 * profile-folder add-on waits for the user to enable it). The rest keep first-run pages, default-
 * browser checks, update checks and telemetry uploads out of the measured starts.
 */
export const BENCH_PREFS = {
  "xpinstall.signatures.required": false,
  "extensions.experiments.enabled": true,
  "extensions.autoDisableScopes": 0,
  "extensions.enabledScopes": 15,
  "browser.shell.checkDefaultBrowser": false,
  "browser.startup.homepage_override.mstone": "ignore",
  "browser.aboutwelcome.enabled": false,
  "datareporting.policy.dataSubmissionEnabled": false,
  "toolkit.telemetry.reportingpolicy.firstRun": false,
  "app.update.disabledForTesting": true,
  "extensions.update.enabled": false,
};

/** The fixed paths of a run's work folder; a launch always uses the same profile path. */
export function benchPaths(root) {
  return {
    root,
    profile: path.join(root, "profile"),
    home: path.join(root, "home"),
    templateProfile: path.join(root, "template-profile"),
    templateHome: path.join(root, "template-home"),
    record: path.join(root, "record.json"),
    log: path.join(root, "firefox.log"),
  };
}

/**
 * A fresh copy of `from` at `to`, every time to the nanosecond. By `cp`, not fs.cpSync: Node sets
 * a copy's times through a double of seconds, which moved about half the files' mtimes to
 * another millisecond; Firefox keeps each add-on's .xpi mtime in ms and took such a copy for a
 * changed file, starting its add-ons as ADDON_UPGRADE at every launch from the template (found
 * by the A/B arms' startup reason, issue 40 #8).
 */
export function copyTree(from, to, { exec = spawnSync } = {}) {
  fs.rmSync(to, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(to), { recursive: true });
  const result = exec("cp", ["-rT", "--no-dereference", "--preserve=mode,timestamps", from, to], { encoding: "utf8" });
  if (result.status !== 0) {
    throw new Error(`copying ${from} to ${to} failed: cp: ${result.error?.message ?? result.stderr.trim()}`);
  }
}

/**
 * What in `to` stands in the way of `from`'s copy over it: entries `from` does not have, entries
 * of another kind (a folder for a file), and every symlink (GNU cp would not replace one). Paths,
 * deepest first. `fsApi` is a parameter for tests. Pure apart from reading the two trees.
 */
export function strayEntries(from, to, { fsApi = fs } = {}) {
  const out = [];
  const walk = (rel) => {
    const dst = path.join(to, rel);
    for (const entry of fsApi.readdirSync(dst, { withFileTypes: true })) {
      const name = path.join(rel, entry.name);
      const src = fsApi.lstatSync(path.join(from, name), { throwIfNoEntry: false });
      const same = src && ((src.isDirectory() && entry.isDirectory()) || (src.isFile() && entry.isFile()));
      if (!same) {
        out.push(path.join(to, name));
      } else if (entry.isDirectory()) {
        walk(name);
      }
    }
  };
  if (fsApi.existsSync(to)) walk("");
  return out.reverse();
}

/**
 * Makes `to` hold exactly `from`'s files, bytes, modes and times (to the nanosecond), rewriting
 * every file both hold in place, so it keeps its inode: what `to` has and `from` has not goes,
 * then GNU cp copies over the rest (`cp -rT --preserve=mode,timestamps`: an existing file is
 * opened and overwritten, not replaced). A file of the profile a launch restores this way is, for
 * a trace of an earlier launch, the same file (inode, size, modification time) unless Firefox
 * replaced it (a new inode: the session store, the script cache, prefs.js at every quit), as for
 * a user whose profile sat unchanged between a traced start and the next: the launch prefetch's
 * profile part (learn/plan/profile.rs) reads what a real prefetch would. `exec` is a parameter
 * for tests.
 */
export function restoreTree(from, to, { exec = spawnSync, fsApi = fs } = {}) {
  for (const stray of strayEntries(from, to, { fsApi })) {
    fsApi.rmSync(stray, { recursive: true, force: true });
  }
  const result = exec("cp", ["-rT", "--no-dereference", "--preserve=mode,timestamps", from, to], { encoding: "utf8" });
  if (result.status !== 0) {
    throw new Error(`restoring ${to} from ${from} failed: cp: ${result.error?.message ?? result.stderr.trim()}`);
  }
}

/**
 * Restores the profile from its template in place (restoreTree) and replaces HOME with a fresh
 * copy of its template, then `sync`s so the copy's writeback does not land in the measured start.
 */
export function freshProfile(paths) {
  restoreTree(paths.templateProfile, paths.profile);
  copyTree(paths.templateHome, paths.home);
  spawnSync("sync");
}

/** Ends every process left under the launch's HOME (content processes, the host). */
export async function killLeftovers(home) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const left = processesWithHome(home);
    if (left.length === 0) {
      return;
    }
    for (const pid of left) {
      signal(pid, attempt < 10 ? "SIGTERM" : "SIGKILL");
    }
    await sleep(100);
  }
}

/** The last `lines` lines of a log file, indented, or why there are none. */
export function logTail(file, lines = 20) {
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    return `  (unreadable: ${error.code ?? error.message})`;
  }
  const tail = text.trimEnd().split("\n").slice(-lines);
  return tail.length === 1 && tail[0] === "" ? "  (empty)" : tail.map((l) => `  ${l}`).join("\n");
}

function exited(child) {
  return child.exitCode !== null || child.signalCode !== null;
}

async function waitExit(child, ms) {
  const deadline = Date.now() + ms;
  while (!exited(child) && Date.now() < deadline) {
    await sleep(50);
  }
  return exited(child);
}

/**
 * The command line of a launch: Firefox itself, or a `launcher` that takes Firefox's arguments
 * after it (`about-startup-host launch --prefetch --firefox BINARY --`, which becomes Firefox:
 * the pid is Firefox's either way). Pure.
 */
export function launchArgv(binary, paths, launcher = null) {
  const args = ["-profile", paths.profile, "-no-remote", "--headless"];
  return launcher ? [...launcher, ...args] : [binary, ...args];
}

/**
 * One launch. `wrap(argv)` puts it in the slow-disk cgroup (or leaves it). Resolves with
 * {record, quit: "clean" | "sigterm" | "sigkill", exitCode}; rejects when Firefox exits without
 * a record or none comes within `timeoutMs` (the log file is named in the error).
 */
export async function launchFirefox({ binary, paths, wrap = (argv) => argv, timeoutMs = 180000, quitTimeoutMs = 30000, extraEnv = {}, onSpawn = null, launcher = null }) {
  fs.rmSync(paths.record, { force: true });
  const log = fs.openSync(paths.log, "w");
  const argv = wrap(launchArgv(binary, paths, launcher));
  const env = {
    ...process.env,
    HOME: paths.home,
    ABOUT_STARTUP_BENCH_OUT: paths.record,
    MOZ_CRASHREPORTER_DISABLE: "1",
    ...extraEnv,
  };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  // Under `sudo npm run bench` these name the invoking user; the launches are root's own (the
  // host would refuse to prefetch for someone else).
  delete env.SUDO_UID;
  delete env.PKEXEC_UID;
  const child = spawn(argv[0], argv.slice(1), { env, stdio: ["ignore", log, log] });
  fs.closeSync(log);
  // e.g. the traced scenario's tracer, attached to this pid; finish() ends it once the record is in.
  const attached = onSpawn ? onSpawn(child.pid) : null;
  // The run's folder (and this log in it) is removed when the benchmark exits: the error carries
  // the log's last lines, so a start that gave no record says why after the run is gone.
  const failure = (what) => new Error(`${what} (Firefox's output: ${paths.log}; its last lines:\n${logTail(paths.log)})`);
  try {
    const deadline = Date.now() + timeoutMs;
    while (!fs.existsSync(paths.record)) {
      if (exited(child)) {
        throw failure(`Firefox exited (${child.exitCode ?? child.signalCode}) before the extension handed over its record`);
      }
      if (Date.now() > deadline) {
        throw failure(`no record within ${timeoutMs / 1000} s: is the extension loaded and the host registered?`);
      }
      await sleep(25);
    }
    const record = JSON.parse(fs.readFileSync(paths.record, "utf8"));
    const traced = attached ? await attached.finish() : null;
    let quit = "clean";
    if (!(await waitExit(child, quitTimeoutMs))) {
      quit = "sigterm";
      signal(child.pid, "SIGTERM");
      if (!(await waitExit(child, 5000))) {
        quit = "sigkill";
        signal(child.pid, "SIGKILL");
        await waitExit(child, 5000);
      }
    }
    return { record, quit, exitCode: child.exitCode, traced, pid: child.pid };
  } finally {
    await attached?.finish();
    if (!exited(child)) {
      signal(child.pid, "SIGKILL");
      await waitExit(child, 5000);
    }
    await killLeftovers(paths.home);
  }
}

/**
 * The pref by which Firefox knows it has scanned the profile's add-on folders with this build.
 * A start of a profile Firefox has run before does not look into `<profile>/extensions/` for new
 * files (`extensions.startupScanScopes` 0 by default); it scans every folder only when this pref
 * is missing or names another build, as after an update (XPIProvider.sys.mjs, ESR 153). The
 * sideloaded add-on is then found later, at idle, and starts only at the next start: the
 * template's first start of a realistic profile never handed over its record.
 */
export const LAST_BUILD_PREF = "extensions.lastAppBuildId";

/**
 * Lets the next start of an existing `profile` find the add-on sideloaded into it: drops
 * LAST_BUILD_PREF from its prefs.js, so Firefox scans its add-on folders once and writes the pref
 * back. A profile without prefs.js (a new one) is scanned anyway.
 */
export function rescanAddonsOnce(profile) {
  const file = path.join(profile, "prefs.js");
  if (fs.existsSync(file)) {
    fs.writeFileSync(file, withoutPrefs(fs.readFileSync(file, "utf8"), [LAST_BUILD_PREF]));
  }
}

/**
 * `extraXpis`: [{id, bytes}] sideloaded beside the extension (the A/B mode's costly add-on);
 * `extraPrefs`: more prefs for user.js (the A/B mode's AB_PREFS).
 * Makes the run's templates: the HOME with the host registered (`about-startup-host install`),
 * and a profile with the .xpi and user.js that has been started once (profile creation, add-on
 * install, startup cache) and quit cleanly. `baseProfile`: a profile folder to start from (a
 * realistic profile from scripts/profile/make.mjs, copied, never changed); null: a new one.
 * Returns that first start's record, which proves the extension loads in full mode and reaches
 * the host.
 */
export async function prepareTemplates({ paths, binary, xpi, hostBinary, timeoutMs, baseProfile = null, extraXpis = [], extraPrefs = {} }) {
  if (baseProfile) {
    copyTree(baseProfile, paths.profile);
    rescanAddonsOnce(paths.profile);
  }
  fs.mkdirSync(path.join(paths.profile, "extensions"), { recursive: true });
  fs.mkdirSync(paths.home, { recursive: true });
  fs.copyFileSync(xpi, path.join(paths.profile, "extensions", `${EXTENSION_ID}.xpi`));
  // Other add-ons the run puts in every launch's profile (the A/B mode's costly add-on: ab.mjs).
  for (const extra of extraXpis) {
    fs.writeFileSync(path.join(paths.profile, "extensions", `${extra.id}.xpi`), extra.bytes);
  }
  fs.writeFileSync(path.join(paths.profile, "user.js"), userJs({ ...BENCH_PREFS, ...extraPrefs }));
  const installed = spawnSync(hostBinary, ["install", "--extension-id", EXTENSION_ID], {
    env: { ...process.env, HOME: paths.home },
    encoding: "utf8",
  });
  if (installed.status !== 0) {
    throw new Error(`about-startup-host install failed: ${installed.stderr}`);
  }
  const first = await launchFirefox({ binary, paths, timeoutMs });
  if (first.quit !== "clean") {
    throw new Error(`the template profile's first start did not quit cleanly (${first.quit}); see ${paths.log}`);
  }
  copyTree(paths.profile, paths.templateProfile);
  copyTree(paths.home, paths.templateHome);
  return first.record;
}
