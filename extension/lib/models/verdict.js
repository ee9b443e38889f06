// The verdict line of the history: from the user's own starts of one build, what a cold start
// costs against a hot one, or how many more starts of which kind it needs first. Pure.
import { CLASS_KEYS, COLDNESS, coldnessOf, readBytesOf } from "./coldness.js";
import { formatBytes, formatDateTime, formatDuration, formatMB, formatSeconds } from "../wording/format.js";
import { groupKey, summarize, welchTest } from "./stats.js";

/**
 * Starts of each kind a verdict needs: with 3 a side, the 95% interval of the difference has a
 * t of 4.3 at worst (Welch, df ≥ 2); with 2 it would be 12.7 and say little.
 */
export const VERDICT_MIN = 3;

/**
 * The milestone a record's time is measured to, by its mode: in full mode Firefox's own
 * sessionRestored; in basic mode (no experiment API) Firefox reports no milestone to the add-on,
 * so the one figure it has is when its own background page started (`extensionBackground`, ms
 * since the process start; docs/design/coldness.md). The two are different points of a start, so
 * times to one are never averaged or compared with times to the other.
 */
export const MILESTONE_OF_MODE = { full: "sessionRestored", basic: "extensionBackground" };

/** The milestone `record`'s time is measured to (MILESTONE_OF_MODE; full mode's for an unknown mode). */
export const milestoneOf = (record) => MILESTONE_OF_MODE[record?.mode] ?? MILESTONE_OF_MODE.full;

const timeTo = (record, milestone) => {
  const value = record.milestones?.[milestone];
  return typeof value === "number" ? value : null;
};

/**
 * The verdict for the build of the newest record (the one running now, usually): its cold and
 * hot starts' times to `milestone` compared. Without `milestone`, each record's own
 * (milestoneOf): the newest timed record's mode picks it, and only starts of that mode count.
 * Returns null without records; else {state: "ready" | "thin", milestone, version, buildId, cold,
 * hot (summaries), needCold, needHot (how many more of each), diffMs (cold mean − hot mean, ready
 * only), test (Welch's, hot vs cold, or null)}.
 */
export function coldHotVerdict(records, { milestone = null, min = VERDICT_MIN } = {}) {
  const used = (r) => milestone ?? milestoneOf(r);
  const timed = records.filter((r) => timeTo(r, used(r)) !== null);
  if (timed.length === 0) {
    return null;
  }
  const newest = timed.reduce((a, b) => (b.processStart > a.processStart ? b : a));
  const chosen = used(newest);
  const build = timed.filter((r) => groupKey(r) === groupKey(newest) && used(r) === chosen);
  const values = (kind) => build.filter((r) => coldnessOf(r) === kind).map((r) => timeTo(r, chosen));
  const coldValues = values("cold");
  const hotValues = values("hot");
  const cold = summarize(coldValues);
  const hot = summarize(hotValues);
  const needCold = Math.max(0, min - cold.n);
  const needHot = Math.max(0, min - hot.n);
  const base = {
    milestone: chosen,
    version: newest.firefox?.version ?? null,
    buildId: newest.firefox?.buildId ?? null,
    cold,
    hot,
    needCold,
    needHot,
  };
  if (needCold > 0 || needHot > 0) {
    return { ...base, state: "thin", diffMs: null, test: null };
  }
  return { ...base, state: "ready", diffMs: cold.mean - hot.mean, test: welchTest(hotValues, coldValues) };
}

/**
 * Mean time to `milestone` (by default `build`'s own, milestoneOf) of the build's starts of each
 * class: {cold, warm, hot, unknown} (null where none).
 */
export function classMeans(records, build, { milestone = milestoneOf(build) } = {}) {
  const key = groupKey(build);
  const means = { cold: null, warm: null, hot: null, unknown: null };
  for (const kind of Object.keys(means)) {
    const stat = summarize(records.filter((r) => groupKey(r) === key && coldnessOf(r) === kind).map((r) => timeTo(r, milestone)));
    means[kind] = stat.n > 0 ? { mean: stat.mean, n: stat.n } : null;
  }
  return means;
}

