// The realistic profile (scripts/profile/make.mjs) works in a real Firefox: the small preset is
// made, then started as a user starts Firefox, and Firefox itself is asked what it has: the
// restored windows and tabs, the add-ons active with their backgrounds running and their data
// in storage.local, their content scripts on each window's selected tab with the background's
// answer, and the history, bookmarks and favicons Places holds. The start is ours, not
// geckodriver's (geckodriver's own prefs turn session restore off); WebDriver attaches to it
// through Marionette, as the maker does. Then the benchmark's own first start on a copy of it
// (`npm run bench -- --profile-preset small`): the about:startup add-on sideloaded into the made
// profile loads in full mode and hands over its record, and the template keeps the session.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { artifactsFolder, defaultFirefox, waitFor } from "./harness.js";
import { benchPaths, prepareTemplates } from "../../scripts/bench/launch.mjs";
import { buildExtension } from "../../scripts/build.mjs";
import { HOST_BINARY } from "../../scripts/lib/project.mjs";
import { answerAttribute, injectedAttribute } from "../../scripts/profile/extensions.mjs";
import { startFirefox } from "../../scripts/profile/firefox.mjs";
import * as inFirefox from "../../scripts/profile/in-firefox.mjs";
import { makeProfile, waitContentScripts } from "../../scripts/profile/make.mjs";
import { buildModel, modelCounts } from "../../scripts/profile/model.mjs";
import { EXTENSION_KINDS, PRESETS } from "../../scripts/profile/presets.mjs";
import { FILE_ORIGIN } from "../../scripts/profile/session.mjs";

const PRESET = PRESETS.small;
const NOW = Date.UTC(2026, 10, 24);
const KINDS = EXTENSION_KINDS.slice(0, PRESET.extensions);

let root;
let made;

before(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-profile-"));
  made = await makeProfile(
    { presetName: "small", seed: 1, now: NOW, out: path.join(root, "made"), firefox: fs.realpathSync(defaultFirefox()) },
    { log: (line) => console.log(`make: ${line}`) },
  );
});

