#!/usr/bin/env node
// Makes a Firefox profile like an everyday user's, from a seed and a preset (presets.mjs; what
// each models: docs/design/realistic-profile.md):
//   node scripts/profile/make.mjs --preset small|medium|large [--seed N] [--out DIR]
//                                 [--now YYYY-MM-DD] [--firefox PATH]
// Into DIR: profile/ (the profile), pages/ (the local pages its restored tabs show; the session
// names them by absolute path), profile.json (what was made, with its sizes by part).
//
// How: the model (model.mjs) is pure data from the seed. The add-ons are built here and
// sideloaded into profile/extensions/. Then two Firefox runs on the profile itself:
//   1. fill: Firefox installs the add-ons (each writes its storage.local on its first start),
//      Places gets the history, bookmarks and favicons through its own API, the cookie and
//      permission managers their entries, the session store the session; a clean quit writes
//      it all as Firefox writes it (sessionstore.jsonlz4, places.sqlite, prefs.js…).
//   2. warm: an ordinary start that restores the session, starts the add-ons and injects their
//      content scripts, then a clean quit: the startup cache is warm, as after any day of use.
// The same seed, preset, --now and output folder give the same content; what Firefox adds
// itself (timestamps, its own caches) is Firefox's.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { findFirefox, findGeckodriver } from "../lib/firefox.mjs";
import { geckodriverMissing } from "../lib/setup.mjs";
import { findCandidates } from "../lib/firefox-kind.mjs";
import { userJs, withoutPrefs } from "../lib/prefs-js.mjs";
import { extensionFiles, FILLED_KEY, injectedAttribute, answerAttribute, packXpi } from "./extensions.mjs";
import { MAKING_PREFS, startFirefox } from "./firefox.mjs";
import { iconDataUrl } from "./icons.mjs";
import * as inFirefox from "./in-firefox.mjs";
import { buildModel, modelCounts } from "./model.mjs";
import { writePages } from "./pages.mjs";
import { partsTable, profileParts } from "./parts.mjs";
import { PRESET_NAMES, PRESETS } from "./presets.mjs";
import { browserState } from "./session.mjs";

/** A mistake on the command line: shown with the usage, without a stack trace. */
export class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * Something this machine lacks that the user installs (geckodriver): said with the command, without
 * a stack trace or the usage, before anything is made.
 */
export class MissingToolError extends Error {
  constructor(message) {
    super(message);
    this.name = "MissingToolError";
  }
}

/** The name of the marker a folder being made holds until profile.json is written: a folder with it is half-made. */
export const MAKING_MARKER = ".making";

export const USAGE = `usage: node scripts/profile/make.mjs --preset ${PRESET_NAMES.join("|")} [--seed N] [--out DIR]
                                  [--now YYYY-MM-DD] [--firefox PATH]
Makes a Firefox profile like an everyday user's in DIR/profile (default
artifacts/profiles/<preset>-<seed>), the pages its restored tabs show in DIR/pages, and
DIR/profile.json (what was made, sizes by part). The same seed, preset, --now and DIR give the
same profile.
  --preset   ${PRESET_NAMES.map((n) => `${n}: ${PRESETS[n].models}`).join("\n             ")}
  --seed N   the seed (whole number, default 1)
  --now D    the day the history ends (default today, UTC)
  --out DIR  where to make it; must not exist or be empty
  --firefox  the Firefox binary (default: $FIREFOX, then firefox, firefox-esr… on PATH)`;

/** argv → {presetName, seed, out, now (ms), firefox} or {help: true}. Throws UsageError. Pure. */
export function parseMakeArgs(argv, { today = new Date(), root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..") } = {}) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { preset: { type: "string" }, seed: { type: "string" }, out: { type: "string" }, now: { type: "string" }, firefox: { type: "string" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (error) {
    throw new UsageError(error.message);
  }
  if (values.help) return { help: true };
  if (!values.preset) throw new UsageError(`--preset is required: one of ${PRESET_NAMES.join(", ")}`);
  if (!PRESET_NAMES.includes(values.preset)) throw new UsageError(`unknown preset ${JSON.stringify(values.preset)}; the presets are ${PRESET_NAMES.join(", ")}`);
  if (values.seed !== undefined && !/^\d{1,9}$/.test(values.seed)) throw new UsageError(`--seed wants a whole number (up to 9 digits), not ${values.seed}`);
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  let now;
  if (values.now === undefined) {
    now = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  } else {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(values.now);
    now = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
    if (Number.isNaN(now) || new Date(now).toISOString().slice(0, 10) !== values.now) throw new UsageError(`--now wants a day as YYYY-MM-DD, not ${values.now}`);
  }
  return {
    presetName: values.preset,
    seed,
    now,
    out: path.resolve(values.out ?? path.join(root, "artifacts", "profiles", `${values.preset}-${seed}`)),
    firefox: values.firefox ?? null,
  };
}

