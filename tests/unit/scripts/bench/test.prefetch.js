import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { prefetchFigures, readPrefetch } from "../../../../scripts/bench/prefetch.mjs";
import { launchArgv } from "../../../../scripts/bench/launch.mjs";
import { metrics } from "../../../../scripts/bench/summary.mjs";
import { recordedReply } from "../../host-replies.js";
import { stateDir } from "../../../../scripts/lib/state-layout.mjs";

// last-prefetch.json as the host wrote it after a launch through the desktop entry
// (tests/fixtures/host/last-prefetch.json, scripts/record-host-replies.mjs): the traced plan of
// one cold start, read first on this 8 MiB-readahead disk, for Firefox 2441.
const written = recordedReply("last-prefetch").reply;
const PID = 2441;

test("the prefetch's figures are those of this Firefox's launch only", () => {
  assert.deepEqual(prefetchFigures(written, PID), {
    source: "trace",
    fallback: null,
    traces: 1,
    bytesPlanned: 210_492_366,
    bytesRead: 210_484_174,
    bytesCached: 8_192,
    batches: 27,
    ms: 1085,
    planMs: 10,
    strategy: "first",
    readAheadKb: 8192,
    ended: "done",
    filesExact: 24,
    filesProbed: 0,
    errors: 0,
    // recorded with a profile other than the plan's: nothing of it planned, and why
    profile: { bytesPlanned: 0, bytesRead: 0, changedFiles: 0, files: 0, leftOut: "other_profile" },
  });
  assert.equal(prefetchFigures(written, 1), null, "another launch's record");
  // An older host's record says nothing of the strategy: beside the start.
  const older = prefetchFigures({ ...written, strategy: undefined, read_ahead_kb: undefined }, PID);
  assert.deepEqual([older.strategy, older.readAheadKb], ["beside", null]);
  assert.equal(prefetchFigures(null, PID), null);
  const failed = prefetchFigures({ ...written, plan: { source: null, fallback: { code: "other_build" } }, failed: "cannot resolve /x" }, PID);
  assert.equal(failed.fallback, "other_build");
  assert.equal(failed.failed, "cannot resolve /x");
  assert.equal(prefetchFigures(written, PID).compressed, undefined, "a plain install's record has no compressed part");
});

test("on a compressed mount: the verdict, and what was mapped and read of the image", () => {
  // The fields as tests/compressed.rs sees the host write them for a readable image, and for a
  // Snap's it may not read.
  const raw = {
    ...written,
    compressed: { format: "squashfs", mount_point: "/m", image: "/i.sqfs", access: { code: "readable" }, verdict: "image_ranges" },
    image_read: { files_mapped: 1, bytes_image_planned: 2097152, bytes_image_read: 2097152, bytes_files_mapped: 2097152, bytes_unmapped: 0, bytes_outside: 4096, batches: 2, batches_done: 2, elapsed_ms: 3, ended: "done", errors: [] },
  };
  const f = prefetchFigures(raw, PID);
  assert.deepEqual(f.compressed, { format: "squashfs", verdict: "image_ranges", leftOff: null });
  assert.deepEqual(f.imageRead, { filesMapped: 1, bytesImagePlanned: 2097152, bytesImageRead: 2097152, bytesFilesMapped: 2097152, bytesUnmapped: 0, bytesOutside: 4096, batches: 2, batchesDone: 2, ended: "done", bytesWarmPlanned: null, bytesWarmed: null, warmMs: null });
  // On squashfuse_ll: the file bytes decompressed ahead through the mount, and when.
  const fuse = prefetchFigures({ ...raw, image_read: { ...raw.image_read, bytes_warm_planned: 262144, bytes_warmed: 131072, warm_ms: 40, warm_ended: "firefox_exited" } }, PID).imageRead;
  assert.deepEqual([fuse.bytesWarmPlanned, fuse.bytesWarmed, fuse.warmMs], [262144, 131072, 40]);
  // An older host's record has no batches: null, not 0.
  const older = { ...raw.image_read };
  delete older.batches;
  delete older.batches_done;
  const olderFigures = prefetchFigures({ ...raw, image_read: older }, PID).imageRead;
  assert.deepEqual([olderFigures.batches, olderFigures.batchesDone], [null, null]);
  const snap = prefetchFigures({ ...written, compressed: { ...raw.compressed, access: { code: "not_readable" }, verdict: "left_off", left_off: "image_not_readable" } }, PID);
  assert.deepEqual(snap.compressed, { format: "squashfs", verdict: "left_off", leftOff: "image_not_readable" });
  assert.equal(snap.imageRead, undefined);
});

test("readPrefetch waits for the record of its pid, and gives up with null", async (t) => {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), "bench-prefetch-"));
  t.after(() => fs.rmSync(state, { recursive: true, force: true }));
  fs.mkdirSync(stateDir(state));
  const file = path.join(stateDir(state), "last-prefetch.json");
  fs.writeFileSync(file, JSON.stringify({ ...written, firefox_pid: 1 }));
  setTimeout(() => fs.writeFileSync(file, JSON.stringify(written)), 100);
  assert.equal((await readPrefetch(state, PID, { timeoutMs: 3000 })).bytesRead, 210_484_174);
  assert.equal(await readPrefetch(state, 999, { timeoutMs: 100 }), null);
});

test("a prefetch launch runs the host, which takes Firefox's arguments after --", () => {
  const paths = { profile: "/r/profile" };
  assert.deepEqual(launchArgv("/ff/firefox-esr", paths), ["/ff/firefox-esr", "-profile", "/r/profile", "-no-remote", "--headless"]);
  assert.deepEqual(launchArgv("/ff/firefox-esr", paths, ["host", "launch", "--prefetch", "--firefox", "/ff/firefox-esr", "--"]), [
    "host",
    "launch",
    "--prefetch",
    "--firefox",
    "/ff/firefox-esr",
    "--",
    "-profile",
    "/r/profile",
    "-no-remote",
    "--headless",
  ]);
});

test("the run's table shows the prefetch beside the start and what stayed cached", () => {
  const records = [
    { milestones: { sessionRestored: 4000 }, bench: { scenario: "launch-prefetch", prefetch: prefetchFigures(written, PID), stillCachedBytes: 0 } },
    { milestones: { sessionRestored: 12000 }, bench: { scenario: "cold", stillCachedBytes: 8192 } },
  ];
  const keys = metrics(records).map((m) => m.key);
  assert.ok(keys.includes("prefetch") && keys.includes("prefetchBytes") && keys.includes("stillCached"), keys.join(","));
  const bytes = metrics(records).find((m) => m.key === "prefetchBytes");
  assert.equal(bytes.value(records[0]), 210.484174);
  assert.equal(bytes.value(records[1]), undefined);
});
