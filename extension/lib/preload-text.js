// The one text of a finished preload, shared by the page's cache section and the toolbar popup,
// so the two never word the same result differently. Pure: words through `t(key, subs)`.
import { formatCount, formatMB, formatMs, formatRate } from "./format.js";

/**
 * "Preloaded 308.4 MB (40 files) in 9,800 ms: 31.5 MB/s[, method read]." plus, for a planned
 * preload, what the plan named against the install folder, and how many files failed.
 * `short`: the popup's wording, without the method.
 */
export function preloadDoneText(result, t, { short = false } = {}) {
  const r = result ?? {};
  const figures = [formatMB(r.bytes), formatCount(r.files), formatMs(r.elapsed_ms), formatRate(r.mb_per_s)];
  let text = short ? t("popupPreloadDone", figures) : t("residencyPreloadDone", [...figures, r.method ?? "—"]);
  if (r.planned) {
    text += ` ${t("planPreloadDonePlanned", [formatMB(r.bytes_planned), formatMB(r.bytes_install), r.order ?? "—"])}`;
  }
  const errors = Array.isArray(r.errors) ? r.errors.length : 0;
  return errors ? `${text} ${t("residencyPreloadErrors", [String(errors)])}` : text;
}
