import { test } from "node:test";
import assert from "node:assert/strict";
import { madeProfile, profileMeta } from "../../../../scripts/bench/profile.mjs";

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

test("--profile-made: the profile made in the folder when it is the asked preset and seed of today; else an error that says what differs", () => {
  const today = Date.UTC(2026, 10, 29);
  const summary = { preset: "medium", seed: 1, now: "2026-11-29", profileDir: "/work/m/profile", pagesDir: "/work/m/pages" };
  const fsApi = (text) => ({
    readFileSync: (file) => {
      assert.equal(file, "/work/m/profile.json");
      if (text === null) throw Object.assign(new Error("no such file"), { code: "ENOENT" });
      return text;
    },
  });
  const asked = { profileMade: "/work/m", profilePreset: "medium", profileSeed: 1 };
  assert.deepEqual(madeProfile(asked, today, { fsApi: fsApi(JSON.stringify(summary)) }), summary);
  assert.throws(() => madeProfile(asked, today, { fsApi: fsApi(null) }), /cannot read \/work\/m\/profile.json \(ENOENT\): make it with node scripts\/profile\/make.mjs --preset medium --out \/work\/m/);
  const other = JSON.stringify({ ...summary, preset: "small", seed: 2, now: "2026-11-28" });
  assert.throws(() => madeProfile(asked, today, { fsApi: fsApi(other) }), /its preset is small, not medium; its seed is 2, not 1; its history ends 2026-11-28, not today/);
});
