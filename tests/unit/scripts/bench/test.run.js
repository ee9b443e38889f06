import { test } from "node:test";
import assert from "node:assert/strict";
import { progressLine, recordProblem, runBench } from "../../../../scripts/bench/run.mjs";

const ok = (sessionRestored) => ({ id: `full-${sessionRestored}`, mode: "full", milestones: { sessionRestored }, io: { readBytes: 271.3e6 } });

test("the loop prepares, launches, keeps counted runs with their bench fields, and reports progress", async () => {
  const calls = [];
  const lines = [];
  let n = 0;
  const result = await runBench(
    { scenarios: ["cold", "preload"], runs: 2, slowDisk: { spec: "30:150" } },
    {
      prepare: async (scenario) => {
        calls.push(`prepare ${scenario}`);
        return { preloadMs: scenario === "preload" ? 9800 : null };
      },
      launch: async (step) => {
        calls.push(`launch ${step.scenario}${step.warmup ? "*" : step.run}`);
        n += 1;
        return { record: ok(1000 + n), quit: n === 4 ? "sigterm" : "clean" };
      },
      progress: (line, { final }) => lines.push([line, final]),
    },
  );
  assert.deepEqual(calls.filter((c) => c.startsWith("launch")), ["launch cold*", "launch preload*", "launch cold1", "launch preload1", "launch preload2", "launch cold2"]);
  assert.deepEqual(calls.slice(0, 2), ["prepare cold", "launch cold*"]);
  assert.equal(result.warmups, 2);
  assert.equal(result.forcedQuits, 1);
  assert.deepEqual(
    result.records.map((r) => [r.bench.scenario, r.bench.run, r.bench.preloadMs, r.bench.quit, r.bench.slowDisk]),
    [
      ["cold", 1, null, "clean", "30:150"],
      ["preload", 1, 9800, "sigterm", "30:150"],
      ["preload", 2, 9800, "clean", "30:150"],
      ["cold", 2, null, "clean", "30:150"],
    ],
  );
  assert.equal(lines.length, 6);
  assert.deepEqual(lines.map(([, final]) => final), [false, false, false, false, false, true]);
});

test("a start that is not full mode or has no sessionRestored stops the run, saying why", async () => {
  const deps = (record) => ({ prepare: async () => ({}), launch: async () => ({ record, quit: "clean" }) });
  await assert.rejects(runBench({ scenarios: ["hot"], runs: 1 }, deps({ mode: "basic", milestones: {} })), /hot warm-up: .*basic mode, not full/);
  await assert.rejects(runBench({ scenarios: ["hot"], runs: 1 }, deps({ mode: "full", milestones: { main: 3 } })), /no sessionRestored/);
  assert.equal(recordProblem(ok(5)), null);
});

test("progress line: scenario, run i of N, the last figures", () => {
  assert.equal(
    progressLine({ scenario: "preload", run: 3, warmup: false }, 10, ok(437), { preloadMs: 9825.4 }, 8, 33),
    "preload      run  3/10  sessionRestored 437 ms  preload 9,825 ms  read 271.3 MB  (launch 9 of 33)",
  );
  assert.equal(progressLine({ scenario: "hot", run: 0, warmup: true }, 5, { milestones: {} }, {}, 2, 18), "hot          warm-up  no sessionRestored  (launch 3 of 18)");
});

test("a login scenario's preload is awaited after its launch, before the next prepare, and its figures kept", async () => {
  const calls = [];
  let release;
  const result = await runBench(
    { scenarios: ["login"], runs: 1, readAheadKb: 128 },
    {
      prepare: async () => {
        calls.push("prepare");
        const settle = new Promise((resolve) => (release = resolve)).then(() => {
          calls.push("settled");
          return 9100;
        });
        return { workloadMs: 5000, loginPreloadDone: false, loginDelayMs: 30000, settle };
      },
      launch: async () => {
        calls.push("launch");
        setTimeout(() => release(), 5);
        return { record: ok(700), quit: "clean" };
      },
    },
  );
  assert.deepEqual(calls, ["prepare", "launch", "settled", "prepare", "launch", "settled"]);
  const { bench } = result.records[0];
  assert.deepEqual([bench.workloadMs, bench.loginPreloadMs, bench.loginPreloadDone, bench.loginDelayMs, bench.readAheadKb], [5000, 9100, false, 30000, 128]);
});

