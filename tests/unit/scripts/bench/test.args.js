import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_RUNS, DEFAULT_SCENARIOS, parseBenchArgs, parseSource, UsageError } from "../../../../scripts/bench/args.mjs";

test("no arguments: the default scenarios and runs, no throttle", () => {
  assert.deepEqual(parseBenchArgs([]), {
    command: "run",
    runs: DEFAULT_RUNS,
    scenarios: DEFAULT_SCENARIOS,
    slowDisk: null,
    readAheadKb: null,
    gapKib: null,
    stateHome: null,
    loginDelayMs: 30000,
    workloadMib: 128,
    firefox: null,
    out: null,
    docSection: null,
    timeoutMs: 180000,
    budgetMs: null,
    retries: 0,
    allowWarm: false,
    noDacOverride: false,
    prefetchFlags: [],
    profilePreset: null,
    profileSeed: null,
    profileMade: null,
  });
});

test("--profile-preset names a realistic profile, with seed 1 unless --profile-seed says", () => {
  assert.deepEqual(
    ["small", "medium", "large"].map((p) => parseBenchArgs(["--profile-preset", p])).map((o) => [o.profilePreset, o.profileSeed]),
    [["small", 1], ["medium", 1], ["large", 1]],
  );
  assert.equal(parseBenchArgs(["--profile-preset", "medium", "--profile-seed", "42"]).profileSeed, 42);
  assert.throws(() => parseBenchArgs(["--profile-preset", "huge"]), (e) => e instanceof UsageError && /unknown --profile-preset "huge"; choose from small, medium, large/.test(e.message));
  assert.throws(() => parseBenchArgs(["--profile-seed", "3"]), /--profile-seed goes with --profile-preset/);
  assert.throws(() => parseBenchArgs(["--profile-preset", "small", "--profile-seed", "x"]), /--profile-seed wants a whole number/);
  assert.throws(() => parseBenchArgs(["compare", "a.json", "b.json", "--profile-preset", "small"]), /compare takes no --profile-preset/);
});

test("--doc-section names the section of docs/benchmarks.md the run writes, a name its markers can hold", () => {
  assert.equal(parseBenchArgs(["--doc-section", "ab-medium-2"]).docSection, "ab-medium-2");
  for (const bad of ["", "AB", "ab medium", "ab-->x", "ab_x", "a".repeat(64)]) {
    assert.throws(() => parseBenchArgs(["--doc-section", bad]), (e) => e instanceof UsageError && /--doc-section wants a name of lowercase letters, digits and -/.test(e.message), bad);
  }
  assert.throws(() => parseBenchArgs(["compare", "a.json", "b.json", "--doc-section", "x"]), /compare takes no --doc-section/);
});

test("--profile-made takes the preset from a folder scripts/profile/make.mjs made, and goes with --profile-preset", () => {
  assert.equal(parseBenchArgs(["--profile-preset", "medium"]).profileMade, null);
  assert.equal(parseBenchArgs(["--profile-preset", "medium", "--profile-made", "/work/m"]).profileMade, "/work/m");
  assert.throws(() => parseBenchArgs(["--profile-made", "/work/m"]), (e) => e instanceof UsageError && /--profile-made goes with --profile-preset/.test(e.message));
  assert.throws(() => parseBenchArgs(["compare", "a.json", "b.json", "--profile-made", "/work/m"]), /compare takes no --profile-made/);
});

