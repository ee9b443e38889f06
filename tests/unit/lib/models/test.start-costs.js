import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  addonTrends,
  causesOf,
  costsFromReading,
  costsProblems,
  largestActionable,
  MISSING,
  sampleSince,
  SOURCES,
} from "../../../../extension/lib/models/start-costs.js";

// Three real getStartCosts readings of one profile, taken at three consecutive starts of Firefox
// ESR 153.8 (tests/fixtures/README.md, "start-costs").
const reading = (n) => JSON.parse(readFileSync(new URL(`../../../fixtures/start-costs/reading-${n}.json`, import.meta.url), "utf8"));
const byId = (costs, id) => costs.addons.find((a) => a.id === id);
const addonOf = (r, id) => r.addons.find((a) => a.id === id);
const ms = (ns) => Math.round((ns / 1e6) * 10) / 10;

test("the first start's reading: each add-on's only sample is its own, in ms, with its name and version", () => {
  const first = reading(1);
  const costs = costsFromReading(first, null);
  assert.deepEqual(costsProblems(costs), []);
  assert.equal(costs.addons.length, first.addons.length);
  for (const addon of first.addons) {
    const figure = byId(costs, addon.id);
    assert.equal(figure.name, addon.name);
    assert.equal(figure.version, addon.version);
    assert.deepEqual(figure.startupMs, { value: ms(addon.startup.sum), source: SOURCES.glean });
  }
  // The theme has no background page: missing, never 0.
  assert.deepEqual(byId(costs, "default-theme@mozilla.org").backgroundPageLoadMs, { missing: MISSING.noSample });
});

test("the next start: the one new sample since the previous reading, per add-on", () => {
  const [one, two] = [reading(1), reading(2)];
  const costs = costsFromReading(two, one);
  for (const addon of two.addons) {
    const expected = ms(addon.startup.sum - addonOf(one, addon.id).startup.sum);
    assert.deepEqual(byId(costs, addon.id).startupMs, { value: expected, source: SOURCES.gleanDelta }, addon.id);
  }
  // Glean holds both starts' samples: read alone, the second start's figure is unknowable.
  assert.deepEqual(byId(costsFromReading(two, null), "webcompat@mozilla.org").startupMs, { missing: MISSING.severalSamples });
});

test("an add-on's figure is never another add-on's: the previous reading is matched by id, not by position", () => {
  const [one, two] = [reading(1), reading(2)];
  const shuffled = { ...one, addons: [...one.addons].reverse() };
  assert.deepEqual(costsFromReading(two, shuffled), costsFromReading(two, one));
  // With another add-on's previous sample the growth is not one sample of this one: refused.
  const swapped = structuredClone(one);
  const [a, b] = [addonOf(swapped, "newtab@mozilla.org"), addonOf(swapped, "webcompat@mozilla.org")];
  [a.startup, b.startup] = [b.startup, a.startup];
  const costs = costsFromReading(two, swapped);
  assert.deepEqual(byId(costs, "newtab@mozilla.org").startupMs, { missing: MISSING.severalSamples });
  assert.deepEqual(byId(costs, "webcompat@mozilla.org").startupMs, { missing: MISSING.severalSamples });
});

test("an add-on beyond Glean's 16 labels reads the pooled __other__ samples: no add-on gets them, even when they grew by one", () => {
  const [one, two] = [reading(1), reading(2)];
  // Glean gives the same `__other__` distribution for every add-on past its 16th label: here two
  // user add-ons, one of which started (one new sample in the pool).
  const pool = (r) => structuredClone(addonOf(r, "webcompat@mozilla.org").startup);
  const [before, now] = [structuredClone(one), structuredClone(two)];
  for (const [r, id] of [[before, "a@x.test"], [before, "b@x.test"], [now, "a@x.test"], [now, "b@x.test"]]) {
    r.addons.push({ ...structuredClone(addonOf(r, "newtab@mozilla.org")), id, name: id, builtIn: false, startup: pool(r === before ? one : two) });
  }
  const costs = costsFromReading(now, before);
  for (const id of ["a@x.test", "b@x.test"]) {
    assert.deepEqual(byId(costs, id).startupMs, { missing: MISSING.severalSamples }, id);
  }
  // The add-ons Glean keeps apart keep their figures.
  assert.equal(byId(costs, "newtab@mozilla.org").startupMs.source, SOURCES.gleanDelta);
  // One pooled reading alone (a single add-on past the 16th label) is its own.
  const single = structuredClone(now);
  single.addons = single.addons.filter((a) => a.id !== "b@x.test" && a.id !== "webcompat@mozilla.org");
  assert.equal(byId(costsFromReading(single, before), "a@x.test").startupMs.source, SOURCES.gleanDelta);
});