after(() => {
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

describe("the small realistic profile, started as a user starts Firefox", () => {
  let ff;
  let windows;

  before(async () => {
    const home = path.join(root, "home");
    fs.mkdirSync(home);
    ff = await startFirefox({ binary: made.firefox.binary, profile: made.profileDir, home, logFile: path.join(artifactsFolder(), "profile-firefox.log") });
    await ff.chrome(inFirefox.waitSessionRestored);
  });

  after(async () => {
    await ff?.quit().catch(() => ff.kill());
  });

  it("restores the session: every window and tab the preset has, each on its local page", async () => {
    windows = await ff.chrome(inFirefox.openWindows);
    assert.equal(windows.length, PRESET.windows);
    const tabs = windows.flatMap((w) => w.tabs);
    assert.equal(tabs.length, PRESET.tabs);
    assert.equal(tabs.filter((t) => t.pinned).length, PRESET.pinned);
    for (const t of tabs) {
      assert.ok(t.url.startsWith(`file://${made.pagesDir}/`), t.url);
      assert.ok(fs.existsSync(new URL(t.url)), `${t.url} exists`);
    }
    // Firefox wrote the session file itself: mozLz4's magic, then the size and one LZ4 block.
    const head = fs.readFileSync(path.join(made.profileDir, "sessionstore.jsonlz4")).subarray(0, 8);
    assert.equal(head.toString("latin1"), "mozLz40\0");
  });

  it("keeps what the session holds of each tab: back and forward pages, referrers, scroll, form data, sessionStorage", async () => {
    // The model make.mjs wrote from (the same seed, day and folder), against Firefox's own state.
    const model = buildModel({ seed: 1, presetName: "small", now: NOW, pagesDir: made.pagesDir });
    const state = await ff.chrome(inFirefox.sessionState);
    assert.equal(state.windows.length, model.session.windows.length);
    let pending = 0;
    state.windows.forEach((w, i) => {
      const source = model.session.windows[i];
      const tabs = [...source.tabs.filter((t) => t.pinned), ...source.tabs.filter((t) => !t.pinned)];
      w.tabs.forEach((t, j) => {
        const want = tabs[j];
        assert.deepEqual(t.entries.map((e) => e.url), want.entries.map((e) => e.url));
        assert.equal(t.index, want.index);
        // Firefox's own serialized referrer on every page opened from the one before.
        assert.deepEqual(t.entries.map((e) => typeof e.referrerInfo === "string"), want.entries.map((e) => e.referrer !== null));
        if (j + 1 === w.selected) return; // loaded twice since: what Firefox collected from the page
        pending += 1;
        // Tabs not loaded yet (restore_on_demand) keep the session's data as it was made.
        assert.deepEqual(t.scroll, want.scroll ? { scroll: want.scroll } : undefined);
        assert.deepEqual(t.formdata, want.form ? { url: want.form.url, id: want.form.id } : undefined);
        assert.deepEqual(t.storage, want.storage ? { [FILE_ORIGIN]: want.storage } : undefined);
      });
    });
    assert.ok(pending > 0);
    // The shown tab got its scroll position (and, where the model has one, its form) back.
    for (const [i, w] of (windows ?? (await ff.chrome(inFirefox.openWindows))).entries()) {
      const source = model.session.windows[i];
      const want = [...source.tabs.filter((t) => t.pinned), ...source.tabs.filter((t) => !t.pinned)][source.selected - 1];
      await ff.driver.switchTo().window(w.selectedHandle);
      const page = await ff.content(inFirefox.pageSessionState);
      assert.equal(page.scrollY, want.scroll ? Number(want.scroll.split(",")[1]) : 0);
      if (want.form) assert.deepEqual([page.q, page.comment], [want.form.id.q, want.form.id.comment ?? ""]);
    }
  });

  it("starts every add-on: active, its background running, its data in storage.local", async () => {
    // Backgrounds start after the first window is up (background-delayed-startup): wait for them.
    const ids = KINDS.map((k) => `${k.kind}@synthetic.profile.test`);
    let states = [];
    await waitFor(async () => (states = await ff.chrome(inFirefox.addonStates, ids, "synthetic:filled")).every((s) => s.background === "running"), {
      timeout: 60_000,
      message: "the add-ons' backgrounds to run",
    }).catch(() => {});
    for (const s of states) {
      assert.deepEqual([s.id, s.installed, s.active, s.background, s.filled], [s.id, true, true, "running", true]);
    }
    assert.equal(states.length, KINDS.length);
  });

  it("injects each add-on's content script into the selected tab, and the background answers it", async () => {
    const { marks } = await waitContentScripts(ff, KINDS, { timeoutMs: 60_000 });
    assert.equal(marks.length, PRESET.windows);
    for (const { marks: m } of marks) {
      for (const kind of KINDS.filter((k) => k.contentBytes > 0)) {
        assert.equal(m[injectedAttribute(kind.kind)], "injected");
        // The background read its whole storage at this start: at least the data it was made with.
        assert.ok(Number(m[answerAttribute(kind.kind)]) >= kind.storageBytes, `${kind.kind}: ${m[answerAttribute(kind.kind)]}`);
      }
    }
  });

  it("has the history, bookmarks and favicons in Places, found through Firefox's own lookups", async () => {
    const counts = await ff.chrome(inFirefox.placesCounts);
    // The preset's visits, plus one for each open tab's page (make.mjs puts those in history).
    assert.ok(counts.visits >= PRESET.visits + PRESET.tabs, `visits ${counts.visits}`);
    assert.ok(counts.places >= PRESET.places + PRESET.tabs, `places ${counts.places}`);
    assert.ok(counts.bookmarks >= PRESET.bookmarks, `bookmarks ${counts.bookmarks}`);
    // Each site's icon has its row, and every page that showed a declared icon is linked to it
    // (the favicon service's rows for each icon's first page, the batched links for the rest);
    // pages of sites with only a root /favicon.ico are linked to none, as Firefox keeps them.
    const model = buildModel({ seed: 1, presetName: "small", now: NOW, pagesDir: made.pagesDir });
    assert.ok(counts.icons >= model.icons.length, JSON.stringify(counts));
    const declared = model.icons.filter((i) => !i.root).flatMap((i) => i.pages);
    const root = model.icons.filter((i) => i.root).flatMap((i) => i.pages);
    assert.ok(declared.length > 0 && root.length > 0);
    assert.equal(await ff.chrome(inFirefox.linkedIconPages, declared), modelCounts(model).iconPages);
    assert.equal(await ff.chrome(inFirefox.linkedIconPages, root), 0);
    assert.equal(counts.outdatedFrecency, 0, "frecency computed, as Firefox's idle task would");
    // A page's visits, looked up by URL as Firefox does (through the url_hash index Places keeps):
    // the model's most visited page.
    const page = model.history.reduce((a, b) => (b.visits.length > a.visits.length ? b : a));
    assert.deepEqual(await ff.chrome(inFirefox.fetchPage, page.url), { guid: page.guid, title: page.title, visits: page.visits.length });
  });
});

describe("the benchmark's first start on a copy of it (bench --profile-preset small)", () => {
  let bench;
  let first;

  before(async () => {
    bench = benchPaths(path.join(root, "bench"));
    fs.mkdirSync(bench.root);
    const built = await buildExtension({ distDir: path.join(bench.root, "dist") });
    // The bench's own step: the add-on sideloaded into a copy of a profile Firefox has run before.
    first = await prepareTemplates({ paths: bench, binary: made.firefox.binary, xpi: built.full.xpi, hostBinary: HOST_BINARY, timeoutMs: 120_000, baseProfile: made.profileDir }).catch((error) => {
      fs.copyFileSync(bench.log, path.join(artifactsFolder(), "profile-bench-template-firefox.log"));
      throw error;
    });
  });

  it("loads the sideloaded about:startup add-on in full mode, which hands over its record and quits Firefox", () => {
    assert.equal(first.mode, "full");
    assert.equal(typeof first.milestones.sessionRestored, "number");
  });

  it("leaves the template with the made profile's session: every window and tab", async () => {
    const home = path.join(bench.root, "probe-home");
    fs.mkdirSync(home);
    const ff = await startFirefox({ binary: made.firefox.binary, profile: bench.templateProfile, home, logFile: path.join(artifactsFolder(), "profile-template-firefox.log") });
    try {
      await ff.chrome(inFirefox.waitSessionRestored);
      const windows = await ff.chrome(inFirefox.openWindows);
      assert.equal(windows.length, PRESET.windows);
      assert.equal(windows.flatMap((w) => w.tabs).length, PRESET.tabs);
    } finally {
      await ff.quit().catch(() => ff.kill());
    }
  });
});
