// The disk's readahead window (/sys/dev/block/MAJ:MIN/queue/read_ahead_kb), read for every
// benchmark run and, with --read-ahead-kb, set for the run and put back afterwards.
//
// Why it matters: the window decides how a cold start reads. At this VM's 8 MiB a cold start of
// Firefox is a few huge sequential reads; at the common desktop default of 128 KiB it is ~1,700
// small faults, seek- and IOPS-bound (shared/NOTES.md). A figure without the window is not
// comparable with another machine's.
import fs from "node:fs";

/** The sysfs file of a whole disk given as "MAJ:MIN" (diskOf() in slow-disk.mjs gives one). */
export function readAheadFile(disk) {
  if (!/^\d+:\d+$/.test(disk ?? "")) {
    throw new Error(`not a disk MAJ:MIN: ${disk}`);
  }
  return `/sys/dev/block/${disk}/queue/read_ahead_kb`;
}

/** The window in KiB, or null when the disk has no such file (e.g. a disk-less container). */
export function readAheadKb(disk, { fsApi = fs } = {}) {
  try {
    const kb = Number(fsApi.readFileSync(readAheadFile(disk), "utf8").trim());
    return Number.isInteger(kb) && kb >= 0 ? kb : null;
  } catch {
    return null;
  }
}

/** "128" → 128; a whole number of KiB from 0 to 1 GiB (the kernel takes any; a typo should not). */
export function parseReadAheadKb(text) {
  if (!/^\d+$/.test(String(text)) || Number(text) > 1 << 20) {
    throw new Error(`--read-ahead-kb wants a whole number of KiB (e.g. 128, the common default), not ${text}`);
  }
  return Number(text);
}

/**
 * Sets the window of `disk` to `kb` (root) and returns {before, after, restore()}. restore() puts
 * the old value back; it also runs on process exit, which the benchmark's SIGINT/SIGTERM handlers
 * and its failure path reach through process.exit, so Ctrl-C and a crash restore it too.
 */
export function setReadAheadKb(disk, kb, { fsApi = fs, onExit = (fn) => process.on("exit", fn) } = {}) {
  const file = readAheadFile(disk);
  const before = readAheadKb(disk, { fsApi });
  if (before === null) {
    throw new Error(`--read-ahead-kb: ${file} cannot be read; this disk's readahead window cannot be set here`);
  }
  try {
    fsApi.writeFileSync(file, String(kb));
  } catch (error) {
    throw new Error(`--read-ahead-kb: could not write ${file} (${error.code ?? error.message}); it needs root`, { cause: error });
  }
  let restored = before === kb;
  const restore = () => {
    if (restored) return;
    restored = true;
    try {
      fsApi.writeFileSync(file, String(before));
    } catch (error) {
      console.error(`could not restore ${file} to ${before}: ${error.message} (echo ${before} > ${file})`);
    }
  };
  onExit(restore);
  return { before, after: readAheadKb(disk, { fsApi }), restore };
}
