import { test } from "node:test";
import assert from "node:assert/strict";
import { prepareScenario } from "../../../../scripts/bench/scenarios.mjs";

function fakeHost(replies = {}) {
  const calls = [];
  const envs = [];
  const exec = (cmd, args, options) => {
    calls.push([cmd, ...args].join(" "));
    const command = args.find((a) => ["evict", "preload", "plan"].includes(a));
    envs.push(options?.env?.XDG_STATE_HOME ?? null);
    return { status: 0, stdout: JSON.stringify(replies[command] ?? {}), stderr: "" };
  };
  return { calls, envs, exec };
}

const base = { hostBinary: "host", installDir: "/ff" };

/** A clock each reading of which is `step` ms after the one before (from `start`): what is timed takes `step`. */
function ticking(step, start = 0) {
  let t = start;
  return () => (t += step);
}

/** The throttle's wrapper, a marker in the command line that shows what ran inside it. */
const inCgroup = (argv) => ["cg", ...argv];

test("cold: evict only", () => {
  const { calls, exec } = fakeHost({ evict: { pages_dropped: 75000 } });
  assert.deepEqual(prepareScenario("cold", { ...base, exec }), { preloadMs: null, evicted: 75000, preloadMbPerS: null, stillCachedBytes: 0 });
  assert.deepEqual(calls, ["host evict --firefox /ff --json"]);
});

/** A fake evictUser that logs its call in the host's call list, so the order shows. */
function userEvict(calls) {
  return () => {
    calls.push("evict the user's files");
    return { files: 96, bytes: 64e6, owners: [0], stillCachedBytes: 0 };
  };
}