test("a figure is never attached to the wrong start: a skipped reading leaves two new samples, missing", () => {
  const costs = costsFromReading(reading(3), reading(1));
  for (const addon of costs.addons) {
    assert.deepEqual(addon.startupMs, { missing: MISSING.severalSamples }, addon.id);
  }
  assert.deepEqual(costs.sessionRestore.initMs, { missing: MISSING.severalSamples });
});

test("sampleSince: no new sample, a read error, a cleared store, a sum that does not fit the grown bucket", () => {
  const w1 = addonOf(reading(1), "webcompat@mozilla.org").startup;
  const w2 = addonOf(reading(2), "webcompat@mozilla.org").startup;
  assert.deepEqual(sampleSince(w2, w2), { missing: MISSING.noNewSample });
  assert.deepEqual(sampleSince({ error: "boom" }, w1), { missing: MISSING.readError });
  assert.deepEqual(sampleSince(null, w1), { missing: MISSING.noSample });
  // A metrics ping cleared the store since: the one sample left is this start's.
  assert.deepEqual(sampleSince(w1, w2), { value: w1.sum, source: SOURCES.glean });
  // Count one more, but the sum's growth lies outside the bucket that grew: not one sample.
  const forged = { ...w2, sum: w2.sum + 10 * w1.sum };
  assert.deepEqual(sampleSince(forged, w1), { missing: MISSING.severalSamples });
});

test("an add-on still starting has no figure yet, even when Glean holds an older sample", () => {
  const two = reading(2);
  addonOf(two, "newtab@mozilla.org").state = "Startup: Loading manifest";
  const costs = costsFromReading(two, reading(1));
  assert.deepEqual(byId(costs, "newtab@mozilla.org").startupMs, { missing: MISSING.stillStarting });
});

test("session restore: file size, read, init, window restored, each with its source", () => {
  const costs = costsFromReading(reading(2), reading(1));
  const two = reading(2).sessionRestore;
  assert.deepEqual(costs.sessionRestore.fileSizeBytes, { value: two.fileSizeBytes.sum, source: SOURCES.glean });
  assert.deepEqual(costs.sessionRestore.readFileMs, { value: ms(two.readFile.sum), source: SOURCES.glean });
  assert.deepEqual(costs.sessionRestore.restoreWindowMs, { value: ms(two.restoreWindow.sum), source: SOURCES.glean });
  assert.equal(costs.sessionRestore.initMs.source, SOURCES.gleanDelta);
  // No tab restored beyond the selected one in this profile: missing, not 0.
  assert.deepEqual(costs.sessionRestore.tabsRestored, { missing: MISSING.noSample });
  assert.deepEqual(costs.settings, { restoresSession: true, restoreOnDemand: true });
  // The first start had no session file to read.
  assert.deepEqual(costsFromReading(reading(1), null).sessionRestore.readFileMs, { missing: MISSING.noSample });
});

test("causes: largest first; Firefox's built-in add-ons are not actionable, a user's add-on is", () => {
  const two = reading(2);
  const user = addonOf(two, "pictureinpicture@mozilla.org");
  Object.assign(user, { id: "costly@example.org", name: "Costly", version: "2.0", builtIn: false });
  const one = reading(1);
  addonOf(one, "pictureinpicture@mozilla.org").id = "costly@example.org";
  const costs = costsFromReading(two, one);
  const causes = causesOf(costs);
  assert.deepEqual(
    causes.map((c) => c.ms),
    [...causes.map((c) => c.ms)].sort((a, b) => b - a),
  );
  // Session restore: reading the file plus restoring the window (the eager tabs' wait, which would
  // span the window's restore, is missing here), not the sum of overlapping spans.
  const sessionRestore = causes.find((c) => c.kind === "session-restore");
  const sr = costs.sessionRestore;
  assert.equal(sessionRestore.ms, Math.round((sr.readFileMs.value + sr.restoreWindowMs.value) * 10) / 10);
  assert.equal(sessionRestore.fileSizeBytes, sr.fileSizeBytes.value);
  const largest = largestActionable(costs);
  // Session restore is on (browser.startup.page 3) and the user's add-on can be turned off: the
  // larger of the two is named.
  const candidates = causes.filter((c) => c.id === "costly@example.org" || c.kind === "session-restore");
  assert.equal(largest.id, candidates[0].id);
  assert.equal(causes.find((c) => c.id === "webcompat@mozilla.org").actionable, false);
  assert.equal(causes.find((c) => c.id === "costly@example.org").advice, "disable-addon");
});