/**
 * The page's answer line for the start `currentId`: {record, milestone (what its time is
 * measured to: milestoneOf, unless given), ms (its time to that, or null), coldness, readBytes
 * (what the tree read, or null), cold, hot (this build's means to the same milestone: {mean, n}
 * or null)}; null when that start is not in `records` (not recorded yet).
 */
export function thisStartAnswer(records, currentId, { milestone = null } = {}) {
  const record = records.find((r) => r.id === currentId);
  if (!record) {
    return null;
  }
  const chosen = milestone ?? milestoneOf(record);
  const means = classMeans(records, record, { milestone: chosen });
  return {
    record,
    milestone: chosen,
    ms: timeTo(record, chosen),
    coldness: coldnessOf(record),
    readBytes: readBytesOf(record),
    cold: means.cold,
    hot: means.hot,
  };
}

/** The _locales messages of the answer line's sentences (answerSentences). */
const ANSWER_KEYS = {
  time: "answerTime",
  timeBasic: "answerTimeBasic",
  timeNone: "answerTimeNone",
  timeNoneBasic: "answerTimeNoneBasic",
  class: "answerClass",
  classPrefetched: "answerClassPrefetched",
  classPrefetchedCached: "answerClassPrefetchedCached",
  classPreloaded: "answerClassPreloaded",
  classLate: "answerClassLate",
  classUnknown: "answerClassUnknown",
  means: "answerMeans",
};

/**
 * The answer line (thisStartAnswer's) as three sentences, each {key, figures}: the page words
 * each with `t(key, figures)` and shows the figures of `time` and `kind` in bold.
 * - time: to sessionRestored, or in basic mode to this add-on's start, said as such; without a
 *   time, why not (no sessionRestored before the recorder gave up; the add-on started later);
 * - kind: the class and what the start read, or that its class is unknown (no I/O figures: a
 *   mean over such starts may mix cold and hot ones, so none is implied);
 * - means: this build's cold and hot means, to the same milestone as `time`.
 * `t(key, subs)` words the class and the means; `locale` pins number formats in tests.
 */
export function answerSentences(answer, t, { locale = undefined } = {}) {
  const basic = answer.milestone === MILESTONE_OF_MODE.basic;
  const time =
    answer.ms === null
      ? { key: ANSWER_KEYS[basic ? "timeNoneBasic" : "timeNone"], figures: [] }
      : { key: ANSWER_KEYS[basic ? "timeBasic" : "time"], figures: [formatSeconds(answer.ms, locale)] };
  let kind = { key: ANSWER_KEYS.class, figures: [t(CLASS_KEYS[answer.coldness]), formatBytes(answer.readBytes, locale)] };
  if (answer.coldness === COLDNESS.unknown) {
    kind = { key: ANSWER_KEYS.classUnknown, figures: [] };
  } else if (answer.coldness === COLDNESS.late) {
    // Recorded when the add-on started, not when Firefox did: how long after, and that what
    // was read by then is not the start's.
    const after = answer.record.recordedAt - answer.record.processStart;
    kind = { key: ANSWER_KEYS.classLate, figures: [formatDuration(after, locale), formatBytes(answer.readBytes, locale)] };
  } else if (answer.coldness === COLDNESS.prefetched) {
    // What it found cached beside what it read, where the host says (a prefetch of a warm
    // install reads 0 MB: true, and no help without what it found there).
    const prefetch = answer.record.prefetch ?? null;
    const read = formatBytes(prefetch?.bytesRead ?? null, locale);
    kind = Number.isInteger(prefetch?.bytesCached)
      ? { key: ANSWER_KEYS.classPrefetchedCached, figures: [read, formatBytes(prefetch.bytesCached, locale), formatBytes(answer.readBytes, locale)] }
      : { key: ANSWER_KEYS.classPrefetched, figures: [read, formatBytes(answer.readBytes, locale)] };
  } else if (answer.coldness === COLDNESS.preloaded) {
    const preload = answer.record.preload ?? null;
    kind = {
      key: ANSWER_KEYS.classPreloaded,
      figures: [
        formatBytes(preload?.bytes ?? null, locale),
        formatDuration(typeof preload?.at === "number" ? Math.max(0, answer.record.processStart - preload.at) : null, locale),
        formatBytes(answer.readBytes, locale),
      ],
    };
  }
  const mean = (m) => (m ? t("answerMean", [formatSeconds(m.mean, locale), String(m.n)]) : t("answerNoMean"));
  return { time, kind, means: { key: ANSWER_KEYS.means, figures: [mean(answer.cold), mean(answer.hot)] } };
}

