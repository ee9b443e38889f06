import { test } from "node:test";
import { readFileSync } from "node:fs";
import assert from "node:assert/strict";
import { backoffDelays, buildRecord, LATE_MS, recordThisStart, sinceProcess, waitForSessionRestored } from "../../../../extension/lib/models/recorder.js";
import { HISTORY_KEY } from "../../../../extension/lib/models/history.js";
import { isRecord, NOTES } from "../../../../extension/lib/models/record.js";
import { FALLBACK_NEED_BYTES } from "../../../../extension/lib/models/coldness.js";
import { fakeStorage } from "../../fakes.js";
import { recordedHello, recordedReply } from "../../host-replies.js";

const P = 1_763_768_000_123;

/** A clock that only moves when sleep() is called. */
function fakeClock(start = P + 3000) {
  const clock = { t: start, slept: [] };
  clock.now = () => clock.t;
  clock.sleep = async (ms) => {
    clock.slept.push(ms);
    clock.t += ms;
  };
  return clock;
}

// The host's real `hello` as an ordinary user (tests/fixtures/host/hello-user.json).
const HELLO = recordedHello("user");
const FIREFOX = {
  pid: 42,
  version: "153.0",
  build_id: "20261101000000",
  started_at_ms: P - 3,
  start_precision_ms: 10,
  io: { read_bytes: 301989888, major_faults: 5120, tree_read_bytes: 320000000, tree_major_faults: 6100, processes: 7 },
};
const host = (replies) => async (command) => {
  if (!(command in replies)) {
    throw new Error(`no reply for ${command}`);
  }
  return replies[command];
};
const browserInfo = async () => ({ name: "Firefox", version: "153.0", buildID: "20261101000000" });
const platformInfo = async () => ({ os: "linux", arch: "x86-64" });

test("backoffDelays: doubling, capped, summing to the bound", () => {
  assert.deepEqual(backoffDelays(3000), [250, 500, 1000, 1250]);
  const delays = backoffDelays(60000);
  assert.equal(delays.reduce((a, b) => a + b, 0), 60000);
  assert.ok(delays.every((d) => d <= 5000));
});

test("sinceProcess: ms since process, process itself left out, missing stays missing", () => {
  assert.deepEqual(sinceProcess({ process: P, main: P + 300, firstPaint2: P + 900, bogus: 0 }), {
    processStart: P,
    milestones: { main: 300, firstPaint2: 900 },
  });
  assert.deepEqual(sinceProcess({}), { processStart: null, milestones: {} });
});

test("waitForSessionRestored polls until Firefox reports it", async () => {
  const clock = fakeClock();
  let calls = 0;
  const getStartupInfo = async () => (++calls >= 3 ? { process: P, sessionRestored: P + 2000 } : { process: P });
  const result = await waitForSessionRestored(getStartupInfo, clock);
  assert.equal(result.complete, true);
  assert.equal(calls, 3);
  assert.deepEqual(clock.slept, [250, 500]);
});

test("full mode with the host: Firefox's milestones, the host's I/O and kernel", async () => {
  const clock = fakeClock();
  const { record } = await buildRecord({
    getStartupInfo: async () => ({ process: P, main: P + 310, sessionRestored: P + 1900 }),
    requestHost: host({ hello: HELLO, firefox: FIREFOX }),
    getBrowserInfo: browserInfo,
    getPlatformInfo: platformInfo,
    now: clock.now,
    sleep: clock.sleep,
  });
  assert.ok(isRecord(record));
  assert.deepEqual(record, {
    id: `full-${P}`,
    recordedAt: P + 3000,
    mode: "full",
    firefox: { version: "153.0", buildId: "20261101000000" },
    os: "linux",
    kernel: "6.18.44-fc-v595", // the recorded hello's
    processStart: P,
    milestones: { main: 310, sessionRestored: 1900 },
    io: { readBytes: 301989888, majorFaults: 5120, treeReadBytes: 320000000, treeMajorFaults: 6100, sampledAt: 3000 },
    // no plan_status from this host: classified against the documented fallback size
    coldness: {
      class: "cold",
      treeReadBytes: 320000000,
      treeMajorFaults: 6100,
      readBytes: 301989888,
      needBytes: FALLBACK_NEED_BYTES,
      needFrom: "fallback",
      rule: 1,
    },
    precision: { processStart: 1, milestones: 1 },
    notes: [],
    // no getStartCosts (an experiment without it): no costs, and why
    costs: { unavailable: "no-experiment-api" },
    // no startup reason from this experiment: the background's guess (onStartup came)
    addonStart: { later: false, reason: null, source: "onStartup" },
  });
});

