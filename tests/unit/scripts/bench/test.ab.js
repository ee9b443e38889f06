import { test } from "node:test";
import assert from "node:assert/strict";
import { abRows, abTable, COSTLY_ADDON_ID, costlyAddonFiles } from "../../../../scripts/bench/ab.mjs";
import { costlyAddonCosts } from "../../costs-export.js";

// The page's figures come from real getStartCosts readings (tests/fixtures/start-costs/), with
// one add-on taken as the costly one (its id changed, builtIn off: the fixtures hold Firefox's own).
const COSTS = costlyAddonCosts(COSTLY_ADDON_ID);
const addonMs = COSTS.addons.find((a) => a.id === COSTLY_ADDON_ID).startupMs.value;
const record = (scenario, sessionRestored, withCosts = true) => ({
  milestones: { sessionRestored },
  bench: { scenario, run: 1 },
  ...(withCosts ? { costs: COSTS } : { costs: { unavailable: "no-experiment-api" } }),
});

test("abRows: the measured saving against hot with its CI, beside the page's figure, and whether they agree", () => {
  const hot = [1000, 1010, 990, 1005].map((ms) => record("hot", ms + addonMs));
  const without = [1000, 1012, 988, 1000].map((ms) => record("hot-without-costly-addon", ms, false));
  const [row] = abRows([...hot, ...without]);
  assert.equal(row.arm, "hot-without-costly-addon");
  assert.equal(row.prediction, addonMs);
  assert.equal(row.predictionN, 4);
  assert.ok(Math.abs(row.saving.ms - addonMs) < 5, `saving ${row.saving.ms} near ${addonMs}`);
  assert.ok(row.saving.low < row.saving.ms && row.saving.ms < row.saving.high);
  assert.equal(row.agrees, true);
  assert.match(abTable([row]), /\| hot-without-costly-addon \| .* ms \(.* to .*; p = .*; n = 4 \+ 4\) \| .* ms \(n = 4\) \| agrees within 25 %: a saving \|/);
});

test("abRows: a saving far below the busy figure is labelled busy time, not a saving; an arm without runs is left out", () => {
  const hot = [1000, 1010, 990, 1005].map((ms) => record("hot", ms));
  const off = [995, 1003, 992, 1001].map((ms) => record("hot-session-restore-off", ms, false));
  const rows = abRows([...hot, ...off]);
  assert.deepEqual(rows.map((r) => r.arm), ["hot-session-restore-off"]);
  assert.equal(rows[0].agrees, false);
  assert.match(abTable(rows), /disagrees: the figure is busy time, not a saving/);
});

test("abRows: no figure on the page (basic-mode records) cannot be compared, and says so", () => {
  const hot = [1000, 1010].map((ms) => record("hot", ms, false));
  const off = [900, 910].map((ms) => record("hot-session-restore-off", ms, false));
  const [row] = abRows([...hot, ...off]);
  assert.equal(row.prediction, null);
  assert.equal(row.agrees, null);
  assert.match(abTable([row]), /\| missing \| cannot compare \|/);
});

test("the costly add-on: its id in the manifest, a fixed amount of work (no timed wait)", () => {
  const files = costlyAddonFiles(1000);
  assert.equal(JSON.parse(files["manifest.json"]).browser_specific_settings.gecko.id, COSTLY_ADDON_ID);
  assert.match(files["background.js"], /i < 1000;/);
  assert.doesNotMatch(files["background.js"], /setTimeout|Date\.now|performance/);
});
