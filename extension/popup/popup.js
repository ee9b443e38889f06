// The toolbar popup: cached MB of Firefox's files, the last start, the learned plan and its
// preload first (the same request as the page's "Preload planned pages"), the full preload second
// (it reads more than a start needs: before a launch it costs more than it saves), and the way to
// the page. The host is reached through the background (page/relay.js): a preload started here
// keeps running when the popup closes, and the popup shows a running one when it opens again.
import browser from "../lib/transport/browser.js";
import { localize, t } from "../lib/wording/i18n.js";
import { endedAtText, preloadDoneText } from "../lib/wording/preload-text.js";
import { $ } from "../page/dom.js";
import { HISTORY_KEY, readHistory } from "../lib/models/history.js";
import { HOST_DISCONNECTED, HOST_MISSING } from "../lib/transport/host-client.js";
import { hostErrorText } from "../lib/wording/host-notes.js";
import { formatDateTime, formatMs } from "../lib/wording/format.js";
import { isAboutRegistered, openStartupPage, pageUrl } from "../lib/models/page-url.js";
import { cachedFigures, formatMB, progressView, summaryTotals, WHOLE_PRELOAD } from "../lib/models/residency.js";
import { CLASS_KEYS, coldnessOf } from "../lib/models/coldness.js";
import { PLAN_PRELOAD, popupPlanText } from "../lib/models/plan.js";
import { relay } from "../page/relay.js";



function hostMissing(show) {
  $("popup-host-missing").hidden = !show;
}

/** Counts the cache reads, so an older reply never overwrites a newer one (e.g. after a preload). */
let cacheRead = 0;

async function showCached({ afterPreload = false } = {}) {
  const section = $("popup-cache");
  const read = ++cacheRead;
  section.dataset.state = "loading";
  // For the e2e test: how many reads, and when this one began (the figure is from after it).
  section.dataset.reads = String(read);
  section.dataset.readStartedAt = String(Date.now());
  // While reading, no old bar beside the words: the line and the bar say the same thing or nothing.
  $("popup-cached-bar").hidden = true;
  $("popup-cached-detail").textContent = "";
  $("popup-cached").textContent = t(afterPreload ? "popupCachedAfterPreload" : "popupCachedLoading");
  try {
    // The totals come from the reply's per-group summary: the popup needs no file's page map, so
    // it asks the host for none (summary_only) and, with no onEvent, the relay forwards none (an
    // older host that still streams them).
    const summary = await relay.request("residency", { files: null, mapped: true, summary_only: true });
    if (read !== cacheRead) {
      return;
    }
    const totals = summaryTotals(summary, "install") ?? { size: 0, cachedBytes: null, fraction: null, mappedBytes: null };
    hostMissing(false);
    const bar = $("popup-cached-bar");
    // The same figures as the page's group line and the CLI's total (lib/models/residency.js).
    const figures = cachedFigures(totals);
    if (figures) {
      section.dataset.state = "exact";
      section.dataset.cachedBytes = String(totals.cachedBytes);
      section.dataset.exactSize = String(totals.exactSize);
      $("popup-cached").textContent = t("popupCachedOf", figures);
      bar.firstElementChild.style.width = `${totals.fraction * 100}%`;
      bar.hidden = false;
      $("popup-cached-detail").textContent = "";
    } else {
      section.dataset.state = "hidden";
      section.dataset.mappedBytes = String(totals.mappedBytes ?? "");
      $("popup-cached").textContent = t("popupHidden");
      const mapped = typeof totals.mappedBytes === "number" ? ` ${t("popupMapped", [formatMB(totals.mappedBytes)])}` : "";
      $("popup-cached-detail").textContent = `${t("popupHiddenReason")}${mapped}`;
      bar.hidden = true;
    }
  } catch (error) {
    if (read !== cacheRead) {
      return;
    }
    section.dataset.state = error?.code === HOST_MISSING ? "missing" : "error";
    $("popup-cached").textContent = error?.code === HOST_MISSING ? t("popupNoHost") : t("popupCachedError", [hostErrorText(error, t)]);
    $("popup-cached-detail").textContent = "";
    hostMissing(error?.code === HOST_MISSING);
  }
}

/** What the plan reads (or that none is learned, and what that leaves), and the login preload. */
async function showPlan() {
  let plan;
  try {
    plan = popupPlanText({ status: await relay.request("plan_status") }, t);
  } catch (error) {
    plan = popupPlanText({ error }, t);
  }
  $("popup-plan").textContent = plan.text;
  $("popup-plan").dataset.state = plan.state;
  $("popup-autostart").textContent = plan.autostart ?? "";
  $("popup-autostart").hidden = plan.autostart === null;
  preload.learned = plan.learned;
  updateButtons();
}