test("coldness against the learned plan, else the install folder, from plan_status", async () => {
  const build = async (plan, io) =>
    (
      await buildRecord({
        getStartupInfo: async () => ({ process: P, sessionRestored: P + 900 }),
        requestHost: host({ hello: HELLO, firefox: { ...FIREFOX, io }, plan_status: plan }),
        now: fakeClock().now,
        sleep: fakeClock().sleep,
      })
    ).record.coldness;
  const hotIo = { read_bytes: 0, major_faults: 0, tree_read_bytes: 1_000_000, tree_major_faults: 3 };
  const planned = await build({ learned: true, planned_bytes: 335_600_000, install_bytes: 308_400_000 }, hotIo);
  assert.equal(planned.needFrom, "plan");
  assert.equal(planned.needBytes, 335_600_000);
  assert.equal(planned.class, "hot");
  const warmIo = { ...hotIo, tree_read_bytes: 100_000_000 };
  const install = await build({ learned: false, planned_bytes: 0, install_bytes: 308_400_000 }, warmIo);
  assert.deepEqual([install.needFrom, install.needBytes, install.class], ["install", 308_400_000, "warm"]);
});

test("a record without I/O figures is unknown, never guessed", async () => {
  const { record } = await buildRecord({
    getStartupInfo: async () => ({ process: P, sessionRestored: P + 900 }),
    requestHost: host({}),
    now: fakeClock().now,
    sleep: fakeClock().sleep,
  });
  assert.equal(record.io, null);
  assert.equal(record.coldness.class, "unknown");
});

test("full mode: no sessionRestored within the bound records what is there, with a note", async () => {
  const clock = fakeClock();
  const { record } = await buildRecord({
    getStartupInfo: async () => ({ process: P, main: P + 310 }),
    requestHost: host({ hello: HELLO, firefox: FIREFOX }),
    now: clock.now,
    sleep: clock.sleep,
    maxWait: 60000,
  });
  assert.equal(clock.slept.reduce((a, b) => a + b, 0), 60000, "waited the whole bound, no longer");
  assert.deepEqual(record.milestones, { main: 310 });
  assert.deepEqual(record.notes, [NOTES.noSessionRestored]);
});

test("full mode without the host: recorded, io null, noted; never throws", async () => {
  const clock = fakeClock();
  const { record } = await buildRecord({
    getStartupInfo: async () => ({ process: P, sessionRestored: P + 1000 }),
    requestHost: async () => {
      throw new Error("No such native application about_startup");
    },
    getBrowserInfo: browserInfo,
    now: clock.now,
    sleep: clock.sleep,
  });
  assert.equal(record.io, null);
  assert.equal(record.kernel, null);
  assert.deepEqual(record.notes, [NOTES.hostUnavailable]);
  assert.ok(isRecord(record));
});

test("basic mode: the host's process start (10 ms tick) and the add-on's own moment", async () => {
  const clock = fakeClock();
  const { record } = await buildRecord({
    requestHost: host({ hello: HELLO, firefox: FIREFOX }),
    getBrowserInfo: browserInfo,
    backgroundStartedAt: P + 1234.6,
    now: clock.now,
    sleep: clock.sleep,
  });
  assert.equal(record.mode, "basic");
  assert.equal(record.id, `basic-${P - 3}`);
  assert.equal(record.processStart, P - 3);
  assert.deepEqual(record.milestones, { extensionBackground: 1238 });
  assert.deepEqual(record.precision, { processStart: 10, milestones: 10 });
  assert.deepEqual(clock.slept, [], "basic mode does not wait");
});

test("basic mode: an add-on installed during this run observed no startup moment", async () => {
  const { record } = await buildRecord({
    requestHost: host({ hello: HELLO, firefox: FIREFOX }),
    backgroundStartedAt: P + 600000,
    addonStartedLater: () => true,
  });
  assert.deepEqual(record.milestones, {});
  assert.deepEqual(record.notes, [NOTES.addonStartedLater]);
});

