#!/usr/bin/env node
// The traced start's used pages of an install, and the reader the packing benchmarks time: it
// reads those ranges of each file under a root with pread, nothing else, and prints the bytes
// read. One module for scripts/bench/pack-timing.mjs and native-host/bench/pack-sweep.mjs, both
// of which time it as a child process (its CPU through /usr/bin/time: the decompression an image
// costs, against the same reads of the plain install).
//
//   node scripts/lib/read-ranges.mjs ROOT RANGES.json
//
// RANGES.json: [[path relative to ROOT, [[offset, length], …]], …] in bytes (usedRanges).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** This file: run it as `node READER ROOT RANGES.json`. */
export const READER = fileURLToPath(import.meta.url);

/**
 * The used pages (4 KiB) of `trace`'s files under `installDir` as byte ranges relative to it:
 * [[rel, [[offset, length], …]], …], files without page use left out. Pure.
 */
export function usedRanges(trace, installDir) {
  return (trace.files ?? [])
    .filter((f) => f.used && String(f.path).startsWith(`${installDir}/`))
    .map((f) => [path.relative(installDir, f.path), f.used.map(([first, pages]) => [first * 4096, pages * 4096])]);
}

/** Bytes in `ranges` (as usedRanges gives them). Pure. */
export function rangeBytes(ranges) {
  return ranges.reduce((s, [, rs]) => s + rs.reduce((x, [, n]) => x + n, 0), 0);
}

/** Read `ranges` of the files under `root` with pread in 1 MiB slices; the bytes read (a file's end stops its range). */
export function readRanges(root, ranges) {
  const buf = Buffer.alloc(1 << 20);
  let total = 0;
  for (const [rel, rs] of ranges) {
    const fd = fs.openSync(path.join(root, rel), "r");
    try {
      for (const [o, n] of rs) {
        for (let at = o; at < o + n; ) {
          const got = fs.readSync(fd, buf, 0, Math.min(buf.length, o + n - at), at);
          if (got === 0) break;
          at += got;
          total += got;
        }
      }
    } finally {
      fs.closeSync(fd);
    }
  }
  return total;
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === READER) {
  const [root, file] = process.argv.slice(2);
  if (!root || !file) {
    console.error("usage: node scripts/lib/read-ranges.mjs ROOT RANGES.json");
    process.exit(2);
  }
  console.log(readRanges(root, JSON.parse(fs.readFileSync(file, "utf8"))));
}
