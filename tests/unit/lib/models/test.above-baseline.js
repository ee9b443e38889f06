import { test } from "node:test";
import assert from "node:assert/strict";
import { aboveBaseline, baselineOf, diskOf } from "../../../../extension/lib/models/above-baseline.js";
import { COSTLY_ADDON_ID } from "../../../../extension/lib/models/ab-saving.js";
import { costlyAddonCosts } from "../../costs-export.js";

// This start's costs from two real getStartCosts readings (tests/fixtures/start-costs/), the
// webcompat add-on taken as the benchmark's costly one (id changed, builtIn off).
const COSTS = costlyAddonCosts(COSTLY_ADDON_ID);
const BUILD = "20261117185949";
const busy = COSTS.addons.find((a) => a.id === COSTLY_ADDON_ID).startupMs.value;
const start = { firefox: { buildId: BUILD }, milestones: { sessionRestored: 4000 }, io: { readBytes: 5_000_000, treeReadBytes: 7_000_000 }, costs: COSTS };
const bench = (scenario, sessionRestored, { profile = "fresh", buildId = BUILD } = {}) => ({
  firefox: { buildId },
  milestones: { sessionRestored },
  bench: { scenario, run: 1, profile },
  costs: COSTS,
});

test("the baseline: the median hot start on an empty profile of the same build, with where it came from", () => {
  const imports = [
    { name: "old.json", records: [bench("hot", 100)] },
    { name: "empty.json", records: [bench("hot", 900), bench("hot", 1100), bench("hot", 1000), bench("cold", 5000), bench("hot", 9000, { profile: "medium" }), bench("hot", 10, { buildId: "other" })] },
  ];
  assert.deepEqual(baselineOf(start, imports), { ms: 1000, n: 3, from: "empty.json" });
  // Another build's empty profile, or only realistic profiles: no baseline, never a guess.
  assert.equal(baselineOf(start, [{ name: "x", records: [bench("hot", 900, { buildId: "other" }), bench("hot", 900, { profile: "small" })] }]), null);
  assert.equal(baselineOf({ firefox: { buildId: null } }, imports), null);
});

test("above the baseline: the part the A/B benchmark measured as savings of named causes, never the sum of busy times", () => {
  // An empty-profile run (baseline 1,000 ms) and an A/B run on a realistic profile whose costly
  // add-on's removal saved about its busy figure.
  const hot = [1000, 1010, 990, 1005].map((ms) => bench("hot", ms + busy, { profile: "medium" }));
  const without = [1000, 1012, 988, 1000].map((ms) => bench("hot-without-costly-addon", ms, { profile: "medium" }));
  const imports = [
    { name: "empty.json", records: [bench("hot", 1000)] },
    { name: "ab.json", records: [...hot, ...without] },
  ];
  const result = aboveBaseline(start, imports);
  assert.equal(result.aboveMs, 3000);
  const addon = result.causes.find((c) => c.id === COSTLY_ADDON_ID);
  assert.ok(addon.saving, "the costly add-on's saving was measured and agreed");
  assert.equal(result.causes.filter((c) => c.saving).length, 1, "no other cause gets a saving");
  assert.equal(result.measuredMs, addon.saving.ms);
  assert.equal(result.measuredShare, addon.saving.ms / 3000);
  // Without an A/B run: busy times only, no share.
  const busyOnly = aboveBaseline(start, [imports[0]]);
  assert.equal(busyOnly.measuredShare, null);
  assert.ok(busyOnly.causes.length > 1);
  // Without a baseline: nothing above it is known.
  assert.equal(aboveBaseline(start, []).aboveMs, null);
});

test("the disk: the trace's block time where this start was traced, else only what it read", () => {
  assert.deepEqual(diskOf(start), { readBytes: 7_000_000, ms: null, source: "proc-read-bytes" });
  assert.deepEqual(diskOf(start, { blockMs: 812.5 }), { readBytes: 7_000_000, ms: 812.5, source: "trace-block-requests" });
  assert.equal(diskOf({ io: null }), null);
});
