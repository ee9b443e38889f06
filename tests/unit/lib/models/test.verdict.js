import { test } from "node:test";
import assert from "node:assert/strict";
import {
  answerSentences,
  benchPreloadVerdicts,
  classMeans,
  coldHotVerdict,
  preloadVerdict,
  preloadVerdictText,
  thisStartAnswer,
  MILESTONE_OF_MODE,
  milestoneOf,
  VERDICT_MIN,
} from "../../../../extension/lib/models/verdict.js";
import { englishMessage } from "../../fakes.js";

let next = 0;
const start = (coldness, ms, build = "1") => ({
  id: `full-${++next}`,
  recordedAt: next + 1,
  mode: "full",
  firefox: { version: "153.0", buildId: build },
  processStart: next,
  milestones: { sessionRestored: ms },
  io: null,
  coldness: { class: coldness },
});

test("no records: no verdict", () => {
  assert.equal(coldHotVerdict([]), null);
});

test("too few of a kind: says how many more of which kind", () => {
  const verdict = coldHotVerdict([start("cold", 8900), start("hot", 500), start("hot", 510), start("hot", 490), start("warm", 3000)]);
  assert.equal(verdict.state, "thin");
  assert.equal(verdict.needCold, VERDICT_MIN - 1);
  assert.equal(verdict.needHot, 0);
  assert.equal(verdict.diffMs, null);
});

test("both kinds: the cold start's extra cost, with n per kind, for the newest build only", () => {
  const records = [
    start("cold", 20000, "old"),
    start("hot", 100, "old"),
    ...[8800, 8900, 9000].map((ms) => start("cold", ms)),
    ...[480, 500, 520, 500].map((ms) => start("hot", ms)),
  ];
  const verdict = coldHotVerdict(records);
  assert.equal(verdict.state, "ready");
  assert.equal(verdict.buildId, "1");
  assert.equal(verdict.cold.n, 3);
  assert.equal(verdict.hot.n, 4);
  assert.equal(verdict.diffMs, 8900 - 500);
  assert.ok(verdict.test.significant);
  assert.deepEqual(classMeans(records, records.at(-1)), {
    cold: { mean: 8900, n: 3 },
    warm: null,
    hot: { mean: 500, n: 4 },
    unknown: null,
  });
});

test("thisStartAnswer: this start's time, class and reads against its build's cold and hot means", () => {
  const records = [start("cold", 9000), start("cold", 8800), start("hot", 500)];
  const current = { ...start("hot", 700), coldness: { class: "hot", treeReadBytes: 4096 } };
  records.push(current);
  const answer = thisStartAnswer(records, current.id);
  assert.equal(answer.ms, 700);
  assert.equal(answer.coldness, "hot");
  assert.equal(answer.readBytes, 4096);
  assert.deepEqual(answer.cold, { mean: 8900, n: 2 });
  assert.deepEqual(answer.hot, { mean: 600, n: 2 });
  assert.equal(thisStartAnswer(records, "not-recorded"), null);
});

// A basic-mode start (Release: no experiment API): its one milestone is the add-on's own start.
const basicStart = (coldness, ms, build = "1") => ({
  ...start(coldness, ms, build),
  id: `basic-${next}`,
  mode: "basic",
  milestones: ms === null ? {} : { extensionBackground: ms },
  notes: ms === null ? ["addon-started-later"] : [],
});

test("milestoneOf: sessionRestored in full mode, the add-on's own start in basic mode", () => {
  assert.equal(milestoneOf(start("hot", 1)), "sessionRestored");
  assert.equal(milestoneOf(basicStart("hot", 1)), "extensionBackground");
  assert.equal(MILESTONE_OF_MODE.basic, "extensionBackground");
});

