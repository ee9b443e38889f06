import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { prefetchFigures, readPrefetch } from "../../../../scripts/bench/prefetch.mjs";
import { launchArgv } from "../../../../scripts/bench/launch.mjs";
import { metrics } from "../../../../scripts/bench/summary.mjs";

// last-prefetch.json as the host wrote it after a launch (native-host/tests/prefetch.rs makes one).
const written = {
  at_ms: 1795524342096,
  firefox_pid: 4242,
  plan: { source: "trace", build_id: "20261103151912", traces: 3, fallback: null, learned_stale: false },
  bytes_planned: 126e6,
  plan_ms: 41,
  bytes_read: 118e6,
  bytes_cached: 8e6,
  batches: 7,
  batches_done: 7,
  elapsed_ms: 3900,
  ended: "done",
  files_exact: 160,
  files_probed: 0,
  errors: [],
};

test("the prefetch's figures are those of this Firefox's launch only", () => {
  assert.deepEqual(prefetchFigures(written, 4242), {
    source: "trace",
    fallback: null,
    traces: 3,
    bytesPlanned: 126e6,
    bytesRead: 118e6,
    bytesCached: 8e6,
    batches: 7,
    ms: 3900,
    planMs: 41,
    strategy: "beside",
    readAheadKb: null,
    ended: "done",
    filesExact: 160,
    filesProbed: 0,
    errors: 0,
  });
  assert.equal(prefetchFigures(written, 1), null, "another launch's record");
  const first = prefetchFigures({ ...written, strategy: "first", read_ahead_kb: 8192 }, 4242);
  assert.deepEqual([first.strategy, first.readAheadKb], ["first", 8192]);
  assert.equal(prefetchFigures(null, 4242), null);
  const failed = prefetchFigures({ ...written, plan: { source: null, fallback: { code: "other_build" } }, failed: "cannot resolve /x" }, 4242);
  assert.equal(failed.fallback, "other_build");
  assert.equal(failed.failed, "cannot resolve /x");
});

test("readPrefetch waits for the record of its pid, and gives up with null", async (t) => {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), "bench-prefetch-"));
  t.after(() => fs.rmSync(state, { recursive: true, force: true }));
  fs.mkdirSync(path.join(state, "about-startup"));
  const file = path.join(state, "about-startup", "last-prefetch.json");
  fs.writeFileSync(file, JSON.stringify({ ...written, firefox_pid: 1 }));
  setTimeout(() => fs.writeFileSync(file, JSON.stringify(written)), 100);
  assert.equal((await readPrefetch(state, 4242, { timeoutMs: 3000 })).bytesRead, 118e6);
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
    { milestones: { sessionRestored: 4000 }, bench: { scenario: "launch-prefetch", prefetch: prefetchFigures(written, 4242), stillCachedBytes: 0 } },
    { milestones: { sessionRestored: 12000 }, bench: { scenario: "cold", stillCachedBytes: 8192 } },
  ];
  const keys = metrics(records).map((m) => m.key);
  assert.ok(keys.includes("prefetch") && keys.includes("prefetchBytes") && keys.includes("stillCached"), keys.join(","));
  const bytes = metrics(records).find((m) => m.key === "prefetchBytes");
  assert.equal(bytes.value(records[0]), 118);
  assert.equal(bytes.value(records[1]), undefined);
});
