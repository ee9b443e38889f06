import { test } from "node:test";
import assert from "node:assert/strict";
import { BENCH_PREFS, benchPaths } from "../../../../scripts/bench/launch.mjs";

test("the prefs a sideloaded unsigned full flavour needs", () => {
  assert.equal(BENCH_PREFS["xpinstall.signatures.required"], false);
  assert.equal(BENCH_PREFS["extensions.experiments.enabled"], true);
  assert.equal(BENCH_PREFS["extensions.autoDisableScopes"], 0);
});

test("a launch always uses the same profile path; templates beside it", () => {
  assert.deepEqual(benchPaths("/tmp/b"), {
    root: "/tmp/b",
    profile: "/tmp/b/profile",
    home: "/tmp/b/home",
    templateProfile: "/tmp/b/template-profile",
    templateHome: "/tmp/b/template-home",
    record: "/tmp/b/record.json",
    log: "/tmp/b/firefox.log",
  });
});
