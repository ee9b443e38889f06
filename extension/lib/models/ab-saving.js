// What the benchmark's A/B mode measured removing a cause saves (issue 40, item 3), and whether
// it agrees with the busy time the page showed for it. Pure; shared by the benchmark
// (scripts/bench/ab.mjs writes the table of docs/benchmarks.md) and the page (its answer line
// words a cause as a saving only where an imported A/B run agrees, page/costs.js).
//   hot-without-costly-addon  the same profile without the benchmark's deliberately costly
//                             add-on (COSTLY_ADDON_ID)
//   hot-session-restore-off   the same profile with no session restored
import { causesOf } from "./start-costs.js";
import { welchTest } from "./stats.js";

export const COSTLY_ADDON_ID = "costly-startup@bench.startup-lab.dev";
/** Each arm and what it takes away: the cause whose saving it measures. */
export const AB_ARM_REMOVES = {
  "hot-without-costly-addon": { kind: "addon", id: COSTLY_ADDON_ID },
  "hot-session-restore-off": { kind: "session-restore", id: "session-restore" },
};
export const AB_ARMS = Object.keys(AB_ARM_REMOVES);
/**
 * The attribution arms (lib/models/attribution.js): each takes away more of the profile, so that
 * the steps between them name every part of the hot start's time above the empty profile.
 *   hot-addons-off              every add-on the user installed removed (the preset's and the
 *                               costly one; about:startup stays to record the start)
 *   hot-addons-and-restore-off  the same, and no session restored (browser.startup.page = 1)
 *   hot-empty-profile           a new profile with about:startup only: Firefox's own baseline
 */
export const ATTRIBUTION_ARMS = ["hot-addons-off", "hot-addons-and-restore-off", "hot-empty-profile"];
/** Every arm of the benchmark's A/B mode: hot starts of a changed profile. */
export const ALL_AB_ARMS = [...AB_ARMS, ...ATTRIBUTION_ARMS];
/** The arm whose starts are on an empty profile (its records say bench.profile "fresh"). */
export const EMPTY_PROFILE_ARM = "hot-empty-profile";
/** How close the measured saving must come to the page's figure to call that figure a saving. */
export const AGREEMENT = 0.25;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? null : sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** The page's figure for what an arm removes, in one `hot` record: the busy ms it shows. */
function predicted(record, arm, addonId) {
  const removes = AB_ARM_REMOVES[arm];
  const id = removes.kind === "addon" ? addonId : removes.id;
  return causesOf(record.costs).find((c) => c.kind === removes.kind && c.id === id)?.ms ?? null;
}

/**
 * What an A/B saving is measured on, each a moment in ms since the process began, from a record:
 *   sessionRestored        Firefox's milestone: the restored windows are open (the start's end
 *                          as Firefox and this page count it)
 *   selectedTabsRestored   when every restored window's selected tab had finished restoring, its
 *                          page loaded (the experiment's watch of SessionStore's SSTabRestored:
 *                          costs.sessionRestore.selectedTabsRestoredAtMs): what the user of a
 *                          restored session waits for. An add-on that holds page loads (a blocking
 *                          webRequest listener) delays this and not sessionRestored.
 */
export const ENDPOINTS = {
  sessionRestored: (record) => record.milestones?.sessionRestored,
  selectedTabsRestored: (record) => record.costs?.sessionRestore?.selectedTabsRestoredAtMs?.value,
};
/** The endpoints each kind of cause is measured on, the one it lands on first. */
const ENDPOINTS_OF = { addon: ["selectedTabsRestored", "sessionRestored"], "session-restore": ["sessionRestored"] };

/**
 * Per arm and endpoint (ENDPOINTS, in ENDPOINTS_OF's order; an endpoint none of the `hot` records
 * has, from an older run, has no row, but sessionRestored always has one): the measured saving (hot mean − arm mean,
 * 95% CI by Welch), the page's prediction (median of the hot records' figure, and how many had
 * one) and whether they agree within 25 % of the prediction.
 */