/** A benchmark scenario that preloads before the launch: preload, preload-plan, preload-plan-mapped, … */
export const isPreloadScenario = (scenario) => typeof scenario === "string" && scenario.startsWith("preload");

/**
 * What preloading gained or cost, measured by a benchmark: from `records` of one bench export
 * (each with `bench.scenario`), its `cold` runs against each preload scenario's runs. Per
 * scenario: {scenario, state: "ready" | "thin", cold, preload (summaries of `milestone`),
 * preloadMs, preloadBytes (summaries of the preload's own time and bytes), needCold, needPreload,
 * startGainMs (cold mean − preloaded mean: how much sooner the preloaded start got there),
 * netMs (startGainMs − the preload's own time: what preloading right before a launch gains, < 0
 * a cost)}; ready ones first. [] when the records have no bench scenarios at all.
 */
export function benchPreloadVerdicts(records, { milestone = "sessionRestored", min = VERDICT_MIN } = {}) {
  const runs = records.filter((r) => typeof r?.bench?.scenario === "string");
  const coldRuns = runs.filter((r) => r.bench.scenario === "cold");
  const cold = summarize(coldRuns.map((r) => r.milestones?.[milestone]));
  const scenarios = [...new Set(runs.map((r) => r.bench.scenario).filter(isPreloadScenario))].sort();
  if (scenarios.length === 0) {
    // A bench export without preload runs: what it needs is a preload scenario.
    return runs.length === 0
      ? []
      : [{ scenario: "preload", state: "thin", cold, preload: summarize([]), needCold: Math.max(0, min - cold.n), needPreload: min }];
  }
  const verdicts = scenarios.map((scenario) => {
    const mine = runs.filter((r) => r.bench.scenario === scenario);
    const preload = summarize(mine.map((r) => r.milestones?.[milestone]));
    const preloadMs = summarize(mine.map((r) => r.bench.preloadMs));
    const preloadBytes = summarize(mine.map((r) => r.bench.preloadBytes));
    const needCold = Math.max(0, min - cold.n);
    const needPreload = Math.max(0, min - preload.n);
    const ready = needCold === 0 && needPreload === 0 && preloadMs.n > 0;
    const startGainMs = ready ? cold.mean - preload.mean : null;
    return {
      scenario,
      state: ready ? "ready" : "thin",
      cold,
      preload,
      preloadMs,
      preloadBytes,
      needCold,
      needPreload,
      startGainMs,
      netMs: ready ? startGainMs - preloadMs.mean : null,
    };
  });
  return verdicts.sort((a, b) => (a.state === b.state ? 0 : a.state === "ready" ? -1 : 1));
}

