// The answer line and the baseline line of "Where the time went" (issue 40), from real
// getStartCosts readings (tests/fixtures/start-costs/) and imported A/B runs made of them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { translator } from "../../../../extension/lib/wording/i18n.js";
import { answerText, baselineText } from "../../../../extension/lib/wording/costs-text.js";
import { answerCause, COSTLY_ADDON_ID, EMPTY_PROFILE_ARM } from "../../../../extension/lib/models/ab-saving.js";
import { aboveBaseline } from "../../../../extension/lib/models/above-baseline.js";
import { causesOf, costsFromReading } from "../../../../extension/lib/models/start-costs.js";
import { englishMessage } from "../../fakes.js";

const t = translator(englishMessage);

// One built-in add-on of the fixtures taken as the benchmark's costly one (its id changed,
// builtIn off): its busy figure (1,741.3 ms) is the largest a user can act on; session restore's
// (527 ms, restored at start) the next.
const reading = (n) => JSON.parse(readFileSync(new URL(`../../../fixtures/start-costs/reading-${n}.json`, import.meta.url), "utf8"));
function costs() {
  const [one, two] = [reading(1), reading(2)];
  for (const r of [one, two]) {
    Object.assign(r.addons.find((a) => a.id === "webcompat@mozilla.org"), { id: COSTLY_ADDON_ID, builtIn: false });
  }
  return costsFromReading(two, one);
}
const COSTS = costs();
const BUILD = "20261117185949";
const figure = (id) => causesOf(COSTS).find((c) => c.id === id).ms;
const record = (scenario, sessionRestored) => ({ milestones: { sessionRestored }, firefox: { buildId: BUILD }, bench: { scenario, run: 1 }, costs: COSTS });
/**
 * An imported A/B run (n = 4 per arm) as the medium preset's measured it: turning session
 * restore off saved about its figure (agrees), taking the costly add-on away saved nothing.
 */
function abImport({ restoreSaved = figure("session-restore"), addonSaved = 0 } = {}) {
  const base = [1000, 1010, 990, 1005];
  const hot = base.map((ms) => record("hot", ms + 600));
  const restoreOff = [1000, 1012, 988, 1000].map((ms) => record("hot-session-restore-off", ms + 600 - restoreSaved));
  const withoutAddon = [1003, 1008, 992, 1001].map((ms) => record("hot-without-costly-addon", ms + 600 - addonSaved));
  return { name: "ab-medium.json", records: [...hot, ...restoreOff, ...withoutAddon] };
}

