// "Where the time went beyond the disk": this start's add-ons and session restore, from the
// record's `costs` (lib/models/start-costs.js), and each add-on's startup by version across the
// history. Advice only: nothing here changes a setting.
import { t } from "../lib/wording/i18n.js";
import { formatBytes, formatCount, formatMs, formatPercent } from "../lib/wording/format.js";
import { addonTrends, causesOf, MISSING, UNAVAILABLE } from "../lib/models/start-costs.js";
import { answerCause } from "../lib/models/ab-saving.js";
import { aboveBaseline } from "../lib/models/above-baseline.js";
import { answerText, baselineText, ms, SOURCE_KEYS } from "../lib/wording/costs-text.js";
import { sessionFileAdvice } from "../lib/models/session-advice.js";
import { historyState, onHistoryChange } from "./history.js";
import { IMPORTS_EVENT } from "./preload-verdict.js";
import { HOST_TRACE_EVENT, hostSummary } from "./trace.js";
import { $, el } from "./dom.js";

const UNAVAILABLE_KEYS = {
  [UNAVAILABLE.noExperimentApi]: "costsUnavailableNoApi",
  [UNAVAILABLE.readFailed]: "costsUnavailableReadFailed",
  [UNAVAILABLE.addonStartedLater]: "costsUnavailableAddonLater",
  [UNAVAILABLE.gleanOff]: "costsUnavailableGleanOff",
};
const MISSING_KEYS = {
  [MISSING.noSample]: "costsMissingNoSample",
  [MISSING.noNewSample]: "costsMissingNoNewSample",
  [MISSING.severalSamples]: "costsMissingSeveralSamples",
  [MISSING.stillStarting]: "costsMissingStillStarting",
  [MISSING.readError]: "costsMissingReadError",
  [MISSING.noMilestone]: "costsMissingNoMilestone",
  [MISSING.noRestoredTab]: "costsMissingNoRestoredTab",
};
/** Imported exports ([{name, records}], page/compare.js): their A/B runs make a figure a saving. */
const state = { imports: [] };
const SESSION_ROWS = [
  ["fileSizeBytes", "costsSessionFileSize", (v) => formatBytes(v)],
  ["readFileMs", "costsSessionReadFile", (v) => formatMs(v, undefined, { fractionDigits: 1 })],
  ["initMs", "costsSessionInit", (v) => formatMs(v, undefined, { fractionDigits: 1 })],
  ["onloadInitialWindowMs", "costsSessionOnloadWindow", (v) => formatMs(v, undefined, { fractionDigits: 1 })],
  ["restoreWindowMs", "costsSessionRestoreWindow", (v) => formatMs(v, undefined, { fractionDigits: 1 })],
  ["tabsRestored", "costsSessionTabs", (v) => formatCount(v)],
  ["eagerTabsRestored", "costsSessionEagerTabs", (v) => formatCount(v)],
  ["untilEagerTabsRestoredMs", "costsSessionUntilEager", (v) => formatMs(v, undefined, { fractionDigits: 1 })],
  ["restoringAtMs", "costsSessionRestoringAt", (v) => formatMs(v, undefined, { fractionDigits: 1 })],
  ["restoringMs", "costsSessionRestoring", (v) => formatMs(v, undefined, { fractionDigits: 1 })],
  ["selectedTabsRestoredAtMs", "costsSessionSelectedTabs", (v) => formatMs(v, undefined, { fractionDigits: 1 })],
];

/** A figure's cells: its value (or why it is missing) and its source. */
function figureCells(figure, format = ms) {
  if (figure && "value" in figure) {
    return [el("td", { text: format(figure.value), className: "num" }), el("td", { text: t(SOURCE_KEYS[figure.source]), className: "detail" })];
  }
  const why = t(MISSING_KEYS[figure?.missing] ?? "costsMissingNoSample");
  return [el("td", { text: t("costsMissing"), className: "num missing", attrs: { title: why } }), el("td", { text: why, className: "detail" })];
}

/**
 * Firefox's own baseline (an empty profile of this build, from an imported benchmark run), how
 * far this start is above it, the disk, and the share of that the A/B benchmark's measured
 * savings attribute to named causes (lib/models/above-baseline.js). `blockMs`: the trace's block
 * time where the host traced this very start.
 */
