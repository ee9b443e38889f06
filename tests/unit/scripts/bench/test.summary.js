import { test } from "node:test";
import assert from "node:assert/strict";
import { byScenario, compareTable, formatDiff, formatStat, metrics, runTable } from "../../../../scripts/bench/summary.mjs";

function rec(scenario, sessionRestored, { preloadMs = null, main = 100, readBytes = 0 } = {}) {
  return {
    id: `full-${Math.random()}`,
    mode: "full",
    milestones: { main, sessionRestored },
    io: { readBytes, majorFaults: 3 },
    bench: { scenario, preloadMs },
  };
}

const cold = [10000, 10200, 9800, 10100].map((v) => rec("cold", v, { main: 3000, readBytes: 271e6 }));
const preload = [450, 470, 480, 460].map((v) => rec("preload", v, { preloadMs: 9800 }));
const hot = [440, 460, 470, 450].map((v) => rec("hot", v));
const all = [...cold, ...preload, ...hot];

test("metrics: milestones by time, then preload, the sum, and the reads", () => {
  assert.deepEqual(
    metrics(all).map((m) => m.key),
    ["main", "sessionRestored", "preload", "preloadPlusSessionRestored", "readBytes", "majorFaults"],
  );
  const sum = metrics(all).find((m) => m.key === "preloadPlusSessionRestored");
  assert.equal(sum.value(preload[0]), 10250);
  assert.equal(sum.value(cold[0]), 10000); // nothing preloaded: the start alone
  assert.deepEqual(metrics([rec("hot", 1000)]).map((m) => m.key), ["main", "sessionRestored", "readBytes", "majorFaults"]);
});

test("byScenario keeps the first-seen order; records without bench fields are 'all'", () => {
  assert.deepEqual([...byScenario(all).keys()], ["cold", "preload", "hot"]);
  assert.deepEqual([...byScenario([{ milestones: {} }]).keys()], ["all"]);
});

test("formatting: mean ± half interval, signed differences with % and n.s.", () => {
  assert.equal(formatStat({ n: 2, mean: 1234.4, ci: { half: 56.2 } }, "ms"), "1,234 ± 56 ms");
  assert.equal(formatStat({ n: 1, mean: 271.3, ci: null }, "MB"), "271.3 MB");
  assert.equal(formatStat({ n: 0 }, "ms"), "—");
  assert.equal(formatDiff({ diff: -9550, relative: -0.955, significant: true }, "ms"), "−9,550 ms (−95.5%)");
  assert.equal(formatDiff({ diff: 12, relative: 0.01, significant: false }, "ms"), "+12 ms (+1.0%), n.s.");
  assert.equal(formatDiff({ diff: 12, relative: null, significant: false }, "", { markInsignificant: false }), "+12");
  assert.equal(formatDiff(null, "ms"), "—");
});

test("runTable: a column per scenario and each one against cold", () => {
  const table = runTable(all, { scenarios: ["cold", "preload", "hot"] }).split("\n");
  assert.equal(table[0], "| milestone (ms since process start) | cold (n = 4) | preload (n = 4) | hot (n = 4) | preload vs cold | hot vs cold |");
  const row = (label) => table.find((l) => l.startsWith(`| ${label} |`)).split(" | ");
  assert.match(row("sessionRestored")[1], /^10,025 ± \d+ ms$/);
  assert.match(row("sessionRestored")[4], /^−9,560 ms \(−95\.4%\)$/);
  // The honest comparison: preload + start against cold is a small saving, not 95%.
  assert.match(row("preload + sessionRestored")[4], /^\+240 ms \(\+2\.4%\)/);
  assert.equal(row("preload (host)")[1], "—");
  assert.match(row("read from storage (parent)")[1], /^271\.0 ± 0\.0 MB$/);
});

test("runTable without the baseline has no difference columns", () => {
  const header = runTable(hot).split("\n")[0];
  assert.equal(header, "| milestone (ms since process start) | hot (n = 4) |");
});

test("compareTable: both sides, B − A, Welch's p and the verdict", () => {
  const table = compareTable(cold, hot, { aLabel: "cold", bLabel: "hot" }).split("\n");
  assert.equal(table[0], "| milestone | cold (n = 4) | hot (n = 4) | B − A | p (Welch) | significant |");
  const sr = table.find((l) => l.startsWith("| sessionRestored |")).split(" | ");
  assert.equal(sr[4], "< 0.001");
  assert.equal(sr[5], "yes |");
  const same = compareTable(hot, hot).split("\n").find((l) => l.startsWith("| sessionRestored |")).split(" | ");
  assert.equal(same[4], "1.000");
  assert.equal(same[5], "no |");
});

test("compareTable says first which profile each side started on, and whether they differ", () => {
  const on = (records, profile, profileSeed) => records.map((r) => ({ ...r, bench: { ...r.bench, profile, profileSeed } }));
  const row = (a, b) => compareTable(a, b).split("\n")[2];
  assert.equal(row(on(cold, "small", 1), on(hot, "fresh")), "| profile | small, seed 1 | fresh | **differs** | — | — |");
  assert.equal(row(on(cold, "large", 3), on(hot, "large", 3)), "| profile | large, seed 3 | large, seed 3 | same | — | — |");
  // A side that mixes profiles says so.
  assert.equal(row([...on(cold, "small", 1), ...on(hot, "fresh")], on(hot, "fresh")), "| profile | fresh; small, seed 1 | fresh | **differs** | — | — |");
});