test("the answer names the cause with the measured saving, not a larger busy figure the A/B found no saving in", () => {
  assert.ok(figure(COSTLY_ADDON_ID) > figure("session-restore"), "the add-on's busy figure is the larger");
  const answer = answerCause(COSTS, [abImport()]);
  assert.equal(answer.cause.id, "session-restore");
  assert.ok(Math.abs(answer.saving.ms - figure("session-restore")) < 10, `${answer.saving.ms}`);
  assert.equal(answer.busier.id, COSTLY_ADDON_ID);
  const text = answerText(answer, t);
  assert.match(text, /^Largest cause you can act on: session restore .*Taking it away saved 52\d(\.\d)? ms \(95% CI/);
  // The add-on comes beside it as busy time, never as a saving.
  assert.match(text, /Busy for longer, with no measured saving: the add-on .* 1,741\.3 ms during this start .*not all of it on the start's path\./);
  assert.doesNotMatch(text.slice(text.indexOf("Busy for longer")), /saved/);
  // The advice is session restore's, not the add-on's.
  assert.match(text, /untick "Open previous windows and tabs"/);
  assert.doesNotMatch(text, /about:addons/);
});

test("without an agreeing A/B saving the answer names the largest busy figure as busy time", () => {
  for (const imports of [[], [abImport({ restoreSaved: figure("session-restore") / 3 })]]) {
    const answer = answerCause(COSTS, imports);
    assert.equal(answer.cause.id, COSTLY_ADDON_ID);
    assert.equal(answer.saving, null);
    assert.equal(answer.busier, null);
    const text = answerText(answer, t);
    assert.match(text, /^Largest cause you can act on: the add-on .*busy for 1,741\.3 ms during this start .*not all of it on the start's path\./);
    assert.doesNotMatch(text, /saved/);
    assert.match(text, /about:addons → .* → Disable/);
  }
});

test("an agreeing saving of the costly add-on that is the largest: named as a saving, nothing beside it", () => {
  const answer = answerCause(COSTS, [abImport({ addonSaved: figure(COSTLY_ADDON_ID) })]);
  assert.equal(answer.cause.id, COSTLY_ADDON_ID);
  assert.equal(answer.busier, null);
  assert.match(answerText(answer, t), /^Largest cause you can act on: the add-on .*Taking it away saved/);
  assert.doesNotMatch(answerText(answer, t), /Busy for longer/);
});

test("no cause to act on: said so", () => {
  const builtInOnly = { ...COSTS, addons: COSTS.addons.map((a) => ({ ...a, builtIn: true })), settings: { restoresSession: false, restoreOnDemand: true } };
  assert.equal(answerCause(builtInOnly, [abImport()]), null);
  assert.match(answerText(null, t), /^No cause here that you can act on/);
});

/** An import whose empty-profile arm (n = 3) took `baseline` ms to sessionRestored. */
const baselineImport = (baseline) => ({ name: "ab-medium.json", records: [baseline - 5, baseline, baseline + 5].map((ms) => record(EMPTY_PROFILE_ARM, ms)) });

test("a start faster than the empty profile is worded as below the baseline, by how much, never a negative 'above'", () => {
  const start = { ...record("hot", 859.5), bench: undefined };
  const lines = baselineText(aboveBaseline(start, [baselineImport(874)]), t);
  assert.equal(lines.length, 1);
  assert.match(lines[0], /This start took 859\.5 ms: 14\.5 ms below it, so none of it is above the baseline to attribute\./);
  assert.doesNotMatch(lines[0], /-\s?14\.5|above it\./);
});

test("a start slower than the empty profile is worded as above it, with what is attributed", () => {
  const start = { ...record("hot", 1400), bench: undefined };
  const [head, share] = baselineText(aboveBaseline(start, [baselineImport(874)]), t);
  assert.match(head, /Firefox's own baseline for this build: 874 ms to sessionRestored on an empty profile \(median of 3 hot starts, benchmark ab-medium\.json\)\. This start took 1,400 ms: 526 ms above it\./);
  assert.match(share, /^No cause's saving is measured/);
  const equal = baselineText(aboveBaseline({ ...record("hot", 874), bench: undefined }, [baselineImport(874)]), t);
  assert.match(equal[0], /0 ms above it/);
  assert.match(equal[1], /no time above it to attribute/);
  assert.deepEqual(baselineText(aboveBaseline({ ...record("hot", 900), firefox: { buildId: "other" }, bench: undefined }, [baselineImport(874)]), t), [t("costsBaselineMissing")]);
});

test("an add-on that holds page loads: named as such, and its saving worded as measured on the restored tabs' load, not sessionRestored", () => {
  // The costly add-on with webRequestBlocking: its figure is its background page load.
  const [one, two] = [reading(1), reading(2)];
  for (const r of [one, two]) {
    Object.assign(r.addons.find((a) => a.id === "webcompat@mozilla.org"), { id: COSTLY_ADDON_ID, builtIn: false, name: "Synthetic Costly Startup", version: "1.1" });
  }
  two.addons.find((a) => a.id === COSTLY_ADDON_ID).blockingWebRequest = true;
  const holding = costsFromReading(two, one);
  const cause = causesOf(holding).find((c) => c.id === COSTLY_ADDON_ID);
  assert.equal(cause.measure, "background-page-load");
  // sessionRestored does not move; the restored tabs' load moves by about the figure (agrees).
  const at = (scenario, sessionRestored, tabs) => ({
    milestones: { sessionRestored },
    firefox: { buildId: BUILD },
    bench: { scenario, run: 1 },
    costs: { ...holding, sessionRestore: { ...holding.sessionRestore, selectedTabsRestoredAtMs: { value: tabs, source: "session-store-events" } } },
  });
  const hot = [1000, 1010, 990, 1005].map((ms) => at("hot", ms, ms + 1500 + cause.ms));
  const without = [1003, 1008, 992, 1001].map((ms) => at("hot-without-costly-addon", ms, ms + 1500));
  const answer = answerCause(holding, [{ name: "ab-http.json", records: [...hot, ...without] }]);
  assert.equal(answer.cause.id, COSTLY_ADDON_ID);
  assert.equal(answer.saving.endpoint, "selectedTabsRestored");
  const text = answerText(answer, t);
  assert.match(text, /^Largest cause you can act on: the add-on Synthetic Costly Startup 1\.1, whose background page the restored tabs' page loads wait for/);
  assert.match(text, /on the restored tabs' load \(when every restored window's selected tab had loaded, not sessionRestored\) in the A\/B benchmark ab-http\.json, which agrees within 25%/);
  // Without the A/B run: busy time, still named as the add-on that holds page loads.
  const busy = answerText(answerCause(holding, []), t);
  assert.match(busy, /whose background page the restored tabs' page loads wait for/);
  assert.doesNotMatch(busy, /saved/);
});
