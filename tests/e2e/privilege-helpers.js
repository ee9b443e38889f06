// What the privilege tests (test.privilege.js, test.restart-trace.js) share: a throwaway user and
// a sudoers drop-in they make and remove, a root-owned copy of the host for sudo to run, and
// strace run as root around a command or attached to running processes, its log read with
// strace-log.js together with the facts that module leaves to its caller (which exec'd files are
// setuid root, which libraries the loader maps for the host, whose credentials a process has).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { HOST_BINARY } from "../../scripts/lib/project.mjs";
import { signal } from "../../scripts/lib/processes.mjs";
import { analyse, creds, execvePaths, parseLog, straceArgs } from "./strace-log.js";
import { MARKER } from "../../scripts/lib/leftovers.mjs";
import { waitFor } from "./harness.js";

export const has = (cmd, args = ["--version"]) => spawnSync(cmd, args, { stdio: "ignore" }).status === 0;

/**
 * A user made for one test run (and removed by `remove()`), with a home folder of its own in
 * `dir`. Why not `nobody`: its home is /nonexistent, and sudo gives Firefox and the host the
 * passwd home; the hostile cases plant files in the user's own home.
 */
export function makeUser(dir) {
  const name = `as-e2e-${process.pid}`;
  const home = path.join(dir, "home");
  const r = spawnSync("useradd", ["--home-dir", home, "--create-home", "--user-group", "--shell", "/usr/sbin/nologin", name], { encoding: "utf8" });
  if (r.status !== 0) {
    throw new Error(`useradd ${name}: ${r.stderr}`);
  }
  const [uid, gid] = ["-u", "-g"].map((flag) => Number(spawnSync("id", [flag, name], { encoding: "utf8" }).stdout.trim()));
  return {
    name,
    uid,
    gid,
    home,
    /** Ends what still runs as the user, then removes it (and its group). */
    async remove() {
      await endProcesses((p) => p.uid === uid);
      spawnSync("userdel", [name], { stdio: "ignore" });
    },
  };
}

/** A root-owned copy of the release host in `dir` (a folder only root can write, reachable by
 * all, as /usr/lib/about-startup is): what sudo runs. */
export function stageHost(dir) {
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin, { mode: 0o755 });
  const host = path.join(bin, "about-startup-host");
  fs.copyFileSync(HOST_BINARY, host);
  fs.chmodSync(host, 0o755);
  return host;
}

/** /etc/sudoers.d/<name>: `user` may run `commands` as root without a password (sudo -n).
 * A name with no dot, or sudo skips the file. Checked with visudo; `remove()` takes it away.
 * sudo keeps the user's DISPLAY by default; the tests have no display, and Firefox's own
 * MOZ_HEADLESS (runAsPrinted sets it) stands in for it, kept through sudo the same way. */
export function allowSudo(name, user, commands) {
  const file = path.join("/etc/sudoers.d", name.replace(/\./g, "-"));
  // The test runner's marker too (scripts/lib/leftovers.mjs): what the sudo'd command starts
  // and leaves running is then known as the test file's.
  fs.writeFileSync(file, `Defaults:${user} env_keep += "MOZ_HEADLESS ${MARKER}"\n${user} ALL=(root) NOPASSWD: ${commands.join(", ")}\n`, { mode: 0o440 });
  const check = spawnSync("visudo", ["-cf", file], { encoding: "utf8" });
  if (check.status !== 0) {
    fs.rmSync(file, { force: true });
    throw new Error(`visudo -cf ${file}: ${check.stdout}${check.stderr}`);
  }
  return { file, remove: () => fs.rmSync(file, { force: true }) };
}

