// "Preloading before launch": the host's learned plan (plan_status), autostart and its last run,
// the install files not cached at all, and the planned preload. Thin DOM code over lib/models/plan.js;
// the host is reached through the background (page/relay.js), so a planned preload shows its
// progress in the residency panel's progress box like any other preload.
import browser from "../lib/transport/browser.js";
import { t } from "../lib/wording/i18n.js";
import { HOST_MISSING } from "../lib/transport/host-client.js";
import { LEARN_KEY, learnText, PLAN_PRELOAD, planErrorView, planLines, planView, uncachedPreloadParams, uncachedText, UNKNOWN_COMMAND } from "../lib/models/plan.js";
import { PLAN_EVENT } from "./preload-verdict.js";
import { hostHello, relay } from "./relay.js";
import { hostCommands } from "../lib/wording/commands.js";
import { $, el } from "./dom.js";


// `setAside`: the damaged state files the host said it set aside, kept for the page's life (the
// host says it once; the next refresh finds no file).
const state = { loading: false, again: false, view: null, running: new Set(), commands: hostCommands(null), setAside: new Map() };

function updateButtons() {
  const changing = state.running.size > 0;
  $("plan-preload").disabled = changing || !state.view?.learned;
  $("plan-uncached-preload").disabled = changing || !(state.view?.uncached?.count > 0);
  $("plan-refresh").disabled = state.loading;
}

function showView(view) {
  state.view = view;
  document.dispatchEvent(new CustomEvent(PLAN_EVENT, { detail: view }));
  const section = $("plan");
  section.dataset.state = view.state;
  section.dataset.plannedBytes = String(view.plannedBytes ?? "");
  section.dataset.installBytes = String(view.installBytes ?? "");
  section.dataset.autostart = view.autostart.enabled ? (view.autostart.kind ?? "on") : "off";
  section.dataset.uncached = String(view.uncached?.count ?? "");
  section.dataset.uncachedUnused = String(view.uncached?.unused ?? "");
  for (const note of view.setAside) {
    state.setAside.set(note.params?.moved_to ?? note.params?.file, note);
  }
  section.dataset.setAside = String(state.setAside.size);
  $("plan-lines").replaceChildren(
    ...planLines({ ...view, setAside: [...state.setAside.values()] }, t, { commands: state.commands }).map((line) => {
      const warning = ["note", "damon", "stale", "set-aside"].includes(line.id);
      const p = el("p", { text: line.text, className: warning ? "detail res-warning" : line.id === "why" ? "detail" : null });
      p.dataset.line = line.id;
      return p;
    }),
  );
  const uncached = uncachedText(view, t);
  $("plan-uncached").hidden = uncached === null;
  $("plan-uncached-text").textContent = uncached ?? "";
  updateButtons();
}

async function hostVersion() {
  try {
    return (await hostHello())?.host_version ?? null;
  } catch {
    return null;
  }
}

async function showError(error) {
  const view = planErrorView(error, { hostVersion: error?.code === UNKNOWN_COMMAND ? await hostVersion() : null });
  state.view = null;
  $("plan").dataset.state = view.state;
  $("plan").dataset.errorCode = error?.code ?? "";
  const p = el("p", { text: t(view.key, view.subs), className: view.state === "error" || view.state === "stopped" ? "res-error" : null });
  p.dataset.line = view.state;
  $("plan-lines").replaceChildren(p);
  $("plan-uncached").hidden = true;
  updateButtons();
}

export async function refreshPlan() {
  if (state.loading) {
    state.again = true; // asked while a request runs: ask once more after it
    return;
  }
  state.loading = true;
  $("plan").dataset.state = "loading";
  updateButtons();
  try {
    const status = await relay.request("plan_status");
    state.commands = hostCommands(await hostHello().catch(() => null));
    showView(planView(status));
  } catch (error) {
    await showError(error);
  } finally {
    state.loading = false;
    updateButtons();
  }
  if (state.again) {
    state.again = false;
    await refreshPlan();
  }
}

function showLearn(entry) {
  const text = learnText(entry, t);
  $("plan-learn").textContent = text ?? "";
  $("plan-learn").hidden = text === null;
  $("plan-learn").dataset.status = entry?.status ?? "";
}

/** Starts a preload; its progress and result come through the operation broadcast (page/residency.js). */
async function preload(params) {
  updateButtons();
  try {
    await relay.request("preload", params);
  } catch (error) {
    if (error?.code === HOST_MISSING || error?.code === UNKNOWN_COMMAND) {
      await showError(error);
    }
  }
}

export async function initPlan() {
  if (!$("plan")) {
    return;
  }
  $("plan-preload").addEventListener("click", () => preload(PLAN_PRELOAD));
  $("plan-uncached-preload").addEventListener("click", () => {
    const params = uncachedPreloadParams(state.view);
    if (params) {
      preload(params);
    }
  });
  $("plan-refresh").addEventListener("click", () => refreshPlan());
  // A preload or evict of any UI changes what is cached: the plan's uncached files are asked again.
  relay.onOperation((op) => {
    if (op.command !== "preload" && op.command !== "evict") {
      return;
    }
    const wasRunning = state.running.has(op.id);
    if (op.state === "running") {
      state.running.add(op.id);
    } else {
      state.running.delete(op.id);
      if (wasRunning) {
        refreshPlan();
      }
    }
    updateButtons();
  });
  // The background learns after the start is recorded, often after this page opened.
  browser.storage.onChanged.addListener((changes, area) => {
    if (area === "local" && LEARN_KEY in changes) {
      showLearn(changes[LEARN_KEY].newValue);
      if (changes[LEARN_KEY].newValue?.status !== "learning") {
        refreshPlan();
      }
    }
  });
  const stored = await browser.storage.local.get(LEARN_KEY).catch(() => ({}));
  showLearn(stored?.[LEARN_KEY] ?? null);
  await refreshPlan();
}
