import { test } from "node:test";
import assert from "node:assert/strict";
import { benchPlan } from "../../../../scripts/bench/plan.mjs";

test("one warm-up per scenario first, then the runs interleaved with a rotating order", () => {
  const plan = benchPlan(["cold", "preload", "hot"], 3);
  assert.deepEqual(
    plan.map((s) => `${s.scenario}${s.warmup ? "*" : s.run}`),
    ["cold*", "preload*", "hot*", "cold1", "preload1", "hot1", "preload2", "hot2", "cold2", "hot3", "cold3", "preload3"],
  );
  assert.ok(plan.slice(0, 3).every((s) => s.warmup && s.run === 0));
});

test("every scenario gets exactly N counted runs, numbered 1..N", () => {
  const plan = benchPlan(["hot", "cold"], 5);
  for (const scenario of ["hot", "cold"]) {
    const runs = plan.filter((s) => s.scenario === scenario && !s.warmup).map((s) => s.run);
    assert.deepEqual(runs, [1, 2, 3, 4, 5]);
  }
  assert.equal(plan.length, 12);
  assert.deepEqual(benchPlan(["hot"], 2).map((s) => s.run), [0, 1, 2]);
});