test("basic mode without the host: nothing to measure from, nothing recorded", async () => {
  const storage = fakeStorage();
  const result = await recordThisStart({ storage, requestHost: async () => Promise.reject(new Error("gone")) });
  assert.equal(result.status, "no-process-start");
  assert.deepEqual(storage.data, {});
});

test("recordThisStart: once per process start, even when the background runs again", async () => {
  const storage = fakeStorage();
  const options = {
    storage,
    getStartupInfo: async () => ({ process: P, sessionRestored: P + 1000 }),
    requestHost: host({ hello: HELLO, firefox: FIREFOX }),
    getBrowserInfo: browserInfo,
  };
  const clock = fakeClock();
  const first = await recordThisStart({ ...options, now: clock.now, sleep: clock.sleep });
  assert.equal(first.status, "recorded");
  clock.t += 600000; // an event page woken ten minutes later
  const second = await recordThisStart({ ...options, now: clock.now, sleep: clock.sleep });
  assert.equal(second.status, "duplicate");
  assert.equal(storage.data[HISTORY_KEY].records.length, 1);
  assert.equal(storage.data[HISTORY_KEY].records[0].recordedAt, P + 3000, "the first record stays");
});

// Issue 39 #1: `evict; launch --prefetch` read 260 MB in the launcher's pid before it became
// Firefox; the start was filed "cold" and pulled the cold starts' mean. The host's `firefox`
// reply names the prefetch that read for this start; the record keeps it and its class says so.
test("a start the launch prefetch read for is prefetched, however much it read, and says what the prefetch read", async () => {
  const prefetched = { at_ms: P + 5, strategy: "first", bytes_planned: 207_900_000, bytes_read: 207_000_000 };
  const { record } = await buildRecord({
    getStartupInfo: async () => ({ process: P, sessionRestored: P + 1500 }),
    requestHost: host({ hello: HELLO, firefox: { ...FIREFOX, prefetched } }),
    now: fakeClock().now,
    sleep: fakeClock().sleep,
  });
  assert.ok(isRecord(record), JSON.stringify(record));
  assert.equal(record.coldness.class, "prefetched");
  assert.equal(record.coldness.treeReadBytes, 320000000, "the figures stay as read");
  // An older host says nothing of what it found cached: null, never 0.
  assert.deepEqual(record.prefetch, { at: P + 5, strategy: "first", bytesPlanned: 207_900_000, bytesRead: 207_000_000, bytesCached: null });
  // What it found cached, where the host says (figures of a real prefetch of a warm install:
  // e2e test.start-class.js's, ESR 153.8 here).
  const warm = (
    await buildRecord({
      getStartupInfo: async () => ({ process: P, sessionRestored: P + 1500 }),
      requestHost: host({
        hello: HELLO,
        firefox: { ...FIREFOX, prefetched: { ...prefetched, bytes_planned: 337_268_304, bytes_read: 372_736, bytes_cached: 336_895_568 } },
      }),
      now: fakeClock().now,
      sleep: fakeClock().sleep,
    })
  ).record;
  assert.ok(isRecord(warm), JSON.stringify(warm));
  assert.deepEqual(warm.prefetch, { at: P + 5, strategy: "first", bytesPlanned: 337_268_304, bytesRead: 372_736, bytesCached: 336_895_568 });
  // No prefetch named (null, or an older host without the field): classed by what it read.
  for (const firefox of [{ ...FIREFOX, prefetched: null }, FIREFOX]) {
    const plain = (
      await buildRecord({
        getStartupInfo: async () => ({ process: P, sessionRestored: P + 1500 }),
        requestHost: host({ hello: HELLO, firefox }),
        now: fakeClock().now,
        sleep: fakeClock().sleep,
      })
    ).record;
    assert.equal(plain.coldness.class, "cold");
    assert.equal("prefetch" in plain, false);
  }
});

