import { test } from "node:test";
import assert from "node:assert/strict";
import { checkExport } from "../../../../extension/lib/models/export.js";
import { benchExport, benchRecord, likePairs, pairs, profileWarning, readRuns, scenarioExport } from "../../../../scripts/bench/results.mjs";

function record(id, sessionRestored) {
  return {
    id,
    recordedAt: 1763768003100,
    mode: "full",
    firefox: { version: "153.7.0", buildId: "20261103151912" },
    os: "linux",
    kernel: "6.18.44",
    processStart: 1763768000123,
    milestones: { main: 20, sessionRestored },
    io: { readBytes: 0, majorFaults: 0, treeReadBytes: 0, treeMajorFaults: 0, sampledAt: 2000 },
    precision: { processStart: 1, milestones: 1 },
    notes: [],
  };
}

const records = [
  benchRecord(record("full-1", 9000), { scenario: "cold", run: 1, quit: "clean", slowDisk: "30:150" }),
  benchRecord(record("full-2", 450), { scenario: "preload", run: 1, preloadMs: 9800, quit: "clean", slowDisk: "30:150", readAheadKb: 128 }),
  benchRecord(record("full-3", 440), { scenario: "hot", run: 1, quit: "sigterm", slowDisk: "30:150" }),
];
const meta = { command: "npm run bench -- --runs 1", scenarios: ["cold", "preload", "hot"], runs: 1 };

test("a bench run is an export the page's import accepts, source bench", () => {
  const doc = benchExport(records, meta, { exportedAt: 1763768100000 });
  assert.deepEqual(checkExport(doc), { ok: true });
  assert.equal(doc.source, "bench");
  assert.equal(doc.current, null);
  assert.equal(doc.history.length, 3);
  assert.deepEqual(doc.environment, { firefoxVersion: "153.7.0", buildId: "20261103151912", os: "linux", kernel: "6.18.44", mode: "full" });
  assert.deepEqual(doc.history[1].bench, { scenario: "preload", run: 1, preloadMs: 9800, quit: "clean", slowDisk: "30:150", readAheadKb: 128 });
  // The window is always there, null where it was not known.
  assert.equal(doc.history[0].bench.readAheadKb, null);
  assert.deepEqual(doc.bench, meta);
});

test("a login scenario's figures travel with the record; undefined ones are left out", () => {
  const r = benchRecord(record("full-4", 500), { scenario: "login", run: 2, quit: "clean", workloadMs: 5100, loginPreloadMs: 9000, loginPreloadDone: true, loginDelayMs: 30000, order: undefined });
  assert.deepEqual(r.bench, {
    scenario: "login",
    run: 2,
    preloadMs: null,
    quit: "clean",
    slowDisk: null,
    readAheadKb: null,
    workloadMs: 5100,
    loginPreloadMs: 9000,
    loginPreloadDone: true,
    loginDelayMs: 30000,
  });
});

test("a record the import would refuse stops the export", () => {
  const bad = [{ ...records[0], milestones: { sessionRestored: "slow" } }];
  assert.throws(() => benchExport(bad, meta), /would not import: history\[0\]\.milestones\.sessionRestored/);
});

test("one scenario's own export, for the page", () => {
  const doc = scenarioExport(benchExport(records, meta), "hot");
  assert.deepEqual(checkExport(doc), { ok: true });
  assert.deepEqual(doc.history.map((r) => r.id), ["full-3"]);
  assert.deepEqual(doc.bench.scenarios, ["hot"]);
});

test("readRuns groups by scenario and refuses what is not an export", () => {
  const groups = readRuns(JSON.stringify(benchExport(records, meta)));
  assert.deepEqual([...groups.keys()], ["cold", "preload", "hot"]);
  assert.throws(() => readRuns("{", "x.json"), /x\.json is not an about-startup export \(not-json\)/);
  assert.throws(() => readRuns('{"format": "other"}', "y.json"), /\(foreign\)/);
});

