import { test } from "node:test";
import assert from "node:assert/strict";
import { buildModel, checkPreset, modelCounts, TRANSITIONS } from "../../../../scripts/profile/model.mjs";
import { PRESETS } from "../../../../scripts/profile/presets.mjs";

const NOW = Date.UTC(2026, 10, 24);
const small = (seed = 1) => buildModel({ seed, presetName: "small", now: NOW, pagesDir: "/tmp/pages" });

test("the same seed gives the same model, another seed another", () => {
  assert.deepEqual(small(1), small(1));
  const [a, b] = [small(1), small(2)];
  assert.notDeepEqual(a.history.map((p) => p.url), b.history.map((p) => p.url));
  assert.notDeepEqual(a.extensions.map((e) => e.uuid), b.extensions.map((e) => e.uuid));
});

test("each preset holds what presets.mjs says, plus the open tabs' own pages in history", () => {
  for (const name of ["small", "medium"]) {
    const p = PRESETS[name];
    const c = modelCounts(buildModel({ seed: 3, presetName: name, now: NOW, pagesDir: "/p" }));
    assert.deepEqual(
      [c.sites, c.places, c.visits, c.bookmarks, c.cookies, c.permissions, c.windows, c.tabs, c.pinned, c.extensions],
      [p.sites, p.places + p.tabs, p.visits + p.tabs, p.bookmarks, p.cookies, p.permissions, p.windows, p.tabs, p.pinned, p.extensions],
      name,
    );
    assert.equal(c.closedTabs, p.closedTabs * p.windows);
  }
});

test("the large preset has hundreds of thousands of visits, as issue 31 asks", () => {
  assert.ok(PRESETS.large.visits >= 200_000);
  assert.ok(PRESETS.small.visits < PRESETS.medium.visits && PRESETS.medium.visits < PRESETS.large.visits);
  assert.ok(PRESETS.small.extensions < PRESETS.medium.extensions && PRESETS.large.extensions === 10);
});

test("history: unique URLs and GUIDs, every page visited, visits in the past in date order", () => {
  const m = small();
  assert.equal(new Set(m.history.map((p) => p.url)).size, m.history.length);
  assert.equal(new Set(m.history.map((p) => p.guid)).size, m.history.length);
  for (const page of m.history) {
    assert.match(page.guid, /^[A-Za-z0-9_-]{12}$/);
    assert.ok(page.visits.length >= 1);
    const dates = page.visits.map((v) => v.date);
    assert.deepEqual(dates, [...dates].sort((a, b) => a - b));
    assert.ok(dates.every((d) => d < NOW && d > NOW - PRESETS.small.historyDays * 86_400_000));
    assert.ok(page.visits.every((v) => Object.values(TRANSITIONS).includes(v.transition)));
  }
});

test("history follows a Zipf law: the most visited tenth of pages has most of the visits", () => {
  const counts = small().history.map((p) => p.visits.length).sort((a, b) => b - a);
  const top = counts.slice(0, Math.ceil(counts.length / 10)).reduce((a, b) => a + b, 0);
  const all = counts.reduce((a, b) => a + b, 0);
  // Uniform revisits would give the top tenth about 15%.
  assert.ok(top / all > 0.4, `top tenth holds ${((100 * top) / all).toFixed(0)}%`);
});

test("cookies: within Firefox's per-host cap, and never SameSite=None without Secure (Firefox refuses it)", () => {
  const m = buildModel({ seed: 5, presetName: "medium", now: NOW, pagesDir: "/p" });
  const perHost = new Map();
  for (const c of m.cookies) {
    const host = c.host.replace(/^\./, "").replace(/^www\./, "");
    perHost.set(host, (perHost.get(host) ?? 0) + 1);
    if (c.sameSite === "NONE") assert.equal(c.secure, true, `${c.name} on ${c.host}`);
    assert.ok(c.expiry > NOW);
  }
  assert.ok(Math.max(...perHost.values()) <= 180);
});