test("basic mode: verdict, means and answer from extensionBackground, never mixed with full mode's", () => {
  const olderFull = [start("cold", 9000), start("hot", 600)];
  const records = [
    ...[2300, 2400, 2500].map((ms) => basicStart("cold", ms)),
    ...[450, 500, 550].map((ms) => basicStart("hot", ms)),
  ];
  const verdict = coldHotVerdict(records);
  assert.equal(verdict.state, "ready");
  assert.equal(verdict.milestone, "extensionBackground");
  assert.equal(verdict.diffMs, 2400 - 500);
  assert.deepEqual(classMeans(records, records[0]), { cold: { mean: 2400, n: 3 }, warm: null, hot: { mean: 500, n: 3 }, unknown: null });
  // Full-mode starts of the same build (another flavour) are timed to another point: apart.
  const mixed = [...olderFull, ...records];
  assert.equal(coldHotVerdict(mixed).diffMs, 2400 - 500);
  assert.equal(coldHotVerdict([...records, start("hot", 600)]).state, "thin", "the newest is full: only full starts count");
  // The add-on started later: no time of its own, not counted, and the verdict still stands.
  const later = basicStart("hot", null);
  assert.equal(coldHotVerdict([...records, later]).state, "ready");
  const answer = thisStartAnswer([...records, later], later.id);
  assert.deepEqual([answer.milestone, answer.ms, answer.coldness], ["extensionBackground", null, "hot"]);
  const current = records.at(-1);
  const timed = thisStartAnswer(mixed, current.id);
  assert.deepEqual([timed.milestone, timed.ms], ["extensionBackground", 550]);
  assert.deepEqual(timed.cold, { mean: 2400, n: 3 }, "basic starts' means only");
});

test("basic mode: the preload verdict weighs the plan's run once there are enough basic starts", () => {
  const lastRun = { at: 1, bytes: 224_800_000, elapsedMs: 1500, planned: true };
  const three = [...[2300, 2400, 2500].map((ms) => basicStart("cold", ms)), ...[450, 500, 550].map((ms) => basicStart("hot", ms))];
  const verdict = preloadVerdict({ lastRun, coldHot: coldHotVerdict(three) });
  assert.deepEqual([verdict.state, verdict.gainMs, verdict.netMs, verdict.cold, verdict.hot], ["ready", 1900, 400, 3, 3]);
  const thin = preloadVerdict({ lastRun, coldHot: coldHotVerdict(three.slice(1)) });
  assert.deepEqual([thin.state, thin.needCold, thin.needHot, thin.cold, thin.hot], ["thin", 1, 0, 2, 3]);
});

test("answerSentences: names the milestone the time is to, and words an unknown class apart", () => {
  const t = englishMessage;
  const text = (answer) => {
    const { time, kind, means } = answerSentences(answer, t, { locale: "en" });
    return [time, kind, means].map(({ key, figures }) => t(key, figures)).join(" ");
  };
  const full = [start("cold", 8900), { ...start("hot", 700), coldness: { class: "hot", treeReadBytes: 0 } }];
  assert.equal(
    text(thisStartAnswer(full, full[1].id)),
    "This start took 0.7s to sessionRestored. A hot start: it read 0.0 MB from disk by the time it was recorded. This build: cold starts 8.9s on average (n = 1), hot starts 0.7s on average (n = 1).",
  );
  const basic = [basicStart("cold", 2400), { ...basicStart("hot", 500), coldness: { class: "hot", treeReadBytes: 0 } }];
  const basicText = text(thisStartAnswer(basic, basic[1].id));
  assert.match(basicText, /^This start took 0\.5s until this add-on started \(basic mode: Firefox reports no sessionRestored to add-ons, so this is the point measured\)\. A hot start/);
  assert.match(basicText, /cold starts 2\.4s on average \(n = 1\), hot starts 0\.5s on average \(n = 1\)\.$/);
  const later = basicStart("hot", null);
  assert.match(text(thisStartAnswer([later], later.id)), /^This start has no time: this add-on was installed or enabled after Firefox started/);
  const late = { ...start("cold", null), milestones: {} };
  assert.match(text(thisStartAnswer([late], late.id)), /^This start has no time: Firefox had not reported sessionRestored/);
  const unknown = start("unknown", 900);
  const unknownText = text(thisStartAnswer([unknown], unknown.id));
  assert.match(unknownText, /^This start took 0\.9s to sessionRestored\. How cold it was is unknown: the native host gave no I\/O figures for it\. This build: cold starts none recorded yet/);
  assert.doesNotMatch(unknownText, /a unknown start|—/);
});

const benchRun = (scenario, ms, preloadMs = null, preloadBytes = null) => ({
  ...start(scenario === "cold" ? "cold" : "hot", ms),
  bench: { scenario, run: next, preloadMs, preloadBytes },
});