test("pairs: scenarios in common, named ones, or the only groups", () => {
  const a = new Map([["cold", [1]], ["hot", [2]]]);
  const b = new Map([["cold", [3]], ["preload", [4]]]);
  assert.deepEqual(pairs(a, b).map((p) => p.label), ["cold"]);
  assert.deepEqual(pairs(a, b, "hot", "preload").map((p) => [p.label, p.a, p.b]), [["hot → preload", [2], [4]]]);
  assert.deepEqual(pairs(a, b, "cold", null).map((p) => p.b), [[3]]);
  const all = new Map([["all", [5]]]);
  assert.deepEqual(pairs(all, new Map([["x", [6]]])).map((p) => p.label), ["all → x"]);
  assert.throws(() => pairs(a, b, "lukewarm", "cold"), /A has no scenario lukewarm; it has cold, hot/);
  assert.throws(() => pairs(new Map([["hot", []]]), new Map([["x", []], ["y", []]])), /no scenario in common/);
  assert.throws(() => pairs(a, new Map([["x", []], ["y", []]]), "cold", null), /name the scenario on both sides/);
});

test("likePairs: split by coldness, says what cannot be compared", () => {
  const at = (id, coldness) => ({ id, coldness: { class: coldness }, milestones: {} });
  const pair = { label: "all", aName: "all", bName: "all", a: [at("a1", "cold"), at("a2", "hot"), at("a3", "warm")], b: [at("b1", "hot"), at("b2", "cold"), at("b3", "cold")] };
  const { comparisons, notes } = likePairs(pair);
  assert.deepEqual(
    comparisons.map((c) => [c.label, c.a.map((r) => r.id), c.b.map((r) => r.id)]),
    [
      ["all, cold starts", ["a1"], ["b2", "b3"]],
      ["all, hot starts", ["a2"], ["b1"]],
    ],
  );
  assert.equal(notes.length, 1);
  assert.match(notes[0], /not compared.*1 warm starts of A/);
  const apart = likePairs({ ...pair, a: [at("a1", "cold")], b: [at("b1", "hot")] });
  assert.deepEqual(apart.comparisons, []);
  assert.match(apart.notes[0], /cannot compare like with like \(A: 1 cold; B: 1 hot\)/);
  const asked = likePairs({ ...pair, label: "cold → preload", a: [at("a1", "cold")], b: [at("b1", "hot")] }, { explicit: true });
  assert.equal(asked.comparisons.length, 1, "named scenarios are compared as asked");
  assert.match(asked.notes[0], /not like with like/);
  assert.deepEqual(likePairs({ ...pair, a: [at("a", "hot")], b: [at("b", "hot")] }, { explicit: true }).notes, []);
});

test("profileWarning: runs on different profiles are named as such; the same profile, no warning", () => {
  const on = (profile, profileSeed) => benchRecord(record("r", 900), { scenario: "cold", run: 1, quit: "clean", profile, profileSeed });
  const warning = profileWarning([on("small", 1)], [on("fresh")], "cold");
  assert.match(warning, /^cold: A ran on profile small, seed 1, B on profile fresh: the difference includes what the profiles themselves cost/);
  assert.match(profileWarning([on("small", 1)], [on("small", 2)], "cold"), /small, seed 1, B on profile small, seed 2/);
  assert.equal(profileWarning([on("medium", 1), on("medium", 1)], [on("medium", 1)], "cold"), null);
  // Bench runs from before --profile-preset carry no profile: they ran on fresh profiles.
  const older = benchRecord(record("o", 900), { scenario: "cold", run: 1, quit: "clean" });
  assert.equal(profileWarning([older], [on("fresh")], "cold"), null);
  // An extension's own export: the user's own profile, never like a benchmark's.
  assert.match(profileWarning([record("x", 900)], [on("fresh")], "all → cold"), /A ran on profile a user's own, B on profile fresh/);
});