test("the session: pinned tabs in the first window, a selected tab in range, pages under pagesDir", () => {
  const m = buildModel({ seed: 9, presetName: "medium", now: NOW, pagesDir: "/work/pages" });
  const [first, ...rest] = m.session.windows;
  assert.equal(first.tabs.filter((t) => t.pinned).length, PRESETS.medium.pinned);
  assert.ok(rest.every((w) => w.tabs.every((t) => !t.pinned)));
  for (const w of m.session.windows) {
    assert.ok(w.selected >= 1 && w.selected <= w.tabs.length);
    for (const t of [...w.tabs, ...w.closedTabs]) {
      assert.ok(t.index >= 1 && t.index <= t.entries.length);
      assert.ok(t.entries.every((e) => e.url.startsWith("file:///work/pages/page-")));
    }
  }
  const files = m.session.pages.map((p) => p.file);
  assert.equal(new Set(files).size, files.length);
});

test("the session keeps what a day of use leaves: back and forward pages, scroll, form data, sessionStorage, within Firefox's caps", () => {
  const m = buildModel({ seed: 9, presetName: "large", now: NOW, pagesDir: "/work/pages" });
  const tabs = m.session.windows.flatMap((w) => [...w.tabs, ...w.closedTabs]);
  // browser.sessionstore.max_serialize_back (ESR 153: 10) bounds the back pages a saved tab keeps.
  assert.ok(tabs.every((t) => t.index - 1 <= 10));
  assert.ok(tabs.some((t) => t.index < t.entries.length), "some tabs have forward pages");
  assert.ok(tabs.some((t) => t.entries.length > 4), "some tabs have a longer history");
  for (const t of tabs) {
    // Each page after the first was opened from the one before it.
    t.entries.forEach((e, i) => assert.equal(e.referrer, i === 0 ? null : t.entries[i - 1].url));
    // One docshell per tab; Firefox's entry IDs unique.
    assert.equal(new Set(t.entries.map((e) => e.docshellUUID)).size, 1);
    assert.equal(t.scroll, t.entries[t.index - 1].scroll);
    if (t.form) assert.equal(t.form.url, t.entries[t.index - 1].url);
    // browser.sessionstore.dom_storage_limit (ESR 153: 2048) is what Firefox keeps per origin.
    if (t.storage) assert.ok(Object.entries(t.storage).reduce((n, [k, v]) => n + k.length + v.length, 0) <= 2048);
  }
  const ids = tabs.flatMap((t) => t.entries.map((e) => e.ID));
  assert.equal(new Set(ids).size, ids.length);
  assert.ok(tabs.some((t) => t.form?.id.comment), "a draft in some forms");
  assert.ok(tabs.filter((t) => t.storage).length > tabs.length / 4, "sessionStorage in many tabs");
  assert.ok(tabs.filter((t) => t.scroll).length > tabs.length / 2, "most shown pages scrolled");
});

test("bookmarks point at history pages and fill the toolbar first", () => {
  const m = small();
  const urls = new Set(m.history.map((p) => p.url));
  const flat = (items) => items.flatMap((i) => (i.kind === "folder" ? flat(i.children) : [i]));
  const all = [...flat(m.bookmarks.toolbar), ...flat(m.bookmarks.menu), ...flat(m.bookmarks.unfiled)];
  assert.equal(all.length, PRESETS.small.bookmarks);
  assert.ok(all.every((b) => urls.has(b.url)));
  assert.ok(m.bookmarks.toolbar.filter((i) => i.kind === "bookmark").length >= 15);
});

test("a preset that breaks Firefox's own limits is refused with what to change", () => {
  assert.throws(() => checkPreset("x", { ...PRESETS.small, cookies: 5000 }), /cookies \(5000\) over network.cookie.maxNumber/);
  assert.throws(() => checkPreset("x", { ...PRESETS.small, places: 200_000, visits: 400_000 }), /over Firefox's history cap/);
  assert.throws(() => checkPreset("x", { ...PRESETS.small, visits: 10 }), /every page in history has a visit/);
  assert.throws(() => buildModel({ seed: 1, presetName: "huge", now: NOW, pagesDir: "/p" }), /unknown preset "huge"; the presets are small, medium, large/);
  for (const [name, p] of Object.entries(PRESETS)) checkPreset(name, p);
});