test("cold-profile: the install evicted as for cold, then the user's files", () => {
  const { calls, exec } = fakeHost({ evict: { pages_dropped: 75000 } });
  const profileEvicted = { files: 96, bytes: 64e6, owners: [0], stillCachedBytes: 0 };
  assert.deepEqual(prepareScenario("cold-profile", { ...base, exec, evictUser: userEvict(calls) }), { preloadMs: null, evicted: 75000, preloadMbPerS: null, stillCachedBytes: 0, profileEvicted });
  assert.deepEqual(calls, ["host evict --firefox /ff --json", "evict the user's files"]);
  assert.throws(() => prepareScenario("cold-profile", { ...base, exec }), /cold-profile: no way to evict the user's files/);
});

test("the profile-cold prefetch and traced preload: the user's files evicted after the install and before the preload", () => {
  const launch = fakeHost({ evict: { pages_dropped: 75000 } });
  const prep = prepareScenario("launch-prefetch-cold-profile", { ...base, exec: launch.exec, evictUser: userEvict(launch.calls) });
  assert.equal(prep.profileEvicted.bytes, 64e6);
  assert.equal(prep.preloadMs, null, "nothing timed before the launch");
  assert.deepEqual(launch.calls, ["host evict --firefox /ff --json", "evict the user's files"]);
  const summary = { mb_per_s: 30, bytes: 130e6, bytes_planned: 130e6, bytes_install: 308e6, bytes_planned_profile: 9e6, profile_changed_files: 2, order: "disk" };
  const preload = fakeHost({ evict: { pages_dropped: 10 }, preload: summary });
  const now = ticking(5000);
  const traced = prepareScenario("preload-plan-traced-cold-profile", { ...base, exec: preload.exec, now, evictUser: userEvict(preload.calls), gapKib: 16 });
  assert.deepEqual(preload.calls, ["host evict --firefox /ff --json", "evict the user's files", "host preload --plan --source trace --gap-kib 16 --firefox /ff --json"]);
  assert.equal(traced.preloadMs, 5000);
  assert.equal(traced.bytesPlannedProfile, 9e6);
  assert.equal(traced.profileChangedFiles, 2);
  assert.equal(traced.profileEvicted.files, 96);
  // The plain scenarios evict the install only.
  const plain = fakeHost({ evict: { pages_dropped: 10 }, preload: summary });
  prepareScenario("preload-plan-traced", { ...base, exec: plain.exec, now, evictUser: userEvict(plain.calls) });
  assert.deepEqual(plain.calls, ["host evict --firefox /ff --json", "host preload --plan --source trace --firefox /ff --json"]);
});

test("cold-traced: the same cold state as cold (the tracer is attached at the launch)", () => {
  const { calls, exec } = fakeHost({ evict: { pages_dropped: 75000 } });
  assert.deepEqual(prepareScenario("cold-traced", { ...base, exec }), { preloadMs: null, evicted: 75000, preloadMbPerS: null, stillCachedBytes: 0 });
  assert.deepEqual(calls, ["host evict --firefox /ff --json"]);
});

test("preload: evict, then a timed preload inside the throttle", () => {
  const { calls, exec } = fakeHost({ evict: { pages_dropped: 10 }, preload: { mb_per_s: 31.5, bytes: 308e6 } });
  const now = ticking(4900, 1000);
  assert.deepEqual(prepareScenario("preload", { ...base, exec, wrap: inCgroup, now }), { preloadMs: 4900, evicted: 10, preloadMbPerS: 31.5, preloadBytes: 308e6, stillCachedBytes: 0 });
  assert.deepEqual(calls, ["host evict --firefox /ff --json", "cg host preload --firefox /ff --json"]);
});

test("preload-image: evict, then a timed preload of the squashfs image only", () => {
  const { calls, exec } = fakeHost({ evict: { pages_dropped: 10 }, preload: { mb_per_s: 30, bytes: 94e6 } });
  const now = ticking(3000);
  assert.deepEqual(prepareScenario("preload-image", { ...base, exec, wrap: inCgroup, now }), { preloadMs: 3000, evicted: 10, preloadMbPerS: 30, preloadBytes: 94e6, stillCachedBytes: 0 });
  assert.deepEqual(calls, ["host evict --firefox /ff --json", "cg host preload --firefox /ff --json --cache image"]);
});

test("preload-plan: needs a learned plan, then a timed planned preload with the bench's state folder", () => {
  const summary = { mb_per_s: 30, bytes: 250e6, bytes_planned: 250e6, bytes_install: 308e6, order: "disk" };
  const { calls, envs, exec } = fakeHost({ evict: { pages_dropped: 10 }, plan: { learned: true }, preload: summary });
  const now = ticking(8000);
  assert.deepEqual(prepareScenario("preload-plan", { ...base, stateHome: "/s", exec, wrap: inCgroup, now }), {
    preloadMs: 8000,
    evicted: 10,
    preloadMbPerS: 30,
    preloadBytes: 250e6,
    bytesPlanned: 250e6,
    bytesInstall: 308e6,
    order: "disk",
    stillCachedBytes: 0,
  });
  assert.deepEqual(calls, ["host evict --firefox /ff --json", "host plan --firefox /ff --json", "cg host preload --plan --firefox /ff --json"]);
  // The evict too: there the host finds a packed install's image (its FUSE mount names none).
  assert.deepEqual(envs, ["/s", "/s", "/s"]);
  const mapped = fakeHost({ plan: { learned: true }, preload: summary });
  prepareScenario("preload-plan-mapped", { ...base, exec: mapped.exec });
  assert.equal(mapped.calls[2], "host preload --plan --mapped-only --firefox /ff --json");
  const unsorted = fakeHost({ plan: { learned: true }, preload: summary });
  prepareScenario("preload-plan-unsorted", { ...base, exec: unsorted.exec });
  assert.equal(unsorted.calls[2], "host preload --plan --file-order --firefox /ff --json");
  const unlearned = fakeHost({ plan: { learned: false } });
  assert.throws(() => prepareScenario("preload-plan", { ...base, stateHome: "/s", exec: unlearned.exec }), /no start has been learned yet/);
});

test("the traced plans and the replays: no learned plan asked for, their flags, --gap-kib for the traced plan only", () => {
  const summary = { mb_per_s: 30, bytes: 120e6, bytes_planned: 120e6, bytes_install: 308e6, order: "recorded" };
  const traced = fakeHost({ preload: summary });
  const now = ticking(4000);
  const result = prepareScenario("preload-plan-traced", { ...base, stateHome: "/s", gapKib: 1024, exec: traced.exec, now });
  assert.equal(result.preloadMs, 4000);
  assert.equal(result.order, "recorded");
  assert.deepEqual(traced.calls, ["host evict --firefox /ff --json", "host preload --plan --source trace --gap-kib 1024 --firefox /ff --json"]);
  assert.deepEqual(traced.envs, ["/s", "/s"]);
  const recorded = fakeHost({ preload: summary });
  prepareScenario("replay-recorded", { ...base, gapKib: 1024, exec: recorded.exec });
  assert.equal(recorded.calls[1], "host preload --plan --source trace-reads --recorded-order --gap-kib 0 --firefox /ff --json");
  const disk = fakeHost({ preload: summary });
  prepareScenario("replay-disk", { ...base, exec: disk.exec });
  assert.equal(disk.calls[1], "host preload --plan --source trace-reads --gap-kib 0 --firefox /ff --json");
});

test("hot: an untimed, unthrottled preload", () => {
  const { calls, exec } = fakeHost();
  assert.deepEqual(prepareScenario("hot", { ...base, exec, wrap: inCgroup }), { preloadMs: null, evicted: null, preloadMbPerS: null });
  assert.deepEqual(calls, ["host preload --firefox /ff --json"]);
});

test("a failing host command stops with its message", () => {
  const exec = () => ({ status: 1, stdout: "", stderr: "no Firefox found" });
  assert.throws(() => prepareScenario("cold", { ...base, exec }), /host evict --firefox \/ff --json failed \(1\): no Firefox found/);
  assert.throws(() => prepareScenario("tepid", { ...base, exec: fakeHost().exec }), /unknown scenario tepid/);
});

test("launch-prefetch: evicted, nothing timed before the launch; launch-prefetch-hot: as hot", () => {
  const cold = fakeHost({ evict: { pages_dropped: 75000 } });
  assert.deepEqual(prepareScenario("launch-prefetch", { ...base, exec: cold.exec }), { preloadMs: null, evicted: 75000, preloadMbPerS: null, stillCachedBytes: 0 });
  assert.deepEqual(cold.calls, ["host evict --firefox /ff --json"]);
  const hot = fakeHost();
  assert.deepEqual(prepareScenario("launch-prefetch-hot", { ...base, exec: hot.exec }), { preloadMs: null, evicted: null, preloadMbPerS: null });
  assert.deepEqual(hot.calls, ["host preload --firefox /ff --json"]);
});

test("what stayed cached after the evict is recorded; a process mapping it stops the run, named", () => {
  // The host's evict reply when a Firefox left running keeps libxul.so and omni.ja mapped.
  const reply = {
    pages_dropped: 20000,
    files: [
      { path: "/ff/libxul.so", status: "exact", resident_before: 40000, resident_after: 12725 },
      { path: "/ff/browser/omni.ja", status: "exact", resident_before: 9000, resident_after: 1500 },
      { path: "/ff/libnss3.so", status: "exact", resident_before: 100, resident_after: 0 },
    ],
  };
  const held = [{ pid: 4242, comm: "firefox-esr", cmdline: "/ff/firefox-esr -profile /tmp/p", files: ["/ff/libxul.so"] }];
  const evicts = [];
  const host = fakeHost({ evict: reply });
  const exec = (...a) => (evicts.push(1), host.exec(...a));
  let t = 0;
  const cold = { findMappers: () => held, now: () => t, sleep: (ms) => (t += ms), waitMs: 3000 };
  assert.throws(
    () => prepareScenario("cold", { ...base, exec, cold }),
    (e) => {
      assert.equal(e.name, "ColdCheckError");
      assert.match(e.message, /58\.3 MB of Firefox's files stayed cached: libxul\.so \(52\.1 MB\), browser\/omni\.ja \(6\.1 MB\)/);
      assert.match(e.message, /firefox-esr \(pid 4242: \/ff\/firefox-esr -profile \/tmp\/p\)/);
      assert.match(e.message, /--allow-warm/);
      return true;
    },
  );
  assert.equal(evicts.length, 4, "evicted again each second while waiting 3 s for it to exit");
  // Told to go on: the run records what stayed and who held it.
  const warm = prepareScenario("cold", { ...base, exec: fakeHost({ evict: reply }).exec, cold: { ...cold, allowWarm: true } });
  assert.equal(warm.stillCachedBytes, (12725 + 1500) * 4096);
  assert.deepEqual(warm.stillCachedFiles.map((f) => f.path), ["/ff/libxul.so", "/ff/browser/omni.ja"]);
  // The process exits while we wait: the next evict is clean and the run goes on.
  let round = 0;
  const goes = fakeHost({ evict: reply });
  const clean = { pages_dropped: 1, files: [{ path: "/ff/libxul.so", status: "exact", resident_before: 1, resident_after: 0 }] };
  const exec2 = (cmd, args, options) => (round++ === 0 ? goes.exec(cmd, args, options) : { status: 0, stdout: JSON.stringify(clean), stderr: "" });
  const result = prepareScenario("cold", { ...base, exec: exec2, cold: { ...cold, findMappers: () => (round < 2 ? held : []) } });
  assert.equal(result.stillCachedBytes, 0);
  // Pages that stayed without anyone mapping them (dirty pages): recorded, not a refusal.
  const dirty = prepareScenario("cold", { ...base, exec: fakeHost({ evict: reply }).exec, cold: { ...cold, findMappers: () => [] } });
  assert.equal(dirty.stillCachedBytes, (12725 + 1500) * 4096);
  // Hidden residency (an ordinary user): unknown, not 0; a process mapping the files still
  // means not cold, seen or not.
  const hidden = { pages_dropped: 0, files: [{ path: "/ff/libxul.so", status: "hidden", resident_before: null, resident_after: null }] };
  assert.equal(prepareScenario("cold", { ...base, exec: fakeHost({ evict: hidden }).exec, cold: { ...cold, findMappers: () => [] } }).stillCachedBytes, null);
  assert.throws(() => prepareScenario("cold", { ...base, exec: fakeHost({ evict: hidden }).exec, cold }), /the mapped part of Firefox's files \(how much, the kernel hides from this user\) stayed cached/);
});