/** Live processes: [{pid, uid (real), exe}] (exe null where unreadable). */
export function processes() {
  const out = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = fs.readFileSync(`/proc/${name}/status`, "utf8");
      if (/^State:\s+Z/m.test(status)) continue;
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)[1]);
      let exe = null;
      try {
        exe = fs.readlinkSync(`/proc/${name}/exe`).replace(/ \(deleted\)$/, "");
      } catch {
        // a kernel thread
      }
      out.push({ pid: Number(name), uid, exe, ppid: Number(/^PPid:\s+(\d+)/m.exec(status)[1]) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Ends the processes `which` picks (TERM, then KILL after 2 s); returns those it found. */
export async function endProcesses(which) {
  const found = processes().filter((p) => p.pid !== process.pid && which(p));
  for (let attempt = 0; attempt < 20; attempt++) {
    const left = processes().filter((p) => found.some((f) => f.pid === p.pid));
    if (left.length === 0) break;
    for (const p of left) signal(p.pid, attempt < 10 ? "SIGTERM" : "SIGKILL");
    await sleep(200);
  }
  return found;
}

/** A process's credentials from /proc/<pid>/status, in strace-log.js's shape. */
export function credsOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const four = (key) => new RegExp(`^${key}:\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)`, "m").exec(status).slice(1).map(Number);
  const [ruid, euid, suid, fsuid] = four("Uid");
  const [rgid, egid, sgid, fsgid] = four("Gid");
  const groups = (/^Groups:[ \t]*([^\n]*)$/m.exec(status)?.[1] ?? "").trim().split(/\s+/).filter(Boolean).map(Number);
  return { ...creds(ruid, rgid, groups), euid, suid, fsuid, egid, sgid, fsgid };
}

/** Which of `paths` are setuid-root files now (stat follows symlinks, as execve does). */
export function setuidRootOf(paths) {
  return new Set(
    [...paths].filter((p) => {
      try {
        const st = fs.statSync(p);
        return st.uid === 0 && (st.mode & 0o4000) !== 0;
      } catch {
        return false;
      }
    }),
  );
}

/** The libraries the loader maps for `binary` (`ldd`, i.e. the loader itself), as listed and
 * resolved (Debian's /lib is a link to /usr/lib). */
export function loaderFilesOf(binary) {
  const out = new Set();
  const r = spawnSync("ldd", [binary], { encoding: "utf8" });
  for (const m of (r.stdout ?? "").matchAll(/(\/\S+)/g)) {
    out.add(m[1]);
    try {
      out.add(fs.realpathSync(m[1]));
    } catch {
      // listed but absent
    }
  }
  return out;
}

/** The name service's modules a user or group lookup loads (the sources /etc/nsswitch.conf
 * names for passwd and group), with the libraries each needs. */
export function nameServiceModules() {
  const out = new Set();
  const conf = fs.existsSync("/etc/nsswitch.conf") ? fs.readFileSync("/etc/nsswitch.conf", "utf8") : "";
  for (const m of conf.matchAll(/^(?:passwd|group|initgroups):\s*(.*)$/gm)) {
    for (const source of m[1].split(/\s+/).filter((w) => /^\w+$/.test(w))) {
      for (const dir of ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"]) {
        const lib = path.join(dir, `libnss_${source}.so.2`);
        if (fs.existsSync(lib)) {
          out.add(lib);
          for (const f of loaderFilesOf(lib)) out.add(f);
        }
      }
    }
  }
  return out;
}

/** Reads and analyses a log (strace-log.js's analyse), with the setuid-root programs it exec'd
 * and the loader's files of each host image found here. */
export function analyseLog(log, { roots, hostImages }) {
  const calls = parseLog(fs.readFileSync(log, "utf8"));
  const loaderFiles = new Set([...hostImages].flatMap((h) => [...loaderFilesOf(h)]).concat([...nameServiceModules()]));
  const result = analyse(calls, { roots, hostImages: new Set(hostImages), setuidRoot: setuidRootOf(execvePaths(calls)), loaderFiles });
  return { ...result, calls };
}

/**
 * Root's looks at process `pid` (`/proc/<pid>` and beneath) in an analysed log, the ones made
 * before its task confined itself with Landlock first: the pid is the one number root takes
 * from the user (Follow), and the design confines the tracer before it serves.
 * {looks, unconfined: [log text]}.
 */
export function rootLooksAt(result, pid) {
  const looks = result.rootOps.filter((o) => o.path === `/proc/${pid}` || o.path?.startsWith(`/proc/${pid}/`));
  return { looks, unconfined: looks.filter((o) => !o.confined).map((o) => o.text) };
}

/** The first bytes of `file` ("" if it is not there yet). */
function head(file, n = 64) {
  try {
    const fd = fs.openSync(file, "r");
    try {
      const buf = Buffer.alloc(n);
      return buf.subarray(0, fs.readSync(fd, buf, 0, n, 0)).toString("utf8");
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return "";
  }
}

const gone = (pid) => {
  try {
    return /^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return true;
  }
};

/**
 * Runs `argv` under strace as root, recording into `log`; its stdout and stderr go to
 * `<log>.out` and `<log>.err`. Resolves once the command itself has exited (what it started may
 * go on, traced) with {pid, status (exit code or signal name, from the log), timedOut, stdout,
 * stderr, stop()}: stop() ends what the caller says is left (`leftover(p)`), then strace.
 * `limitMs` is a liveness bound: past it the command is reported as timed out, not waited for.
 */
export async function runTraced(argv, { log, cwd, env = process.env, limitMs = 180000 }) {
  const out = fs.openSync(`${log}.out`, "w");
  const err = fs.openSync(`${log}.err`, "w");
  const strace = spawn("strace", [...straceArgs(log), "--", ...argv], { cwd, env, stdio: ["ignore", out, err] });
  fs.closeSync(out);
  fs.closeSync(err);
  const exited = new Promise((resolve) => strace.on("exit", resolve));
  // The command is strace's one child; its pid is the log's first.
  const pid = await waitFor(
    () => {
      const first = /^(\d+)\s/.exec(head(log));
      return first ? Number(first[1]) : strace.exitCode !== null ? -1 : null;
    },
    { timeout: 20000, interval: 50, message: `strace to start ${argv[0]}` },
  );
  let timedOut = false;
  if (pid > 0) {
    timedOut = !(await waitFor(() => gone(pid), { timeout: limitMs, interval: 200, message: `${argv.join(" ")} to end` }).catch(() => false));
  }
  const read = (suffix) => fs.readFileSync(`${log}${suffix}`, "utf8");
  const status = () => {
    const m = new RegExp(`^${pid}\\s+\\+\\+\\+ (?:exited with (\\d+)|killed by (\\w+))`, "m").exec(fs.readFileSync(log, "utf8"));
    return m ? (m[1] !== undefined ? Number(m[1]) : m[2]) : null;
  };
  return {
    pid,
    timedOut,
    get stdout() {
      return read(".out");
    },
    get stderr() {
      return read(".err");
    },
    /** Ends what is left of the traced tree (`leftover` picks it), then strace; the exit status. */
    async stop(leftover = () => false) {
      await endProcesses(leftover);
      if (strace.exitCode === null) {
        await Promise.race([exited, sleep(10000)]);
      }
      if (strace.exitCode === null) {
        strace.kill("SIGTERM"); // detaches from what is left
        await exited;
      }
      return status();
    },
  };
}

/**
 * strace attached (as root) to each of `pids` with every thread, recording into `log`; resolves
 * once every one is traced (TracerPid), with {roots, stop()}: `roots` are the attached threads
 * as strace-log.js's analyse wants them (image, credentials and folder read from /proc now),
 * stop() detaches strace (the processes go on) and waits for it to end.
 */
export async function attachTraced(pids, { log, ours = true }) {
  // Every thread of each process from before strace attaches until after: a worker thread the
  // host starts and ends around the attach (a page request) is in the log with no clone line,
  // so it must be a root too, or its lines are unexplained. Threads share the process's ids.
  const seen = new Map(pids.map((pid) => [pid, new Set()]));
  const look = () => {
    for (const [pid, tids] of seen) {
      try {
        for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
          tids.add(Number(tid));
        }
      } catch {
        // gone: what it did is in the log, its pid among the roots already
      }
    }
  };
  look();
  const poller = setInterval(look, 2);
  const strace = spawn("strace", [...straceArgs(log), ...pids.flatMap((p) => ["-p", String(p)])], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  strace.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => strace.on("exit", resolve));
  const tracer = (tid) => Number(/^TracerPid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${tid}/status`, "utf8"))?.[1]);
  const roots = [];
  try {
    for (const pid of pids) {
      await waitFor(() => tracer(pid) === strace.pid, { timeout: 10000, interval: 50, message: `strace attached to ${pid}: ${stderr}` });
    }
    await sleep(50);
    look();
  } finally {
    clearInterval(poller);
  }
  for (const pid of pids) {
    const image = fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, "");
    const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
    const creds = credsOf(pid);
    for (const tid of seen.get(pid)) {
      roots.push({ pid: tid, creds, image, ours, cwd });
    }
  }
  fs.writeFileSync(`${log}.roots.json`, `${JSON.stringify(roots, null, 2)}\n`);
  return {
    roots,
    async stop() {
      if (strace.exitCode === null) {
        strace.kill("SIGINT");
        await Promise.race([exited, sleep(10000)]);
      }
      if (strace.exitCode === null) {
        strace.kill("SIGKILL");
        await exited;
      }
    },
  };
}
