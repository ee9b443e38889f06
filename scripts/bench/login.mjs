// The benchmark's login scenarios (issue 12): what a login with the login-time preload does, and
// what it costs the user who is logging in.
//   login           evict Firefox's files, drop the workload's files from the cache, then at once
//                   start the exact command of the installed autostart entry (read back from the
//                   unit or .desktop file that `about-startup-host autostart enable` wrote) and
//                   the "user at login" workload (reading a file set, inside the same throttle:
//                   one emulated disk); wait --login-delay from the start, then launch Firefox.
//   login-no-preload  the same login without the preload: the workload alone, then the launch
//                   (a cold start). Its workload time is the baseline of the 10% bar.
// The goals are the issue's: the launch after `login` within 1.1× of hot, and the workload no more
// than 10% slower with the preload running than without.
// Everything that touches the system is a parameter (spawn, exec, now, sleep) so tests pass fakes.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";

export const LOGIN_SCENARIOS = ["login", "login-no-preload"];
export const DEFAULT_LOGIN_DELAY_S = 30;
export const DEFAULT_WORKLOAD_MIB = 128;

/**
 * The command line of an Exec= (desktop entry) or ExecStart= (systemd unit) line as argv. The
 * host writes the binary in double quotes and plain words after it (autostart::render refuses
 * paths that either format would interpret), so this reads exactly that shape and refuses
 * anything else rather than guessing at two quoting rules. Pure.
 */
export function parseExec(value) {
  const m = /^"([^"\\`$%]+)"((?: +[A-Za-z0-9_./=-]+)*) *$/.exec(value.trim());
  if (!m) {
    throw new Error(`cannot read the autostart command ${JSON.stringify(value)}: expected "BINARY" ARGS…`);
  }
  return [m[1], ...m[2].split(" ").filter(Boolean)];
}

/** The command of an autostart file's text: ExecStart= of a unit, Exec= of a desktop entry. Pure. */
export function autostartCommand(text) {
  const line = /^(?:ExecStart|Exec)=(.*)$/m.exec(text);
  if (!line) {
    throw new Error("the autostart file has no Exec= or ExecStart= line");
  }
  return parseExec(line[1]);
}

/**
 * Installs the autostart entry in a throwaway config folder with the product's own command and
 * returns the command it runs. The environment has no user-session bus, so `systemctl --user`
 * cannot reach (and enable a unit in) the real user's session: the host writes the XDG entry.
 */
export function installedAutostart({ hostBinary, configHome, stateHome, exec = spawnSync }) {
  const env = { ...process.env, XDG_CONFIG_HOME: configHome, XDG_STATE_HOME: stateHome };
  delete env.DBUS_SESSION_BUS_ADDRESS;
  delete env.XDG_RUNTIME_DIR;
  const result = exec(hostBinary, ["autostart", "enable", "--json"], { encoding: "utf8", env });
  if (result.status !== 0) {
    throw new Error(`about-startup-host autostart enable failed (${result.status}): ${result.stderr}`);
  }
  const { file } = JSON.parse(result.stdout);
  if (typeof file !== "string" || !file.startsWith(`${configHome}${path.sep}`)) {
    throw new Error(`autostart enable wrote ${file}, outside the benchmark's ${configHome}`);
  }
  return { file, argv: autostartCommand(fs.readFileSync(file, "utf8")) };
}

/** Makes the workload's file set once (`mib` MiB in 8 MiB files) and returns the paths. */
export function workloadFiles(dir, mib = DEFAULT_WORKLOAD_MIB) {
  fs.mkdirSync(dir, { recursive: true });
  const chunk = Buffer.alloc(8 << 20);
  const files = [];
  for (let i = 0; i < Math.ceil(mib / 8); i++) {
    const file = path.join(dir, `workload-${String(i).padStart(3, "0")}.bin`);
    if (!fs.existsSync(file) || fs.statSync(file).size !== chunk.length) {
      // Not zeros: some file systems keep zero pages sparse, which would read nothing from disk.
      for (let o = 0; o < chunk.length; o += 4096) chunk.writeUInt32LE((i << 20) ^ o, o);
      fs.writeFileSync(file, chunk);
    }
    files.push(file);
  }
  spawnSync("sync");
  return files;
}

/**
 * Drops `files` from the page cache: GNU dd's documented idiom (oflag=nocache with count=0
 * advises DONTNEED for the whole file after syncing it).
 */
export function dropFromCache(files, { exec = spawnSync } = {}) {
  for (const file of files) {
    const r = exec("dd", [`of=${file}`, "if=/dev/null", "oflag=nocache", "conv=notrunc,fdatasync", "count=0", "status=none"], { encoding: "utf8" });
    if (r.status !== 0) {
      throw new Error(`dd could not drop ${file} from the page cache: ${r.stderr}`);
    }
  }
}

function finished(child) {
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
}

/**
 * Prepares one login scenario: starts the preload (for `login`) and the workload together,
 * wraps both in the throttle, waits until `delayMs` after the start, and returns the figures;
 * `settle` resolves once the preload is over (the benchmark waits for it after the launch, so it
 * never spills into the next scenario) with the preload's duration from the login (null without
 * one). Returns {workloadMs, loginPreloadDone, loginDelayMs, settle}.
 */
export async function prepareLogin(scenario, { autostartArgv, files, delayMs, wrap = (a) => a, env = process.env, spawnImpl = spawn, now = () => performance.now(), sleep = delay }) {
  const started = now();
  let preload = null;
  let loginPreloadMs = null;
  if (scenario === "login") {
    const argv = wrap(autostartArgv);
    const child = spawnImpl(argv[0], argv.slice(1), { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr?.on("data", (d) => (stderr += d));
    preload = finished(child).then(({ code, signal }) => {
      loginPreloadMs = now() - started;
      if (code !== 0) {
        throw new Error(`the autostart command ${autostartArgv.join(" ")} failed (${code ?? signal}): ${stderr.trim()}`);
      }
      return loginPreloadMs;
    });
    // Reported when the benchmark awaits `settle`; until then a failure must not go unhandled.
    preload.catch(() => {});
  } else if (scenario !== "login-no-preload") {
    throw new Error(`not a login scenario: ${scenario}`);
  }
  const argv = wrap(["cat", ...files]);
  const workload = spawnImpl(argv[0], argv.slice(1), { stdio: ["ignore", "ignore", "inherit"] });
  const { code } = await finished(workload);
  if (code !== 0) {
    throw new Error(`the login workload (cat of ${files.length} files) failed (${code})`);
  }
  const workloadMs = now() - started;
  if (workloadMs < delayMs) {
    await sleep(delayMs - workloadMs);
  }
  // Whether the preload was over when the user launched Firefox (a race a real login has too).
  const loginPreloadDone = preload === null ? null : loginPreloadMs !== null;
  return { workloadMs, loginPreloadDone, loginDelayMs: delayMs, settle: preload ?? Promise.resolve(null) };
}