test("benchPreloadVerdicts: the preloaded start's gain and, with the preload's own time, the net", () => {
  const records = [
    ...[8800, 8900, 9000].map((ms) => benchRun("cold", ms)),
    ...[480, 500, 520].map((ms) => benchRun("preload", ms, 9800, 308_400_000)),
    ...[460, 470].map((ms) => benchRun("preload-plan", ms, 7000, 224_800_000)),
    ...[470, 480, 490].map((ms) => benchRun("hot", ms)),
  ];
  const [ready, thin] = benchPreloadVerdicts(records);
  assert.equal(ready.scenario, "preload");
  assert.equal(ready.state, "ready");
  assert.equal(ready.startGainMs, 8900 - 500);
  assert.equal(ready.netMs, 8900 - 500 - 9800, "a preload right before the launch costs 1.4 s here");
  assert.equal(ready.preloadBytes.mean, 308_400_000);
  assert.equal(thin.scenario, "preload-plan");
  assert.equal(thin.state, "thin");
  assert.deepEqual([thin.needCold, thin.needPreload], [0, 1]);
  assert.deepEqual(benchPreloadVerdicts([start("hot", 1)]), [], "no bench runs: nothing to say");
  const onlyCold = benchPreloadVerdicts([benchRun("cold", 9000)]);
  assert.deepEqual([onlyCold[0].state, onlyCold[0].needCold, onlyCold[0].needPreload], ["thin", 2, VERDICT_MIN]);
});

test("preloadVerdict: the newest bench import first, else the plan's last run, else what is missing", () => {
  const bench = { name: "bench.json", records: [benchRun("cold", 9000), benchRun("preload", 500, 9800, 1)] };
  const local = [start("cold", 8900), start("cold", 8800), start("cold", 9000), start("hot", 500), start("hot", 510), start("hot", 490)];
  const coldHot = coldHotVerdict(local);
  const lastRun = { at: 1, bytes: 224_800_000, elapsedMs: 7500, planned: true };
  const fromBench = preloadVerdict({ imports: [{ name: "other.json", records: local }, bench], lastRun, coldHot });
  assert.equal(fromBench.from, "bench");
  assert.equal(fromBench.name, "bench.json");
  assert.equal(fromBench.verdicts[0].state, "thin");
  const fromPlan = preloadVerdict({ imports: [{ name: "other.json", records: local }], lastRun, coldHot });
  assert.deepEqual([fromPlan.from, fromPlan.state, fromPlan.gainMs, fromPlan.netMs], ["plan", "ready", 8900 - 500, 8900 - 500 - 7500]);
  const thin = preloadVerdict({ lastRun, coldHot: coldHotVerdict(local.slice(1)) });
  assert.deepEqual([thin.state, thin.needCold, thin.needHot], ["thin", 1, 0]);
  assert.deepEqual(preloadVerdict({}), { from: "none", min: VERDICT_MIN });
});

