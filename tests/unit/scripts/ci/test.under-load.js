import { test } from "node:test";
import assert from "node:assert/strict";

import { failedStage, parseArgs } from "../../../../scripts/ci/under-load.mjs";
import { parseStart } from "../../../../scripts/ci/kdamond.mjs";

test("under-load: the three conditions by default, each can be left out; the suite's own arguments after --", () => {
  assert.deepEqual(parseArgs([]), { repeat: 1, minAgeS: 3, kdamond: true, firefox: true, stress: true, testArgs: [] });
  assert.deepEqual(parseArgs(["--repeat", "3", "--no-firefox", "--min-age", "10", "--", "--only", "cargo-test", "--no-stress"]), {
    repeat: 3,
    minAgeS: 10,
    kdamond: true,
    firefox: false,
    stress: true,
    testArgs: ["--only", "cargo-test", "--no-stress"],
  });
  assert.throws(() => parseArgs(["--repeat", "0"]), /--repeat wants a count/);
  assert.throws(() => parseArgs(["--only", "unit"]), /unknown argument --only/);
  assert.equal(parseArgs(["--help"]).help, true);
  assert.equal(parseArgs(["--repeat", "2", "--", "--help"]).help, undefined, "a --help after -- is the suite's");
});

test("under-load: the stage a failed run of scripts/test.mjs names", () => {
  assert.equal(failedStage("...\n=== cargo-test-root FAILED after 81.2 s: cargo test exited with status 101\n"), "cargo-test-root");
  assert.equal(failedStage("=== stage times\nunit 5.0 s\n"), null);
});

test("kdamond start: this process's memory cgroup unless it is the root one; --all, --memcg, --min-age", () => {
  assert.deepEqual(parseStart([], { ownCgroup: "/process_api/x" }), { minAgeS: 3, memcg: "/process_api/x" });
  assert.deepEqual(parseStart([], { ownCgroup: "/" }), { minAgeS: 3, memcg: null });
  assert.deepEqual(parseStart(["--all", "--min-age", "60"], { ownCgroup: "/process_api/x" }), { minAgeS: 60, memcg: null });
  assert.deepEqual(parseStart(["--memcg", "/ci"], { ownCgroup: "/" }), { minAgeS: 3, memcg: "/ci" });
  assert.throws(() => parseStart(["--min-age", "-1"], { ownCgroup: "/" }), /seconds > 0/);
});
