// Records real replies of the built host into tests/fixtures/host/, for the unit tests' fakes:
// fakes made from what the host really sends, not from what the code expects (issue 19: the
// popup's unit test faked `exact_pages` as the total, the meaning the popup wrongly assumed, so
// test and bug agreed). Run it again after changing the host's replies; the e2e tests
// (tests/e2e/test.consistency.js, test.desktop.js) fail when the live replies no longer have the
// recorded shape.
//
//   cargo build --release --manifest-path native-host/Cargo.toml
//   flock /work/e2e.lock node scripts/record-host-replies.mjs [--only GROUPS]     (as root)
//
// What it does, on a private copy of the install folder (never the system's own, which other
// programs use): copies it under /var/tmp, syncs it, evicts it with the host, starts a headless
// Firefox from it (a cold start: the files end up cached in part, as after a real start) and,
// with that Firefox still running (so its mapped pages are in the replies), records
// - residency-exact.json: `residency --json` as root, Firefox running as root (every file exact);
// - residency-hidden.json: the same as the user nobody (65534), Firefox running as nobody, on
//   the same root-owned copy (every file hidden: the kernel's rule for files one neither owns nor
//   may write; the pages Firefox mapped stand in as the lower bound);
// - learn-*.json, plan-status-*.json, preload-plan-*.json (exact as root, hidden as nobody):
//   `learn --pid` of that Firefox, then `plan --json` and `preload --plan --idle --json`;
// - hello-root.json, hello-user.json: `hello` over native messaging (framed, as Firefox sends it)
//   as root and as nobody, started by hand, so without a parent Firefox;
// - the desktop launch through the prefetch, as root, with a system entry for the copy in a
//   folder of its own (XDG_DATA_DIRS): a traced cold start (`launch --cold --trace`, then
//   `learn --pid` of it), then
//   desktop-off.json (`desktop status --json`: the traced plan a launch would read),
//   desktop-on.json (after `desktop enable` and one launch through the entry's Exec, evicted
//   first: its `last`), last-prefetch.json (the file that launch wrote in the state folder),
//   desktop-stale.json (the copy's application.ini given another BuildID: a Firefox update as
//   the host sees it) and desktop-no-system-entry.json (no entry for this Firefox anywhere).
// Needs root (to evict for sure, to trace and to switch to nobody) and setpriv (util-linux).
// - plan-status-set-aside.json, desktop-set-aside.json, relaunch-status-set-aside.json: what the
//   host says of a damaged state file (issue 30 #10): as root, in a state folder whose
//   working-set.json, last-prefetch.json and relaunch.json are cut short, `plan --json`,
//   `desktop status --json` and `relaunch_status` over native messaging, each setting its file
//   aside (`<name>.corrupt.<ms>`) and saying so in `note_codes`.
// - desktop-host-gone.json: `desktop status --json` (as root, the copy's system entry) after the
//   entry was written by a copy of the host that was then removed, as `apt remove about-startup`
//   removes the package's host and leaves users' entries (issue 29 #5).
// - last-prefetch-profile.json: the launch prefetch with the user's profile in its plan (issue
//   31): as root, a profile made by one start of the copy, a traced cold start of it
//   (`launch --cold --trace`, the profile evicted too), then, evicted again, `launch --prefetch`
//   of the same profile: its last-prefetch.json, whose `profile` says what of the profile the
//   plan held, read and skipped.
//   --only residency,hello,desktop,set-aside,desktop-host-gone,profile-prefetch   records only those groups (default: all)
import { spawn, spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { evictProfile } from "./bench/profile-cold.mjs";
import { stageInstallCopy } from "./lib/install-copy.mjs";
import { EXTENSION_ID, HOST_BINARY, ROOT } from "./lib/project.mjs";
import { NOBODY, asUser as userArgv } from "./lib/users.mjs";
import { homeStateDir } from "./lib/state-layout.mjs";

export const FIXTURES = path.join(ROOT, "tests", "fixtures", "host");

/** One native-messaging frame: native-endian u32 length, then UTF-8 JSON. */
export function frame(message) {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  const head = Buffer.alloc(4);
  head.writeUInt32LE(body.length);
  return Buffer.concat([head, body]);
}

/** The JSON messages of a stream of frames. */
export function unframe(bytes) {
  const out = [];
  let at = 0;
  while (at + 4 <= bytes.length) {
    const length = bytes.readUInt32LE(at);
    out.push(JSON.parse(bytes.subarray(at + 4, at + 4 + length).toString("utf8")));
    at += 4 + length;
  }
  return out;
}

function asUser(args, { user, env }) {
  return user === "root" ? args : userArgv(NOBODY, args, { env });
}

function runHost(host, args, { user, env, input = null }) {
  const argv = asUser([host, ...args], { user, env });
  const result = spawnSync(argv[0], argv.slice(1), { input, maxBuffer: 256 * 1024 * 1024, env: user === "root" ? { ...process.env, ...env } : undefined });
  if (result.status !== 0) {
    throw new Error(`${argv.join(" ")} exited with ${result.status}: ${result.stderr}`);
  }
  return result.stdout;
}

/**
 * A headless Firefox from `binary` as `user` with a fresh profile under `stage`, left to start
 * for 8 s (its start reads what it needs); stop() ends it and what it started.
 */
async function startFirefox(binary, { user, stage, env }) {
  const profile = fs.mkdtempSync(path.join(stage, "profile-"));
  if (user !== "root") {
    fs.chownSync(profile, NOBODY, NOBODY);
  }
  const argv = asUser([binary, "-headless", "-no-remote", "-profile", profile, "about:blank"], { user, env });
  const child = spawn(argv[0], argv.slice(1), {
    stdio: "ignore",
    detached: true,
    env: user === "root" ? { ...process.env, ...env } : undefined,
  });
  await sleep(8000);
  if (child.exitCode !== null) {
    throw new Error(`Firefox (${binary}) as ${user} exited with ${child.exitCode} before the recording`);
  }
  return {
    pid: child.pid,
    async stop() {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
      for (let i = 0; i < 50 && child.exitCode === null && child.signalCode === null; i++) {
        await sleep(100);
      }
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // gone
      }
    },
  };
}