function baselineLines(record, blockMs) {
  const result = aboveBaseline(record, state.imports, { blockMs });
  const lines = baselineText(result, t);
  const attribution = result.attribution ? attributionLines(result.attribution) : [];
  if (result.disk) {
    const bytes = result.disk.readBytes === null ? t("costsMissing") : formatBytes(result.disk.readBytes);
    lines.push(result.disk.ms !== null ? t("costsDiskTraced", [ms(result.disk.ms), bytes]) : t("costsDiskRead", [bytes]));
  }
  return el(
    "div",
    { attrs: { "data-testid": "costs-baseline", "data-share": result.measuredShare === null ? "none" : String(result.measuredShare) } },
    ...lines.map((text) => el("p", { text, className: "detail" })),
    ...attribution,
  );
}

const STEP_KEYS = { addons: "costsCauseStepAddons", "session-restore": "costsCauseStepSessionRestore", "profile-data": "costsCauseStepProfileData" };
const ALONE_KEYS = { "costly-addon": "costsCauseAloneCostlyAddon", "session-restore-alone": "costsCauseAloneSessionRestore" };
const savingArgs = (saving) => [ms(saving.ms), ms(saving.low), ms(saving.high), `${saving.nFrom} + ${saving.nTo}`];

/**
 * The imported A/B run's attribution (lib/models/attribution.js): its hot starts above its empty
 * profile, the share its measured steps name, each step with its saving and CI (a step not told
 * from noise is listed and not counted), and the single-cause arms beside them.
 */
function attributionLines(a) {
  const head = t("costsAttribution", [a.from ?? "?", a.preset ?? "?", String(a.n), ms(a.excess.ms), ms(a.excess.low), ms(a.excess.high), a.share === null ? t("costsMissing") : formatPercent(a.share)]);
  const steps = a.steps.map((step) => {
    const cause = step.causes.map((c) => t(STEP_KEYS[c])).join(" + ");
    return el("li", { text: t(step.saving.significant ? "costsAttributionStep" : "costsAttributionStepNoise", [cause, ...savingArgs(step.saving)]), attrs: { "data-causes": step.causes.join(" "), "data-counted": String(step.saving.significant) } });
  });
  const alone = a.alone.map((x) => el("p", { text: t("costsAttributionAlone", [t(ALONE_KEYS[x.cause]), ...savingArgs(x.saving)]), className: "detail", attrs: { "data-alone": x.cause } }));
  return [
    el("p", { text: head, className: "detail", attrs: { "data-testid": "costs-attribution" } }),
    el("ul", { attrs: { "data-testid": "costs-attribution-steps" } }, ...steps),
    ...(a.capped ? [el("p", { text: t("costsAttributionCapped"), className: "detail" })] : []),
    ...alone,
    el("p", { text: t("costsAttributionThisStart"), className: "detail" }),
  ];
}

function addonTable(costs) {
  const rows = costs.addons.map((addon) =>
    el(
      "tr",
      { attrs: { "data-addon-id": addon.id } },
      el("td", { text: addon.name ?? addon.id }),
      el("td", { text: addon.version ?? "—" }),
      el("td", { text: t(addon.self ? "costsSelf" : addon.builtIn ? "costsBuiltIn" : "costsUserAddon"), className: "detail" }),
      ...figureCells(addon.startupMs).map((cell, i) => (i === 0 ? withTestId(cell, "addon-startup") : cell)),
      ...figureCells(addon.backgroundPageLoadMs),
    ),
  );
  return el(
    "table",
    { attrs: { "data-testid": "costs-addons" } },
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        ...["costsColAddon", "costsColVersion", "costsColKind", "costsColStartup", "costsColSource", "costsColBackground", "costsColSource"].map((key) =>
          el("th", { text: t(key) }),
        ),
      ),
    ),
    el("tbody", {}, ...rows),
  );
}

function withTestId(node, id) {
  node.dataset.testid = id;
  return node;
}

function sessionTable(costs) {
  const rows = SESSION_ROWS.map(([field, key, format]) =>
    el("tr", { attrs: { "data-field": field } }, el("th", { text: t(key) }), ...figureCells(costs.sessionRestore?.[field], format)),
  );
  return el("table", { attrs: { "data-testid": "costs-session" } }, el("tbody", {}, ...rows));
}