/**
 * The prefs the profile starts with (prefs.js before its first start; Firefox keeps them as a
 * user's): restore the last session, and load the sideloaded unsigned synthetic add-ons enabled
 * (ESR, Developer Edition, Nightly honour the signature pref) with their internal UUIDs pinned.
 * The tabs are local files, which add-ons reach only when the user opts in per add-on (ESR 153
 * checked): the one pref a user would not have lets `<all_urls>` content scripts run on them as
 * they run on the web pages a real session holds.
 */
export function profilePrefs(extensions) {
  return {
    "browser.startup.page": 3,
    "xpinstall.signatures.required": false,
    "extensions.autoDisableScopes": 0,
    "extensions.webextensions.fileSchemeAccess.requireOptIn": false,
    "extensions.webextensions.uuids": JSON.stringify(Object.fromEntries(extensions.map((e) => [e.id, e.uuid]))),
    "browser.shell.checkDefaultBrowser": false,
    "toolkit.telemetry.reportingpolicy.firstRun": false,
  };
}

/** Pages whose frecency one driver call recomputes while making a profile (see recalculateFrecencyChunk). */
const FRECENCY_CHUNK = 5000;

function chunks(items, size) {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

async function waitFor(check, { timeoutMs, what }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const last = await check();
    if (last.ok) return last.value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}: ${JSON.stringify(last.value)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Waits until every add-on is active, its background running and its data written. */
async function waitAddons(ff, model) {
  const ids = model.extensions.map((e) => e.id);
  return waitFor(
    async () => {
      const states = await ff.chrome(inFirefox.addonStates, ids, FILLED_KEY);
      return { ok: states.every((s) => s.active && s.background === "running" && s.filled), value: states };
    },
    { timeoutMs: 180_000, what: "the add-ons to start and write their storage" },
  );
}

/**
 * The marks of the add-ons' content scripts on each window's selected tab (the tabs a start
 * loads; the others wait for a click: browser.sessionstore.restore_on_demand). Waits until every
 * add-on with a content script has marked every one of them and had its background's answer.
 */
export async function waitContentScripts(ff, extensions, { timeoutMs = 120_000 } = {}) {
  const withContent = extensions.filter((e) => e.contentBytes > 0);
  return waitFor(
    async () => {
      const windows = await ff.chrome(inFirefox.openWindows);
      const marks = [];
      for (const w of windows) {
        await ff.driver.switchTo().window(w.selectedHandle);
        marks.push({ url: w.selectedUrl, marks: (await ff.content(inFirefox.pageMarks)) ?? {} });
      }
      const ok = marks.every((m) => withContent.every((e) => m.marks[injectedAttribute(e.kind)] === "injected" && m.marks[answerAttribute(e.kind)] !== undefined));
      return { ok, value: { windows, marks } };
    },
    { timeoutMs, what: "the add-ons' content scripts on the selected tabs" },
  );
}

/**
 * Makes the profile. `log(line)` reports progress. Resolves with the summary written to
 * profile.json: {preset, seed, now, firefox, counts, parts, seconds, profileDir, pagesDir}.
 * Checks for geckodriver before it makes anything; a run that fails part-way removes what it made,
 * so the same command can be run again (issue 39 #8: a 19 MB half-made folder made the retry fail
 * with "is not empty"). `findDriver`, `start` and `makeIn` (the making itself) are the
 * collaborators, for tests.
 */
export async function makeProfile(options, { log = console.log, findDriver = findGeckodriver, start = startFirefox, makeIn = make } = {}) {
  if (findDriver() === null) throw new MissingToolError(`${geckodriverMissing()}\nNothing was made.`);
  const { out } = options;
  if (fs.existsSync(out) && fs.readdirSync(out).length > 0) {
    if (fs.existsSync(path.join(out, MAKING_MARKER))) {
      log(`${out} was half-made by an earlier run that stopped: removed, made again`);
      fs.rmSync(out, { recursive: true, force: true });
    } else {
      const half = fs.existsSync(path.join(out, "profile")) && !fs.existsSync(path.join(out, "profile.json"));
      throw new UsageError(
        half
          ? `${out} holds a half-made profile (no profile.json): remove it (rm -rf ${out}) or give --out a new folder`
          : `${out} is not empty: give --out a new folder (or remove this one)`,
      );
    }
  }
  const made = !fs.existsSync(out);
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, MAKING_MARKER), "made by scripts/profile/make.mjs; removed when profile.json is written\n");
  try {
    const summary = await makeIn(options, { log, start });
    fs.rmSync(path.join(out, MAKING_MARKER), { force: true });
    return summary;
  } catch (error) {
    // What this run made goes: the folder if it made it, else what it put in the empty one.
    if (made) fs.rmSync(out, { recursive: true, force: true });
    else for (const name of fs.readdirSync(out)) fs.rmSync(path.join(out, name), { recursive: true, force: true });
    error.message = `${error.message}\n(the half-made ${out} was removed: the same command can be run again)`;
    throw error;
  }
}

