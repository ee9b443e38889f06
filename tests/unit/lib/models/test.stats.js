import { test } from "node:test";
import assert from "node:assert/strict";
import {
  groupKey,
  groupRecords,
  incompleteBeta,
  lnGamma,
  milestoneOrder,
  studentTwoSidedP,
  summarize,
  tCritical95,
  trendPoints,
  welchTest,
} from "../../../../extension/lib/models/stats.js";

const close = (a, b, eps = 1e-6) => assert.ok(Math.abs(a - b) < eps, `${a} ≈ ${b}`);

function record(id, version, buildId, processStart, milestones) {
  return { id, recordedAt: processStart + 5000, mode: "full", firefox: { version, buildId }, processStart, milestones, io: null };
}

test("t critical values: table and the expansion beyond it", () => {
  close(tCritical95(1), 12.706204736);
  close(tCritical95(4), 2.776445105);
  close(tCritical95(30), 2.042272456);
  close(tCritical95(40), 2.021075, 1e-5);
  close(tCritical95(120), 1.979930, 1e-5);
  assert.ok(tCritical95(100000) > 1.95996 && tCritical95(100000) < 1.96);
  assert.equal(tCritical95(0), null);
  assert.equal(tCritical95(2.5), null);
});

test("summarize: mean, sample sd, 95% CI with t(n-1)", () => {
  const s = summarize([10, 12, 14, 16, 18]);
  assert.equal(s.n, 5);
  assert.equal(s.mean, 14);
  close(s.sd, Math.sqrt(10));
  const half = (2.776445105 * Math.sqrt(10)) / Math.sqrt(5);
  close(s.ci.half, half);
  close(s.ci.low, 14 - half);
  close(s.ci.high, 14 + half);
});

test("summarize: one value has no spread and no interval; none has nothing; non-numbers are ignored", () => {
  assert.deepEqual(summarize([42]), { n: 1, mean: 42, sd: null, ci: null });
  assert.deepEqual(summarize([]), { n: 0, mean: null, sd: null, ci: null });
  assert.deepEqual(summarize([undefined, null, Number.NaN, "5"]), { n: 0, mean: null, sd: null, ci: null });
  assert.equal(summarize([3, undefined, 5]).n, 2);
  const same = summarize([7, 7, 7]);
  assert.equal(same.sd, 0);
  assert.equal(same.ci.half, 0);
});

test("milestoneOrder: every key of any record, by typical time", () => {
  const records = [
    record("a", "153.0", "1", 1000, { main: 300, sessionRestored: 2000, firstPaint: 1500 }),
    record("b", "153.0", "1", 2000, { main: 320, sessionRestored: 2100, firstPaint2: 1400 }),
    record("c", "154.0", "2", 3000, { start: 5, main: 310 }),
  ];
  assert.deepEqual(milestoneOrder(records), ["start", "main", "firstPaint2", "firstPaint", "sessionRestored"]);
  assert.deepEqual(milestoneOrder([]), []);
});

test("groupRecords: by version and build, newest group first, current marked, missing stays missing", () => {
  const records = [
    record("a", "153.0", "1", 1000, { main: 300, sessionRestored: 2000 }),
    record("c", "154.0", "2", 3000, { main: 310 }),
    record("b", "153.0", "1", 2000, { main: 320, sessionRestored: 2200 }),
  ];
  const groups = groupRecords(records, { currentId: "c" });
  assert.deepEqual(
    groups.map((g) => [g.version, g.buildId, g.records.map((r) => r.id), g.hasCurrent]),
    [
      ["154.0", "2", ["c"], true],
      ["153.0", "1", ["a", "b"], false],
    ],
  );
  assert.equal(groups[1].stats.main.mean, 310);
  assert.equal(groups[1].stats.sessionRestored.n, 2);
  assert.equal(groups[0].stats.sessionRestored.n, 0, "no sessionRestored in 154: n = 0, not a 0 ms mean");
  assert.equal(groups[0].stats.sessionRestored.mean, null);
  assert.notEqual(groupKey(records[0]), groupKey(records[1]));
  assert.equal(groupKey({ firefox: { version: null, buildId: null } }), "?\u0000?");
});

test("groupRecords: cold and hot starts of one build are separate groups, each with its own mean", () => {
  const at = (id, start, ms, coldness) => ({ ...record(id, "153.0", "1", start, { sessionRestored: ms }), coldness: { class: coldness } });
  const records = [at("h1", 1, 500, "hot"), at("c1", 2, 8900, "cold"), at("h2", 3, 520, "hot"), at("c2", 4, 8800, "cold"), at("u", 5, 700, "unknown")];
  const groups = groupRecords(records, { currentId: "h2" });
  assert.deepEqual(
    groups.map((g) => [g.coldness, g.records.map((r) => r.id), g.stats.sessionRestored.mean, g.hasCurrent]),
    [
      ["cold", ["c1", "c2"], 8850, false],
      ["hot", ["h1", "h2"], 510, true],
      ["unknown", ["u"], 700, false],
    ],
  );
  assert.equal(new Set(groups.map((g) => g.key)).size, 3, "one key per build and class");
});