export function abRows(records, { addonId = COSTLY_ADDON_ID } = {}) {
  const by = (scenario) => records.filter((r) => r.bench?.scenario === scenario);
  const hot = by("hot");
  const rows = [];
  for (const arm of AB_ARMS.filter((a) => by(a).length > 0)) {
    const figures = hot.map((r) => predicted(r, arm, addonId)).filter((v) => v !== null);
    const prediction = median(figures);
    const endpoints = ENDPOINTS_OF[AB_ARM_REMOVES[arm].kind];
    const values = (rs, endpoint) => rs.map(ENDPOINTS[endpoint]).filter((v) => typeof v === "number");
    for (const endpoint of endpoints) {
      const hotValues = values(hot, endpoint);
      if (hotValues.length === 0 && endpoint !== endpoints.at(-1)) {
        continue; // records from before the endpoint (an older run): sessionRestored only
      }
      const test = welchTest(values(by(arm), endpoint), hotValues); // diff = hot − arm: the saving
      const saving = test ? { ms: test.diff, low: test.ci.low, high: test.ci.high, p: test.p, nArm: test.a.n, nHot: test.b.n } : null;
      const agrees = saving && prediction !== null && prediction > 0 ? Math.abs(saving.ms - prediction) <= AGREEMENT * prediction : null;
      rows.push({ arm, endpoint, saving, prediction, predictionN: figures.length, agrees });
    }
  }
  return rows;
}

/**
 * The measured saving of `cause` (a causesOf entry) from imported benchmark exports
 * (`imports`: [{name, records}], newest last), where an A/B arm removed that very cause and its
 * saving agreed with the page's figure: {ms, low, high, nHot, nArm, from (the import's name)};
 * else null (the page then calls the figure busy time, not a saving).
 */
export function measuredSaving(cause, imports) {
  if (!cause) {
    return null;
  }
  for (const item of [...(imports ?? [])].reverse()) {
    for (const row of abRows(item.records ?? [])) {
      const removes = AB_ARM_REMOVES[row.arm];
      if (row.agrees === true && removes.kind === cause.kind && removes.id === cause.id) {
        const { ms, low, high, nHot, nArm } = row.saving;
        return { ms, low, high, nHot, nArm, endpoint: row.endpoint, from: item.name ?? null };
      }
    }
  }
  return null;
}

/**
 * What the answer line names (issue 40): the largest cause a user can act on (`costs`: a record's
 * costs; `imports` as for measuredSaving). Where an imported A/B run measured a saving for one or
 * more of them that agrees with its figure, it is the one whose measured saving is largest, with
 * that saving: a busy figure is not what acting on a cause saves (on the medium preset the costly
 * add-on was busy for ~300 ms and taking it away saved nothing measurable, docs/benchmarks.md), so
 * a larger busy figure without a measured saving does not outrank it; it comes beside it as
 * `busier` (the largest such cause), worded as busy time. Without any agreed saving, the largest
 * busy figure, worded as busy time. {cause, saving (null: busy time), busier (a cause or null)},
 * or null where no cause can be acted on.
 */
export function answerCause(costs, imports) {
  const actionable = causesOf(costs)
    .filter((cause) => cause.actionable)
    .map((cause) => ({ cause, saving: measuredSaving(cause, imports) }));
  if (actionable.length === 0) {
    return null;
  }
  const saved = actionable.filter((a) => a.saving !== null).sort((a, b) => b.saving.ms - a.saving.ms);
  if (saved.length === 0) {
    return { cause: actionable[0].cause, saving: null, busier: null };
  }
  const [named] = saved;
  // causesOf orders by busy ms, largest first: the first unmeasured one above the named one's.
  const busier = actionable.find((a) => a.saving === null && a.cause.ms > named.cause.ms)?.cause ?? null;
  return { cause: named.cause, saving: named.saving, busier };
}
