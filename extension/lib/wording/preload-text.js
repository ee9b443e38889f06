// The one text of a finished preload, shared by the page's cache section and the toolbar popup,
// so the two never word the same result differently. Pure: words through `t(key, subs)`.
import { formatCount, formatDateTime, formatMB, formatMs, formatPercent, formatRate, formatTime } from "./format.js";
import { plural } from "./i18n.js";
import { compressedText } from "./compressed-text.js";

const isCount = (n) => typeof n === "number" && Number.isFinite(n) && n >= 0;

/**
 * What a planned preload's plan named: its install part against the install folder, plus what
 * lies outside it (system libraries; the user's profile, for a traced plan); from a host older
 * than `bytes_planned_system`, the total alone. The folder's part is the host's
 * `bytes_planned_install` (learn/plan/make.rs, the one the CLI prints), or from a host older than
 * it the same sum: the total less the system libraries and the profile.
 */
function plannedText(r, t) {
  if (!isCount(r.bytes_planned_system) || !isCount(r.bytes_planned)) {
    return t("planPreloadDonePlannedTotal", [formatMB(r.bytes_planned), r.order ?? "—"]);
  }
  const profile = isCount(r.bytes_planned_profile) ? r.bytes_planned_profile : 0;
  const install = isCount(r.bytes_planned_install)
    ? r.bytes_planned_install
    : Math.max(0, r.bytes_planned - r.bytes_planned_system - profile);
  const share = isCount(r.bytes_install) && r.bytes_install > 0 ? install / r.bytes_install : null;
  const figures = [formatMB(install), formatPercent(share), formatMB(r.bytes_install), formatMB(r.bytes_planned_system), r.order ?? "—"];
  return profile > 0
    ? t("planPreloadDonePlannedProfile", [...figures, formatMB(profile)])
    : t("planPreloadDonePlanned", figures);
}

/**
 * "Preloaded 308.4 MB (40 files) in 9,800 ms: 31.5 MB/s[, method read]." plus, for a planned
 * preload, what the plan named against the install folder, and how many files failed.
 * `short`: the popup's wording, without the method. A planned preload of an install on a
 * compressed mount (the reply's `compressed`, docs/PROTOCOL.md) says what the host did there
 * instead: the image's ranges read raw (its bytes are the image's), or nothing and why.
 */
export function preloadDoneText(result, t, { short = false } = {}) {
  const tn = plural(t);
  const r = result ?? {};
  const compressed = r.planned ? compressedText(r.compressed, t) : null;
  if (compressed && r.compressed.verdict !== "image_ranges") {
    return t("planPreloadCompressedLeftOff", [compressed]);
  }
  const figures = [formatMB(r.bytes), formatCount(r.files), formatMs(r.elapsed_ms), formatRate(r.mb_per_s)];
  let text = short ? tn("popupPreloadDone", r.files, figures) : tn("residencyPreloadDone", r.files, [...figures, r.method ?? "—"]);
  if (compressed) {
    text += ` ${t("planPreloadCompressedImage", [compressed, formatMB(r.bytes_planned)])}`;
  } else if (r.planned) {
    text += ` ${plannedText(r, t)}`;
  }
  const errors = Array.isArray(r.errors) ? r.errors.length : 0;
  return errors ? `${text} ${tn("residencyPreloadErrors", errors)}` : text;
}

/**
 * A finished preload's result line with the time it ended: "Ended at 08:04:05: Preloaded …"
 * (the date too when it ended on another day than `now`), so a result replayed when the popup
 * opens is not read as news beside today's cache figure. Without an end time, the text alone.
 */
export function endedAtText(text, endedAt, t, { now = Date.now(), locale = undefined } = {}) {
  if (typeof endedAt !== "number" || !Number.isFinite(endedAt)) {
    return text;
  }
  const today = new Date(endedAt).toDateString() === new Date(now).toDateString();
  return t("popupPreloadEndedAt", [today ? formatTime(endedAt, locale) : formatDateTime(endedAt, locale), text]);
}
