// The benchmark's A/B mode (issue 40, item 3): the same profile started hot with one thing taken
// away, against plain `hot`, to measure what removing it saves, beside what the page's figure
// (the record's `costs`, lib/models/start-costs.js) predicted.
//   hot-without-costly-addon  the profile without the deliberately costly add-on (COSTLY_ADDON,
//            put in every other launch's profile when an A/B arm runs): its own template, made
//            from the same base profile the same way, without the add-on
//   hot-session-restore-off   the same profile with browser.startup.page = 1 in user.js: no
//            session restored
// Tabs restored on demand is no arm: the realistic profile already restores on demand
// (browser.sessionstore.restore_on_demand is Firefox's default, true), so that arm would be `hot`.
// The pure parts (the add-on's files, the table) are exported for the unit tests.
import fs from "node:fs";
import path from "node:path";
import { AB_ARMS, abRows, ALL_AB_ARMS, ATTRIBUTION_ARMS, COSTLY_ADDON_ID, EMPTY_PROFILE_ARM } from "../../extension/lib/models/ab-saving.js";

// The arms, the measured saving and its agreement with the page's figure are the extension's
// model (the page words a cause as a saving only where an imported A/B run agrees).
export { AB_ARMS, abRows, ALL_AB_ARMS, ATTRIBUTION_ARMS, COSTLY_ADDON_ID, EMPTY_PROFILE_ARM };
/**
 * Prefs of an A/B run's profile: Glean records only while telemetry upload is on, and Debian's
 * firefox-esr turns it off (/etc/firefox-esr/firefox-esr.js), so the page's figures would all be
 * missing. FOG's test port -1 makes it record and drop every ping instead of sending it: what
 * Marionette and geckodriver set for every automated Firefox (checked on ESR 153.8:
 * docs/design/start-costs.md). Nothing is uploaded.
 */
export const AB_PREFS = { "telemetry.fog.test.localhost_port": -1 };

/** Iterations of the costly add-on's loops: deterministic work, not a timed wait. */
export const COSTLY_ITERATIONS = 60_000_000;

/**
 * The costly add-on, deliberately costly the way request blockers are: a persistent background
 * page that computes for a while and writes and reads back a few MB of storage before it
 * registers a *blocking* webRequest listener for every page load (what ad and tracker blockers,
 * parental controls and proxies do; permissions webRequest, webRequestBlocking, <all_urls>).
 *
 * Why this shape (ESR 153.8, docs/design/start-costs.md): at APP_STARTUP Firefox starts background
 * pages only after sessionstore-windows-restored, which is what sessionRestored records
 * (ext-backgroundPage.js: ExtensionParent.browserStartupPromise), so a background alone costs the
 * start nothing measurable (-21 ms, medium, 29 Nov); content scripts and a message waking the
 * background during the restore did not move sessionRestored either (-124 and -34 ms, n.s.). A
 * blocking webRequest listener is different: Firefox persists it (webRequest is a "startup
 * blocking" API: ExtensionCommon.sys.mjs EventManager), primes it at the next start, and when the
 * restored tabs' first request comes the request is held and the background started at once
 * (once the first window has painted) until the real listener, registered only after the
 * background's costly top-level work, has answered. So the add-on's background page load lands
 * on the selected tabs' load, what the user waits for, though not on sessionRestored. Only
 * http(s) requests reach webRequest: the A/B mode serves the preset's pages over http
 * (tabs-http.mjs).
 */