// A start after a preload read little and was filed "hot" (issue 39: preloaded is a class of its
// own). The host's `firefox` reply names the preload the start followed (learn/last_preload.rs),
// made here from the record a real `preload` wrote (tests/fixtures/host/last-preload.json).
test("a start that followed a preload is preloaded, keeps what the preload read, and a prefetch outranks it", async () => {
  const last = recordedReply("last-preload").reply;
  const preloaded = { at_ms: last.at_ms, bytes: last.bytes, planned: last.planned };
  const quiet = { ...FIREFOX.io, read_bytes: 1_000_000, tree_read_bytes: 4_100_000 };
  const build = (firefox) =>
    buildRecord({
      getStartupInfo: async () => ({ process: P, sessionRestored: P + 700 }),
      requestHost: host({ hello: HELLO, firefox: { ...firefox, io: quiet } }),
      now: fakeClock().now,
      sleep: fakeClock().sleep,
    }).then((r) => r.record);
  const record = await build({ ...FIREFOX, preloaded });
  assert.ok(isRecord(record), JSON.stringify(record));
  assert.equal(record.coldness.class, "preloaded");
  assert.equal(record.coldness.treeReadBytes, 4_100_000, "the figures stay as read");
  assert.deepEqual(record.preload, { at: last.at_ms, bytes: 308_438_507, planned: false });
  // None named (null, or an older host): classed by what it read, hot here.
  for (const firefox of [{ ...FIREFOX, preloaded: null }, FIREFOX]) {
    const plain = await build(firefox);
    assert.equal(plain.coldness.class, "hot");
    assert.equal("preload" in plain, false);
  }
  const both = await build({ ...FIREFOX, preloaded, prefetched: { at_ms: P + 5, strategy: "first", bytes_planned: 1, bytes_read: 1 } });
  assert.equal(both.coldness.class, "prefetched");
});

// Issue 39 #5: the add-on installed into a running Firefox recorded its start 10 minutes late
// with no note in full mode: "A warm start: it read 51.3 MB".
test("full mode: an add-on that started after Firefox records the start as recorded late, with the note", async () => {
  const clock = fakeClock(P + 600_000);
  const { record } = await buildRecord({
    getStartupInfo: async () => ({ process: P, main: P + 310, sessionRestored: P + 1400 }),
    requestHost: host({ hello: HELLO, firefox: { ...FIREFOX, io: { ...FIREFOX.io, tree_read_bytes: 51_300_000 } } }),
    addonStartedLater: () => true,
    now: clock.now,
    sleep: clock.sleep,
  });
  assert.ok(isRecord(record));
  assert.equal(record.coldness.class, "late");
  assert.deepEqual(record.notes, [NOTES.addonStartedLater]);
  assert.equal(record.milestones.sessionRestored, 1400, "Firefox's own milestones stay: they are the start's");
  // Installed right after Firefox started (a temporary install, seconds after the start was
  // over): the figures are the start's, as before.
  const soon = fakeClock(P + 1400 + LATE_MS - 1000);
  const early = (
    await buildRecord({
      getStartupInfo: async () => ({ process: P, main: P + 310, sessionRestored: P + 1400 }),
      requestHost: host({ hello: HELLO, firefox: FIREFOX }),
      addonStartedLater: () => true,
      now: soon.now,
      sleep: soon.sleep,
    })
  ).record;
  assert.equal(early.coldness.class, "cold");
  assert.deepEqual(early.notes, []);
});

// Two real getStartCosts readings of consecutive starts (tests/fixtures/start-costs/).
const costsReading = (n) =>
  JSON.parse(readFileSync(new URL(`../../../fixtures/start-costs/reading-${n}.json`, import.meta.url), "utf8"));

