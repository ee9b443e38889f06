import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { abRows, abTable, ARM_TEMPLATE, attributionTable, COSTLY_ADDON_ID, costlyAddonFiles, RESTORE_OFF_ARMS, withoutAddons } from "../../../../scripts/bench/ab.mjs";
import { attributionOf } from "../../../../extension/lib/models/attribution.js";
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
  assert.equal(row.endpoint, "sessionRestored");
  assert.match(abTable([row]), /\| hot-without-costly-addon \| sessionRestored \| .* ms \(.* to .*; p = .*; n = 4 \+ 4\) \| .* ms \(n = 4\) \| agrees within 25 %: a saving \|/);
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

test("the costly add-on: its id in the manifest, a fixed amount of work (no timed wait) in its persistent background before a blocking webRequest listener for page loads", () => {
  const files = costlyAddonFiles(1000);
  const manifest = JSON.parse(files["manifest.json"]);
  assert.equal(manifest.browser_specific_settings.gecko.id, COSTLY_ADDON_ID);
  // a blocking listener Firefox persists and primes: only a persistent background's startup-blocking APIs are
  assert.deepEqual(manifest.background, { scripts: ["background.js"], persistent: true });
  for (const permission of ["webRequest", "webRequestBlocking", "<all_urls>"]) {
    assert.ok(manifest.permissions.includes(permission), permission);
  }
  assert.equal(manifest.content_scripts, undefined);
  const background = files["background.js"];
  assert.match(background, /i < 1000;/);
  assert.doesNotMatch(background, /setTimeout|Date\.now|performance/);
  // registered at the top level, after the work: the held page loads wait for the work
  const listener = background.indexOf("browser.webRequest.onBeforeRequest.addListener(");
  assert.ok(listener > background.indexOf("i < 1000;"), "the listener comes after the loop");
  assert.match(background.slice(listener), /\["blocking"\]\);/);
  assert.match(background.slice(listener), /types: \["main_frame", "sub_frame"\]/);
});

test("abRows: the add-on arm is measured on the selected tabs restored first, where the records have it, then on sessionRestored", () => {
  const withTabs = (scenario, sr, tabs) => {
    const r = record(scenario, sr, scenario === "hot");
    const costs = r.costs.addons ? r.costs : { addons: [], sessionRestore: {} };
    return { ...r, costs: { ...costs, sessionRestore: { ...costs.sessionRestore, selectedTabsRestoredAtMs: { value: tabs, source: "session-store-events" } } } };
  };
  const hot = [[1000, 1000 + addonMs], [1010, 1015 + addonMs], [990, 985 + addonMs], [1005, 1000 + addonMs]].map(([sr, tabs]) => withTabs("hot", sr, tabs));
  const without = [[1000, 1000], [1012, 1010], [988, 990], [1000, 1005]].map(([sr, tabs]) => withTabs("hot-without-costly-addon", sr, tabs));
  const rows = abRows([...hot, ...without]);
  assert.deepEqual(rows.map((r) => [r.arm, r.endpoint]), [["hot-without-costly-addon", "selectedTabsRestored"], ["hot-without-costly-addon", "sessionRestored"]]);
  const [tabs, sr] = rows;
  assert.ok(Math.abs(tabs.saving.ms - addonMs) < 10, `saving ${tabs.saving.ms} near ${addonMs}`);
  assert.equal(tabs.agrees, true);
  assert.ok(Math.abs(sr.saving.ms) < 10);
  assert.equal(sr.agrees, false);
  const table = abTable(rows);
  assert.match(table, /\| hot-without-costly-addon \| the selected tabs restored \(loaded\) \| .* \| agrees within 25 %: a saving \|/);
  assert.match(table, /\| hot-without-costly-addon \| sessionRestored \| .* \| disagrees: the figure is busy time, not a saving \|/);
  // session restore's arm stays on sessionRestored alone
  const off = [1000, 1010].map((ms) => withTabs("hot-session-restore-off", ms - 400, ms));
  assert.deepEqual(abRows([...hot, ...off]).map((r) => r.endpoint), ["sessionRestored"]);
});

