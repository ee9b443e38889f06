import { test } from "node:test";
import assert from "node:assert/strict";
import { profileMeta } from "../../../../scripts/bench/profile.mjs";

test("the results name a fresh profile when no preset was asked for", () => {
  assert.equal(profileMeta(null).preset, "fresh");
  assert.match(profileMeta(null).description, /fresh profile/);
});

test("the results name the preset, its seed, what it holds and its bytes by part", () => {
  const made = {
    preset: "medium",
    seed: 7,
    now: "2026-11-26",
    counts: { visits: 100035, places: 25035, bookmarks: 600, tabs: 35, windows: 2, extensions: 6 },
    parts: { total: 123_400_000, files: 300, parts: [{ part: "places", bytes: 40_000_000, files: 2 }] },
    seconds: { total: 95.5 },
  };
  const meta = profileMeta(made);
  assert.equal(meta.preset, "medium");
  assert.equal(meta.seed, 7);
  assert.equal(meta.bytes, 123_400_000);
  assert.deepEqual(meta.parts, [{ part: "places", bytes: 40_000_000, files: 2 }]);
  assert.equal(meta.description, "preset medium (seed 7): 100,035 visits to 25,035 pages, 600 bookmarks, 35 tabs in 2 window(s), 6 add-ons; 123 MB");
});