test("each start's add-on figures go with that start: the second start diffs against the first's reading", async () => {
  const storage = fakeStorage();
  const start = async (processStart, reading) =>
    recordThisStart({
      storage,
      getStartupInfo: async () => ({ process: processStart, sessionRestored: processStart + 900 }),
      getStartCosts: async () => reading,
      requestHost: host({ hello: HELLO, firefox: FIREFOX }),
      now: () => processStart + 3000,
      sleep: async () => {},
    });
  const [one, two] = [costsReading(1), costsReading(2)];
  const first = await start(P, one);
  const second = await start(P + 600_000, two);
  const webcompat = (r) => r.addons.find((a) => a.id === "webcompat@mozilla.org").startup.sum;
  const figure = (record) => record.costs.addons.find((a) => a.id === "webcompat@mozilla.org").startupMs;
  assert.deepEqual(figure(first.record), { value: Math.round(webcompat(one) / 1e5) / 10, source: "glean" });
  assert.deepEqual(figure(second.record), {
    value: Math.round((webcompat(two) - webcompat(one)) / 1e5) / 10,
    source: "glean-delta",
  });
  const stored = storage.data[HISTORY_KEY].records;
  assert.deepEqual(
    stored.map((r) => [r.id, figure(r).value]),
    [
      [first.record.id, figure(first.record).value],
      [second.record.id, figure(second.record).value],
    ],
  );
  assert.ok(stored.every(isRecord));
  // The same start recorded again (the background page restarted) keeps the baseline.
  const again = await start(P + 600_000, two);
  assert.equal(again.status, "duplicate");
  assert.equal(storage.data["startCosts.lastReading"].startId, second.record.id);
});

test("basic mode records why it has no costs", async () => {
  const { record } = await buildRecord({
    requestHost: host({ hello: HELLO, firefox: FIREFOX }),
    backgroundStartedAt: P + 500,
    now: fakeClock().now,
  });
  assert.deepEqual(record.costs, { unavailable: "no-experiment-api" });
});

test("a start the add-on began with is told by Firefox's startup reason, not by the background's one-second guess", async () => {
  const build = (reason, startedLater) =>
    buildRecord({
      getStartupInfo: async () => ({ process: P, sessionRestored: P + 900 }),
      getStartCosts: async () => ({ ...costsReading(1), selfStartupReason: reason }),
      requestHost: host({ hello: HELLO, firefox: FIREFOX }),
      addonStartedLater: () => startedLater,
      now: fakeClock().now,
      sleep: async () => {},
    });
  // A sibling add-on kept the extension process busy: onStartup came late, but Firefox says APP_STARTUP.
  assert.equal((await build("APP_STARTUP", true)).record.costs.addons.length, costsReading(1).addons.length);
  assert.deepEqual((await build("ADDON_INSTALL", false)).record.costs, { unavailable: "addon-started-later", startupReason: "ADDON_INSTALL" });
  // An older reading without the reason: the background's guess.
  assert.deepEqual((await build(undefined, true)).record.costs, { unavailable: "addon-started-later" });
});

// The recorder's `late` used the background's one-second guess alone: a start Firefox says the
// add-on began with (APP_STARTUP) was classed late when onStartup came after that second, and a
// start of an add-on installed mid-run (ADDON_INSTALL) was not when the guess missed it.
test("late is decided by Firefox's startup reason where the experiment gives it, and the record says whose word it was", async () => {
  const build = (reason, startedLater) =>
    buildRecord({
      getStartupInfo: async () => ({ process: P, main: P + 310, sessionRestored: P + 1400 }),
      getStartCosts: async () => ({ ...costsReading(1), selfStartupReason: reason }),
      requestHost: host({ hello: HELLO, firefox: FIREFOX }),
      addonStartedLater: () => startedLater,
      now: fakeClock(P + 1400 + LATE_MS + 1000).now,
      sleep: async () => {},
    });
  const installed = (await build("ADDON_INSTALL", false)).record;
  assert.equal(installed.coldness.class, "late", "Firefox says installed mid-run; the guess missed it");
  assert.deepEqual(installed.notes, [NOTES.addonStartedLater]);
  assert.deepEqual(installed.addonStart, { later: true, reason: "ADDON_INSTALL", source: "startupReason" });
  const withFirefox = (await build("APP_STARTUP", true)).record;
  assert.equal(withFirefox.coldness.class, "cold", "Firefox says it started with it; the guess was wrong");
  assert.deepEqual(withFirefox.notes, []);
  assert.deepEqual(withFirefox.addonStart, { later: false, reason: "APP_STARTUP", source: "startupReason" });
  // An older experiment without the reason: the background's guess, said as such.
  const guessed = (await build(undefined, true)).record;
  assert.equal(guessed.coldness.class, "late");
  assert.deepEqual(guessed.addonStart, { later: true, reason: null, source: "onStartup" });
  assert.ok([installed, withFirefox, guessed].every(isRecord));
});
