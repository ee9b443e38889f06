// Root does only what only root can (issue 29): the host under sudo, run as an ordinary user
// would run it, with every file operation of the whole process tree recorded by strace (run as
// root, so sudo still works under it) and read back (strace-log.js): no task running the host,
// or anything the host started, may open, create, rename, remove, link, chmod, chown or enter a
// file with root's credentials outside tracefs, /proc, sysfs and the loader's own libraries.
// Then the hostile cases, each planted as the user would plant it: an output path in a folder
// only root may write, a library path swapped for a FIFO or a link to a root-only file while the
// trace is finished, ~/.config/user-dirs.dirs as a FIFO or an endless file, a hard link planted
// as the state folder's lock, non-finite numbers, and argv other than the tracer's under pkexec.
// (pkexec's own runs, the page's "Restart cold and trace", are in test.restart-trace.js.)
//
// The user is one made for the run (privilege-helpers.js makeUser: nobody's home is
// /nonexistent, and sudo gives the host the passwd home), with a sudoers drop-in that lets it
// run a root-owned copy of the host, both removed afterwards. Needs root, sudo, strace and
// useradd (.ci/run installs sudo and strace); the library cases also a C compiler. Liveness
// bounds below are generous and named as such: a run past one has hung, it is not slow.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { artifactsFolder, defaultFirefox, privateInstall, waitFor } from "./harness.js";
import { allowSudo, analyseLog, credsOf, endProcesses, has, makeUser, processes, rootLooksAt, runTraced, stageHost } from "./privilege-helpers.js";
import { byArea, creds, describe as listOps } from "./strace-log.js";
import { homeStateDir } from "../../scripts/lib/state-layout.mjs";

/**
 * Liveness bounds (a run past one has hung). A traced launch with --firefox-profile ends by the
 * host's own bounds: a recording of at most 120 s (MAX_SECONDS, trace/record/spec.rs), then at
 * most 90 s + 5 s for Firefox's profile (WAIT, SETTLE, firefox/startup_profile.rs), then the
 * merge. So it is hung only once it has run past those, plus a minute for the merge: 150 s was
 * below the host's own bounds, and a start under strace on a loaded machine that was still
 * rightly waiting for Firefox's profile was called hung (under load, 1 of 2 rounds).
 */
const HUNG_MS = (120 + 90 + 5 + 60) * 1000;
const HUNG_FAKE_MS = 60000;
const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const skip =
  process.getuid?.() !== 0
    ? "needs root: it makes a user, a sudoers drop-in, and traces as root"
    : !has("sudo", ["-V"])
      ? "needs sudo (apt-get install sudo; .ci/run does)"
      : !has("strace", ["-V"])
        ? "needs strace (apt-get install strace; .ci/run does)"
        : !has("useradd", ["--help"])
          ? "needs useradd (passwd)"
          : false;
if (skip) {
  console.warn(`SKIPPED test.privilege.js: ${skip}`);
}
const noCc = !has("cc") && "needs a C compiler to build the planted library (apt-get install build-essential; .ci/run does)";

// The planted library: 12 MiB of code on each side of one function, so the page holding it is
// read by the fault that runs it (a fault site named by its symbol), not by the loader's reads
// or the faults at either end. The root-only copy differs only in the function's name.
const PLANT_C = `
__asm__(".pushsection .text.a_pad,\\"ax\\",@progbits\\n.skip 12582912, 0x90\\n.popsection");
__attribute__((noinline, section(".text.m_fn"))) int NAME(int x) { return x * 3 + 1; }
__asm__(".pushsection .text.z_pad,\\"ax\\",@progbits\\n.skip 12582912, 0x90\\n.popsection");
__attribute__((constructor)) static void plant_init(void) { volatile int r = NAME(2); (void)r; }
`;
const PLANT_NAME = "plantfn_0123456789ab";
const SECRET_NAME = "secretx_0123456789ab"; // same length: the same layout