export function costlyAddonFiles(iterations = COSTLY_ITERATIONS) {
  const loop = `let h = 0;\nfor (let i = 0; i < ${iterations}; i++) { h = (h * 31 + i) | 0; }`;
  return {
    "manifest.json": `${JSON.stringify(
      {
        manifest_version: 2,
        name: "Synthetic Costly Startup",
        version: "1.1",
        description: "about:startup's benchmark: an add-on that is deliberately costly at startup (scripts/bench/ab.mjs).",
        browser_specific_settings: { gecko: { id: COSTLY_ADDON_ID } },
        permissions: ["storage", "webRequest", "webRequestBlocking", "<all_urls>"],
        background: { scripts: ["background.js"], persistent: true },
      },
      null,
      2,
    )}\n`,
    "background.js": [
      "// Deliberately costly at startup: a fixed amount of work and state read back, then a blocking",
      "// listener that every page load waits for (registered synchronously, so Firefox persists it).",
      loop,
      `const blob = "x".repeat(4 * 1024 * 1024);`,
      `browser.storage.local.get("state").then((got) => got.state ? null : browser.storage.local.set({ state: blob + h }));`,
      `browser.webRequest.onBeforeRequest.addListener(() => ({}), { urls: ["<all_urls>"], types: ["main_frame", "sub_frame"] }, ["blocking"]);`,
      "",
    ].join("\n"),
  };
}

/** Appends `name = value` to the profile's user.js (Firefox reads it at every start). */
export function appendUserPref(profile, name, value) {
  fs.appendFileSync(path.join(profile, "user.js"), `user_pref(${JSON.stringify(name)}, ${JSON.stringify(value)});\n`);
}

/**
 * The arm whose template an arm restores (the arms that take add-ons or the whole profile away
 * have their own template; the session restore arms add a pref on top), or null for `hot`'s.
 */
export const ARM_TEMPLATE = {
  "hot-without-costly-addon": "hot-without-costly-addon",
  "hot-addons-off": "hot-addons-off",
  "hot-addons-and-restore-off": "hot-addons-off",
  "hot-empty-profile": "hot-empty-profile",
};
/** The arms that start without the previous session restored (browser.startup.page = 1). */
export const RESTORE_OFF_ARMS = ["hot-session-restore-off", "hot-addons-and-restore-off"];

/**
 * A copy of the preset's profile at `to` with every add-on it installed gone, as for a user who
 * removed them long ago: their .xpi files, their storage.local folders
 * (storage/default/moz-extension+++UUID…, UUIDs from prefs.js's extensions.webextensions.uuids)
 * and Firefox's add-on registry (extensions.json, addonStartup.json.lz4), which the template's
 * first start then rebuilds from what is there. A first try removed only the .xpi files: that
 * first start, which had to uninstall six add-ons, gave no record in 3 tries of 3 (29 Nov; the
 * cause, found later, was Glean read before Firefox had initialized FOG: docs/design/start-costs.md).
 * Returns the ids removed.
 */
export function withoutAddons(from, to, { copy }) {
  copy(from, to);
  const dir = path.join(to, "extensions");
  const removed = [];
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    if (name.endsWith(".xpi")) {
      fs.rmSync(path.join(dir, name));
      removed.push(name.slice(0, -".xpi".length));
    }
  }
  const uuids = addonUuids(path.join(to, "prefs.js"));
  const storage = path.join(to, "storage", "default");
  for (const id of removed) {
    const uuid = uuids[id];
    for (const name of uuid && fs.existsSync(storage) ? fs.readdirSync(storage) : []) {
      if (name.startsWith(`moz-extension+++${uuid}`)) {
        fs.rmSync(path.join(storage, name), { recursive: true, force: true });
      }
    }
  }
  for (const registry of ["extensions.json", "addonStartup.json.lz4"]) {
    fs.rmSync(path.join(to, registry), { force: true });
  }
  return removed;
}

/** The add-on ids' internal UUIDs from a prefs.js (extensions.webextensions.uuids), or {}. */
export function addonUuids(prefsJs) {
  const text = fs.existsSync(prefsJs) ? fs.readFileSync(prefsJs, "utf8") : "";
  const line = text.split("\n").find((l) => l.includes('"extensions.webextensions.uuids"'));
  if (!line) {
    return {};
  }
  try {
    // user_pref("extensions.webextensions.uuids", "<JSON as a JS string>");
    const value = JSON.parse(line.slice(line.indexOf(",") + 1, line.lastIndexOf(")")).trim());
    return JSON.parse(value);
  } catch {
    return {};
  }
}

