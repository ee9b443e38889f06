// The history's second verdict line: what preloading measured here gained or cost, from the
// newest imported benchmark export (page/compare.js announces imports) or else from the plan's
// last run (page/plan.js announces each plan_status) weighed with this build's cold-vs-hot
// verdict; with too little data, how many more runs or starts of which kind it needs.
// Thin DOM code over lib/models/verdict.js.
import { t } from "../lib/wording/i18n.js";
import { coldHotVerdict, preloadVerdict, preloadVerdictText } from "../lib/models/verdict.js";
import { historyState, onHistoryChange } from "./history.js";
import { $ } from "./dom.js";

/** Document events the page's other sections send: detail = [{name, records}] / planView(). */
export const IMPORTS_EVENT = "about-startup:imports";
export const PLAN_EVENT = "about-startup:plan";

const state = { imports: [], lastRun: null };

function render() {
  const element = $("history-preload-verdict");
  if (!element) {
    return;
  }
  const { records } = historyState();
  const verdict = preloadVerdict({ imports: state.imports, lastRun: state.lastRun, coldHot: coldHotVerdict(records) });
  element.dataset.from = verdict.from;
  element.dataset.state = verdict.from === "bench" ? verdict.verdicts[0].state : (verdict.state ?? "none");
  element.textContent = preloadVerdictText(verdict, t);
  element.hidden = false;
}

export function initPreloadVerdict() {
  document.addEventListener(IMPORTS_EVENT, (event) => {
    state.imports = Array.isArray(event.detail) ? event.detail : [];
    render();
  });
  document.addEventListener(PLAN_EVENT, (event) => {
    state.lastRun = event.detail?.autostart?.lastRun ?? null;
    render();
  });
  onHistoryChange(render);
  render();
}
