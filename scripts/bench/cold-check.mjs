// The benchmark must not report a cold start that was not cold. Evicting drops every clean page
// of Firefox's files except those a running process maps: a Firefox left running by something
// else kept libxul.so and omni.ja cached, and every "cold" launch read 58 MB instead of 148 MB
// without a word (issue 22). So after each evict: how much stayed cached (the host's own
// resident_after, exact as root), and which processes map Firefox's files; if one does, wait a
// little for it to go, then stop and name it, unless the run was told to go on (--allow-warm).
// What stayed is recorded with every run either way. Collaborators are parameters (the /proc
// reader, the clock, the sleep) so the policy is tested with fakes and with a real process.
import fs from "node:fs";
import path from "node:path";

/** The page size of the host's counts (x86-64 and arm64 Linux as shipped: 4 KiB). */
export const PAGE_BYTES = 4096;
/** How long to wait for a process that maps Firefox's files to exit before stopping. */
export const WAIT_MS = 10000;

/** A cold start that could not be made cold: shown with the names, not a stack trace. */
export class ColdCheckError extends Error {
  constructor(message) {
    super(message);
    this.name = "ColdCheckError";
  }
}

/**
 * What an `evict --json` reply says stayed cached: bytes (null if any file's residency was
 * hidden from this user), and the files that kept most, largest first (at most 5). Pure.
 */
export function stillCached(reply, pageBytes = PAGE_BYTES) {
  const files = Array.isArray(reply?.files) ? reply.files : [];
  let bytes = 0;
  let hidden = 0;
  const kept = [];
  for (const f of files) {
    if (typeof f?.resident_after !== "number") {
      hidden += f?.status === "hidden" ? 1 : 0;
      continue;
    }
    if (f.resident_after > 0) {
      kept.push({ path: f.path, bytes: f.resident_after * pageBytes });
      bytes += f.resident_after * pageBytes;
    }
  }
  kept.sort((a, b) => b.bytes - a.bytes || String(a.path).localeCompare(String(b.path)));
  return { bytes: hidden > 0 ? null : bytes, hiddenFiles: hidden, files: kept.slice(0, 5) };
}

/**
 * Processes that map a file under `installDir`: [{pid, comm, cmdline, files}] (files: the
 * mapped paths, at most 3). Reads /proc/<pid>/maps, comm and cmdline through `fsApi`; a process
 * that exits meanwhile, or is not ours to read, is skipped.
 */
export function mappers(installDir, { procDir = "/proc", fsApi = fs, self = process.pid } = {}) {
  const prefix = `${installDir.replace(/\/+$/, "")}/`;
  const found = [];
  for (const entry of fsApi.readdirSync(procDir)) {
    if (!/^\d+$/.test(entry) || Number(entry) === self) {
      continue;
    }
    let maps;
    try {
      maps = fsApi.readFileSync(path.join(procDir, entry, "maps"), "utf8");
    } catch {
      continue;
    }
    const files = new Set();
    for (const line of maps.split("\n")) {
      // address perms offset dev inode path: the path is what follows the fifth field.
      const m = /^\S+ \S+ \S+ \S+ \d+\s+(\/.*)$/.exec(line);
      if (m && m[1].startsWith(prefix)) {
        files.add(m[1].replace(/ \(deleted\)$/, ""));
      }
    }
    if (files.size === 0) {
      continue;
    }
    const read = (name) => {
      try {
        return fsApi.readFileSync(path.join(procDir, entry, name), "utf8");
      } catch {
        return "";
      }
    };
    found.push({
      pid: Number(entry),
      comm: read("comm").trim(),
      cmdline: read("cmdline").split("\0").filter(Boolean).join(" ").slice(0, 200),
      files: [...files].sort().slice(0, 3),
    });
  }
  return found.sort((a, b) => a.pid - b.pid);
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

/** The words of a refusal: what stayed, who keeps it, what to do. Pure. */
export function refusal(cached, held, installDir) {
  const what = cached.bytes === null ? "the mapped part of Firefox's files (how much, the kernel hides from this user)" : `${mb(cached.bytes)} of Firefox's files`;
  const files = cached.files.map((f) => `${path.relative(installDir, f.path) || f.path} (${mb(f.bytes)})`).join(", ");
  const who = held.map((p) => `${p.comm || "?"} (pid ${p.pid}${p.cmdline ? `: ${p.cmdline}` : ""})`).join("; ");
  return `not a cold start: after evicting, ${what} stayed cached${files ? `: ${files}` : ""}, because ${held.length === 1 ? "this process maps them" : "these processes map them"}: ${who}. Quit ${held.length === 1 ? "it" : "them"} (or kill ${held.map((p) => p.pid).join(" ")}) and run again, or pass --allow-warm to go on and record what stayed cached`;
}

/**
 * Evict (with `evict()`, which returns the host's evict reply), then check. While a process maps
 * Firefox's files, evict again every second for up to `waitMs`; then throw a ColdCheckError
 * naming it, unless `allowWarm`. Returns {reply, stillCachedBytes, stillCachedFiles, heldBy}.
 */
export function evictCold(evict, { installDir, allowWarm = false, waitMs = WAIT_MS, findMappers = (dir) => mappers(dir), now = Date.now, sleep = sleepSync }) {
  const deadline = now() + waitMs;
  for (;;) {
    const reply = evict();
    const cached = stillCached(reply);
    const held = cached.bytes === 0 ? [] : findMappers(installDir);
    if (held.length === 0 || allowWarm || now() >= deadline) {
      if (held.length > 0 && !allowWarm) {
        throw new ColdCheckError(refusal(cached, held, installDir));
      }
      return {
        reply,
        stillCachedBytes: cached.bytes,
        stillCachedFiles: cached.files,
        heldBy: held.map(({ pid, comm }) => ({ pid, comm })),
      };
    }
    sleep(1000);
  }
}

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
