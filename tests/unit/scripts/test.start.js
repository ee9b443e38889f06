// `npm start` as a newcomer types it (issue 30, items 1 and 2): the real script through npm, in a
// throwaway HOME, with no display (as over SSH). What it must not do is start anything: these
// cases end before a Firefox is chosen, so no build, no manifest, no Firefox.
// (A Firefox that exits early is in tests/e2e/test.start.js: it starts a real one.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "../../../scripts/lib/project.mjs";
import { closestOption, displayProblem, parseStartArgs, UsageError } from "../../../scripts/lib/start-options.mjs";

/** Runs `npm start -- ...args` with no display and a fresh HOME; npm's own files go elsewhere. */
function npmStart(args, env = {}) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "start-home-"));
  const npmCache = fs.mkdtempSync(path.join(os.tmpdir(), "start-npm-"));
  const result = spawnSync("npm", ["start", "--", ...args], {
    cwd: ROOT,
    encoding: "utf8",
    // Bounded: the old script went on to build the host and start Firefox here.
    timeout: 120_000,
    env: { PATH: process.env.PATH, HOME: home, npm_config_cache: npmCache, npm_config_update_notifier: "false", ...env },
  });
  const written = fs.readdirSync(home);
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(npmCache, { recursive: true, force: true });
  return { status: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "", written };
}

test("npm start -- --help prints every option and exits 0, choosing, building and writing nothing", () => {
  const r = npmStart(["--help"]);
  assert.equal(r.status, 0, r.stderr);
  for (const option of ["--headless", "--no-host", "--firefox PATH", "--flavour full|basic", "--help"]) {
    assert.ok(r.stdout.includes(option), `--help lists ${option}:\n${r.stdout}`);
  }
  assert.doesNotMatch(r.stdout, /^Firefox: /m, "no Firefox was chosen");
  assert.doesNotMatch(r.stdout, /building the native host/);
  assert.deepEqual(r.written, [], "nothing written into HOME (no ~/.mozilla/native-messaging-hosts)");
});

test("a mistyped option is a usage error (exit 2) that names it and the option meant", () => {
  const r = npmStart(["--headles"]);
  assert.equal(r.status, 2, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stderr, /unknown option --headles \(did you mean --headless\?\)/);
  assert.doesNotMatch(r.stdout, /^Firefox: /m);
  assert.deepEqual(r.written, []);
});

test("no display and no --headless: says why at once, suggests --headless, exits 1, starts nothing", () => {
  const r = npmStart([]);
  assert.equal(r.status, 1, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stderr, /neither DISPLAY nor WAYLAND_DISPLAY is set/);
  assert.match(r.stderr, /npm start -- --headless/);
  assert.doesNotMatch(r.stdout, /^Firefox: /m, "stopped before choosing a Firefox");
  assert.deepEqual(r.written, []);
});

test("start's options, parsed strictly", () => {
  assert.deepEqual(parseStartArgs(["--headless", "--firefox", "/x", "--flavour", "basic"]), {
    help: false,
    headless: true,
    noHost: false,
    firefox: "/x",
    flavour: "basic",
  });
  assert.deepEqual(parseStartArgs(["--no-host", "--firefox=/y"]), { help: false, headless: false, noHost: true, firefox: "/y", flavour: null });
  assert.equal(parseStartArgs(["-h"]).help, true);
  const usage = (args, pattern) => assert.throws(() => parseStartArgs(args), (e) => e instanceof UsageError && pattern.test(e.message));
  usage(["--firefox"], /^--firefox needs a value \(--firefox PATH\)$/);
  // an option where a value belongs is not taken as the value
  usage(["--firefox", "--headless"], /^--firefox needs a value/);
  usage(["--flavour", "odd"], /use full or basic/);
  usage(["--nohost"], /unknown option --nohost \(did you mean --no-host\?\)/);
  usage(["--verbose"], /^unknown option --verbose$/);
  usage(["headless"], /unexpected argument headless/);
});

test("closestOption suggests only near misses", () => {
  assert.equal(closestOption("--headles"), "--headless");
  assert.equal(closestOption("--flavor"), "--flavour");
  assert.equal(closestOption("--firefox-path"), null);
});

test("a display is needed only without --headless or MOZ_HEADLESS", () => {
  assert.match(displayProblem({ headless: false, env: {} }), /--headless/);
  assert.equal(displayProblem({ headless: true, env: {} }), null);
  assert.equal(displayProblem({ headless: false, env: { DISPLAY: ":0" } }), null);
  assert.equal(displayProblem({ headless: false, env: { WAYLAND_DISPLAY: "wayland-0" } }), null);
  assert.equal(displayProblem({ headless: false, env: { MOZ_HEADLESS: "1" } }), null);
  assert.match(displayProblem({ headless: false, env: { MOZ_HEADLESS: "0" } }), /DISPLAY/);
});
