import { test } from "node:test";
import assert from "node:assert/strict";
import { median, medianRows, usedInstallBytes } from "../../../../scripts/bench/medians.mjs";

const rec = (scenario, sessionRestored, preloadMs = null, readAheadKb = 128) => ({ milestones: { sessionRestored }, bench: { scenario, preloadMs, readAheadKb } });

test("median of odd and even counts, ignoring missing values", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([null, 5]), 5);
  assert.equal(median([]), null);
});

test("rows: preload + start against cold and against the floor of the same readahead", () => {
  const records = [
    rec("cold", 12000), rec("cold", 11000), rec("cold", 13000),
    rec("hot", 700), rec("hot", 800), rec("hot", 750),
    rec("preload-plan-traced", 800, 4000), rec("preload-plan-traced", 900, 4200), rec("preload-plan-traced", 700, 4300),
    rec("cold", 9000, null, 8192),
  ];
  // 100 MB at 25 MB/s = 4 s, + hot 750 ms = 4,750 ms.
  const rows = medianRows(records, { floorBytes: { 128: 100e6 }, bps: 25e6 });
  const traced = rows.find((r) => r.scenario === "preload-plan-traced");
  assert.equal(traced.totalMs, 5000);
  assert.equal(traced.vsCold, 5000 / 12000);
  assert.equal(traced.floorMs, 4750);
  assert.equal(traced.vsFloor, 5000 / 4750);
  const cold8 = rows.find((r) => r.readAheadKb === 8192);
  assert.equal(cold8.vsCold, 1);
  assert.equal(cold8.floorMs, null, "no hot start and no floor bytes at 8 MiB: no floor");
});

test("used bytes count only the install folder's files, not written ones", () => {
  const trace = {
    files: [
      { path: "/ff/libxul.so", resolved: true, written: false, used: [[0, 2], [10, 1]] },
      { path: "/ff/new.sqlite", resolved: true, written: true, used: [[0, 5]] },
      { path: "/usr/lib/libc.so.6", resolved: true, written: false, used: [[0, 7]] },
      { path: "/ffx/other", resolved: true, written: false, used: [[0, 7]] },
      { path: "/ff/omni.ja", resolved: true, written: false },
    ],
  };
  assert.equal(usedInstallBytes(trace, "/ff"), 3 * 4096);
});