/**
 * What preloading gains here, from the best source there is:
 * 1. the newest imported benchmark export with bench runs (`imports`: [{name, records}], newest
 *    last): {from: "bench", name, verdicts (benchPreloadVerdicts)};
 * 2. else the plan's last run (`lastRun`: planView's autostart.lastRun: {at, bytes, elapsedMs,
 *    planned}) against this machine's cold-vs-hot verdict (`coldHot`, coldHotVerdict's):
 *    {from: "plan", state: "ready" | "thin", lastRun, gainMs (what a hot start saves against a
 *    cold one: what a preload that makes the next start hot gains), netMs (gainMs − the
 *    preload's time: done right before a launch), needCold, needHot};
 * 3. else {from: "none", min}: nothing measured a preload yet.
 */
export function preloadVerdict({ imports = [], lastRun = null, coldHot = null, min = VERDICT_MIN } = {}) {
  for (const entry of [...imports].reverse()) {
    const verdicts = benchPreloadVerdicts(entry.records ?? [], { min });
    if (verdicts.length > 0) {
      return { from: "bench", name: entry.name, verdicts };
    }
  }
  if (lastRun && typeof lastRun.elapsedMs === "number") {
    const needCold = coldHot ? coldHot.needCold : min;
    const needHot = coldHot ? coldHot.needHot : min;
    const ready = coldHot?.state === "ready";
    return {
      from: "plan",
      state: ready ? "ready" : "thin",
      lastRun,
      gainMs: ready ? coldHot.diffMs : null,
      netMs: ready ? coldHot.diffMs - lastRun.elapsedMs : null,
      needCold,
      needHot,
      cold: coldHot?.cold?.n ?? 0,
      hot: coldHot?.hot?.n ?? 0,
    };
  }
  return { from: "none", min };
}

/** "2 more cold runs and 1 more preload run": the pieces of a need, joined. */
function needWords(parts, t) {
  return parts
    .filter(([count]) => count > 0)
    .map(([count, one, many, extra = []]) => (count === 1 ? t(one, extra) : t(many, [String(count), ...extra])))
    .join(t("verdictAnd"));
}

/**
 * The preload verdict (preloadVerdict's) as the page's line. `t(key, subs)` words it; `locale`
 * pins number formats in tests.
 */
export function preloadVerdictText(verdict, t, { locale = undefined } = {}) {
  const s = (ms) => formatSeconds(Math.abs(ms), locale);
  if (verdict.from === "bench") {
    return verdict.verdicts
      .map((v) => {
        if (v.state === "ready") {
          return t(v.netMs >= 0 ? "preloadVerdictBenchGain" : "preloadVerdictBenchCost", [
            verdict.name,
            v.scenario,
            String(v.preload.n),
            String(v.cold.n),
            s(v.startGainMs),
            s(v.preloadMs.mean),
            formatMB(v.preloadBytes.mean, locale),
            s(v.netMs),
          ]);
        }
        const need = needWords(
          [
            [v.needCold, "preloadNeedColdRunOne", "preloadNeedColdRuns"],
            [v.needPreload, "preloadNeedPreloadRunOne", "preloadNeedPreloadRuns", [v.scenario]],
          ],
          t,
        );
        return t("preloadVerdictBenchThin", [need, verdict.name, String(v.cold.n), String(v.preload.n), v.scenario]);
      })
      .join(" ");
  }
  if (verdict.from === "plan") {
    const run = verdict.lastRun;
    const when = run.at === null ? "—" : formatDateTime(run.at, locale);
    const head = [when, formatMB(run.bytes, locale), s(run.elapsedMs)];
    if (verdict.state === "ready") {
      return t(verdict.netMs >= 0 ? "preloadVerdictPlanGain" : "preloadVerdictPlanCost", [...head, s(verdict.gainMs), s(verdict.netMs)]);
    }
    const need = needWords(
      [
        [verdict.needCold, "verdictNeedColdOne", "verdictNeedCold"],
        [verdict.needHot, "verdictNeedHotOne", "verdictNeedHot"],
      ],
      t,
    );
    return t("preloadVerdictPlanThin", [...head, need, String(verdict.cold), String(verdict.hot)]);
  }
  return t("preloadVerdictNone", [String(verdict.min)]);
}
