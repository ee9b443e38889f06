import { test } from "node:test";
import assert from "node:assert/strict";
import { prepareScenario } from "../../../../scripts/bench/scenarios.mjs";

function fakeHost(replies = {}) {
  const calls = [];
  const exec = (cmd, args) => {
    calls.push([cmd, ...args].join(" "));
    const command = args.find((a) => ["evict", "preload"].includes(a));
    return { status: 0, stdout: JSON.stringify(replies[command] ?? {}), stderr: "" };
  };
  return { calls, exec };
}

const base = { hostBinary: "host", installDir: "/ff" };

test("cold: evict only", () => {
  const { calls, exec } = fakeHost({ evict: { pages_dropped: 75000 } });
  assert.deepEqual(prepareScenario("cold", { ...base, exec }), { preloadMs: null, evicted: 75000, preloadMbPerS: null });
  assert.deepEqual(calls, ["host evict --firefox /ff --json"]);
});

test("preload: evict, then a timed preload inside the throttle", () => {
  const { calls, exec } = fakeHost({ evict: { pages_dropped: 10 }, preload: { mb_per_s: 31.5 } });
  let t = 1000;
  const now = () => (t += 4900);
  const wrap = (argv) => ["cg", ...argv];
  assert.deepEqual(prepareScenario("preload", { ...base, exec, wrap, now }), { preloadMs: 4900, evicted: 10, preloadMbPerS: 31.5 });
  assert.deepEqual(calls, ["host evict --firefox /ff --json", "cg host preload --firefox /ff --json"]);
});

test("hot: an untimed, unthrottled preload", () => {
  const { calls, exec } = fakeHost();
  const wrap = (argv) => ["cg", ...argv];
  assert.deepEqual(prepareScenario("hot", { ...base, exec, wrap }), { preloadMs: null, evicted: null, preloadMbPerS: null });
  assert.deepEqual(calls, ["host preload --firefox /ff --json"]);
});

test("a failing host command stops with its message", () => {
  const exec = () => ({ status: 1, stdout: "", stderr: "no Firefox found" });
  assert.throws(() => prepareScenario("cold", { ...base, exec }), /host evict --firefox \/ff --json failed \(1\): no Firefox found/);
  assert.throws(() => prepareScenario("tepid", { ...base, exec: fakeHost().exec }), /unknown scenario tepid/);
});
