import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  classify,
  COLD_FROM,
  coldnessOf,
  coldnessProblems,
  FALLBACK_NEED_BYTES,
  HOT_BELOW,
  hasMean,
  LIKE_NOTE_KEYS,
  likeWithLike,
  likeWithLikeNote,
  needOf,
  withColdness,
} from "../../../../extension/lib/models/coldness.js";
import { exportRecords, parseExport } from "../../../../extension/lib/models/export.js";
import { englishMessages } from "../../fakes.js";

// A recorded bench export, every run measured (tests/fixtures/README.md says how it was made):
// cold, preload and hot runs of ESR 153 on this machine's 30 MiB/s, 150 IOPS throttled disk.
const BENCH = readFileSync(new URL("../../../fixtures/bench-cold-preload-hot.json", import.meta.url), "utf8");

const io = (treeReadBytes, more = {}) => ({ readBytes: null, majorFaults: null, treeReadBytes, treeMajorFaults: 0, sampledAt: 1, ...more });
const MB = 1_000_000;

test("needOf: the learned plan, else the install folder, else the fallback", () => {
  assert.deepEqual(needOf({ plannedBytes: 335.6 * MB, installBytes: 308.4 * MB }), { bytes: 335.6 * MB, from: "plan" });
  assert.deepEqual(needOf({ plannedBytes: 0, installBytes: 308.4 * MB }), { bytes: 308.4 * MB, from: "install" });
  assert.deepEqual(needOf({}), { bytes: FALLBACK_NEED_BYTES, from: "fallback" });
  assert.deepEqual(needOf({ plannedBytes: -1, installBytes: "big" }), { bytes: FALLBACK_NEED_BYTES, from: "fallback" });
});

test("classify: the share of the need read decides, at the documented thresholds", () => {
  const need = { bytes: 100 * MB, from: "install" };
  assert.equal(classify(io(0), need).class, "hot");
  assert.equal(classify(io(HOT_BELOW * 100 * MB - 1), need).class, "hot");
  assert.equal(classify(io(HOT_BELOW * 100 * MB), need).class, "warm");
  assert.equal(classify(io(COLD_FROM * 100 * MB - 1), need).class, "warm");
  assert.equal(classify(io(COLD_FROM * 100 * MB), need).class, "cold");
  assert.equal(classify(io(400 * MB), need).class, "cold", "more than the need (system libraries) is still cold");
  const figures = classify(io(42 * MB, { treeMajorFaults: 17 }), need);
  assert.deepEqual(figures, {
    class: "warm",
    treeReadBytes: 42 * MB,
    treeMajorFaults: 17,
    readBytes: null,
    needBytes: 100 * MB,
    needFrom: "install",
    rule: 1,
  });
});

test("classify: without figures unknown; the parent's bytes alone can only prove cold", () => {
  assert.equal(classify(null).class, "unknown");
  assert.equal(classify({}).class, "unknown");
  assert.equal(classify(io(null, { treeMajorFaults: 0 })).class, "unknown", "faults alone never decide");
  const need = { bytes: 100 * MB, from: "plan" };
  assert.equal(classify(io(null, { readBytes: 90 * MB }), need).class, "cold");
  assert.equal(classify(io(null, { readBytes: 0 }), need).class, "unknown", "children may have read");
});

test("a recorded bench export: its cold runs are cold, its hot and preloaded runs hot", () => {
  const parsed = parseExport(BENCH);
  assert.ok(parsed.ok, parsed.problems?.join("; "));
  const records = exportRecords(parsed.doc);
  const scenarios = new Set(records.map((r) => r.bench.scenario));
  assert.deepEqual([...scenarios].sort(), ["cold", "hot", "preload"]);
  const expected = { cold: "cold", hot: "hot", preload: "hot" };
  for (const record of records) {
    const want = expected[record.bench.scenario];
    // the class the extension stored when it recorded the start …
    assert.equal(coldnessOf(record), want, `${record.id} (${record.bench.scenario}) as stored`);
    // … and the classifier again, from the run's figures alone: against the need it was
    // recorded with, and against the fallback an import without a need falls back to
    const bare = { ...record, coldness: undefined };
    const need = { bytes: record.coldness.needBytes, from: record.coldness.needFrom };
    assert.equal(withColdness(bare, need).coldness.class, want, `${record.id} against ${need.from}`);
    assert.equal(withColdness(bare).coldness.class, want, `${record.id} against the fallback`);
  }
  // against the install folder's size the bench names, the same answer
  const cold = records.find((r) => r.bench.scenario === "cold");
  const withInstall = withColdness({ ...cold, coldness: undefined, bench: { ...cold.bench, bytesInstall: 308_445_657 } });
  assert.deepEqual([withInstall.coldness.class, withInstall.coldness.needFrom], ["cold", "install"]);
});

test("withColdness keeps a stored class unless forced; coldnessProblems checks the shape", () => {
  const stored = { io: io(0), coldness: { class: "cold" } };
  assert.equal(withColdness(stored), stored);
  assert.equal(withColdness(stored, null, { force: true }).coldness.class, "hot");
  assert.deepEqual(coldnessProblems(undefined), []);
  assert.deepEqual(coldnessProblems(classify(io(0))), []);
  assert.equal(coldnessProblems({ class: "tepid" }).length, 1);
  assert.equal(coldnessProblems({ class: "hot", needFrom: "guess", treeReadBytes: -1 }).length, 2);
  assert.equal(coldnessProblems(null).length, 1);
});

test("likeWithLike: the classes both sides have; unknown is never common", () => {
  const of = (...classes) => classes.map((c) => ({ coldness: { class: c } }));
  assert.deepEqual(likeWithLike(of("cold", "hot", "unknown"), of("hot", "warm", "unknown")), {
    common: ["hot"],
    onlyA: ["cold", "unknown"],
    onlyB: ["warm", "unknown"],
  });
  assert.deepEqual(likeWithLike(of("cold"), of("hot")).common, []);
});

test("likeWithLikeNote: says what cannot be compared, both ways, and when nothing can", () => {
  const of = (...classes) => classes.map((c) => ({ coldness: { class: c } }));
  const note = (a, b) => likeWithLikeNote(of(...a), of(...b))?.note ?? null;
  assert.equal(note(["cold", "hot"], ["cold", "hot"]), null, "every class has its like");
  assert.equal(note(["hot"], ["cold", "hot"]), "unmatchedImport", "only the import has cold");
  assert.equal(note(["cold", "hot"], ["hot"]), "unmatchedHere", "only this machine has cold");
  assert.deepEqual(likeWithLikeNote(of("cold", "hot"), of("hot")).onlyA, ["cold"]);
  assert.equal(note(["warm", "hot"], ["cold", "hot"]), "unmatchedImport", "both sides unmatched: named in one note");
  assert.equal(note(["hot"], ["cold"]), "nothingAlike");
  assert.equal(note(["unknown"], ["unknown"]), "nothingAlike", "two unknowns are not alike");
  assert.equal(note([], ["cold"]), "nothingHere");
  assert.equal(note(["cold"], []), "importEmpty");
  const messages = englishMessages();
  for (const key of Object.values(LIKE_NOTE_KEYS)) {
    assert.ok(messages[key]?.message, `${key} has an English message`);
  }
});

test("hasMean: every class but unknown (cold and hot mixed) may be averaged", () => {
  assert.deepEqual(
    ["cold", "warm", "hot", "unknown"].map(hasMean),
    [true, true, true, false],
  );
});