/**
 * Starts `argv` (a launch through `launch --prefetch`, which becomes Firefox) in its own group
 * with `env` added, waits up to 120 s for the prefetcher's record of that pid in `file`, then
 * ends the group. Returns {pid, last}: the record last read (another pid's, or null, on time-out).
 */
async function prefetchedLaunch(argv, env, file) {
  const firefox = spawn(argv[0], argv.slice(1), { env: { ...process.env, ...env }, stdio: "ignore", detached: true });
  let last = null;
  try {
    for (let i = 0; i < 1200 && last?.firefox_pid !== firefox.pid; i++) {
      await sleep(100);
      try {
        last = JSON.parse(fs.readFileSync(file, "utf8"));
      } catch {
        // not written yet
      }
    }
  } finally {
    await stopGroup(firefox.pid);
  }
  return { pid: firefox.pid, last };
}

/** The groups of fixtures, in the order they are recorded. */
export const GROUPS = ["residency", "hello", "desktop", "set-aside", "desktop-host-gone", "profile-prefetch"];

/** `--only a,b` → the groups to record; every group without it. Pure. */
export function chosenGroups(argv) {
  const at = argv.indexOf("--only");
  if (at === -1) {
    return GROUPS;
  }
  const names = (argv[at + 1] ?? "").split(",").filter(Boolean);
  const unknown = names.filter((n) => !GROUPS.includes(n));
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(`--only takes some of ${GROUPS.join(",")}${unknown.length ? ` (not ${unknown.join(", ")})` : ""}`);
  }
  return GROUPS.filter((g) => names.includes(g));
}