async function make({ presetName, seed, now, out, firefox }, { log, start }) {
  const started = Date.now();
  const seconds = {};
  const step = async (name, fn) => {
    const t0 = Date.now();
    const value = await fn();
    seconds[name] = (Date.now() - t0) / 1000;
    return value;
  };
  const profileDir = path.join(out, "profile");
  const pagesDir = path.join(out, "pages");
  const home = path.join(out, "home");
  const logFile = path.join(out, "firefox.log");
  for (const dir of [profileDir, home, path.join(profileDir, "extensions")]) fs.mkdirSync(dir, { recursive: true });

  const model = buildModel({ seed, presetName, now, pagesDir });
  const counts = modelCounts(model);
  log(`${presetName} (seed ${seed}, history to ${new Date(now).toISOString().slice(0, 10)}): ${counts.places} pages, ${counts.visits} visits, ${counts.bookmarks} bookmarks, ${counts.tabs} tabs in ${counts.windows} windows, ${counts.extensions} add-ons`);
  await step("pages and add-ons", async () => {
    writePages(pagesDir, model.session.pages, seed);
    for (const ext of model.extensions) {
      fs.writeFileSync(path.join(profileDir, "extensions", `${ext.id}.xpi`), await packXpi(extensionFiles(ext)));
    }
  });
  fs.writeFileSync(path.join(profileDir, "prefs.js"), userJs(profilePrefs(model.extensions)));
  fs.writeFileSync(path.join(profileDir, "user.js"), userJs(MAKING_PREFS));

  const run = async (name, body) => {
    const ff = await start({ binary: firefox, profile: profileDir, home, logFile });
    try {
      await ff.chrome(inFirefox.waitSessionRestored);
      await body(ff);
      const code = await ff.quit();
      if (code !== 0) throw new Error(`Firefox's ${name} run quit with ${code}; see ${logFile}`);
    } catch (error) {
      await ff.kill();
      throw error;
    }
  };

  await step("fill run", () =>
    run("fill", async (ff) => {
      log("fill: add-ons installing and writing their storage …");
      await waitAddons(ff, model);
      log(`fill: history (${counts.visits} visits) …`);
      await step("history", async () => {
        for (const batch of chunks(model.history, 2000)) await ff.chrome(inFirefox.insertHistory, batch);
      });
      await ff.chrome(inFirefox.insertBookmarks, model.bookmarks);
      log(`fill: favicons (${counts.icons} icons for ${counts.iconPages} pages) …`);
      const icons = model.icons.map((i) => ({ url: i.url, root: i.root, dataUrl: iconDataUrl(i.color, seed + i.site), pages: i.pages }));
      await step("favicons", async () => {
        const batches = chunks(icons, 100);
        for (const [k, batch] of batches.entries()) {
          const t0 = Date.now();
          await ff.chrome(inFirefox.setIcons, batch);
          log(`fill: favicons ${k + 1}/${batches.length} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
        }
      });
      await ff.chrome(inFirefox.addCookies, model.cookies);
      await ff.chrome(inFirefox.addPermissions, model.permissions);
      log("fill: frecency …");
      await step("frecency", async () => {
        // A chunk at a time, each well inside the driver's script timeout, then whatever is left
        // (origins, Firefox's alternative frecency) in one call, as before.
        for (let left = Infinity, k = 1; left > 0; k++) {
          const t0 = Date.now();
          const now = await ff.chrome(inFirefox.recalculateFrecencyChunk, FRECENCY_CHUNK);
          log(`fill: frecency chunk ${k}: ${now} pages left (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
          if (now >= left) throw new Error(`recomputing frecencies made no progress (${now} pages left)`);
          left = now;
        }
        await ff.chrome(inFirefox.recalculateFrecency);
      });
      log(`fill: session (${counts.tabs} tabs) …`);
      await ff.chrome(inFirefox.setSession, browserState(model.session, { principal: null, closedAt: now }));
      await waitContentScripts(ff, model.extensions);
    }),
  );
  let restored = null;
  await step("warm run", () =>
    run("warm", async (ff) => {
      log("warm: an ordinary start on the made profile …");
      await waitAddons(ff, model);
      restored = await waitContentScripts(ff, model.extensions);
    }),
  );

  // The making runs' own traces go: their prefs, the Marionette port file, the throwaway HOME.
  fs.rmSync(path.join(profileDir, "user.js"), { force: true });
  fs.rmSync(path.join(profileDir, "MarionetteActivePort"), { force: true });
  const prefsFile = path.join(profileDir, "prefs.js");
  fs.writeFileSync(prefsFile, withoutPrefs(fs.readFileSync(prefsFile, "utf8"), Object.keys(MAKING_PREFS)));
  fs.rmSync(home, { recursive: true, force: true });

  const parts = profileParts(profileDir, model.extensions);
  const summary = {
    preset: presetName,
    models: PRESETS[presetName].models,
    seed,
    now: new Date(now).toISOString().slice(0, 10),
    firefox: firefoxBuild(firefox),
    counts,
    restoredTabs: restored.windows.reduce((n, w) => n + w.tabs.length, 0),
    extensions: model.extensions.map((e) => ({ id: e.id, kind: e.kind, uuid: e.uuid, storageBytes: e.storageBytes, contentScript: e.contentBytes > 0 })),
    parts,
    seconds: { ...seconds, total: (Date.now() - started) / 1000 },
    profileDir,
    pagesDir,
  };
  fs.writeFileSync(path.join(out, "profile.json"), `${JSON.stringify(summary, null, 1)}\n`);
  const steps = Object.entries(seconds).map(([name, s]) => `${name} ${s.toFixed(0)} s`).join(", ");
  log(`made in ${summary.seconds.total.toFixed(0)} s (${steps}): ${profileDir}\n${partsTable(parts)}`);
  return summary;
}

/**
 * The Firefox to make profiles with when --firefox is not given: $FIREFOX, else the first
 * install that honours unsigned add-ons and experiments (ESR, Developer Edition, Nightly), as the
 * e2e tests pick, else the first on PATH. Its real binary, not a wrapper script.
 */
export function defaultFirefox({ env = process.env } = {}) {
  if (!env.FIREFOX) {
    const install = findCandidates({ env }).find((i) => i.experiments && (i.kind === "distribution" || i.kind === "tarball"));
    if (install) return fs.realpathSync(install.binary);
  }
  return fs.realpathSync(findFirefox({ env }));
}

/** Version and build ID of the Firefox whose binary is `binary` (application.ini beside it). */
export function firefoxBuild(binary) {
  const ini = path.join(path.dirname(binary), "application.ini");
  const text = fs.existsSync(ini) ? fs.readFileSync(ini, "utf8") : "";
  const field = (name) => new RegExp(`^${name}=(.*)$`, "m").exec(text)?.[1]?.trim() ?? null;
  return { binary, version: field("Version"), buildId: field("BuildID") };
}

async function main(argv) {
  const options = parseMakeArgs(argv);
  if (options.help) {
    console.log(USAGE);
    return;
  }
  await makeProfile({ ...options, firefox: options.firefox ? fs.realpathSync(options.firefox) : defaultFirefox() });
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error) => {
    if (error instanceof UsageError) {
      console.error(`make: ${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    if (error instanceof MissingToolError) {
      console.error(`make: ${error.message}`);
      process.exit(1);
    }
    console.error(`make: ${error.stack ?? error.message}`);
    process.exit(1);
  });
}
