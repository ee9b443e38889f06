import { test } from "node:test";
import assert from "node:assert/strict";
import { classMeans, coldHotVerdict, thisStartAnswer, VERDICT_MIN } from "../../../extension/lib/verdict.js";

let next = 0;
const start = (coldness, ms, build = "1") => ({
  id: `full-${++next}`,
  recordedAt: next + 1,
  mode: "full",
  firefox: { version: "153.0", buildId: build },
  processStart: next,
  milestones: { sessionRestored: ms },
  io: null,
  coldness: { class: coldness },
});

test("no records: no verdict", () => {
  assert.equal(coldHotVerdict([]), null);
});

test("too few of a kind: says how many more of which kind", () => {
  const verdict = coldHotVerdict([start("cold", 8900), start("hot", 500), start("hot", 510), start("hot", 490), start("warm", 3000)]);
  assert.equal(verdict.state, "thin");
  assert.equal(verdict.needCold, VERDICT_MIN - 1);
  assert.equal(verdict.needHot, 0);
  assert.equal(verdict.diffMs, null);
});

test("both kinds: the cold start's extra cost, with n per kind, for the newest build only", () => {
  const records = [
    start("cold", 20000, "old"),
    start("hot", 100, "old"),
    ...[8800, 8900, 9000].map((ms) => start("cold", ms)),
    ...[480, 500, 520, 500].map((ms) => start("hot", ms)),
  ];
  const verdict = coldHotVerdict(records);
  assert.equal(verdict.state, "ready");
  assert.equal(verdict.buildId, "1");
  assert.equal(verdict.cold.n, 3);
  assert.equal(verdict.hot.n, 4);
  assert.equal(verdict.diffMs, 8900 - 500);
  assert.ok(verdict.test.significant);
  assert.deepEqual(classMeans(records, records.at(-1)), {
    cold: { mean: 8900, n: 3 },
    warm: null,
    hot: { mean: 500, n: 4 },
    unknown: null,
  });
});

test("thisStartAnswer: this start's time, class and reads against its build's cold and hot means", () => {
  const records = [start("cold", 9000), start("cold", 8800), start("hot", 500)];
  const current = { ...start("hot", 700), coldness: { class: "hot", treeReadBytes: 4096 } };
  records.push(current);
  const answer = thisStartAnswer(records, current.id);
  assert.equal(answer.ms, 700);
  assert.equal(answer.coldness, "hot");
  assert.equal(answer.readBytes, 4096);
  assert.deepEqual(answer.cold, { mean: 8900, n: 2 });
  assert.deepEqual(answer.hot, { mean: 600, n: 2 });
  assert.equal(thisStartAnswer(records, "not-recorded"), null);
});