// A "Firefox" the user names with --firefox (an install folder is any folder with an
// application.ini): it notes who ran it. `fifo`/`link`: it runs a program with the user's
// library, then swaps the library's path for a FIFO or a link to $2 once that program is gone.
// `dump`: it stays until SIGUSR2 and answers as Firefox's profiler does, with a
// profile_<n>_<pid>.json in ~/Downloads (a real Firefox would itself read the planted
// ~/.config/user-dirs.dirs to find that folder: block on the FIFO, fill memory from /dev/zero).
const FAKE_FIREFOX = `#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
echo "$(id -u) $*" >> "$here/ran"
case "$1" in
  fifo|link)
    LD_PRELOAD="$here/libplant.so" /bin/sleep 1
    mv "$here/libplant.so" "$here/libplant.orig"
    if [ "$1" = fifo ]; then mkfifo "$here/libplant.so"; else ln -s "$2" "$here/libplant.so"; fi
    sleep 1 ;;
  dump)
    dump() {
      sleep 1 # as Firefox gathers its processes' profiles first
      mkdir -p "$HOME/Downloads"
      printf '{"meta":{},"threads":[],"profileGatheringLog":{}}' > "$HOME/Downloads/profile_1_$$.json"
      done=1
    }
    trap dump USR2
    i=0
    while [ -z "$done" ] && [ $i -lt 60 ]; do sleep 1 & wait $!; i=$((i + 1)); done
    sleep 2 ;;
esac
`;

/** A folder of the user's with FAKE_FIREFOX in it (root-owned where `owner` is 0). */
function fakeFirefox(dir, owner) {
  fs.mkdirSync(dir, { mode: 0o755 });
  fs.writeFileSync(path.join(dir, "application.ini"), "[App]\nVendor=Mozilla\nName=Firefox\nVersion=153.0\nBuildID=20990101000000\n");
  fs.writeFileSync(path.join(dir, "firefox"), FAKE_FIREFOX, { mode: 0o755 });
  fs.writeFileSync(path.join(dir, "ran"), "", { mode: 0o666 });
  fs.chmodSync(path.join(dir, "ran"), 0o666);
  spawnSync("chown", ["-R", `${owner.uid}:${owner.gid}`, dir]);
  return dir;
}
const ran = (dir) => fs.readFileSync(path.join(dir, "ran"), "utf8");

