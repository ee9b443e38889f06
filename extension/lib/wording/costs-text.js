// What the page says in "Where the time went" (issue 40) about the cause to act on and about the
// empty-profile baseline: the answer line and the baseline line. Words the models' results
// (lib/models/ab-saving.js `answerCause`, lib/models/above-baseline.js `aboveBaseline`);
// computes none. Pure: words through `t(key, subs)`.
import { SOURCES } from "../models/start-costs.js";
import { formatMs, formatPercent } from "./format.js";

/** The message of each figure's source (start-costs.js SOURCES, and session restore's two). */
export const SOURCE_KEYS = {
  [SOURCES.glean]: "costsSourceGlean",
  [SOURCES.gleanDelta]: "costsSourceGleanDelta",
  [SOURCES.timeline]: "costsSourceTimeline",
  [SOURCES.tabEvents]: "costsSourceTabEvents",
  "glean-session-restore": "costsSourceSessionRestore",
  "session-restore-path": "costsSourceSessionRestorePath",
};

/** The message of each cause's advice (causesOf's `advice`). */
export const ADVICE_KEYS = {
  "disable-addon": "costsAdviceDisableAddon",
  "restore-on-demand": "costsAdviceRestoreOnDemand",
  "restore-session-off": "costsAdviceRestoreSessionOff",
};

/** A figure in ms as the section shows it (one decimal). */
export const ms = (value) => formatMs(value, undefined, { fractionDigits: 1 });

/** A cause as a person reads it: "the add-on Dark Reader 4.9", "session restore (…)". */
function causeName(cause, t) {
  if (cause.kind !== "addon") {
    return t("costsCauseSessionRestore");
  }
  return t(cause.measure === "background-page-load" ? "costsCauseAddonHolding" : "costsCauseAddon", [cause.name, cause.version ?? "?"]);
}

/**
 * The answer line of `answer` (answerCause's result, or null): the cause named, worded as a
 * saving (the measured one, with its CI, n and run, and what it was measured on where that is the
 * restored tabs' load, not sessionRestored) only where `answer.saving` is there, else as
 * busy time, not all of it on the start's path; a busier cause without a measured saving beside
 * it as busy time; then the advice.
 */
export function answerText(answer, t) {
  if (!answer) {
    return t("costsAnswerNone");
  }
  const { cause, saving, busier } = answer;
  const what = causeName(cause, t);
  const source = t(SOURCE_KEYS[cause.source] ?? "costsSourceGlean");
  const parts = [
    saving
      ? t(saving.endpoint === "selectedTabsRestored" ? "costsAnswerSavingTabs" : "costsAnswerSaving", [what, ms(saving.ms), ms(saving.low), ms(saving.high), `${saving.nHot} + ${saving.nArm}`, saving.from ?? "?", ms(cause.ms), source])
      : t("costsAnswer", [what, ms(cause.ms), source]),
  ];
  if (busier) {
    parts.push(t("costsAnswerBusier", [causeName(busier, t), ms(busier.ms), t(SOURCE_KEYS[busier.source] ?? "costsSourceGlean")]));
  }
  parts.push(t(ADVICE_KEYS[cause.advice], [cause.name ?? ""]));
  return parts.join(" ");
}

/**
 * The baseline's lines for `result` (aboveBaseline's): this start against the empty profile of
 * its build, "above it" or "below it" by the sign of the difference (never a negative distance
 * worded as above), and what of the time above it the A/B benchmark's savings name. [] where the
 * section's attribution says it instead; the missing baseline's line where there is none.
 */
export function baselineText(result, t) {
  if (!result.baseline || result.sessionRestored === null) {
    return [t("costsBaselineMissing")];
  }
  const head = [ms(result.baseline.ms), String(result.baseline.n), result.baseline.from ?? "?", ms(result.sessionRestored)];
  if (result.aboveMs < 0) {
    return [t("costsBaselineBelow", [...head, ms(-result.aboveMs)])];
  }
  const lines = [t("costsBaseline", [...head, ms(result.aboveMs)])];
  if (!result.attribution) {
    if (result.aboveMs === 0) {
      lines.push(t("costsAttributedNotAbove"));
    } else {
      lines.push(result.measuredShare !== null ? t("costsAttributed", [formatPercent(result.measuredShare), ms(result.measuredMs), ms(result.aboveMs)]) : t("costsAttributedNone"));
    }
  }
  return lines;
}