test("trendPoints: one per start with the milestone, in start order", () => {
  const records = [
    record("b", "153.0", "1", 2000, { sessionRestored: 2200 }),
    record("a", "153.0", "1", 1000, { sessionRestored: 2000 }),
    record("c", "153.0", "1", 3000, { main: 1 }),
  ];
  assert.deepEqual(trendPoints(records, "sessionRestored", "b"), [
    { x: 1000, y: 2000, id: "a", current: false, coldness: "unknown" },
    { x: 2000, y: 2200, id: "b", current: true, coldness: "unknown" },
  ]);
});

test("formatMeanCi: mean ± half-interval; one value has no ±; none is missing, not 0", async () => {
  const { formatMeanCi } = await import("../../../../extension/lib/models/stats.js");
  assert.equal(formatMeanCi(summarize([1000, 1200, 1400]), "en"), `1,200 ± ${Math.round((4.30265273 * 200) / Math.sqrt(3))} ms`);
  assert.equal(formatMeanCi(summarize([1234]), "en"), "1,234 ms");
  assert.equal(formatMeanCi(summarize([]), "en"), "—");
  assert.equal(formatMeanCi(summarize([1000, 1200, 1400]), "en", { unit: false }), `1,200 ± ${Math.round((4.30265273 * 200) / Math.sqrt(3))}`, "no unit for a table whose heading has it");
  assert.equal(formatMeanCi(summarize([1234]), "en", { unit: false }), "1,234");
});

test("ln Γ and the incomplete beta function against closed forms", () => {
  close(lnGamma(0.5), Math.log(Math.sqrt(Math.PI)), 1e-12);
  close(lnGamma(10), Math.log(362880), 1e-10);
  close(lnGamma(1), 0, 1e-12);
  // I_x(1, 1) = x; I_x(a, 1) = x^a; I_x(1, b) = 1 − (1 − x)^b
  close(incompleteBeta(0.3, 1, 1), 0.3, 1e-12);
  close(incompleteBeta(0.7, 3, 1), 0.7 ** 3, 1e-12);
  close(incompleteBeta(0.2, 1, 4), 1 - 0.8 ** 4, 1e-12);
  assert.equal(incompleteBeta(0, 2, 3), 0);
  assert.equal(incompleteBeta(1, 2, 3), 1);
});

test("Student's two-sided p agrees with the t table the intervals use", () => {
  for (const df of [1, 2, 5, 10, 29]) {
    close(studentTwoSidedP(tCritical95(df), df), 0.05, 1e-8);
  }
  close(studentTwoSidedP(1.959963984540054, 1e9), 0.05, 1e-6); // the normal limit
  assert.equal(studentTwoSidedP(0, 7), 1);
  assert.equal(studentTwoSidedP(-Infinity, 7), 0);
  close(studentTwoSidedP(-2.5, 4.5), studentTwoSidedP(2.5, 4.5), 1e-15);
});

test("Welch's t-test: statistic, Welch–Satterthwaite df and p of a worked example", () => {
  // a: mean 3, variance 2.5; b: mean 6, variance 10 (n = 5 each).
  // se² = 2.5/5 + 10/5 = 2.5; t = 3/√2.5; df = 2.5² / (0.5²/4 + 2²/4) = 100/17.
  // p from numerical integration of the t density: 0.1075312.
  const w = welchTest([1, 2, 3, 4, 5], [2, 4, 6, 8, 10]);
  close(w.diff, 3);
  close(w.relative, 1);
  close(w.t, 3 / Math.sqrt(2.5), 1e-12);
  close(w.df, 100 / 17, 1e-12);
  close(w.p, 0.1075312, 1e-6);
  assert.equal(w.significant, false);
  close(w.ci.half, tCritical95(5) * Math.sqrt(2.5), 1e-9);
  assert.equal(w.a.n, 5);
});

test("Welch's t-test: clear differences are significant, either direction", () => {
  const cold = [10100, 9900, 10050, 9950, 10000, 10020];
  const hot = [1600, 1620, 1580, 1610, 1590, 1605];
  const w = welchTest(cold, hot);
  assert.ok(w.diff < 0 && w.t < 0);
  assert.ok(w.p < 1e-6);
  assert.equal(w.significant, true);
  assert.equal(welchTest(hot, cold).p, w.p);
});

test("Welch's t-test: too few values, no spread, alpha", () => {
  assert.equal(welchTest([1], [1, 2, 3]), null);
  assert.equal(welchTest([1, 2], [NaN, 3]), null);
  const same = welchTest([5, 5, 5], [5, 5]);
  assert.equal(same.p, 1);
  assert.equal(same.significant, false);
  const apart = welchTest([5, 5, 5], [7, 7]);
  assert.equal(apart.p, 0);
  assert.equal(apart.significant, true);
  const w = welchTest([1, 2, 3, 4, 5], [2, 4, 6, 8, 10], { alpha: 0.2 });
  assert.equal(w.significant, true);
});