/** Where an arm's own template profile lives (ARM_TEMPLATE). */
export const armTemplate = (root, arm) => path.join(root, `template-${arm}`);

const int = (v) => Math.round(v).toLocaleString("en-US");

/** How the A/B table names each endpoint (ab-saving.js ENDPOINTS). */
const ENDPOINT_NAMES = { sessionRestored: "sessionRestored", selectedTabsRestored: "the selected tabs restored (loaded)" };

/** The A/B table (markdown) of abRows. Pure. */
export function abTable(rows) {
  const lines = [
    "| arm (against `hot`) | measured on | measured saving (95% CI, n) | the page's figure (median busy ms, n) | verdict |",
    "| --- | --- | ---: | ---: | --- |",
  ];
  for (const row of rows) {
    const saving = row.saving
      ? `${int(row.saving.ms)} ms (${int(row.saving.low)} to ${int(row.saving.high)}; p = ${row.saving.p.toFixed(2)}; n = ${row.saving.nHot} + ${row.saving.nArm})`
      : "missing (fewer than 2 runs)";
    const prediction = row.prediction === null ? "missing" : `${int(row.prediction)} ms (n = ${row.predictionN})`;
    const verdict =
      row.agrees === null ? "cannot compare" : row.agrees ? "agrees within 25 %: a saving" : "disagrees: the figure is busy time, not a saving";
    lines.push(`| ${row.arm} | ${ENDPOINT_NAMES[row.endpoint] ?? row.endpoint} | ${saving} | ${prediction} | ${verdict} |`);
  }
  return lines.join("\n");
}

const STEP_NAMES = {
  addons: "the add-ons (all; about:startup stays)",
  "session-restore": "session restore, with the add-ons off",
  "profile-data": "the profile's other data (history, bookmarks, cookies, site data, startup cache)",
};
const ALONE_NAMES = { "costly-addon": "the costly add-on alone", "session-restore-alone": "session restore alone, add-ons on" };
const savingCell = (s) => `${int(s.ms)} ms (${int(s.low)} to ${int(s.high)}; p = ${s.p.toFixed(2)}; n = ${s.nFrom} + ${s.nTo})`;

/**
 * The attribution table (markdown) of attributionOf's result, or null without one: the hot
 * start's time above the empty profile, each step's measured saving, what is counted, and the
 * single-cause arms beside it. Pure.
 */
export function attributionTable(a) {
  if (!a) {
    return null;
  }
  const lines = [
    "| step (arm → arm) | what taking it away saved on sessionRestored (95% CI, n) | counted |",
    "| --- | ---: | --- |",
    `| hot above the empty profile (hot → ${EMPTY_PROFILE_ARM}) | ${savingCell(a.excess)} | the whole to attribute |`,
  ];
  for (const step of a.steps) {
    const name = step.causes.map((c) => STEP_NAMES[c]).join(" + ");
    lines.push(`| ${name} (${step.from} → ${step.to}) | ${savingCell(step.saving)} | ${step.saving.significant ? "yes" : "no: its CI holds 0"} |`);
  }
  for (const x of a.alone) {
    lines.push(`| ${ALONE_NAMES[x.cause]} (hot → ${x.arm}) | ${savingCell(x.saving)} | beside the steps (overlaps them) |`);
  }
  const share = a.share === null ? "none (hot is not above the empty profile)" : `${(a.share * 100).toFixed(1)} %`;
  lines.push("", `Attributed to named causes: ${int(a.attributedMs)} ms of ${int(a.excess.ms)} ms above the empty profile, ${share}${a.capped ? " (capped: the steps sum to more)" : ""}.`);
  return lines.join("\n");
}
