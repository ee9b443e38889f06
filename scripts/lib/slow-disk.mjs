// An emulated slow disk for benchmarks: a blkio cgroup (v1 blkio.throttle, or v2 io.max) whose
// read bandwidth and IOPS are capped on the disk that holds a folder (shared/NOTES.md): for a
// loop mount the disk of its backing file, for a squashfuse mount the disk of the image its
// daemon reads, the daemon moved into the group for the run. Commands run inside it with
// `wrap(argv)`; `remove()` deletes it (the daemon moved back first) and runs on exit too.
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";

/** "30:150", "30MB:150" or "30MiB:150" → {bps, iops}; MB here means MiB, as in NOTES. */
export function parseSlowDisk(spec) {
  const m = /^(\d+(?:\.\d+)?)(?:MB|MiB)?:(\d+)$/i.exec(spec ?? "");
  if (!m) {
    throw new Error(`--slow-disk wants MiB/s:IOPS, e.g. 30:150, not ${spec}`);
  }
  return { mib: Number(m[1]), bps: Math.round(Number(m[1]) * 1024 * 1024), iops: Number(m[2]) };
}

/**
 * The whole disk under `dir` as MAJ:MIN: throttling applies to a disk, not a partition. A loop
 * device (a squashfs install, the Snap stand-in) is followed to the disk of its backing file:
 * the loop driver charges its reads of that file to the cgroup of the process that read the
 * mount, so throttling the real disk slows both a start reading the mount and a preload of the
 * image, as one slow disk would.
 */
export function diskOf(dir, { fsApi = fs, depth = 0, fuse = fuseOf } = {}) {
  const dev = fsApi.statSync(dir).dev;
  let majMin = `${Math.floor(dev / 256) & 0xfff}:${(dev & 0xff) | ((dev >> 12) & 0xfff00)}`;
  // A FUSE mount (squashfuse: a packed Firefox) has an anonymous 0:N device: its daemon reads
  // the image file, so the disk is the image's.
  const daemon = depth < 4 && majMin.startsWith("0:") ? fuse(dir) : null;
  if (daemon) {
    return diskOf(daemon.image, { fsApi, depth: depth + 1, fuse });
  }
  const sys = `/sys/dev/block/${majMin}`;
  const backing = `${sys}/loop/backing_file`;
  if (depth < 4 && fsApi.existsSync(backing)) {
    return diskOf(fsApi.readFileSync(backing, "utf8").trim(), { fsApi, depth: depth + 1 });
  }
  if (fsApi.existsSync(`${sys}/partition`)) {
    majMin = fsApi.readFileSync(path.join(fsApi.realpathSync(sys), "..", "dev"), "utf8").trim();
  }
  return majMin;
}

/** The squashfuse programs a FUSE-mounted squashfs image is served by. */
export const SQUASHFUSE = ["squashfuse", "squashfuse_ll"];

/**
 * The mount point, in a mountinfo text, of the mount that holds `dir` (the longest mount point
 * above it; the last such entry, which hides earlier ones), with its fs type. Pure.
 */
export function mountHolding(mountinfo, dir) {
  let best = null;
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    const point = left?.split(" ")[4]?.replace(/\\040/g, " ");
    if (!point || !right) continue;
    const inside = dir === point || dir.startsWith(point === "/" ? "/" : `${point}/`);
    if (inside && (!best || point.length >= best.mountPoint.length)) {
      best = { mountPoint: point, fsType: right.split(" ")[0] };
    }
  }
  return best;
}

/**
 * The squashfuse daemon serving `mountPoint` among `procs` ({pid, argv}): its pid and the image
 * it reads (its two operands are IMAGE MOUNTPOINT; `-o X` takes a value, other flags none), or
 * null. Pure.
 */
export function squashfuseDaemon(mountPoint, procs) {
  for (const { pid, argv } of procs) {
    if (!SQUASHFUSE.includes(path.basename(argv[0] ?? ""))) continue;
    const operands = [];
    for (let i = 1; i < argv.length; i++) {
      if (argv[i] === "-o") i++;
      else if (!argv[i].startsWith("-")) operands.push(argv[i]);
    }
    if (operands.length === 2 && path.resolve(operands[1]) === mountPoint) {
      return { pid, image: path.resolve(operands[0]) };
    }
  }
  return null;
}

/** The squashfuse daemon of the FUSE mount holding `dir` ({pid, image}), or null. */
export function fuseOf(dir) {
  const real = fs.realpathSync(dir);
  const mount = mountHolding(fs.readFileSync("/proc/self/mountinfo", "utf8"), real);
  if (!mount?.fsType.startsWith("fuse.squashfuse")) return null;
  const procs = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").filter(Boolean);
      procs.push({ pid: Number(name), argv });
    } catch {
      // gone meanwhile
    }
  }
  return squashfuseDaemon(mount.mountPoint, procs);
}