test("about:startup's own add-on is shown but never advised against", () => {
  const one = reading(1);
  for (const addon of one.addons) {
    addon.builtIn = false;
  }
  const selfId = "webcompat@mozilla.org";
  const costs = costsFromReading(one, null, { selfId });
  assert.equal(byId(costs, selfId).self, true);
  assert.equal(byId(costs, "newtab@mozilla.org").self, undefined);
  const self = causesOf(costs).find((c) => c.id === selfId);
  assert.deepEqual([self.actionable, self.advice], [false, null]);
  assert.notEqual(largestActionable(costs).id, selfId);
  assert.equal(largestActionable(costs).advice, "disable-addon");
});

test("Firefox's telemetry off (Debian's default): Glean records nothing, and the start says so instead of 'no sample' everywhere", () => {
  const off = reading(2);
  assert.deepEqual(off.gleanRecording, { uploadEnabled: false, testPort: -1 }, "recorded under Marionette: FOG's test mode");
  off.gleanRecording.testPort = 0;
  assert.deepEqual(costsFromReading(off, reading(1)), { unavailable: "glean-off" });
  off.gleanRecording.uploadEnabled = true;
  assert.equal(costsFromReading(off, reading(1)).addons.length, off.addons.length);
  // An older experiment without the field: the figures speak for themselves.
  delete off.gleanRecording;
  assert.equal(costsFromReading(off, reading(1)).addons.length, off.addons.length);
});

test("costsProblems: an unknown reason, a negative value or an unknown source is refused", () => {
  assert.deepEqual(costsProblems(undefined), []);
  assert.deepEqual(costsProblems({ unavailable: "no-experiment-api" }), []);
  assert.match(costsProblems({ unavailable: "why-not" })[0], /unavailable/);
  const costs = costsFromReading(reading(1), null);
  costs.addons[0].startupMs = { value: -1, source: "guess" };
  assert.deepEqual(costsProblems(costs), [
    "record.costs.addons[0].startupMs.value: must be a number ≥ 0",
    "record.costs.addons[0].startupMs.source: must be one of glean, glean-delta, startup-timeline, session-store-events",
  ]);
});

test("addonTrends: each add-on's startup by version across the history, and where it moved", () => {
  const record = (version, value) => ({
    costs: { addons: [{ id: "u@example.org", name: "U", version, startupMs: { value, source: "glean" } }] },
  });
  const missing = { costs: { addons: [{ id: "u@example.org", name: "U", version: "1.63", startupMs: { missing: "several-samples" } }] } };
  const { trends, changes } = addonTrends([record("1.61", 100), record("1.61", 120), record("1.62", 300), missing, record("1.62", 310)]);
  assert.deepEqual(
    trends[0].versions.map((v) => [v.version, v.n, v.median]),
    [
      ["1.61", 2, 110],
      ["1.62", 2, 305],
    ],
  );
  assert.deepEqual(changes, [{ id: "u@example.org", name: "U", from: "1.61", to: "1.62", beforeMs: 110, afterMs: 305 }]);
});

test("session restore's part of the path: sessionRestored less when the session store began restoring, plus its init; missing without either", () => {
  // A reading of an older experiment has no restoring moment: both figures missing, and the
  // cause falls back to Glean's session restore metrics.
  const old = costsFromReading(reading(2), reading(1), { sessionRestoredMs: 2272 });
  assert.deepEqual(old.sessionRestore.restoringAtMs, { missing: MISSING.noSample });
  assert.deepEqual(old.sessionRestore.restoringMs, { missing: MISSING.noSample });
  assert.equal(causesOf(old).find((c) => c.kind === "session-restore").source, "glean-session-restore");
  // With it (1,631 ms and sessionRestored 2,272 ms: a benchmark start of the medium preset, 29 Nov).
  const withMoment = (r, at) => ({ ...r, sessionRestore: { ...r.sessionRestore, restoringAt: at === null ? null : { count: 1, sum: at, values: {} } } });
  const [one, two] = [withMoment(reading(1), 1590), withMoment(reading(2), 1631)];
  const costs = costsFromReading(two, one, { sessionRestoredMs: 2272 });
  assert.deepEqual(costs.sessionRestore.restoringAtMs, { value: 1631, source: SOURCES.glean });
  assert.deepEqual(costs.sessionRestore.restoringMs, { value: 641, source: SOURCES.timeline });
  assert.deepEqual(costsProblems(costs), []);
  const cause = causesOf(costs).find((c) => c.kind === "session-restore");
  assert.equal(cause.source, "session-restore-path");
  assert.equal(cause.ms, Math.round((641 + costs.sessionRestore.initMs.value) * 10) / 10);
  // The same moment as the previous start's: an older start's value (nothing restored in this one).
  assert.deepEqual(costsFromReading(withMoment(reading(2), 1590), one, { sessionRestoredMs: 2272 }).sessionRestore.restoringMs, { missing: MISSING.noNewSample });
  // No sessionRestored, or one before the moment: not this start's path.
  assert.deepEqual(costsFromReading(two, one).sessionRestore.restoringMs, { missing: MISSING.noMilestone });
  assert.deepEqual(costsFromReading(two, one, { sessionRestoredMs: 1000 }).sessionRestore.restoringMs, { missing: MISSING.noMilestone });
});