describe("root does only what only root can: the host under sudo, as an ordinary user, traced with strace", { skip }, () => {
  const s = {};
  /** `argv` as the user (runuser: a login-like environment, HOME from passwd). */
  const asUser = (argv) => ["runuser", "-u", s.user.name, "--", ...argv];
  const userEnv = () => ({ PATH, LANG: "C.UTF-8" });
  const sudoHost = (...args) => asUser(["sudo", "-n", s.host, ...args]);
  /** What is left of a run: the user's processes and the host's. */
  const leftover = (p) => p.uid === s.user.uid || p.exe === s.host;
  const stateDir = () => homeStateDir(s.user.home);
  const plain = (argv, opts = {}) =>
    new Promise((resolve) => {
      const child = spawn(argv[0], argv.slice(1), { cwd: s.user.home, env: userEnv(), stdio: ["ignore", "pipe", "pipe"], ...opts });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      let hung = false;
      // Past the liveness bound: end the tree (sudo and the host hold the pipes, not only runuser).
      const timer = setTimeout(() => {
        hung = true;
        child.kill("SIGKILL");
        endProcesses(leftover);
      }, opts.limitMs ?? HUNG_MS);
      child.on("close", (code, sig) => {
        clearTimeout(timer);
        resolve({ status: code ?? sig, stdout, stderr, hung });
      });
    });

  before(() => {
    s.dir = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-priv-"));
    fs.chmodSync(s.dir, 0o755);
    s.host = stageHost(s.dir);
    s.user = makeUser(s.dir);
    s.sudo = allowSudo(`about-startup-e2e-${process.pid}`, s.user.name, [s.host]);
    // Folders only root may write in, that the user may name as an output.
    s.rootOnly = (name) => {
      const dir = path.join(s.dir, `root-only-${name}`);
      fs.mkdirSync(dir, { mode: 0o755 });
      return dir;
    };
    // The cold start's own install: a copy no other process maps (another user's Firefox of the
    // same install keeps its pages in the cache, and the "cold" start then reads a fraction of
    // what one reads), on disk (tmpfs pages cannot be evicted), written through to it (dirty
    // pages cannot be evicted either).
    s.coldCopy = privateInstall();
    s.logs = path.join(artifactsFolder(), "privilege");
    fs.mkdirSync(s.logs, { recursive: true });
  });

  after(async () => {
    await endProcesses(leftover);
    await s.user?.remove();
    s.sudo?.remove();
    if (s.dir) fs.rmSync(s.dir, { recursive: true, force: true });
    s.coldCopy?.remove?.();
  });

  /** The analysis of a run's log: roots = the command strace started (root, here). */
  function analysed(log, cwd) {
    const first = Number(/^(\d+)\s/.exec(fs.readFileSync(log, "utf8"))?.[1]);
    return analyseLog(log, { roots: [{ pid: first, creds: creds(0, 0, []), ours: false, cwd }], hostImages: [s.host] });
  }

  function assertRootDidOnlyRootsPart(result, what) {
    assert.deepEqual(result.unattributed, [], `every line of the log belongs to a task the log explains (${what})`);
    assert.ok(result.hostRuns.length > 0, `the host ran (${what})`);
    console.log(`${what}: root's file operations by area ${JSON.stringify(byArea(result.rootOps))}`);
    assert.equal(result.violations.length, 0, `${what}: root touched files outside tracefs, /proc, sysfs and the loader's libraries:\n${listOps(result.violations)}`);
  }

  /** Root looked at the process the user had it follow, and only once confined (Landlock). */
  function assertFollowedOnlyConfined(result, pid, what) {
    const { looks, unconfined } = rootLooksAt(result, pid);
    assert.ok(looks.length > 0, `${what}: root looked at the followed process ${pid} (its Follow)`);
    assert.deepEqual(unconfined, [], `${what}: root looked at process ${pid}, the one the user names, before it confined itself`);
  }

  describe("launch --cold --trace --firefox-profile under sudo", () => {
    const r = {};
    before(async () => {
      s.profile = path.join(s.user.home, "profile");
      spawnSync("runuser", ["-u", s.user.name, "--", "mkdir", s.profile]);
      r.outDir = s.rootOnly("profile-out");
      r.profileOut = path.join(r.outDir, "planted.profile.json");
      r.log = path.join(s.logs, "sudo-launch.strace");
      r.run = await runTraced(
        sudoHost("launch", "--cold", "--trace", "--json", "--firefox-profile", "--profile-out", r.profileOut, "--firefox", s.coldCopy.dir, "--", "--headless", "--no-remote", "-profile", s.profile),
        { log: r.log, cwd: s.user.home, env: userEnv(), limitMs: HUNG_MS },
      );
      r.stdout = r.run.stdout;
      r.stderr = r.run.stderr;
      // --json prints one JSON document: the trace, or the error of a later step (such as
      // writing --profile-out), the trace then stored (stderr says where) but not printed.
      r.docs = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
      const stored = /stored as (\S+): (.+)$/m.exec(r.stderr);
      r.error = r.docs[0]?.status === "error" ? r.docs[0] : null;
      r.trace = r.error ? (stored ? JSON.parse(fs.readFileSync(stored[2], "utf8")) : null) : (r.docs[0] ?? null);
      r.firefox = r.trace ? credsOf(r.trace.pid) : null;
      r.status = await r.run.stop(leftover);
      r.result = analysed(r.log, s.user.home);
    });

    it("ends with one JSON document on stdout: the trace, or the error that names --profile-out (the trace stored)", () => {
      assert.equal(r.run.timedOut, false, `still running after ${HUNG_MS} ms: ${r.stderr}`);
      assert.equal(r.docs.length, 1, `one JSON document on stdout: ${r.stdout.slice(0, 300)}`);
      assert.ok(r.trace, `a trace, on stdout or stored (exit ${r.status}): ${r.stderr}`);
      if (r.error) {
        assert.notEqual(r.status, 0);
        assert.ok(r.error.message.includes(r.profileOut), `the error names ${r.profileOut}: ${r.error.message}`);
      } else {
        assert.equal(r.status, 0, r.stderr);
      }
    });

    it("root opens, creates, renames, removes, links, chmods, chowns and enters no file outside tracefs, /proc, sysfs and the loader's libraries", () => {
      assertRootDidOnlyRootsPart(r.result, "sudo launch --cold --trace");
      assertFollowedOnlyConfined(r.result, r.trace.pid, "sudo launch --cold --trace");
    });

    it("the trace still equals the kernel's count, stored in the user's state folder as the user; Firefox ran as the user", () => {
      const t = r.trace;
      assert.equal(t.source, "tracefs");
      assert.equal(t.lost_events, 0, "no event lost");
      // Cold because the test made it so (a private copy of the install, evicted by the launch)
      // and checked: nothing held the install's pages through the evict.
      const held = (t.note_codes ?? []).filter((n) => n.code === "cold_held");
      assert.deepEqual(held, [], "no page of the private install stayed cached through the evict");
      assert.ok(t.tree_read_bytes > 50e6, `a cold start reads tens of MB (read_bytes ${t.tree_read_bytes})`);
      const ratio = t.traced_read_bytes / t.tree_read_bytes;
      console.log(`sudo launch: traced ${t.traced_read_bytes} B, /proc read_bytes ${t.tree_read_bytes} B, ratio ${ratio.toFixed(4)}`);
      assert.ok(ratio >= 0.9 && ratio <= 1.1, `traced/read_bytes = ${ratio}`);
      const stored = /stored as (\S+): (.+)$/m.exec(r.stderr);
      assert.ok(stored, `stored: ${r.stderr}`);
      assert.equal(path.dirname(stored[2]), path.join(stateDir(), "traces"));
      for (const f of fs.readdirSync(path.join(stateDir(), "traces")).filter((n) => n.startsWith(stored[1]))) {
        assert.equal(fs.statSync(path.join(stateDir(), "traces", f)).uid, s.user.uid, `${f} belongs to the user`);
      }
      const u = s.user;
      assert.deepEqual(r.firefox && [r.firefox.ruid, r.firefox.euid, r.firefox.suid, r.firefox.fsuid, r.firefox.rgid, r.firefox.egid], [u.uid, u.uid, u.uid, u.uid, u.gid, u.gid], "Firefox's uids and gids are the user's");
    });

    it("--profile-out into a folder only root may write: no file appears there", () => {
      assert.deepEqual(fs.readdirSync(r.outDir), [], `root wrote for the user into ${r.outDir}`);
    });
  });

  it("trace export -o into a folder only root may write: no file appears there", async () => {
    const dir = s.rootOnly("export");
    const r = await plain(sudoHost("trace", "export", "-o", path.join(dir, "planted-export.profile.json")));
    assert.deepEqual(fs.readdirSync(dir), [], `exit ${r.status}: ${r.stderr}`);
    assert.notEqual(r.status, 0, "the user is told the file was not written");
  });

  describe("trace --pid and learn --pid under sudo, of the user's running Firefox", () => {
    const r = {};
    before(async () => {
      const profile = path.join(s.user.home, "profile-pid");
      spawnSync("runuser", ["-u", s.user.name, "--", "mkdir", profile]);
      r.firefox = spawn("setpriv", [`--reuid=${s.user.uid}`, `--regid=${s.user.gid}`, "--init-groups", defaultFirefox(), "--headless", "--no-remote", "-profile", profile], {
        cwd: s.user.home,
        env: { ...userEnv(), HOME: s.user.home, USER: s.user.name, LOGNAME: s.user.name },
        stdio: "ignore",
      });
      // Started: its content processes are there.
      await waitFor(() => processes().filter((p) => p.ppid === r.firefox.pid).length >= 2, { timeout: 60000, message: "the user's Firefox to start" });
      r.log = path.join(s.logs, "sudo-trace-pid.strace");
      r.run = await runTraced(sudoHost("trace", "--pid", String(r.firefox.pid), "--seconds", "3", "--json"), { log: r.log, cwd: s.user.home, env: userEnv(), limitMs: HUNG_MS });
      r.status = await r.run.stop((p) => p.exe === s.host);
      r.result = analysed(r.log, s.user.home);
    });
    after(async () => {
      await endProcesses((p) => p.uid === s.user.uid);
    });

    it("trace --pid: root touches no file outside its part; the trace is stored as the user", () => {
      assert.equal(r.run.timedOut, false);
      assert.equal(r.status, 0, r.run.stderr);
      assertRootDidOnlyRootsPart(r.result, "sudo trace --pid");
      assertFollowedOnlyConfined(r.result, r.firefox.pid, "sudo trace --pid");
      const stored = /stored as (\S+): (.+)$/m.exec(r.run.stderr);
      assert.ok(stored, r.run.stderr);
      assert.equal(fs.statSync(stored[2]).uid, s.user.uid);
    });

    it("a hard link planted as the state folder's .lock to a root-owned file: its owner never changes", async () => {
      // fs.protected_hardlinks (1 here, Debian's default) keeps a user from linking to a file
      // they do not own; where it is 0 they can. Planted by root, as the user would there.
      const target = path.join(s.dir, "root-owned-file");
      fs.writeFileSync(target, "root's\n", { mode: 0o644 });
      const lock = path.join(stateDir(), ".lock");
      fs.rmSync(lock, { force: true });
      fs.linkSync(target, lock);
      const r2 = await plain(sudoHost("learn", "--pid", String(r.firefox.pid), "--json"));
      const st = fs.statSync(target);
      fs.rmSync(lock, { force: true });
      fs.rmSync(target, { force: true });
      assert.deepEqual([st.uid, st.gid], [0, 0], `learn under sudo (exit ${r2.status}) gave root's file to the user: ${r2.stderr}`);
    });
  });

  describe("a library the user's \"Firefox\" maps, swapped while the trace is finished", { skip: noCc }, () => {
    const r = {};
    before(() => {
      r.fake = fakeFirefox(path.join(s.user.home, "firefox"), s.user);
      const c = path.join(s.dir, "plant.c");
      fs.writeFileSync(c, PLANT_C);
      const cc = (name, out) => {
        const b = spawnSync("cc", ["-shared", "-fPIC", "-O1", "-Wl,--sort-section=name", `-DNAME=${name}`, "-o", out, c], { encoding: "utf8" });
        assert.equal(b.status, 0, b.stderr);
        // On disk, so that evicting it drops it (dirty pages stay).
        const fd = fs.openSync(out, "r");
        fs.fsyncSync(fd);
        fs.closeSync(fd);
      };
      r.pristine = path.join(s.dir, "libplant.so");
      cc(PLANT_NAME, r.pristine);
      // Root's own: a folder and a file only root may read.
      r.secretDir = path.join(s.dir, "secret");
      fs.mkdirSync(r.secretDir, { mode: 0o700 });
      r.secret = path.join(r.secretDir, "libsecret.so");
      cc(SECRET_NAME, r.secret);
      fs.chmodSync(r.secret, 0o600);
    });

    async function swapped(mode) {
      for (const n of ["libplant.so", "libplant.orig"]) fs.rmSync(path.join(r.fake, n), { force: true });
      fs.copyFileSync(r.pristine, path.join(r.fake, "libplant.so"));
      fs.writeFileSync(path.join(r.fake, "ran"), "");
      spawnSync("chown", ["-R", `${s.user.uid}:${s.user.gid}`, r.fake]);
      const log = path.join(s.logs, `sudo-library-${mode}.strace`);
      const run = await runTraced(sudoHost("launch", "--cold", "--trace", "--json", "--firefox", r.fake, "--", mode, r.secret), { log, cwd: s.user.home, env: userEnv(), limitMs: HUNG_FAKE_MS });
      const out = { run, stdout: run.stdout, stderr: run.stderr };
      out.status = await run.stop(leftover);
      out.result = analysed(log, s.user.home);
      out.ran = ran(r.fake);
      return out;
    }

    const plantPaths = () => [path.join(r.fake, "libplant.so"), r.secret];

    it("a FIFO: no root open of it, no hang", async () => {
      const out = await swapped("fifo");
      assert.match(out.ran, new RegExp(`^${s.user.uid} fifo`), "the user's \"Firefox\" ran, as the user");
      assert.equal(out.run.timedOut, false, `hung past ${HUNG_FAKE_MS} ms: ${out.stderr}`);
      const opened = out.result.rootOps.filter((o) => plantPaths().includes(o.path));
      assert.deepEqual(opened.map((o) => o.text), [], "root opened the planted path");
      assertRootDidOnlyRootsPart(out.result, "sudo launch --firefox <user's folder>, library swapped for a FIFO");
    });

    it("a link to a root-only library: no root open of it, none of its bytes in the trace", async () => {
      const out = await swapped("link");
      assert.equal(out.run.timedOut, false, out.stderr);
      const stored = fs.readdirSync(path.join(stateDir(), "traces")).map((f) => fs.readFileSync(path.join(stateDir(), "traces", f), "utf8"));
      for (const text of [out.stdout, ...stored]) {
        assert.ok(!text.includes(SECRET_NAME), `a symbol of the root-only library (${SECRET_NAME}) is in the user's trace`);
      }
      // The check can fail: the library's own function is named where it was readable.
      assert.ok(out.stdout.includes("libplant.so"), "the fault site in the planted library is in the trace");
      const opened = out.result.rootOps.filter((o) => plantPaths().includes(o.path));
      assert.deepEqual(opened.map((o) => o.text), [], "root opened the planted path");
    });
  });

  describe("~/.config/user-dirs.dirs planted for launch --firefox-profile under sudo: it ends, bounded", () => {
    const userDirs = () => path.join(s.user.home, ".config", "user-dirs.dirs");
    async function launchWith(plant) {
      const fake = fakeFirefox(path.join(s.user.home, `firefox-${plant[0]}`), s.user);
      fs.rmSync(userDirs(), { force: true });
      spawnSync("runuser", ["-u", s.user.name, "--", "mkdir", "-p", path.dirname(userDirs())]);
      const p = spawnSync("runuser", ["-u", s.user.name, "--", ...plant, userDirs()], { encoding: "utf8" });
      assert.equal(p.status, 0, p.stderr);
      // The host may use at most 1 GiB of data: an endless file read whole then fails instead
      // of filling the machine's memory. What each of its processes read in all (rchar) says
      // whether it read without bound.
      const limited = new Set();
      const read = new Map();
      const guard = setInterval(() => {
        for (const q of processes().filter((q) => q.exe === s.host)) {
          if (!limited.has(q.pid)) {
            spawnSync("prlimit", ["--pid", String(q.pid), `--data=${1 << 30}`]);
            limited.add(q.pid);
          }
          try {
            read.set(q.pid, Number(/^rchar: (\d+)/m.exec(fs.readFileSync(`/proc/${q.pid}/io`, "utf8"))[1]));
          } catch {
            // gone meanwhile
          }
        }
      }, 50);
      try {
        const r = await plain(sudoHost("launch", "--firefox-profile", "--json", "--firefox", fake, "--", "dump"), { limitMs: HUNG_FAKE_MS });
        return { ...r, ran: ran(fake), read: [...read.values()].reduce((a, b) => a + b, 0) };
      } finally {
        clearInterval(guard);
        await endProcesses(leftover);
        fs.rmSync(userDirs(), { force: true });
      }
    }

    for (const [what, plant] of [
      ["a FIFO", ["mkfifo"]],
      ["a link to /dev/zero", ["ln", "-s", "/dev/zero"]],
    ]) {
      it(what, async () => {
        const r = await launchWith(plant);
        assert.match(r.ran, new RegExp(`^${s.user.uid} dump`), "the user's \"Firefox\" ran, as the user");
        assert.equal(r.hung, false, `still running after ${HUNG_FAKE_MS} ms: ${r.stderr}`);
        assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr.slice(-600)}`);
        assert.ok(JSON.parse(r.stdout).pid > 0, "the start is recorded");
        // A fake start and a 50-byte profile: a few MB at most, unless it read the planted file.
        assert.ok(r.read < 64 * 2 ** 20, `the host read ${(r.read / 2 ** 20).toFixed(0)} MiB in all (rchar)`);
      });
    }
  });

  it("--seconds inf, NaN or negative: a usage error, before anything runs", async () => {
    const fake = fakeFirefox(path.join(s.dir, "firefox-seconds"), { uid: 0, gid: 0 });
    for (const value of ["inf", "NaN", "-1"]) {
      for (const argv of [
        ["launch", "--trace", "--seconds", value, "--firefox", fake, "--", "seconds"],
        ["trace", "--pid", "1", `--seconds=${value}`],
      ]) {
        const r = await plain(asUser([s.host, ...argv]), { limitMs: HUNG_FAKE_MS });
        assert.equal(r.status, 2, `${argv.join(" ")}: exit ${r.status}: ${r.stderr}`);
        assert.match(r.stderr, /--seconds/, `the error names the option: ${r.stderr}`);
      }
    }
    assert.equal(ran(fake), "", "no \"Firefox\" started");
  });

  it("as if run by pkexec (PKEXEC_UID) with any argv but `tracer` alone: the host refuses, and starts nothing", async () => {
    const fake = fakeFirefox(path.join(s.dir, "firefox-pkexec"), { uid: 0, gid: 0 });
    const env = { PATH, PKEXEC_UID: String(s.user.uid) };
    for (const argv of [["launch", "--cold", "--trace", "--firefox", fake, "--", "pkexec"], ["tracer", "x"], ["residency", "--json"]]) {
      const r = await plain([s.host, ...argv], { env, cwd: s.dir, limitMs: HUNG_FAKE_MS });
      assert.equal(r.status, 2, `${argv.join(" ")}: exit ${r.status}: ${r.stderr}`);
      // The host's own refusal (it knows `tracer`), saying what pkexec may run.
      assert.doesNotMatch(r.stderr, /unrecognized subcommand/, r.stderr);
      assert.match(r.stderr, /tracer/, `the refusal says what pkexec may run: ${r.stderr}`);
      assert.equal(r.stdout, "", "nothing done");
    }
    assert.equal(ran(fake), "", "no \"Firefox\" started");
  });
});
