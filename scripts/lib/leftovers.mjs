// What one e2e test file started and left behind: processes (a Firefox, geckodriver, the
// host or its tracer, a profiler-cli daemon, squashfuse) and mounts or loop devices. The test
// runner gives each file a marker in its environment and private temporary folders
// (scripts/test.mjs); whatever carries the marker, or names one of those folders (in its
// command line, working folder, binary or environment, as a relaunched Firefox's profile or
// HOME does, or a sudo'd command that dropped the environment still names), is that file's.
// So is whatever runs in the file's own cgroup (v2, made by the runner where it may: root), which
// every child inherits whatever it does to its environment: the tracer pkexec starts (pkexec
// clears the environment and the tracer leaves its session) is found there.
// Another user's Firefox on the machine names none of them and is never counted.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** The environment variable the runner marks a test file's processes with. */
export const MARKER = "ABOUT_STARTUP_E2E_FILE";

const under = (file, dirs) => dirs.some((dir) => file === dir || file.startsWith(`${dir}/`));
const escaped = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** Whether `text` names one of `dirs` or a path in it (not a sibling that only starts alike). */
const mentions = (text, dirs) => dirs.some((dir) => new RegExp(`${escaped(dir)}(?=$|[/\\s:"',;])`).test(text));

function read(fsApi, file) {
  try {
    return fsApi.readFileSync(file);
  } catch {
    return null;
  }
}

function link(fsApi, file) {
  try {
    return fsApi.readlinkSync(file).replace(/ \(deleted\)$/, "");
  } catch {
    return null;
  }
}

/** The cgroup v2 path (`0::` line of /proc/<pid>/cgroup) in `cgroupText`, or null. Pure. */
export function cgroupV2Of(cgroupText) {
  return /^0::(.*)$/m.exec(cgroupText ?? "")?.[1] ?? null;
}

/** Where the cgroup v2 hierarchy is mounted (from mountinfo's text), or null. Pure. */
export function cgroupV2Mount(mountinfo) {
  for (const line of mountinfo.split("\n")) {
    const [left, right = ""] = line.split(" - ");
    if (right.split(" ")[0] === "cgroup2") return unescape(left.split(" ")[4] ?? "");
  }
  return null;
}

/**
 * A cgroup v2 of one test file's own, for the runner: `{path, procs, remove()}` (`path` as
 * /proc/<pid>/cgroup names it, `procs` the file a process writes its pid to, to move in), or
 * null where there is no cgroup v2 hierarchy or it may not make one (not root).
 */
export function fileCgroup(name, { fsApi = fs } = {}) {
  const mount = cgroupV2Mount(read(fsApi, "/proc/self/mountinfo")?.toString() ?? "");
  const own = cgroupV2Of(read(fsApi, "/proc/self/cgroup")?.toString());
  if (!mount || own === null) return null;
  const relative = path.posix.join(own, `about-startup-e2e-${name.replace(/[^\w.-]/g, "_")}`);
  const dir = path.join(mount, relative);
  try {
    fsApi.mkdirSync(dir);
  } catch {
    return null;
  }
  return {
    path: relative,
    procs: path.join(dir, "cgroup.procs"),
    remove: () => {
      try {
        fsApi.rmdirSync(dir);
      } catch (error) {
        console.error(`could not remove the test file's cgroup ${dir}: ${error.message}`);
      }
    },
  };
}

/**
 * Live processes (zombies left out) that carry `MARKER=marker`, run in cgroup (v2) `cgroup` or
 * below it, or name one of `dirs`: [{pid, uid, name, cmdline, why}]. `self` (this runner) is
 * left out.
 */
