// The verdict line of the history: from the user's own starts of one build, what a cold start
// costs against a hot one, or how many more starts of which kind it needs first. Pure.
import { coldnessOf } from "./coldness.js";
import { groupKey, summarize, welchTest } from "./stats.js";

/**
 * Starts of each kind a verdict needs: with 3 a side, the 95% interval of the difference has a
 * t of 4.3 at worst (Welch, df ≥ 2); with 2 it would be 12.7 and say little.
 */
export const VERDICT_MIN = 3;

/**
 * The verdict for the build of the newest record (the one running now, usually): its cold and
 * hot starts' `milestone` (sessionRestored by default) compared.
 * Returns null without records; else {state: "ready" | "thin", version, buildId, cold, hot
 * (summaries), needCold, needHot (how many more of each), diffMs (cold mean − hot mean, ready
 * only), test (Welch's, hot vs cold, or null)}.
 */
export function coldHotVerdict(records, { milestone = "sessionRestored", min = VERDICT_MIN } = {}) {
  const timed = records.filter((r) => typeof r.milestones?.[milestone] === "number");
  if (timed.length === 0) {
    return null;
  }
  const newest = timed.reduce((a, b) => (b.processStart > a.processStart ? b : a));
  const build = timed.filter((r) => groupKey(r) === groupKey(newest));
  const values = (kind) => build.filter((r) => coldnessOf(r) === kind).map((r) => r.milestones[milestone]);
  const coldValues = values("cold");
  const hotValues = values("hot");
  const cold = summarize(coldValues);
  const hot = summarize(hotValues);
  const needCold = Math.max(0, min - cold.n);
  const needHot = Math.max(0, min - hot.n);
  const base = { version: newest.firefox?.version ?? null, buildId: newest.firefox?.buildId ?? null, cold, hot, needCold, needHot };
  if (needCold > 0 || needHot > 0) {
    return { ...base, state: "thin", diffMs: null, test: null };
  }
  return { ...base, state: "ready", diffMs: cold.mean - hot.mean, test: welchTest(hotValues, coldValues) };
}

/** Mean `milestone` of the build's starts of each class: {cold, warm, hot, unknown} (null where none). */
export function classMeans(records, build, { milestone = "sessionRestored" } = {}) {
  const key = groupKey(build);
  const means = { cold: null, warm: null, hot: null, unknown: null };
  for (const kind of Object.keys(means)) {
    const stat = summarize(records.filter((r) => groupKey(r) === key && coldnessOf(r) === kind).map((r) => r.milestones?.[milestone]));
    means[kind] = stat.n > 0 ? { mean: stat.mean, n: stat.n } : null;
  }
  return means;
}

/**
 * The page's answer line for the start `currentId`: {record, ms (its `milestone`, or null),
 * coldness, readBytes (what the tree read, or null), cold, hot (this build's means: {mean, n} or
 * null)}; null when that start is not in `records` (not recorded yet).
 */
export function thisStartAnswer(records, currentId, { milestone = "sessionRestored" } = {}) {
  const record = records.find((r) => r.id === currentId);
  if (!record) {
    return null;
  }
  const ms = record.milestones?.[milestone];
  const means = classMeans(records, record, { milestone });
  return {
    record,
    ms: typeof ms === "number" ? ms : null,
    coldness: coldnessOf(record),
    readBytes: record.coldness?.treeReadBytes ?? record.io?.treeReadBytes ?? null,
    cold: means.cold,
    hot: means.hot,
  };
}