test("every option of a run", () => {
  const o = parseBenchArgs(["--runs", "20", "--scenarios", "hot,cold", "--slow-disk", "30MB:150", "--read-ahead-kb", "128", "--login-delay", "20", "--workload-mib", "64", "--firefox", "/opt/ff/firefox", "--out", "x.json", "--timeout", "60"]);
  assert.equal(o.runs, 20);
  assert.deepEqual(o.scenarios, ["hot", "cold"]);
  assert.deepEqual(o.slowDisk, { spec: "30MB:150", mib: 30, bps: 31457280, iops: 150 });
  assert.equal(o.readAheadKb, 128);
  assert.equal(o.loginDelayMs, 20000);
  assert.equal(o.workloadMib, 64);
  assert.equal(o.firefox, "/opt/ff/firefox");
  assert.equal(o.out, "x.json");
  assert.equal(o.timeoutMs, 60000);
  const traced = parseBenchArgs(["--scenarios", "cold-traced,preload-plan-traced", "--gap-kib", "0", "--state-home", "st"]);
  assert.equal(traced.gapKib, 0);
  assert.equal(traced.stateHome, "st");
  const prefetch = parseBenchArgs(["--scenarios", "cold,hot,preload-plan-traced,launch-prefetch,launch-prefetch-hot", "--allow-warm"]);
  assert.deepEqual(prefetch.scenarios, ["cold", "hot", "preload-plan-traced", "launch-prefetch", "launch-prefetch-hot"]);
  assert.equal(prefetch.allowWarm, true);
  assert.deepEqual(parseBenchArgs(["--prefetch-flags", " --batches 1:8  --ahead-mib 8"]).prefetchFlags, ["--batches", "1:8", "--ahead-mib", "8"]);
  assert.throws(() => parseBenchArgs(["compare", "a.json", "b.json", "--allow-warm"]), /compare takes no --allow-warm/);
  assert.equal(parseBenchArgs(["--firefox", "mnt", "--no-dac-override"]).noDacOverride, true);
  assert.throws(() => parseBenchArgs(["compare", "a.json", "b.json", "--no-dac-override"]), /compare takes no --no-dac-override/);
});

test("mistakes are UsageErrors that say what is wanted", () => {
  const cases = [
    [["--runs", "0"], /--runs wants a whole number/],
    [["--runs", "2.5"], /--runs wants a whole number/],
    [["--scenarios", "hot,lukewarm"], /unknown scenario "lukewarm"; choose from cold, cold-profile, cold-traced, cold-traced-no-faults, preload, preload-image, preload-plan, preload-plan-mapped, preload-plan-unsorted, preload-plan-traced, replay-recorded, replay-disk, launch-prefetch, launch-prefetch-cold-profile, preload-plan-traced-cold-profile, login, login-no-preload, hot, launch-prefetch-hot/],
    [["--gap-kib", "1.5"], /--gap-kib wants a whole number of KiB/],
    [["--gap-kib", "1M"], /--gap-kib wants a whole number of KiB/],
    [["compare", "a.json", "b.json", "--state-home", "s"], /compare takes no --state-home/],
    [["--login-delay", "soon"], /--login-delay wants a whole number/],
    [["--scenarios", "hot,hot"], /at most once/],
    [["--slow-disk", "fast"], /MiB\/s:IOPS/],
    [["--read-ahead-kb", "8M"], /--read-ahead-kb wants a whole number of KiB/],
    [["compare", "a.json", "b.json", "--read-ahead-kb", "128"], /compare takes no --read-ahead-kb/],
    [["--bogus"], /bogus/],
    [["frobnicate"], /unknown command frobnicate/],
    [["compare", "a.json"], /two files/],
    [["compare", "a.json", "b.json", "--runs", "3"], /compare takes no --runs/],
  ];
  for (const [argv, message] of cases) {
    assert.throws(() => parseBenchArgs(argv), (error) => error instanceof UsageError && message.test(error.message), argv.join(" "));
  }
});

test("compare takes two sources, each optionally #scenario", () => {
  assert.deepEqual(parseBenchArgs(["compare", "a.json", "b.json#cold"]), {
    command: "compare",
    a: { file: "a.json", scenario: null },
    b: { file: "b.json", scenario: "cold" },
  });
  assert.deepEqual(parseSource("dir#1/run.json#preload"), { file: "dir#1/run.json", scenario: "preload" });
  assert.deepEqual(parseSource("run.json#"), { file: "run.json#", scenario: null });
  assert.deepEqual(parseBenchArgs(["-h"]), { command: "help" });
});

test("--budget-min: whole minutes, as ms; not for compare", () => {
  assert.equal(parseBenchArgs(["--budget-min", "17"]).budgetMs, 17 * 60000);
  assert.throws(() => parseBenchArgs(["--budget-min", "0"]), UsageError);
  assert.throws(() => parseBenchArgs(["--budget-min", "soon"]), UsageError);
  assert.throws(() => parseBenchArgs(["compare", "a.json", "b.json", "--budget-min", "5"]), /compare takes no --budget-min/);
});

test("--retries: a whole number ≥ 0", () => {
  assert.equal(parseBenchArgs(["--retries", "2"]).retries, 2);
  assert.equal(parseBenchArgs(["--retries", "0"]).retries, 0);
  assert.throws(() => parseBenchArgs(["--retries", "-1"]), UsageError);
  assert.throws(() => parseBenchArgs(["--retries", "x"]), /--retries wants a whole number ≥ 0, not x/);
});