/** Ends a process group left running (a Firefox the host started or became), SIGKILL after 5 s. */
async function stopGroup(pgid) {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  try {
    process.kill(-pgid, "SIGTERM");
  } catch {
    return;
  }
  for (let i = 0; i < 50 && alive(); i++) {
    await sleep(100);
  }
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // gone
  }
}

/** Runs the host as root in a process group of its own; resolves with {pid, stdout} once it exits. */
function runDetached(argv, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve({ pid: child.pid, stdout: out }) : reject(new Error(`${argv.join(" ")} exited with ${code}: ${err}`))));
  });
}

/**
 * The desktop launch through the prefetch, as root on the copy (see the header): a traced cold
 * start for the plan, the entry turned on, one launch through it, and the replies around it.
 */
async function recordDesktop({ host, copy, stage, env, recorded }) {
  const apps = path.join(stage, "share", "applications");
  fs.mkdirSync(apps, { recursive: true });
  // Debian 12's firefox-esr.desktop, cut down, its Exec pointed at the copy.
  fs.writeFileSync(
    path.join(apps, "firefox-esr.desktop"),
    `[Desktop Entry]\nName=Firefox ESR\nGenericName=Web Browser\nExec=${copy.binary} %u\nTerminal=false\nType=Application\nIcon=firefox-esr\nCategories=Network;WebBrowser;\nMimeType=text/html;x-scheme-handler/http;x-scheme-handler/https;\nStartupWMClass=firefox-esr\n`,
  );
  const desktopEnv = { ...env, XDG_DATA_DIRS: path.join(stage, "share") };
  const profile = () => fs.mkdtempSync(path.join(stage, "profile-"));
  const firefoxArgs = () => ["--headless", "--no-remote", "-profile", profile(), "about:blank"];
  const desktop = (action, extra = desktopEnv) => JSON.parse(runHost(host, ["desktop", action, "--json", "--firefox", copy.dir], { user: "root", env: extra }).toString());
  const STATE = "as root, a copy of the install folder with a system entry for it";

  // The traced start is learned too (as the extension does after a start): both plans exist.
  const traced = await runDetached([host, "launch", "--cold", "--trace", "--json", "--firefox", copy.dir, "--", ...firefoxArgs()], desktopEnv);
  try {
    runHost(host, ["learn", "--pid", String(JSON.parse(traced.stdout).pid), "--json"], { user: "root", env });
  } finally {
    await stopGroup(traced.pid);
  }
  console.log(`traced and learned a cold start of ${copy.dir} (${JSON.parse(traced.stdout).traced_read_bytes} bytes read)`);
  write("desktop-off.json", recorded("root", "about-startup-host desktop status --json", `${STATE}, one traced cold start stored and learned, the entry off`), desktop("status"));
  desktop("enable");

  // One launch as the desktop would make it: the Exec line the host wrote, with Firefox's
  // arguments in place of %u; evicted first, so the prefetch has something to read.
  const entry = fs.readFileSync(path.join(env.HOME, ".local", "share", "applications", "firefox-esr.desktop"), "utf8");
  const exec = /^Exec=(.*) %u$/m.exec(entry)?.[1];
  if (!exec?.includes(" launch --prefetch ")) {
    throw new Error(`the entry the host wrote has no prefetch Exec: ${entry}`);
  }
  runHost(host, ["evict", "--firefox", copy.dir, "--json"], { user: "root", env });
  const argv = [...exec.split(" "), ...firefoxArgs()];
  const file = path.join(homeStateDir(env.HOME), "last-prefetch.json");
  const { pid, last } = await prefetchedLaunch(argv, desktopEnv, file);
  if (last?.firefox_pid !== pid) {
    throw new Error(`the launch through the entry (${argv.join(" ")}) wrote no ${file} for Firefox ${pid} in 120 s`);
  }
  write("last-prefetch.json", recorded("root", `${exec} --headless --no-remote -profile P about:blank (the entry's Exec), then ${file}`, `${STATE}, evicted, launched through the entry`), last);
  write("desktop-on.json", recorded("root", "about-startup-host desktop status --json", `${STATE}, the entry on, one launch through it`), desktop("status"));

  // A Firefox update as the host sees it: another BuildID in application.ini.
  const ini = path.join(copy.dir, "application.ini");
  const text = fs.readFileSync(ini, "utf8");
  fs.writeFileSync(ini, text.replace(/^BuildID=\d+$/m, "BuildID=20261201120000"));
  try {
    write("desktop-stale.json", recorded("root", "about-startup-host desktop status --json", `${STATE}, the entry on, then its application.ini given BuildID=20261201120000 (an update)`), desktop("status"));
  } finally {
    fs.writeFileSync(ini, text);
  }
  desktop("disable");
  const empty = path.join(stage, "no-share");
  fs.mkdirSync(empty);
  write("desktop-no-system-entry.json", recorded("root", "about-startup-host desktop status --json", `${STATE.replace("with a system entry for it", "and no desktop entry for it")}, the entry off`), desktop("status", { ...env, XDG_DATA_DIRS: empty }));
}

