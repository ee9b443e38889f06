// Records real replies of the built host into tests/fixtures/host/, for the unit tests' fakes:
// fakes made from what the host really sends, not from what the code expects (issue 19: the
// popup's unit test faked `exact_pages` as the total, the meaning the popup wrongly assumed, so
// test and bug agreed). Run it again after changing the host's replies; the consistency e2e
// (tests/e2e/test.consistency.js) fails when the live replies no longer have the recorded shape.
//
//   cargo build --release --manifest-path native-host/Cargo.toml
//   flock /work/e2e.lock node scripts/record-host-replies.mjs     (as root)
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
//   as root and as nobody, started by hand, so without a parent Firefox.
// Needs root (to evict for sure and to switch to nobody) and setpriv (util-linux).
import { spawn, spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { stageInstallCopy } from "./lib/install-copy.mjs";
import { EXTENSION_ID, HOST_BINARY, ROOT } from "./lib/project.mjs";

export const FIXTURES = path.join(ROOT, "tests", "fixtures", "host");
const NOBODY = 65534;

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
  return user === "root" ? args : ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "env", "-i", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...args];
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

function write(name, recorded, reply) {
  const file = path.join(FIXTURES, name);
  fs.writeFileSync(file, `${JSON.stringify({ recorded, reply }, null, 1)}\n`);
  console.log(`wrote ${path.relative(ROOT, file)} (${fs.statSync(file).size} bytes)`);
}

async function main() {
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

    spawnSync("sync", ["-f", copy.dir]);
    runHost(host, ["evict", "--firefox", copy.dir, "--json"], { user: "root", env });

    fs.mkdirSync(FIXTURES, { recursive: true });
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
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
    copy.remove();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(`record-host-replies: ${error.message}`);
    process.exit(1);
  });
}