/** The advice for a large session file (lib/models/session-advice.js), or nothing. */
function sessionAdvice(costs) {
  const advice = sessionFileAdvice(costs, state.imports);
  if (!advice) {
    return [];
  }
  const read = advice.readFileMs === null ? t("costsMissing") : ms(advice.readFileMs);
  const lines = [t("costsSessionLarge", [formatBytes(advice.fileSizeBytes), read, t("costsSourceSessionRestore")])];
  const s = advice.saving;
  lines.push(
    s
      ? t("costsSessionLargeSaving", [s.from ?? "?", ms(s.ms), ms(s.low), ms(s.high), `${s.nHot} + ${s.nArm}`, s.benchFileBytes === null ? t("costsMissing") : formatBytes(s.benchFileBytes)])
      : t("costsSessionLargeNoSaving"),
  );
  return [el("p", { text: lines.join(" "), className: "detail", attrs: { "data-testid": "costs-session-advice", "data-saving": String(s !== null) } })];
}

function trendsList(records) {
  const { trends, changes } = addonTrends(records);
  if (trends.length === 0) {
    return el("p", { text: t("costsTrendsEmpty"), className: "detail", attrs: { "data-testid": "costs-trends" } });
  }
  const items = trends.map((trend) =>
    el(
      "li",
      { attrs: { "data-addon-id": trend.id } },
      t("costsTrendLine", [trend.name, trend.versions.map((v) => t("costsTrendVersion", [v.version, ms(v.median), String(v.n)])).join("; ")]),
    ),
  );
  const moved = changes.map((c) =>
    el("li", { text: t(c.afterMs > c.beforeMs ? "costsTrendSlower" : "costsTrendFaster", [c.name, c.to, ms(c.beforeMs), ms(c.afterMs), c.from]) }),
  );
  return el("div", { attrs: { "data-testid": "costs-trends" } }, el("ul", {}, ...items), ...(moved.length ? [el("ul", {}, ...moved)] : []));
}

function render() {
  const section = $("costs");
  const { records, currentId } = historyState();
  const record = records.find((r) => r.id === currentId) ?? records.at(-1) ?? null;
  const parts = [el("h2", { text: t("costsHeading"), attrs: { id: "costs-heading" } })];
  if (!record) {
    section.dataset.state = "empty";
    section.replaceChildren(...parts, el("p", { text: t("costsNoStart"), className: "detail" }));
    return;
  }
  section.dataset.startId = record.id;
  const costs = record.costs;
  if (!costs || costs.unavailable) {
    section.dataset.state = "unavailable";
    const key = costs ? (UNAVAILABLE_KEYS[costs.unavailable] ?? "costsUnavailableOlder") : "costsUnavailableOlder";
    parts.push(el("p", { text: t(key), attrs: { "data-testid": "costs-unavailable" } }));
  } else {
    section.dataset.state = "ready";
    const answer = answerCause(costs, state.imports);
    parts.push(
      el("p", { text: answerText(answer, t), className: "answer", attrs: { "data-testid": "costs-answer", "data-saving": String(Boolean(answer?.saving)) } }),
      el("p", { text: t("costsBusyNotSaving"), className: "detail" }),
      baselineLines(record, record.id === currentId ? (hostSummary()?.profile?.block_ms?.total ?? null) : null),
      addonTable(costs),
      el("h3", { text: t("costsSessionHeading") }),
      sessionTable(costs),
      ...sessionAdvice(costs),
    );
    if (causesOf(costs).length === 0) {
      parts.push(el("p", { text: t("costsNoFigures"), className: "detail" }));
    }
  }
  parts.push(el("h3", { text: t("costsTrendsHeading") }), trendsList(records));
  section.replaceChildren(...parts);
}

export function initCosts() {
  document.addEventListener(IMPORTS_EVENT, (event) => {
    state.imports = Array.isArray(event.detail) ? event.detail : [];
    render();
  });
  document.addEventListener(HOST_TRACE_EVENT, render);
  onHistoryChange(render);
  render();
}