function write(name, recorded, reply) {
  const file = path.join(FIXTURES, name);
  fs.writeFileSync(file, `${JSON.stringify({ recorded, reply }, null, 1)}\n`);
  console.log(`wrote ${path.relative(ROOT, file)} (${fs.statSync(file).size} bytes)`);
}

async function main(argv) {
  const groups = chosenGroups(argv);
  if (process.getuid?.() !== 0) {
    throw new Error("run as root: it evicts a copy of Firefox and runs the host as nobody too");
  }
  if (!fs.existsSync(HOST_BINARY)) {
    throw new Error(`${HOST_BINARY} is missing: cargo build --release --manifest-path native-host/Cargo.toml`);
  }
  const copy = stageInstallCopy();
  if (!copy.binary) {
    throw new Error(copy.reason);
  }
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-record-"));
  try {
    fs.chmodSync(stage, 0o755);
    // nobody cannot reach a checkout under /root (0700): the host runs from a copy beside it.
    const host = path.join(stage, "about-startup-host");
    fs.copyFileSync(HOST_BINARY, host);
    fs.chmodSync(host, 0o755);
    const home = path.join(stage, "home");
    fs.mkdirSync(home);
    fs.chownSync(home, NOBODY, NOBODY);
    const env = { HOME: home, PATH: "/usr/bin:/bin" };
    // Firefox as root refuses a HOME another user owns ("running as root in a regular user's
    // session"): root gets its own.
    const rootHome = path.join(stage, "root-home");
    fs.mkdirSync(rootHome);
    const envOf = (user) => (user === "root" ? { ...env, HOME: rootHome } : env);
    const version = runHost(host, ["--version"], { user: "root", env }).toString().trim();
    const at = new Date().toISOString();
    const recorded = (as, command, state = undefined) => ({
      by: "scripts/record-host-replies.mjs",
      at,
      host: version,
      kernel: os.release(),
      as,
      command,
      state,
    });
    const STATE = (user) =>
      `a copy of the install folder, evicted, then a headless Firefox started from it as ${user} (its first start after the evict for the exact reply), still running`;

    fs.mkdirSync(FIXTURES, { recursive: true });
    if (groups.includes("residency")) {
      await recordResidency({ host, copy, stage, envOf, recorded, STATE });
    }
    if (groups.includes("hello")) {
      recordHello({ host, stage, env, recorded });
    }
    if (groups.includes("desktop")) {
      await recordDesktop({ host, copy, stage, env: envOf("root"), recorded });
    }
    if (groups.includes("set-aside")) {
      recordSetAside({ host, copy, stage, env, recorded });
    }
    if (groups.includes("desktop-host-gone")) {
      recordHostGone({ host, copy, stage, env: envOf("root"), recorded });
    }
    if (groups.includes("profile-prefetch")) {
      await recordProfilePrefetch({ host, copy, stage, env: envOf("root"), recorded });
    }
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
    copy.remove();
  }
}

/**
 * The entry of a host that is gone (the package removed): written by a copy of the host, the
 * copy removed, then `desktop status` of the host that remains.
 */
