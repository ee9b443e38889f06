import { test } from "node:test";
import assert from "node:assert/strict";
import { LARGE_SESSION_FILE_BYTES, sessionFileAdvice, sessionRestoreSaving } from "../../../../extension/lib/models/session-advice.js";
import { COSTLY_ADDON_ID } from "../../../../extension/lib/models/ab-saving.js";
import { costlyAddonCosts } from "../../costs-export.js";

// A start's costs from two real getStartCosts readings (tests/fixtures/start-costs/): its session
// file was 1,072 bytes, read in 519 ms (Glean's whole-ms readFile of a loaded machine).
const COSTS = costlyAddonCosts(COSTLY_ADDON_ID);
const SIZE = COSTS.sessionRestore.fileSizeBytes.value;
const bench = (scenario, sessionRestored) => ({ milestones: { sessionRestored }, bench: { scenario, run: 1 }, costs: COSTS });

test("a session file below the size called large gets no advice; one at it gets its size and read time", () => {
  assert.ok(SIZE < LARGE_SESSION_FILE_BYTES);
  assert.equal(sessionFileAdvice(COSTS, []), null);
  const advice = sessionFileAdvice(COSTS, [], { largeBytes: SIZE });
  assert.deepEqual(advice, { fileSizeBytes: SIZE, readFileMs: COSTS.sessionRestore.readFileMs.value, saving: null });
  // A size Glean did not record is no reason for advice (never a guess).
  assert.equal(sessionFileAdvice({ ...COSTS, sessionRestore: { ...COSTS.sessionRestore, fileSizeBytes: { missing: "no-sample" } } }, [], { largeBytes: 1 }), null);
  assert.equal(sessionFileAdvice({ unavailable: "glean-off" }, [], { largeBytes: 1 }), null);
});

test("the saving offered with it is what turning session restore off measured, with the benchmark's own file size; never another arm's", () => {
  const hot = [1200, 1210, 1190, 1205].map((v) => bench("hot", v));
  const off = [1100, 1108, 1092, 1100].map((v) => bench("hot-session-restore-off", v));
  const costly = [900, 905, 895, 900].map((v) => bench("hot-without-costly-addon", v));
  const saving = sessionRestoreSaving([{ name: "ab-medium.json", records: [...hot, ...off, ...costly] }]);
  assert.equal(Math.round(saving.ms), 101);
  assert.deepEqual([saving.nHot, saving.nArm, saving.from, saving.benchFileBytes], [4, 4, "ab-medium.json", SIZE]);
  assert.ok(saving.low < saving.ms && saving.ms < saving.high);
  // Only the costly add-on's arm: nothing measured for the session file.
  assert.equal(sessionRestoreSaving([{ name: "x.json", records: [...hot, ...costly] }]), null);
  const advice = sessionFileAdvice(COSTS, [{ name: "ab-medium.json", records: [...hot, ...off] }], { largeBytes: SIZE });
  assert.equal(advice.saving.from, "ab-medium.json");
});