export function leftoverProcesses({ marker, dirs, cgroup = null }, { procDir = "/proc", self = process.pid, fsApi = fs } = {}) {
  const tag = Buffer.from(`\0${MARKER}=${marker}\0`);
  const found = [];
  for (const entry of fsApi.readdirSync(procDir)) {
    if (!/^\d+$/.test(entry) || Number(entry) === self) continue;
    const status = read(fsApi, `${procDir}/${entry}/status`)?.toString();
    if (!status || /^State:\s+Z/m.test(status)) continue;
    const environ = read(fsApi, `${procDir}/${entry}/environ`);
    const cmdline = (read(fsApi, `${procDir}/${entry}/cmdline`)?.toString() ?? "").split("\0").filter(Boolean);
    const exe = link(fsApi, `${procDir}/${entry}/exe`);
    const cwd = link(fsApi, `${procDir}/${entry}/cwd`);
    let why = null;
    const group = cgroup ? cgroupV2Of(read(fsApi, `${procDir}/${entry}/cgroup`)?.toString()) : null;
    if (environ && Buffer.concat([Buffer.from([0]), environ]).includes(tag)) why = `${MARKER}=${marker}`;
    else if (group && (group === cgroup || group.startsWith(`${cgroup}/`))) why = `in the file's cgroup ${group}`;
    else if (exe && under(exe, dirs)) why = `runs ${exe}`;
    else if (mentions(cmdline.join(" "), dirs)) why = "its command line names the file's folders";
    else if (cwd && under(cwd, dirs)) why = `works in ${cwd}`;
    else if (environ) {
      const variable = environ
        .toString()
        .split("\0")
        .find((kv) => mentions(kv.slice(kv.indexOf("=") + 1), dirs));
      if (variable) why = variable;
    }
    if (why) {
      found.push({
        pid: Number(entry),
        uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]),
        name: /^Name:\s+(.*)$/m.exec(status)?.[1] ?? "?",
        cmdline: cmdline.join(" "),
        why,
      });
    }
  }
  return found;
}

/** Unescapes mountinfo's octal escapes (`\040` is a space). Pure. */
const unescape = (field) => field.replace(/\\([0-7]{3})/g, (_, octal) => String.fromCharCode(parseInt(octal, 8)));

/**
 * Mounts whose mount point or source lies in one of `dirs`, from mountinfo's text:
 * [{mountPoint, source, fstype}]. Pure.
 */
export function leftoverMounts(mountinfo, dirs) {
  const found = [];
  for (const line of mountinfo.split("\n").filter(Boolean)) {
    const [left, right = ""] = line.split(" - ");
    const mountPoint = unescape(left.split(" ")[4] ?? "");
    const [fstype, source = ""] = right.split(" ").map(unescape);
    if (under(mountPoint, dirs) || under(source, dirs)) found.push({ mountPoint, source, fstype });
  }
  return found;
}

/** Loop devices whose backing file lies in one of `dirs`: [{device, backingFile}]. */
export function leftoverLoops(dirs, { sysBlock = "/sys/block", fsApi = fs } = {}) {
  let names;
  try {
    names = fsApi.readdirSync(sysBlock).filter((n) => /^loop\d+$/.test(n));
  } catch {
    return [];
  }
  const found = [];
  for (const name of names) {
    const backing = read(fsApi, path.join(sysBlock, name, "loop", "backing_file"))?.toString().trim().replace(/ \(deleted\)$/, "");
    if (backing && under(backing, dirs)) found.push({ device: `/dev/${name}`, backingFile: backing });
  }
  return found;
}

/** Everything the file left: {processes, mounts, loops}. */
export function leftovers({ marker, dirs, cgroup = null }, options = {}) {
  const mountinfo = read(options.fsApi ?? fs, "/proc/self/mountinfo")?.toString() ?? "";
  return {
    processes: leftoverProcesses({ marker, dirs, cgroup }, options),
    mounts: leftoverMounts(mountinfo, dirs),
    loops: leftoverLoops(dirs, options),
  };
}

/** One line per thing left, for the failure's message; empty when nothing was. Pure. */
export function describeLeftovers({ processes, mounts, loops }) {
  return [
    ...processes.map((p) => `process ${p.pid} ${p.name} (uid ${p.uid}): ${p.cmdline.slice(0, 200)} [${p.why}]`),
    ...mounts.map((m) => `mount ${m.mountPoint} (${m.fstype} of ${m.source})`),
    ...loops.map((l) => `loop device ${l.device} of ${l.backingFile}`),
  ];
}

function alive(pid) {
  try {
    return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/**
 * Ends what `found` lists, after it was reported: the processes (TERM, KILL after 5 s), then
 * the mounts (lazily) and loop devices.
 */
export async function endLeftovers(found) {
  for (let attempt = 0; attempt < 60; attempt++) {
    const left = found.processes.filter((p) => alive(p.pid));
    if (left.length === 0) break;
    for (const p of left) {
      try {
        process.kill(p.pid, attempt < 25 ? "SIGTERM" : "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  for (const m of [...found.mounts].reverse()) spawnSync("umount", ["-l", m.mountPoint]);
  for (const l of found.loops) spawnSync("losetup", ["-d", l.device]);
}