async function showLastStart() {
  const element = $("popup-last");
  let record;
  try {
    const stored = await browser.storage.local.get(HISTORY_KEY);
    record = readHistory(stored?.[HISTORY_KEY]).history.records.at(-1) ?? null;
  } catch (error) {
    element.textContent = t("popupLastStartError", [error?.message ?? String(error)]);
    element.dataset.state = "error";
    return;
  }
  if (!record) {
    element.textContent = t("popupNoStart");
    element.dataset.state = "none";
    return;
  }
  const ms = record.milestones?.sessionRestored;
  const coldness = coldnessOf(record);
  element.dataset.coldness = coldness;
  if (typeof ms === "number" && Number.isFinite(ms)) {
    // The class as the page's answer line and history say it (lib/models/coldness.js).
    element.textContent = t("popupLastStart", [formatMs(ms), t(CLASS_KEYS[coldness]), formatDateTime(record.processStart)]);
    element.dataset.state = "ready";
    element.dataset.ms = String(ms);
  } else {
    element.textContent = t(record.mode === "basic" ? "popupLastStartBasic" : "popupLastStartNoSessionRestored");
    element.dataset.state = "missing";
  }
}

const preload = { op: null, running: false, learned: false };

function updateButtons() {
  $("popup-preload-plan").disabled = preload.running || !preload.learned;
  $("popup-preload").disabled = preload.running;
}

function showPreload(op) {
  if (op.command !== "preload") {
    return;
  }
  const box = $("popup-progress");
  const result = $("popup-result");
  if (op.state === "running") {
    if (!preload.running) {
      box.dataset.maxFraction = "0";
    }
    preload.running = true;
    preload.op = op.id;
    const view = progressView(op.progress);
    box.hidden = false;
    result.hidden = true;
    if (typeof view.fraction === "number") {
      $("popup-progress-bar").value = view.fraction;
      box.dataset.maxFraction = String(Math.max(Number(box.dataset.maxFraction), view.fraction));
    }
    $("popup-progress-text").textContent =
      view.bytesTotal === null ? t("popupPreloadStarting") : t("popupPreloadBytes", [formatMB(view.bytesDone), formatMB(view.bytesTotal)]);
    $("popup-progress-file").textContent = view.currentFile ?? "";
  } else {
    const wasRunning = preload.running;
    preload.running = false;
    preload.op = null;
    box.hidden = true;
    result.hidden = false;
    result.dataset.state = op.state === "ok" ? "ok" : (op.error?.code ?? "error");
    result.dataset.endedAt = String(op.endedAt ?? "");
    // Each result says when it ended: the background replays the last one to a popup opened
    // later, and without a time it would read as news beside the cache figure read just now.
    const ended = (text) => endedAtText(text, op.endedAt, t);
    if (op.state === "ok") {
      result.textContent = ended(preloadDoneText(op.result, t, { short: true }));
    } else if (op.error?.code === "cancelled") {
      result.textContent = ended(t("popupPreloadCancelled"));
    } else if (op.error?.code === HOST_DISCONNECTED) {
      result.textContent = ended(t("popupHostStopped", [op.error.message]));
    } else if (op.error?.code === HOST_MISSING) {
      result.textContent = t("popupNoHost"); // a state, not an event: no time
      hostMissing(true);
    } else {
      result.textContent = ended(t("popupPreloadFailed", [op.error ? hostErrorText(op.error, t) : "—"]));
    }
    // Read the cache again only after a preload this popup saw running: a replayed result ended
    // before the popup opened, so the popup's first read is already from after it.
    if (wasRunning) {
      showCached({ afterPreload: op.state === "ok" });
    }
  }
  updateButtons();
  $("popup-cancel").hidden = !preload.running;
  $("popup-cancel").disabled = false;
}

/** `params`: WHOLE_PRELOAD (the install folder) or PLAN_PRELOAD (the page's planned preload), both at full speed. */
async function startPreload(params) {
  $("popup-preload-plan").disabled = true;
  $("popup-preload").disabled = true;
  try {
    await relay.request("preload", params);
  } catch {
    // shown from the operation broadcast (showPreload)
  } finally {
    updateButtons();
  }
}

async function setUpLink() {
  const link = $("popup-open");
  const aboutRegistered = await isAboutRegistered(browser);
  link.href = pageUrl({ aboutRegistered, getURL: (path) => browser.runtime.getURL(path) });
  link.textContent = t(aboutRegistered ? "popupOpenAbout" : "popupOpenPage");
  link.dataset.mode = aboutRegistered ? "full" : "basic";
  link.addEventListener("click", async (event) => {
    event.preventDefault();
    await openStartupPage(browser);
    window.close();
  });
}

async function main() {
  localize(document);
  relay.onOperation(showPreload);
  relay.onHost(({ state }) => hostMissing(state === "missing"));
  $("popup-preload-plan").addEventListener("click", () => startPreload(PLAN_PRELOAD));
  $("popup-preload").addEventListener("click", () => startPreload(WHOLE_PRELOAD));
  $("popup-cancel").addEventListener("click", () => {
    if (preload.op !== null) {
      $("popup-cancel").disabled = true;
      relay.cancel(preload.op).catch(() => {});
    }
  });
  relay.start();
  await Promise.all([showCached(), showPlan(), showLastStart(), setUpLink()]);
  document.body.dataset.ready = "true";
}

main();