test("every counted record says which profile its launch started on: the preset and its seed, else fresh", async () => {
  const deps = { prepare: async () => ({}), launch: async () => ({ record: ok(900), quit: "clean" }) };
  const preset = await runBench({ scenarios: ["cold"], runs: 2, profilePreset: "medium", profileSeed: 7 }, deps);
  assert.deepEqual(preset.records.map((r) => [r.bench.profile, r.bench.profileSeed]), [["medium", 7], ["medium", 7]]);
  const fresh = await runBench({ scenarios: ["hot"], runs: 1 }, deps);
  assert.deepEqual(fresh.records.map((r) => r.bench.profile), ["fresh"]);
  assert.equal("profileSeed" in fresh.records[0].bench, false, "a fresh profile has no seed");
});

test("a deadline (--budget-min): no new round starts after it, so every scenario keeps the same n", async () => {
  let clock = 0;
  const launched = [];
  const result = await runBench(
    { scenarios: ["hot", "hot-empty-profile"], runs: 5, deadline: 250 },
    {
      prepare: async () => ({}),
      launch: async (step) => {
        launched.push(`${step.scenario}${step.warmup ? "*" : step.run}`);
        clock += 60; // each launch takes 60 "ms" of the fake clock
        return { record: ok(1000 + clock), quit: "clean" };
      },
      now: () => clock,
    },
  );
  // Warm-ups end at 120, round 1 at 240 (< 250: round 2 starts), round 2 ends at 360: stop.
  assert.deepEqual(launched, ["hot*", "hot-empty-profile*", "hot1", "hot-empty-profile1", "hot-empty-profile2", "hot2"]);
  assert.equal(result.stoppedEarly, true);
  assert.equal(result.rounds, 2);
  assert.deepEqual(result.records.map((r) => r.bench.scenario).sort(), ["hot", "hot", "hot-empty-profile", "hot-empty-profile"]);
  // Without a deadline every round runs.
  clock = 0;
  const whole = await runBench({ scenarios: ["hot"], runs: 3 }, { prepare: async () => ({}), launch: async () => ({ record: ok(1000), quit: "clean" }), now: () => clock });
  assert.deepEqual([whole.rounds, whole.stoppedEarly, whole.records.length], [3, false, 3]);
});

test("a launch that fails is prepared and launched again up to --retries times, and every failure is kept", async () => {
  let n = 0;
  const calls = [];
  const warned = [];
  const result = await runBench(
    { scenarios: ["hot"], runs: 2, retries: 1 },
    {
      prepare: async (scenario) => {
        calls.push(`prepare ${scenario}`);
        return {};
      },
      launch: async (step) => {
        n += 1;
        calls.push(`launch ${step.run}`);
        if (n === 2) {
          throw new Error("no record within 300 s: is the extension loaded and the host registered? (Firefox's output: x.log; its last lines:\n  boom)");
        }
        return { record: ok(1000 + n), quit: "clean" };
      },
      warn: (line) => warned.push(line),
    },
  );
  assert.deepEqual(calls, ["prepare hot", "launch 0", "prepare hot", "launch 1", "prepare hot", "launch 1", "prepare hot", "launch 2"]);
  assert.deepEqual(result.failedLaunches, [{ scenario: "hot", run: 1, error: "no record within 300 s: is the extension loaded and the host registered? (Firefox's output: x.log; its last lines:" }]);
  assert.equal(result.records.length, 2);
  assert.match(warned[0], /hot run 1: no record within 300 s.*\n.*boom\)\n\(prepared and launched again: 1 of 1 retries\)/s);
  // Out of retries: the run stops with the launch's own error.
  await assert.rejects(
    runBench({ scenarios: ["hot"], runs: 1, retries: 1 }, { prepare: async () => ({}), launch: async () => Promise.reject(new Error("Firefox exited (SIGTERM) before the extension handed over its record")), warn: () => {} }),
    /Firefox exited \(SIGTERM\)/,
  );
});
