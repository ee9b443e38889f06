// "Launching from the desktop": whether the desktop launches Firefox through the host's prefetch
// (the host's `desktop` command), which plan a launch reads (and that a Firefox update made it
// stale), what the last launch read, and the button that turns it on or off. Thin DOM code over
// lib/models/desktop.js; the host is reached through the background (page/relay.js). Asked again
// whenever the plan section's plan changes (a `learn` after the page opened), so the two never
// disagree on whether a plan is learned (issue 30, item 11).
import { t } from "../lib/wording/i18n.js";
import { PLAN_EVENT } from "./preload-verdict.js";
import { desktopErrorView, desktopLines, desktopView, planIsStale } from "../lib/models/desktop.js";
import { relay, traceRecordCommand } from "./relay.js";
import { $, el } from "./dom.js";

const state = { busy: false, view: null, plan: null, recordCommand: undefined };

function updateButton() {
  const button = $("desktop-toggle");
  const view = state.view;
  button.hidden = !view || (!view.enabled && view.problem !== null);
  button.disabled = state.busy;
  button.textContent = t(view?.state === "outdated" ? "desktopRewrite" : view?.enabled ? "desktopDisable" : "desktopEnable");
}

function showLines(lines) {
  $("desktop-lines").replaceChildren(
    ...lines.map((line) => {
      const warning = ["problem", "stale", "outdated", "set-aside"].includes(line.id);
      const p = el("p", { text: line.text, className: warning ? "detail res-warning" : null });
      p.dataset.line = line.id;
      return p;
    }),
  );
}

function show(status) {
  const view = desktopView(status);
  state.view = view;
  const section = $("desktop");
  section.dataset.state = view.state;
  section.dataset.stale = String(planIsStale(view));
  section.dataset.source = view.plan.source ?? "none";
  showLines(desktopLines(view, t, state.recordCommand ? { recordCommand: state.recordCommand } : {}));
  updateButton();
}

function showError(error) {
  const { state: kind, text } = desktopErrorView(error, t);
  $("desktop").dataset.state = kind;
  $("desktop").dataset.errorCode = error?.code ?? "";
  // A refused enable keeps the lines it had (they say why); other errors replace them.
  if (kind === "refused" && state.view) {
    const p = el("p", { text, className: "res-error" });
    p.dataset.line = "error";
    $("desktop-lines").append(p);
  } else {
    state.view = null;
    showLines([{ id: "error", text }]);
  }
  updateButton();
}

async function ask(action) {
  state.busy = true;
  updateButton();
  try {
    // The command the lines name to record a trace, as the host runs here (asked once).
    state.recordCommand ??= await traceRecordCommand().catch(() => null);
    show(await relay.request("desktop", { action }));
  } catch (error) {
    showError(error);
  } finally {
    state.busy = false;
    updateButton();
  }
}

export async function initDesktop() {
  if (!$("desktop")) {
    return;
  }
  $("desktop-toggle").addEventListener("click", () => {
    const view = state.view;
    ask(view?.enabled && view.state !== "outdated" ? "disable" : "enable");
  });
  // What a launch reads is the plan the section above shows: when that changes, ask again.
  document.addEventListener(PLAN_EVENT, (event) => {
    const plan = event.detail ?? {};
    const key = JSON.stringify([plan.learned, plan.starts, plan.stale, plan.buildId]);
    // Also when the first plan already disagrees (a learn landed between the two first requests).
    const disagrees = plan.learned === true && state.view !== null && state.view.plan.source === null;
    if (((state.plan !== null && state.plan !== key) || disagrees) && !state.busy) {
      ask("status");
    }
    state.plan = key;
  });
  await ask("status");
}