test("the attribution table: the excess, each step with its CI and whether it counts, the single-cause arms beside", () => {
  const arm = (scenario, mean) => [-10, -5, 5, 10].map((d) => record(scenario, mean + d, false));
  const records = [...arm("hot", 1600), ...arm("hot-addons-off", 1200), ...arm("hot-addons-and-restore-off", 1100), ...arm("hot-empty-profile", 500), ...arm("hot-session-restore-off", 1590)];
  const table = attributionTable(attributionOf(records));
  assert.match(table, /\| hot above the empty profile \(hot → hot-empty-profile\) \| 1,100 ms \(.*; n = 4 \+ 4\) \| the whole to attribute \|/);
  assert.match(table, /\| the add-ons \(all; about:startup stays\) \(hot → hot-addons-off\) \| 400 ms .* \| yes \|/);
  assert.match(table, /\| the profile's other data .* \(hot-addons-and-restore-off → hot-empty-profile\) \| 600 ms .* \| yes \|/);
  assert.match(table, /\| session restore alone, add-ons on \(hot → hot-session-restore-off\) \| 10 ms .* \| beside the steps \(overlaps them\) \|/);
  assert.match(table, /Attributed to named causes: 1,100 ms of 1,100 ms above the empty profile, 100\.0 %\./);
  assert.equal(attributionTable(attributionOf(arm("hot", 1600))), null);
});

test("the arms' templates: add-ons off takes every .xpi of the base away; the restore-off arms add the pref on top", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ab-test-"));
  try {
    const from = path.join(dir, "from");
    fs.mkdirSync(path.join(from, "extensions"), { recursive: true });
    fs.writeFileSync(path.join(from, "extensions", "a@x.xpi"), "a");
    fs.writeFileSync(path.join(from, "extensions", "b@y.xpi"), "b");
    fs.writeFileSync(path.join(from, "places.sqlite"), "p");
    fs.writeFileSync(path.join(from, "extensions.json"), "{}");
    fs.writeFileSync(path.join(from, "addonStartup.json.lz4"), "x");
    // prefs.js as Firefox writes the UUID map: a JSON string inside a JS string.
    const uuids = { "a@x": "1111", "b@y": "2222", "webcompat@mozilla.org": "3333" };
    fs.writeFileSync(path.join(from, "prefs.js"), `user_pref("extensions.webextensions.uuids", ${JSON.stringify(JSON.stringify(uuids))});\n`);
    for (const uuid of ["1111", "2222", "3333"]) {
      fs.mkdirSync(path.join(from, "storage", "default", `moz-extension+++${uuid}^userContextId=4294967295`), { recursive: true });
    }
    const to = path.join(dir, "to");
    const removed = withoutAddons(from, to, { copy: (a, b) => fs.cpSync(a, b, { recursive: true }) });
    assert.deepEqual(removed.sort(), ["a@x", "b@y"]);
    assert.deepEqual(fs.readdirSync(path.join(to, "extensions")), []);
    assert.ok(fs.existsSync(path.join(to, "places.sqlite")), "the rest of the profile stays");
    assert.ok(!fs.existsSync(path.join(to, "extensions.json")) && !fs.existsSync(path.join(to, "addonStartup.json.lz4")), "the registry is rebuilt by the first start");
    assert.deepEqual(fs.readdirSync(path.join(to, "storage", "default")), ["moz-extension+++3333^userContextId=4294967295"], "only the removed add-ons' storage goes");
    assert.equal(fs.readdirSync(path.join(from, "extensions")).length, 2, "the base is left alone");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(ARM_TEMPLATE["hot-addons-and-restore-off"], "hot-addons-off");
  assert.deepEqual(RESTORE_OFF_ARMS, ["hot-session-restore-off", "hot-addons-and-restore-off"]);
  assert.equal(ARM_TEMPLATE["hot-session-restore-off"], undefined, "session restore off starts from hot's own template");
});
