// The launch prefetch's own figures for a benchmark record: what `about-startup-host launch
// --prefetch` wrote to last-prefetch.json in the run's state folder for that Firefox (the
// prefetcher is not in Firefox's process tree, so the start's read_bytes do not count its
// reads). The prefetcher writes the file when it ends, at the latest when Firefox exits.
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { stateDir } from "../lib/state-layout.mjs";

/** The profile's part of a prefetch record: planned, read, skipped as changed since the trace, or left out and why. Pure. */
export function profileFigures(json) {
  const p = json.profile;
  return {
    bytesPlanned: p.bytes ?? 0,
    files: p.files ?? 0,
    bytesRead: json.bytes_read_profile ?? 0,
    changedFiles: (p.changed ?? []).reduce((sum, c) => sum + (c.files ?? 0), 0),
    leftOut: p.left_out?.code ?? null,
  };
}

/** last-prefetch.json's figures as the record's `prefetch` object, or null if not this pid's. Pure. */
export function prefetchFigures(json, pid) {
  if (!json || json.firefox_pid !== pid) {
    return null;
  }
  return {
    source: json.plan?.source ?? null,
    fallback: json.plan?.fallback?.code ?? null,
    traces: json.plan?.traces ?? 0,
    bytesPlanned: json.bytes_planned ?? 0,
    bytesRead: json.bytes_read ?? 0,
    bytesCached: json.bytes_cached ?? 0,
    batches: json.batches ?? 0,
    ms: json.elapsed_ms ?? null,
    planMs: json.plan_ms ?? null,
    // Beside the start, or first (an older host's record has none: beside).
    strategy: json.strategy ?? "beside",
    readAheadKb: json.read_ahead_kb ?? null,
    ended: json.ended ?? null,
    filesExact: json.files_exact ?? 0,
    filesProbed: json.files_probed ?? 0,
    errors: (json.errors ?? []).length,
    ...(json.failed ? { failed: json.failed } : {}),
    // The user's profile in the plan (learn/plan/profile.rs): absent where the plan says nothing
    // of one (the learned plan, an older host).
    ...(json.profile ? { profile: profileFigures(json) } : {}),
    // An install on a compressed mount (firefox/compressed/): what the prefetch did there, the
    // image's ranges read raw or left off and why, and what it mapped and read of the image.
    ...(json.compressed ? { compressed: { format: json.compressed.format ?? null, verdict: json.compressed.verdict ?? null, leftOff: json.compressed.left_off ?? null } } : {}),
    ...(json.image_read ? { imageRead: imageFigures(json.image_read) } : {}),
  };
}

/** last-prefetch.json's `image_read`: the plan mapped through the image and read from it. Pure. */
export function imageFigures(read) {
  return {
    filesMapped: read.files_mapped ?? 0,
    bytesImagePlanned: read.bytes_image_planned ?? 0,
    bytesImageRead: read.bytes_image_read ?? 0,
    bytesFilesMapped: read.bytes_files_mapped ?? 0,
    bytesUnmapped: read.bytes_unmapped ?? 0,
    bytesOutside: read.bytes_outside ?? 0,
    // The plan's first-use batches mapped to the image (absent from an older host: null).
    batches: read.batches ?? null,
    batchesDone: read.batches_done ?? null,
    ended: read.ended ?? null,
    // A FUSE mount's decompression ahead through the mount (absent from an older host: null).
    bytesWarmPlanned: read.bytes_warm_planned ?? null,
    bytesWarmed: read.bytes_warmed ?? null,
    warmMs: read.warm_ms ?? null,
  };
}

/** Waits (up to `timeoutMs`) for the prefetch record of Firefox `pid` in `stateHome`; null if none came. */
export async function readPrefetch(stateHome, pid, { timeoutMs = 10000 } = {}) {
  const file = path.join(stateDir(stateHome), "last-prefetch.json");
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const figures = prefetchFigures(JSON.parse(fs.readFileSync(file, "utf8")), pid);
      if (figures) {
        return figures;
      }
    } catch {
      // not written yet, or being replaced
    }
    if (Date.now() > deadline) {
      return null;
    }
    await sleep(50);
  }
}