function recordHostGone({ host, copy, stage, env, recorded }) {
  const share = path.join(stage, "gone-share");
  const apps = path.join(share, "applications");
  fs.mkdirSync(apps, { recursive: true });
  fs.writeFileSync(
    path.join(apps, "firefox-esr.desktop"),
    `[Desktop Entry]\nName=Firefox ESR\nExec=${copy.binary} %u\nTerminal=false\nType=Application\nIcon=firefox-esr\nMimeType=text/html;\n`,
  );
  const here = { ...env, XDG_DATA_DIRS: share, XDG_STATE_HOME: path.join(stage, "gone-state") };
  const packaged = path.join(stage, "gone-lib", "about-startup-host");
  fs.mkdirSync(path.dirname(packaged), { recursive: true, mode: 0o755 });
  fs.copyFileSync(host, packaged);
  fs.chmodSync(packaged, 0o755);
  runHost(packaged, ["desktop", "enable", "--json", "--firefox", copy.dir], { user: "root", env: here });
  fs.rmSync(packaged);
  const status = ["desktop", "status", "--json", "--firefox", copy.dir];
  const state = "as root, a copy of the install folder with a system entry for it; the entry written by a copy of the host that was then removed (the package removed)";
  write("desktop-host-gone.json", recorded("root", `about-startup-host ${status.join(" ")}`, state), JSON.parse(runHost(host, status, { user: "root", env: here }).toString()));
}

/**
 * The launch prefetch of a profile that was there before its traced start (see the header): the
 * prefetcher's record for a launch of that same profile.
 */
async function recordProfilePrefetch({ host, copy, stage, env, recorded }) {
  const profile = fs.mkdtempSync(path.join(stage, "user-profile-"));
  const args = ["--headless", "--no-remote", "-profile", profile, "about:blank"];
  // One start makes the profile (its databases, prefs, startup cache), as a user's has them.
  const first = spawn(copy.binary, args, { env: { ...process.env, ...env }, stdio: "ignore", detached: true });
  await sleep(8000);
  await stopGroup(first.pid);
  // Both starts profile-cold too (as after a reboot): `launch --cold` evicts the install only,
  // and a profile just written is cached, so the trace would hold nothing of it to plan.
  spawnSync("sync");
  evictProfile([profile]);
  const traced = await runDetached([host, "launch", "--cold", "--trace", "--json", "--firefox", copy.dir, "--", ...args], env);
  // The host's group, Firefox in it (its pid leads no group): it holds the profile until gone.
  await stopGroup(traced.pid);
  spawnSync("sync");
  runHost(host, ["evict", "--firefox", copy.dir, "--json"], { user: "root", env });
  evictProfile([profile]);
  const launch = [host, "launch", "--prefetch", "--strategy", "beside", "--firefox", copy.dir, "--", ...args];
  const file = path.join(homeStateDir(env.HOME), "last-prefetch.json");
  const { pid, last } = await prefetchedLaunch(launch, env, file);
  if (last?.firefox_pid !== pid || !last.profile) {
    throw new Error(`launch --prefetch of ${profile} wrote no record with the profile in ${file} (${JSON.stringify(last)})`);
  }
  write(
    "last-prefetch-profile.json",
    recorded("root", "about-startup-host launch --prefetch --strategy beside --firefox COPY -- --headless --no-remote -profile P about:blank, then last-prefetch.json", "as root, a copy of the install folder; P made by one start of it and traced on a cold start (launch --cold --trace, P evicted too), then the copy and P evicted"),
    last,
  );
}