/**
 * Bytes read from `disk` ("maj:min") in a group's statistics: cgroup v1's
 * blkio.throttle.io_service_bytes ("254:0 Read 123") or v2's io.stat ("254:0 rbytes=123 …"). Pure.
 */
export function groupReadBytes(text, disk) {
  for (const line of text.split("\n")) {
    const [dev, ...rest] = line.trim().split(/\s+/);
    if (dev !== disk) continue;
    if (rest[0] === "Read" && /^\d+$/.test(rest[1] ?? "")) return Number(rest[1]);
    const rbytes = rest.find((field) => field.startsWith("rbytes="));
    if (rbytes) return Number(rbytes.slice("rbytes=".length));
  }
  return null;
}

/**
 * The group path of the controller `controller` ("blkio"; "" for cgroup v2's unified "0::")
 * in a /proc/PID/cgroup text, "/" if none. Pure.
 */
export function cgroupPathOf(text, controller) {
  for (const line of text.split("\n")) {
    const [, controllers, ...rest] = line.split(":");
    if (rest.length === 0) continue;
    const listed = controller === "" ? controllers === "" : controllers.split(",").includes(controller);
    if (listed) return rest.join(":");
  }
  return "/";
}

/** Create the throttled group for the disk under `dir`. Needs root. */
export function createSlowDisk(spec, dir, { name = `about-startup-bench-${process.pid}` } = {}) {
  if (process.getuid() !== 0) {
    throw new Error("--slow-disk needs root: the throttle is a cgroup (run with sudo)");
  }
  const { mib, bps, iops } = parseSlowDisk(spec);
  const disk = diskOf(dir);
  let group;
  if (fs.existsSync("/sys/fs/cgroup/blkio")) {
    group = `/sys/fs/cgroup/blkio/${name}`;
    fs.mkdirSync(group);
    fs.writeFileSync(`${group}/blkio.throttle.read_bps_device`, `${disk} ${bps}`);
    fs.writeFileSync(`${group}/blkio.throttle.read_iops_device`, `${disk} ${iops}`);
  } else {
    group = `/sys/fs/cgroup/${name}`;
    fs.mkdirSync(group);
    fs.writeFileSync(`${group}/io.max`, `${disk} rbps=${bps} riops=${iops}`);
  }
  // A FUSE mount's daemon reads the image in its own process: moved into the group, so that its
  // reads are slowed and counted as the loop driver's are for a reader of a loop mount; moved
  // back to where it was before the group goes.
  const v1 = group.includes("/blkio/");
  const daemon = fuseOf(dir);
  let daemonFrom = null;
  if (daemon) {
    const own = fs.readFileSync(`/proc/${daemon.pid}/cgroup`, "utf8");
    daemonFrom = path.join(v1 ? "/sys/fs/cgroup/blkio" : "/sys/fs/cgroup", cgroupPathOf(own, v1 ? "blkio" : ""));
    fs.writeFileSync(`${group}/cgroup.procs`, String(daemon.pid));
  }
  const label = `${mib} MiB/s, ${iops} IOPS (${v1 ? "cgroup v1 blkio" : "cgroup v2 io.max"} on ${disk}${daemon ? `; squashfuse daemon ${daemon.pid}, reading ${daemon.image}, moved into it` : ""})`;
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    if (daemon) {
      try {
        fs.writeFileSync(`${daemonFrom}/cgroup.procs`, String(daemon.pid));
      } catch {
        // the daemon ended (its mount gone): nothing to move back
      }
    }
    for (let attempt = 0; attempt < 10 && fs.existsSync(group); attempt++) {
      try {
        fs.rmdirSync(group);
      } catch {
        // Still populated for a moment after its last process exits.
        spawnSync("sleep", ["0.1"]);
      }
    }
    if (fs.existsSync(group)) {
      console.error(`could not remove the cgroup ${group}: rmdir it by hand`);
    }
  };
  process.on("exit", remove);
  const statFile = group.includes("/blkio/") ? `${group}/blkio.throttle.io_service_bytes` : `${group}/io.stat`;
  return {
    label,
    group,
    remove,
    /** The FUSE daemon moved into the group ({pid, image}), or null. */
    daemon,
    /** Bytes the group's processes have read from the disk so far (the kernel's count), or null. */
    readBytes: () => {
      try {
        return groupReadBytes(fs.readFileSync(statFile, "utf8"), disk);
      } catch {
        return null;
      }
    },
    /** argv that runs `argv` inside the group (the shell moves itself in, then execs). */
    wrap: (argv) => ["sh", "-c", `echo $$ > ${group}/cgroup.procs && exec "$@"`, "sh", ...argv],
  };
}
