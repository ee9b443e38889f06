import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { MAKING_MARKER, makeProfile, MissingToolError, parseMakeArgs, profilePrefs, UsageError } from "../../../../scripts/profile/make.mjs";

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

// Issue 39 #8: without geckodriver, `make.mjs --preset medium` printed a stack trace, advised running
// the whole e2e suite, and left a 19 MB half-made folder that made the retry fail ("is not empty").
test("without geckodriver: the command that builds it, and nothing made", async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "make-test-"));
  try {
    const out = path.join(tmp, "out");
    const options = { ...parseMakeArgs(["--preset", "small", "--out", out]), firefox: "/nonexistent/firefox" };
    await assert.rejects(
      makeProfile(options, { log: () => {}, findDriver: () => null }),
      (e) =>
        e instanceof MissingToolError &&
        e.message.includes("cargo install --locked geckodriver --root ") &&
        e.message.includes(path.join(".cache", "geckodriver")) &&
        !/e2e/.test(e.message),
    );
    assert.equal(fs.existsSync(out), false, "nothing was made");
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test("a run that fails part-way removes what it made, so the same command runs again", async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "make-test-"));
  try {
    const out = path.join(tmp, "out");
    const options = { ...parseMakeArgs(["--preset", "small", "--out", out]), firefox: "/nonexistent/firefox" };
    // The making as far as Firefox's first run: the profile folder and its prefs, then Firefox
    // does not start (the real making writes pages and add-ons first: seconds, not for a unit test).
    let runs = 0;
    const makeIn = async ({ out: dir }) => {
      runs += 1;
      fs.mkdirSync(path.join(dir, "profile", "extensions"), { recursive: true });
      fs.writeFileSync(path.join(dir, "profile", "prefs.js"), "user_pref(\"a\", 1);\n");
      throw new Error("Firefox would not start");
    };
    const deps = { log: () => {}, findDriver: () => "/usr/bin/geckodriver", makeIn };
    await assert.rejects(makeProfile(options, deps), /Firefox would not start[\s\S]*was removed: the same command can be run again/);
    assert.equal(fs.existsSync(out), false, "the half-made folder is gone");
    // the retry gets as far as the first one did: not "is not empty"
    await assert.rejects(makeProfile(options, deps), /Firefox would not start/);
    assert.equal(runs, 2);

    // A folder given empty stays, emptied.
    fs.mkdirSync(out);
    await assert.rejects(makeProfile(options, deps), /Firefox would not start/);
    assert.deepEqual(fs.readdirSync(out), []);
    // One a killed run left (its marker still there) is removed and made again.
    fs.mkdirSync(path.join(out, "profile"));
    fs.writeFileSync(path.join(out, MAKING_MARKER), "");
    const said = [];
    await assert.rejects(makeProfile(options, { ...deps, log: (line) => said.push(line) }), /Firefox would not start/);
    assert.match(said[0], /half-made by an earlier run that stopped: removed, made again/);
    assert.equal(runs, 4);
    // Someone else's folder is never removed; a half-made one of an older make.mjs (no marker) is
    // said as such, with the command that removes it.
    fs.mkdirSync(out);
    fs.writeFileSync(path.join(out, "mine.txt"), "x");
    await assert.rejects(makeProfile(options, deps), (e) => e instanceof UsageError && /is not empty/.test(e.message));
    assert.ok(fs.existsSync(path.join(out, "mine.txt")));
    fs.mkdirSync(path.join(out, "profile"));
    await assert.rejects(makeProfile(options, deps), (e) => e instanceof UsageError && e.message.includes(`half-made profile (no profile.json): remove it (rm -rf ${out})`));
    assert.equal(runs, 4, "nothing made over them");
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