/** residency, learn, plan and the planned preload, exact as root and hidden as nobody. */
async function recordResidency({ host, copy, stage, envOf, recorded, STATE }) {
  spawnSync("sync", ["-f", copy.dir]);
  runHost(host, ["evict", "--firefox", copy.dir, "--json"], { user: "root", env: envOf("root") });
  const residency = ["residency", "--firefox", copy.dir, "--json"];
  for (const [user, name] of [
    ["root", "residency-exact.json"],
    ["nobody", "residency-hidden.json"],
  ]) {
    const firefox = await startFirefox(copy.binary, { user, stage, env: envOf(user) });
    try {
      const reply = JSON.parse(runHost(host, residency, { user, env: envOf(user) }).toString());
      if (!reply.files.some((f) => f.mapped)) {
        throw new Error(`the host as ${user} saw no pages mapped by the Firefox it runs: is another Firefox of ${user} running?`);
      }
      write(name, recorded(user, `about-startup-host ${residency.join(" ")}`, STATE(user)), reply);
      // What the extension asks after a start: learn it, then the plan's status; and the
      // planned preload the page's button runs, on the cache that start left.
      const kind = user === "root" ? "exact" : "hidden";
      for (const [args, fixture] of [
        [["learn", "--pid", String(firefox.pid), "--json"], `learn-${kind}.json`],
        [["plan", "--firefox", copy.dir, "--json"], `plan-status-${kind}.json`],
        [["preload", "--plan", "--idle", "--firefox", copy.dir, "--json"], `preload-plan-${kind}.json`],
      ]) {
        const out = JSON.parse(runHost(host, args, { user, env: envOf(user) }).toString());
        write(fixture, recorded(user, `about-startup-host ${args.join(" ")}`, STATE(user)), out);
      }
    } finally {
      await firefox.stop();
    }
  }
}

/** Damaged state files, set aside and said: the replies of the three readers that report them. */
function recordSetAside({ host, copy, stage, env, recorded }) {
  const home = path.join(stage, "damaged-home");
  const state = homeStateDir(home);
  fs.mkdirSync(state, { recursive: true, mode: 0o700 });
  const here = { ...env, HOME: home };
  const damage = (name) => fs.writeFileSync(path.join(state, name), '{"version": 1, "cut sh', { mode: 0o600 });
  const STATE = (name) => `as root, a state folder whose ${name} is cut short ({"version": 1, "cut sh)`;
  damage("working-set.json");
  const plan = ["plan", "--firefox", copy.dir, "--json"];
  write("plan-status-set-aside.json", recorded("root", `about-startup-host ${plan.join(" ")}`, STATE("working-set.json")), JSON.parse(runHost(host, plan, { user: "root", env: here }).toString()));
  damage("last-prefetch.json");
  const desktop = ["desktop", "status", "--firefox", copy.dir, "--json"];
  write("desktop-set-aside.json", recorded("root", `about-startup-host ${desktop.join(" ")}`, STATE("last-prefetch.json")), JSON.parse(runHost(host, desktop, { user: "root", env: here }).toString()));
  damage("relaunch.json");
  const out = runHost(host, [path.join(stage, "about_startup.json"), EXTENSION_ID], { user: "root", env: here, input: frame({ id: 1, command: "relaunch_status" }) });
  write("relaunch-status-set-aside.json", recorded("root", 'native messaging: {"id": 1, "command": "relaunch_status"}', STATE("relaunch.json")), unframe(out)[0]);
  const aside = fs.readdirSync(state).filter((n) => n.includes(".corrupt."));
  if (aside.length !== 3) {
    throw new Error(`expected the three damaged files set aside, found ${aside.join(", ")}`);
  }
}

/** hello as root and as nobody. */
function recordHello({ host, stage, env, recorded }) {
  // hello as Firefox sends it: `host <manifest> <extension id>`, one frame in, one frame out.
  for (const [user, name] of [
    ["root", "hello-root.json"],
    ["nobody", "hello-user.json"],
  ]) {
    const out = runHost(host, [path.join(stage, "about_startup.json"), EXTENSION_ID], {
      user,
      env,
      input: frame({ id: 1, command: "hello" }),
    });
    const [reply] = unframe(out);
    write(name, recorded(user, 'native messaging: {"id": 1, "command": "hello"} (no parent Firefox)'), reply);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(`record-host-replies: ${error.message}`);
    process.exit(1);
  });
}
