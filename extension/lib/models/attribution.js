// How much of the hot start's time above the empty profile the A/B benchmark names (issue 40,
// item 1): the attribution arms (ATTRIBUTION_ARMS, lib/models/ab-saving.js) take away more and
// more of the same profile, and each step between two of them is what taking those causes away
// saved, measured (hot mean − arm mean, Welch's 95% CI), never a busy time:
//   hot → hot-addons-off                          the add-ons
//   hot-addons-off → hot-addons-and-restore-off   session restore, with the add-ons off
//   hot-addons-and-restore-off → hot-empty-profile  the profile's other data (history,
//                                                 bookmarks, cookies, the startup cache, …)
// The steps follow one another, so their savings do not overlap: they add up to the hot start's
// time above the empty profile (in means). A step whose CI holds 0 is not told from noise and is
// not counted: the attributed share is what the significant steps measured, over the excess.
// The single-cause arms (the costly add-on alone, session restore alone with the add-ons on) are
// given beside the chain: what removing only that saved, which overlaps the chain's steps. Pure.
import { EMPTY_PROFILE_ARM } from "./ab-saving.js";
import { welchTest } from "./stats.js";

/** The chain's arms in order, and the cause taking each one's step away names. */
export const CHAIN = [
  { arm: "hot", removes: null },
  { arm: "hot-addons-off", removes: "addons" },
  { arm: "hot-addons-and-restore-off", removes: "session-restore" },
  { arm: EMPTY_PROFILE_ARM, removes: "profile-data" },
];
/** The single-cause arms shown beside the chain, and the cause each takes away alone. */
export const ALONE = [
  { arm: "hot-without-costly-addon", removes: "costly-addon" },
  { arm: "hot-session-restore-off", removes: "session-restore-alone" },
];

const isNumber = (v) => typeof v === "number" && Number.isFinite(v);
const saving = (test) => ({ ms: test.diff, low: test.ci.low, high: test.ci.high, p: test.p, significant: test.significant, nFrom: test.b.n, nTo: test.a.n });

/**
 * The attribution of one benchmark run's records (bench.scenario set): null unless it has `hot`
 * and the empty-profile arm with 2 runs each; else {excess ({ms, low, high, …}: hot − empty),
 * baselineMs, hotMs (the means), steps ([{causes: [...], from, to, saving}] between consecutive
 * chain arms present), alone ([{cause, arm, saving}]), attributedMs (the significant steps' sum),
 * share (attributedMs / excess, within 0..1; null when the excess is not above 0), capped (true
 * when the sum was above the excess), n (the fewest runs of an arm used)}.
 * `buildId`: only records of that build count (null: any).
 */
export function attributionOf(records, { buildId = null } = {}) {
  const sr = (arm) =>
    (records ?? [])
      .filter((r) => r.bench?.scenario === arm && (buildId === null || r.firefox?.buildId === buildId))
      .map((r) => r.milestones?.sessionRestored)
      .filter(isNumber);
  const present = CHAIN.filter((link) => sr(link.arm).length >= 2);
  if (present[0]?.arm !== "hot" || present.at(-1)?.arm !== EMPTY_PROFILE_ARM) {
    return null;
  }
  const excessTest = welchTest(sr(EMPTY_PROFILE_ARM), sr("hot")); // diff = hot − empty
  const steps = [];
  for (let i = 1; i < present.length; i++) {
    const from = present[i - 1];
    const to = present[i];
    // The causes between the two arms present: those of skipped arms too.
    const causes = CHAIN.slice(CHAIN.indexOf(from) + 1, CHAIN.indexOf(to) + 1).map((link) => link.removes);
    steps.push({ causes, from: from.arm, to: to.arm, saving: saving(welchTest(sr(to.arm), sr(from.arm))) });
  }
  const alone = ALONE.filter((a) => sr(a.arm).length >= 2).map((a) => ({ cause: a.removes, arm: a.arm, saving: saving(welchTest(sr(a.arm), sr("hot"))) }));
  const counted = steps.filter((s) => s.saving.significant);
  const attributedMs = counted.reduce((sum, s) => sum + s.saving.ms, 0);
  const excess = saving(excessTest);
  const share = excess.ms > 0 ? Math.min(1, Math.max(0, attributedMs / excess.ms)) : null;
  return {
    excess,
    hotMs: excessTest.b.mean,
    baselineMs: excessTest.a.mean,
    steps,
    alone,
    attributedMs,
    share,
    capped: share !== null && attributedMs > excess.ms,
    n: Math.min(...present.map((link) => sr(link.arm).length)),
  };
}

/**
 * The newest imported run ([{name, records}], newest last) with an attribution for `buildId`:
 * attributionOf's result with `from` (the import's name) and `preset` (the hot starts' profile),
 * or null.
 */
export function importedAttribution(imports, buildId) {
  for (const item of [...(imports ?? [])].reverse()) {
    const result = attributionOf(item.records, { buildId });
    if (result) {
      const hot = (item.records ?? []).find((r) => r.bench?.scenario === "hot");
      return { ...result, from: item.name ?? null, preset: hot?.bench?.profile ?? null };
    }
  }
  return null;
}
