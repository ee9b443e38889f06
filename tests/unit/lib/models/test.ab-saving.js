import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { COSTLY_ADDON_ID, measuredSaving } from "../../../../extension/lib/models/ab-saving.js";
import { causesOf, costsFromReading, largestActionable } from "../../../../extension/lib/models/start-costs.js";

// The page's figures from real getStartCosts readings (tests/fixtures/start-costs/), with one
// built-in add-on taken as the benchmark's costly one (its id changed, builtIn off: the fixtures
// hold only Firefox's own add-ons) and another as an add-on of the user's.
const reading = (n) => JSON.parse(readFileSync(new URL(`../../../fixtures/start-costs/reading-${n}.json`, import.meta.url), "utf8"));
const OTHER_ID = "other@example.org";
function costs() {
  const [one, two] = [reading(1), reading(2)];
  for (const r of [one, two]) {
    Object.assign(r.addons.find((a) => a.id === "webcompat@mozilla.org"), { id: COSTLY_ADDON_ID, builtIn: false });
    Object.assign(r.addons.find((a) => a.id === "newtab@mozilla.org"), { id: OTHER_ID, builtIn: false });
  }
  return costsFromReading(two, one);
}
const COSTS = costs();
const cause = (id) => causesOf(COSTS).find((c) => c.id === id);
const busy = cause(COSTLY_ADDON_ID).ms;
const record = (scenario, sessionRestored) => ({ milestones: { sessionRestored }, bench: { scenario, run: 1 }, costs: COSTS });
/** An imported A/B run where taking the costly add-on away saved `saved` ms (n = 4 + 4). */
function abImport(saved, name = "bench.json") {
  const hot = [1000, 1010, 990, 1005].map((ms) => record("hot", ms + saved));
  const without = [1000, 1012, 988, 1000].map((ms) => record("hot-without-costly-addon", ms));
  return { name, records: [...hot, ...without] };
}

test("the answer's cause is the largest one a user can act on, with its figure's source", () => {
  const largest = largestActionable(COSTS);
  assert.equal(largest.id, COSTLY_ADDON_ID, "webcompat's figure is the largest in reading 2");
  assert.equal(largest.source, "glean-delta");
  assert.equal(cause("session-restore").source, "glean-session-restore");
});

test("a saving only where an imported A/B run took that very cause away and agreed with its figure", () => {
  const saving = measuredSaving(cause(COSTLY_ADDON_ID), [abImport(busy)]);
  assert.ok(saving, "agreeing A/B: a saving");
  assert.ok(Math.abs(saving.ms - busy) < 5, `${saving.ms} near ${busy}`);
  assert.ok(saving.low < saving.ms && saving.ms < saving.high);
  assert.deepEqual([saving.nHot, saving.nArm, saving.from], [4, 4, "bench.json"]);
  // Far below the figure: busy time, not a saving.
  assert.equal(measuredSaving(cause(COSTLY_ADDON_ID), [abImport(busy / 4)]), null);
  // No import, or one without A/B arms: busy time.
  assert.equal(measuredSaving(cause(COSTLY_ADDON_ID), []), null);
  assert.equal(measuredSaving(cause(COSTLY_ADDON_ID), [{ name: "x", records: [record("hot", 1000)] }]), null);
});

test("the costly add-on's measured saving is never given to another add-on or to session restore", () => {
  const imports = [abImport(busy)];
  assert.ok(measuredSaving(cause(COSTLY_ADDON_ID), imports));
  // Another add-on of the user's, of a similar busy figure: the A/B run did not remove it.
  assert.equal(measuredSaving(cause(OTHER_ID), imports), null);
  assert.equal(measuredSaving(cause("session-restore"), imports), null);
});
