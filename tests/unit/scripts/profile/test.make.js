import { test } from "node:test";
import assert from "node:assert/strict";
import { parseMakeArgs, profilePrefs, UsageError } from "../../../../scripts/profile/make.mjs";

const today = new Date(Date.UTC(2026, 10, 24, 15, 30));

test("arguments: preset required, seed 1, history to today (UTC midnight), out under artifacts/profiles", () => {
  const o = parseMakeArgs(["--preset", "small"], { today, root: "/repo" });
  assert.deepEqual(o, { presetName: "small", seed: 1, now: Date.UTC(2026, 10, 24), out: "/repo/artifacts/profiles/small-1", firefox: null });
  const p = parseMakeArgs(["--preset", "large", "--seed", "42", "--now", "2026-01-31", "--out", "/x/y", "--firefox", "/opt/ff/firefox"], { today, root: "/repo" });
  assert.deepEqual(p, { presetName: "large", seed: 42, now: Date.UTC(2026, 0, 31), out: "/x/y", firefox: "/opt/ff/firefox" });
  assert.deepEqual(parseMakeArgs(["-h"]), { help: true });
});

test("argument mistakes say what is wanted", () => {
  const cases = [
    [[], /--preset is required: one of small, medium, large/],
    [["--preset", "huge"], /unknown preset "huge"/],
    [["--preset", "small", "--seed", "1.5"], /--seed wants a whole number/],
    [["--preset", "small", "--now", "2026-02-30"], /--now wants a day as YYYY-MM-DD/],
    [["--preset", "small", "--bogus"], /bogus/],
  ];
  for (const [argv, message] of cases) {
    assert.throws(() => parseMakeArgs(argv, { today }), (e) => e instanceof UsageError && message.test(e.message), argv.join(" "));
  }
});

test("the profile's own prefs restore the session and pin the add-ons' UUIDs", () => {
  const prefs = profilePrefs([{ id: "a@x", uuid: "u-1" }, { id: "b@x", uuid: "u-2" }]);
  assert.equal(prefs["browser.startup.page"], 3);
  assert.equal(prefs["xpinstall.signatures.required"], false);
  assert.equal(prefs["extensions.autoDisableScopes"], 0);
  assert.deepEqual(JSON.parse(prefs["extensions.webextensions.uuids"]), { "a@x": "u-1", "b@x": "u-2" });
});
