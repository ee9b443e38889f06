// An emulated slow disk for benchmarks: a blkio cgroup (v1 blkio.throttle, or v2 io.max) whose
// read bandwidth and IOPS are capped on the disk that holds a folder (shared/NOTES.md). Commands
// run inside it with `wrap(argv)`; `remove()` deletes it and runs on exit too.
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
export function diskOf(dir, { fsApi = fs, depth = 0 } = {}) {
  const dev = fsApi.statSync(dir).dev;
  let majMin = `${Math.floor(dev / 256) & 0xfff}:${(dev & 0xff) | ((dev >> 12) & 0xfff00)}`;
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
  const label = `${mib} MiB/s, ${iops} IOPS (${group.includes("/blkio/") ? "cgroup v1 blkio" : "cgroup v2 io.max"} on ${disk})`;
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
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