test("an add-on that may block requests is figured by its background page load, which the restored tabs' loads wait for; others by their startup", () => {
  const two = reading(2);
  const one = reading(1);
  for (const r of [one, two]) {
    addonOf(r, "pictureinpicture@mozilla.org").id = "blocker@example.org";
  }
  Object.assign(addonOf(two, "blocker@example.org"), { name: "Blocker", version: "1.1", builtIn: false });
  const plain = costsFromReading(two, one);
  // An older experiment's reading says nothing about blocking: the startup, as before.
  assert.equal("blockingWebRequest" in byId(plain, "blocker@example.org"), false);
  const before = causesOf(plain).find((c) => c.id === "blocker@example.org");
  assert.deepEqual([before.measure, before.ms], ["startup", byId(plain, "blocker@example.org").startupMs.value]);
  // With webRequestBlocking: its background page load, where Glean has one.
  addonOf(two, "blocker@example.org").blockingWebRequest = true;
  const blocking = costsFromReading(two, one);
  const addon = byId(blocking, "blocker@example.org");
  assert.equal(addon.blockingWebRequest, true);
  const cause = causesOf(blocking).find((c) => c.id === "blocker@example.org");
  assert.equal(addon.backgroundPageLoadMs.source, SOURCES.gleanDelta);
  assert.deepEqual([cause.measure, cause.ms, cause.source], ["background-page-load", addon.backgroundPageLoadMs.value, SOURCES.gleanDelta]);
  // Glean missing the background page load: the startup, not nothing.
  const noPage = { ...blocking, addons: blocking.addons.map((a) => (a.id === "blocker@example.org" ? { ...a, backgroundPageLoadMs: { missing: MISSING.noSample } } : a)) };
  assert.deepEqual(causesOf(noPage).find((c) => c.id === "blocker@example.org").measure, "startup");
  // A blocking add-on with a background page load (a benchmark start's figures, 29 Nov: 262.8 and 2,623.7 ms).
  const withPage = { ...blocking, addons: blocking.addons.map((a) => (a.id === "blocker@example.org" ? { ...a, startupMs: { value: 262.8, source: "glean-delta" }, backgroundPageLoadMs: { value: 2623.7, source: "glean-delta" } } : a)) };
  const held = causesOf(withPage).find((c) => c.id === "blocker@example.org");
  assert.deepEqual([held.measure, held.ms, held.source], ["background-page-load", 2623.7, "glean-delta"]);
});

test("the restored tabs' load: ms since the process began from the experiment's watch; missing where none was restored; absent from older readings", () => {
  const processStart = 1_795_951_371_916; // a benchmark start of the medium preset over http, 29 Nov
  const at = (value) => ({ ...reading(2), selectedTabsRestoredAt: value });
  assert.deepEqual(costsFromReading(at(processStart + 4602), reading(1), { processStart }).sessionRestore.selectedTabsRestoredAtMs, { value: 4602, source: SOURCES.tabEvents });
  assert.deepEqual(costsFromReading(at(null), reading(1), { processStart }).sessionRestore.selectedTabsRestoredAtMs, { missing: MISSING.noRestoredTab });
  // before the process began: not this start's
  assert.deepEqual(costsFromReading(at(processStart - 1), reading(1), { processStart }).sessionRestore.selectedTabsRestoredAtMs, { missing: MISSING.noRestoredTab });
  assert.equal("selectedTabsRestoredAtMs" in costsFromReading(reading(2), reading(1), { processStart }).sessionRestore, false);
  assert.deepEqual(costsProblems(costsFromReading(at(processStart + 4602), reading(1), { processStart })), []);
  // It is a moment, not a cost: no cause of its own.
  assert.deepEqual(
    causesOf(costsFromReading(at(processStart + 4602), reading(1), { processStart })).map((c) => c.id),
    causesOf(costsFromReading(reading(2), reading(1), { processStart })).map((c) => c.id),
  );
});