test("preloadVerdictText words each case from _locales, with the counts it still needs", () => {
  const t = englishMessage;
  const records = [
    ...[8800, 8900, 9000].map((ms) => benchRun("cold", ms)),
    ...[480, 500, 520].map((ms) => benchRun("preload", ms, 9800, 308_400_000)),
  ];
  const cost = preloadVerdictText(preloadVerdict({ imports: [{ name: "b.json", records }] }), t, { locale: "en" });
  assert.match(cost, /^Preloading, from the benchmark in b\.json \(preload: 3 runs against 3 cold\): a preloaded start reached sessionRestored 8\.4s sooner\. The preload itself took 9\.8s for 308\.4 MB, so preloading right before a launch cost 1\.4s more/);
  const thin = preloadVerdictText(preloadVerdict({ imports: [{ name: "b.json", records: records.slice(1, 4) }] }), t, { locale: "en" });
  assert.match(thin, /needs 1 more cold run and 2 more preload runs in the benchmark b\.json \(it has 2 cold and 1 preload runs/);
  const lastRun = { at: null, bytes: 224_800_000, elapsedMs: 7500, planned: true };
  const coldHot = { state: "thin", needCold: 2, needHot: 1, cold: { n: 1 }, hot: { n: 2 } };
  assert.match(preloadVerdictText(preloadVerdict({ lastRun, coldHot }), t, { locale: "en" }), /read 224\.8 MB in 7\.5s; what that gains here needs 2 more cold starts and 1 more hot start of this build first \(so far 1 cold, 2 hot\)/);
  const ready = { state: "ready", diffMs: 8400, needCold: 0, needHot: 0, cold: { n: 3 }, hot: { n: 3 } };
  assert.match(preloadVerdictText(preloadVerdict({ lastRun, coldHot: ready }), t, { locale: "en" }), /gains 8\.4s when done at login, and 0\.9s when done right before a launch/);
  assert.match(preloadVerdictText(preloadVerdict({}), t), /at least 3 cold and 3 preload runs/);
});

// Issue 39 #1 and #5: a prefetched start was filed "cold" and pulled the cold mean to 1.5 s; a
// start recorded 10 minutes late read as "A warm start" with no word of it.
test("prefetched and late starts: their own class on the answer line, never in the cold or hot means", () => {
  const t = englishMessage;
  const text = (answer) => {
    const { kind } = answerSentences(answer, t, { locale: "en" });
    return t(kind.key, kind.figures);
  };
  const colds = [start("cold", 9000), start("cold", 8800), start("cold", 8600)];
  const hots = [start("hot", 500), start("hot", 520), start("hot", 480)];
  const prefetched = {
    ...start("prefetched", 1500),
    coldness: { class: "prefetched", treeReadBytes: 288_200_000 },
    prefetch: { at: 1, strategy: "first", bytesPlanned: 207_900_000, bytesRead: 207_900_000 },
  };
  const late = { ...start("late", 1400), coldness: { class: "late", treeReadBytes: 51_300_000 } };
  late.recordedAt = late.processStart + 600_000;
  const records = [...colds, ...hots, prefetched, late];
  const verdict = coldHotVerdict(records);
  assert.deepEqual([verdict.cold.n, verdict.cold.mean, verdict.hot.n, verdict.hot.mean], [3, 8800, 3, 500]);
  assert.equal(
    text(thisStartAnswer(records, prefetched.id)),
    "A prefetched start: the launch prefetch read 207.9 MB for it, and it read 288.2 MB from disk by the time it was recorded.",
  );
  assert.deepEqual(thisStartAnswer(records, prefetched.id).cold, { mean: 8800, n: 3 });
  // A prefetch of a warm install read next to nothing: the line says what it found cached
  // instead of a bare "read 0.4 MB" (figures of a real prefetch: e2e test.start-class.js's).
  const warm = {
    ...start("prefetched", 1400),
    coldness: { class: "prefetched", treeReadBytes: 500_000 },
    prefetch: { at: 1, strategy: "first", bytesPlanned: 337_268_304, bytesRead: 372_736, bytesCached: 336_895_568 },
  };
  assert.equal(
    text(thisStartAnswer([...records, warm], warm.id)),
    "A prefetched start: the launch prefetch read 0.4 MB for it and found 336.9 MB already cached, and it read 0.5 MB from disk by the time it was recorded.",
  );
  const none = { ...warm, id: "none", prefetch: { ...warm.prefetch, bytesRead: 0, bytesCached: 337_268_304 } };
  assert.match(text(thisStartAnswer([...records, none], none.id)), /read 0\.0 MB for it and found 337\.3 MB already cached/);
  assert.equal(
    text(thisStartAnswer(records, late.id)),
    "Recorded late: this add-on started 10 min after Firefox (installed or enabled while it ran), so the 51.3 MB read from disk by then are not this start's, and how cold it was is unknown.",
  );
});

// Issue 39's class list: a start that followed a preload read little and was filed "hot",
// pulling the hot mean down; it is "preloaded", said with what the preload read and when.
test("a preloaded start: its own class on the answer line, with the preload's bytes and how long before, never in the hot mean", () => {
  const t = englishMessage;
  const hots = [start("hot", 500), start("hot", 520), start("hot", 480)];
  const preloaded = {
    ...start("preloaded", 700),
    coldness: { class: "preloaded", treeReadBytes: 4_100_000 },
  };
  preloaded.preload = { at: preloaded.processStart - 150_000, bytes: 308_438_507, planned: false };
  const records = [...hots, preloaded];
  assert.deepEqual([coldHotVerdict(records).hot.n, coldHotVerdict(records).hot.mean], [3, 500]);
  const { kind } = answerSentences(thisStartAnswer(records, preloaded.id), t, { locale: "en" });
  assert.equal(
    t(kind.key, kind.figures),
    "A preloaded start: it followed a preload that read 308.4 MB of Firefox's files 3 min before it, and it read 4.1 MB from disk by the time it was recorded.",
  );
});
