import { test } from "node:test";
import assert from "node:assert/strict";
import { stream, zipfWeights } from "../../../../scripts/profile/random.mjs";

test("a stream is the same for the same seed and label, different for another of either", () => {
  const draw = (seed, label) => Array.from({ length: 20 }, ((r) => () => r.int(0, 1e6))(stream(seed, label)));
  assert.deepEqual(draw(1, "history"), draw(1, "history"));
  assert.notDeepEqual(draw(1, "history"), draw(2, "history"));
  assert.notDeepEqual(draw(1, "history"), draw(1, "cookies"));
});

test("draws stay in their ranges and shapes", () => {
  const r = stream(7, "x");
  for (let i = 0; i < 1000; i++) {
    const n = r.int(3, 5);
    assert.ok(n >= 3 && n <= 5 && Number.isInteger(n));
    const f = r.float();
    assert.ok(f >= 0 && f < 1);
  }
  assert.match(r.guid(), /^[A-Za-z0-9_-]{12}$/);
  assert.match(r.uuid(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.match(r.token(10), /^[a-z0-9]{10}$/);
});

test("weighted draws follow the weights: rank 1 of a Zipf law about twice as often as rank 2", () => {
  const weights = zipfWeights(50);
  const r = stream(3, "zipf");
  const counts = new Array(50).fill(0);
  for (let i = 0; i < 50_000; i++) counts[r.weighted(weights)] += 1;
  const ratio = counts[0] / counts[1];
  assert.ok(ratio > 1.8 && ratio < 2.2, `ratio ${ratio}`);
  assert.ok(counts[0] > counts[9] * 8);
});
