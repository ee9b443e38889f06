import { test } from "node:test";
import assert from "node:assert/strict";
import { buildModel } from "../../../../scripts/profile/model.mjs";
import { browserState, FILE_ORIGIN, restoredUrls } from "../../../../scripts/profile/session.mjs";

const model = buildModel({ seed: 4, presetName: "medium", now: Date.UTC(2026, 0, 1), pagesDir: "/p" });

test("the browser state has every window and tab of the model, pinned tabs first", () => {
  const state = browserState(model.session, { principal: "P", closedAt: 1e12 });
  assert.equal(state.windows.length, model.session.windows.length);
  state.windows.forEach((w, i) => {
    const source = model.session.windows[i];
    assert.equal(w.tabs.length, source.tabs.length);
    const pinned = w.tabs.map((t) => t.pinned);
    assert.deepEqual(pinned, [...pinned].sort((a, b) => b - a), "pinned tabs lead");
    assert.equal(w.selected, source.selected);
    assert.equal(w._closedTabs.length, source.closedTabs.length);
    assert.ok(w._closedTabs.every((c, n) => c.closedAt === 1e12 - (n + 1) * 60_000 && c.state.entries.length >= 1));
    assert.ok(w.tabs.every((t) => t.entries.every((e) => e.triggeringPrincipal_base64 === "P")));
  });
  assert.deepEqual(state._closedWindows, []);
});

test("restoredUrls: each tab's current entry, in the order Firefox shows the tabs", () => {
  const state = browserState(model.session, { principal: null, closedAt: 0 });
  assert.deepEqual(
    restoredUrls(model.session),
    state.windows.map((w) => w.tabs.map((t) => t.entries[t.index - 1].url)),
  );
});

test("each tab in Firefox's session shape: entries with Firefox's fields, the shown page's scroll, form data and sessionStorage on the tab", () => {
  const state = browserState(model.session, { principal: "P", closedAt: 0 });
  const pairs = state.windows.flatMap((w, i) => w.tabs.map((t, j) => [t, model.session.windows[i].tabs.filter((x) => x.pinned).concat(model.session.windows[i].tabs.filter((x) => !x.pinned))[j]]));
  for (const [t, source] of pairs) {
    t.entries.forEach((e, i) => {
      // The fields SessionHistory.sys.mjs writes for a shown page (ESR 153).
      for (const key of ["url", "title", "cacheKey", "ID", "docshellUUID", "resultPrincipalURI", "hasUserInteraction", "triggeringPrincipal_base64", "docIdentifier", "transient", "navigationKey", "navigationId"]) {
        assert.ok(key in e, `${key} in entry`);
      }
      assert.equal("scroll" in e, i !== t.index - 1 && Boolean(source.entries[i].scroll), "a page left behind keeps its scroll in its entry");
    });
    assert.deepEqual(t.scroll, source.scroll ? { scroll: source.scroll } : undefined);
    assert.deepEqual(t.formdata, source.form ? { url: source.form.url, id: source.form.id } : undefined);
    assert.deepEqual(t.storage, source.storage ? { [FILE_ORIGIN]: source.storage } : undefined);
  }
  assert.ok(pairs.some(([t]) => t.formdata) && pairs.some(([t]) => t.storage) && pairs.some(([t]) => t.scroll));
});
