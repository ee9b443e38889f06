// The residency panel: what of Firefox's files sits in the page cache, and Preload / Evict /
// Refresh. Thin DOM code over lib/models/residency.js; the host is reached through the background
// (page/relay.js), so a preload started from the popup shows its progress here too.
import { t, tn } from "../lib/wording/i18n.js";
import { preloadDoneText } from "../lib/wording/preload-text.js";
import { fileErrorText, hostErrorText, hostNoteText } from "../lib/wording/host-notes.js";
import { HOST_DISCONNECTED, HOST_MISSING } from "../lib/transport/host-client.js";
import {
  buildResidency,
  cachedFigures,
  cachedText,
  evictRows,
  formatMB,
  hiddenReasons,
  progressView,
  stripSegments,
  WHOLE_PRELOAD,
} from "../lib/models/residency.js";
import { formatBytes, formatCount, formatMs, formatTime } from "../lib/wording/format.js";
import { hostCommands } from "../lib/wording/commands.js";
import { hostHello, relay } from "./relay.js";
import { $, el, svgEl } from "./dom.js";

/** How many evict rows to list before summing up the rest. */
const EVICT_ROWS = 12;

/** A bar 0…1 (a div, so it reads the same in light and dark); null draws nothing. */
export function bar(fraction, label) {
  const outer = el("div", { className: "res-bar", attrs: { role: "img", "aria-label": label } });
  if (typeof fraction === "number") {
    const fill = el("div", { className: "res-bar-fill" });
    fill.style.width = `${Math.max(0, Math.min(1, fraction)) * 100}%`;
    outer.append(fill);
  }
  return outer;
}

/** The page-map strip of one file: an SVG, one rect per run of equally full slices. */
export function strip(ranges, unitPages, pages, { label, kind = "resident" } = {}) {
  const { bins, segments } = stripSegments(ranges, unitPages, pages);
  const width = Math.max(bins, 1);
  const svg = svgEl("svg", {
    class: `res-strip res-strip-${kind}`,
    viewBox: `0 0 ${width} 1`,
    preserveAspectRatio: "none",
    role: "img",
    "aria-label": label,
  });
  svg.dataset.segments = String(segments.length);
  svg.append(svgEl("rect", { class: "res-strip-back", width, height: 1 }));
  for (const segment of segments) {
    svg.append(svgEl("rect", { x: segment.start, width: segment.width, height: 1, "fill-opacity": segment.level }));
  }
  return svg;
}

function fileRow(view) {
  const tr = el("tr");
  tr.dataset.name = view.name;
  tr.dataset.status = view.status;
  tr.dataset.size = String(view.size ?? "");
  if (typeof view.fraction === "number") {
    tr.dataset.fraction = String(view.fraction);
  }
  const name = el("th", { text: view.name, attrs: { scope: "row" } });
  const size = el("td", { text: formatMB(view.size), className: "num" });
  const cached = el("td", { className: "res-cached" });
  const map = el("td", { className: "res-map" });
  if (view.status === "exact") {
    cached.append(el("span", { text: cachedText(view, t) }));
    map.append(strip(view.ranges, view.unitPages, view.pages, { label: t("residencyStripLabel", [view.name]) }));
  } else if (view.status === "hidden") {
    // The reason and the fix are said once, above the table (groupSummary), not on every row.
    cached.append(el("strong", { text: t("residencyHidden"), className: "res-hidden" }));
    if (view.hiddenCode) {
      tr.dataset.hiddenCode = view.hiddenCode;
    }
    if (view.mapped) {
      cached.append(
        el("div", {
          text: t("residencyMappedLowerBound", [formatBytes(view.mapped.bytes, undefined, { unitOf: view.size }), formatMB(view.size)]),
          className: "detail res-mapped",
        }),
      );
      if (view.mapped.ranges) {
        map.append(
          strip(view.mapped.ranges, view.mapped.unitPages, view.pages, {
            label: t("residencyMappedStripLabel", [view.name]),
            kind: "mapped",
          }),
        );
      }
    }
  } else {
    cached.append(el("span", { text: cachedText(view, t), className: "res-error" }));
  }
  tr.append(name, size, cached, map);
  return tr;
}

function fileTable(files, caption) {
  const table = el("table", { className: "res-files" });
  table.append(el("caption", { text: caption, className: "visually-hidden" }));
  const head = el("tr");
  for (const [key, cls] of [
    ["residencyColFile", null],
    ["residencyColSize", "num"],
    ["residencyColCached", null],
    ["residencyColMap", null],
  ]) {
    head.append(el("th", { text: t(key), className: cls, attrs: { scope: "col" } }));
  }
  table.append(el("thead", {}, head), el("tbody", {}, ...files.map(fileRow)));
  return table;
}

/**
 * "MB cached of MB", a bar, and the hidden/mapped/error counts of one group; for hidden files the
 * kernel's reason once and what to do for exact figures (`commands`: lib/wording/commands.js).
 */
function groupSummary(group, name, commands) {
  const { totals } = group;
  const box = el("div", { className: "res-group-summary" });
  box.dataset.group = name;
  box.dataset.totals = totals.source ?? "";
  const figures = cachedFigures(totals);
  if (figures) {
    const text = t("residencyGroupCached", figures);
    box.append(el("p", { text, className: "res-total", attrs: { "data-testid": `residency-${name}-total` } }), bar(totals.fraction, text));
    box.dataset.cachedBytes = String(totals.cachedBytes);
    box.dataset.exactSize = String(totals.exactSize);
  } else if (totals.files === 0) {
    box.append(el("p", { text: t("residencyNoFiles") }));
  } else {
    box.dataset.hiddenFiles = String(totals.hiddenFiles);
    box.append(
      el("p", { className: "res-total", attrs: { "data-testid": `residency-${name}-total` } }, el("strong", { text: t("residencyHidden"), className: "res-hidden" })),
      el("p", { text: tn("residencyGroupHidden", totals.files, [String(totals.hiddenFiles), String(totals.files)]), className: "detail" }),
    );
    for (const reason of hiddenReasons(group.files)) {
      const why = el("p", { text: t("residencyHiddenWhy", [reason.code ? hostNoteText(reason.code, t) : t("residencyHiddenNoReason")]), className: "detail res-hidden-why" });
      why.dataset.code = reason.code ?? "";
      box.append(why);
    }
    if (totals.exactFiles > 0) {
      box.append(el("p", { text: tn("residencyGroupExactPart", totals.exactFiles, [String(totals.exactFiles), formatBytes(totals.exactBytes, undefined, { unitOf: totals.exactSize }), formatMB(totals.exactSize)]), className: "detail" }));
    }
    if (typeof totals.mappedBytes === "number") {
      const text = t("residencyMappedLowerBound", [formatBytes(totals.mappedBytes, undefined, { unitOf: totals.size }), formatMB(totals.size)]);
      box.append(el("p", { text, className: "res-mapped" }), bar(totals.size > 0 ? totals.mappedBytes / totals.size : 0, text));
      box.dataset.mappedBytes = String(totals.mappedBytes);
    }
    if (totals.hiddenFiles > 0) {
      const fix = el("p", { text: t("residencyHiddenFix", [commands.runAsRootItself("residency")]), className: "detail res-hidden-fix" });
      fix.dataset.testid = "residency-hidden-fix";
      box.append(fix);
    }
  }
  if (totals.errorFiles > 0) {
    box.append(el("p", { text: tn("residencyGroupErrors", totals.errorFiles), className: "detail res-error" }));
  }
  return box;
}

/** What the panel shows last: the install folder names evict's files too. */
const shown = { installDir: null };

function showResidency(built, commands) {
  shown.installDir = built.installDir;
  const install = built.groups.install ?? { files: [], totals: { files: 0 } };
  const system = built.groups.system ?? { files: [], totals: { files: 0 } };
  $("residency-install").replaceChildren(
    el("h3", { text: built.installDir ? t("residencyInstallHeadingDir", [built.installDir]) : t("residencyInstallHeading") }),
    groupSummary(install, "install", commands),
    fileTable(install.files, t("residencyInstallHeading")),
  );
  $("residency-install").hidden = false;
  const details = $("residency-system");
  // (the table's caption is the summary's text: the message needs its count, as "( files)" otherwise)
  const systemSummary = tn("residencySystemSummary", system.totals.files);
  details.replaceChildren(
    el("summary", { text: systemSummary }),
    groupSummary(system, "system", commands),
    fileTable(system.files, systemSummary),
  );
  details.hidden = system.totals.files === 0;
  $("residency").dataset.state = "ready";
  const scanned = install.totals.files + system.totals.files;
  setStatus(tn("residencyScanned", scanned, [String(scanned), formatMs(built.elapsedMs), formatTime(Date.now())]));
}

function setStatus(text) {
  $("residency-status").textContent = text;
}

/** The install command block, shown when Firefox finds no host. */
function showHostMissing(show, detail = "") {
  $("residency-host-missing").hidden = !show;
  $("residency-host-missing-detail").textContent = show && detail ? t("hostErrorDetail", [detail]) : "";
}

function errorWords(error, doing) {
  if (error?.code === HOST_MISSING) {
    return t("residencyHostMissing");
  }
  if (error?.code === HOST_DISCONNECTED) {
    return t("residencyHostStopped", [t(doing), error.message]);
  }
  return t("residencyFailed", [t(doing), hostErrorText(error, t)]);
}

const busy = { residency: false, preload: false, evict: false, preloadOp: null };

function updateButtons() {
  const changing = busy.preload || busy.evict;
  $("residency-preload").disabled = changing;
  $("residency-evict").disabled = changing;
  $("residency-refresh").disabled = busy.residency;
  $("residency-cancel").disabled = !busy.preload || busy.preloadOp === null;
  $("residency").dataset.busy = [busy.residency && "residency", busy.preload && "preload", busy.evict && "evict"].filter(Boolean).join(" ");
}

export async function refreshResidency() {
  if (busy.residency) {
    return;
  }
  busy.residency = true;
  updateButtons();
  $("residency").dataset.state = "loading";
  setStatus(t("residencyScanning"));
  const files = [];
  try {
    const summary = await relay.request(
      "residency",
      { files: null, mapped: true },
      {
        onEvent: (event, data) => {
          if (event === "file") {
            files.push(data);
          }
        },
      },
    );
    showHostMissing(false);
    const hello = await hostHello().catch(() => null);
    showResidency(buildResidency(files, summary), hostCommands(hello));
    // the export (page/compare.js) takes the latest summary's totals from here
    document.dispatchEvent(new CustomEvent("about-startup:residency", { detail: summary }));
  } catch (error) {
    $("residency").dataset.state = error?.code === HOST_MISSING ? "missing" : "error";
    $("residency").dataset.errorCode = error?.code ?? "";
    showHostMissing(error?.code === HOST_MISSING, error?.message);
    setStatus(errorWords(error, "residencyDoingScan"));
  } finally {
    busy.residency = false;
    updateButtons();
  }
}

// ---- preload --------------------------------------------------------------------------------

function showProgress(op) {
  const box = $("residency-progress");
  const view = progressView(op.progress);
  box.hidden = false;
  const progress = $("residency-progress-bar");
  if (typeof view.fraction === "number") {
    progress.value = view.fraction;
    const max = Math.max(Number(box.dataset.maxFraction ?? 0), view.fraction);
    box.dataset.maxFraction = String(max);
    box.dataset.updates = String(Number(box.dataset.updates ?? 0) + 1);
  } else {
    progress.removeAttribute("value"); // indeterminate until the first event
  }
  $("residency-progress-text").textContent =
    view.bytesTotal === null
      ? t("residencyPreloadStarting")
      : tn("residencyPreloadBytes", view.filesTotal, [formatMB(view.bytesDone), formatMB(view.bytesTotal), formatCount(view.filesDone), formatCount(view.filesTotal)]);
  $("residency-progress-file").textContent = view.currentFile ? t("residencyPreloadCurrent", [view.currentFile]) : "";
}

function preloadResultText(op) {
  if (op.state === "ok") {
    return preloadDoneText(op.result, t);
  }
  if (op.error?.code === "cancelled") {
    return t("residencyPreloadCancelled");
  }
  return errorWords(op.error, "residencyDoingPreload");
}

/**
 * Whether a finished operation changed the page cache, so the panel reads it again. Not after the
 * host went away or was missing: starting it again is the user's next action, not ours.
 */
function changedCache(op) {
  return op.state === "ok" || op.error?.code === "cancelled";
}

function onPreload(op, { fresh }) {
  if (op.state === "running") {
    if (!busy.preload) {
      $("residency-progress").dataset.maxFraction = "0";
      $("residency-progress").dataset.updates = "0";
    }
    busy.preload = true;
    busy.preloadOp = op.id;
    showProgress(op);
    setResult("", "preload-running");
  } else {
    busy.preload = false;
    busy.preloadOp = null;
    $("residency-progress").hidden = true;
    setResult(preloadResultText(op), `preload-${op.state === "ok" ? "ok" : (op.error?.code ?? "error")}`);
    if (fresh && changedCache(op)) {
      refreshResidency();
    }
  }
  updateButtons();
}

function setResult(text, state) {
  const result = $("residency-result");
  result.textContent = text;
  result.dataset.state = state;
  result.hidden = text === "";
}

async function startPreload() {
  busy.preload = true;
  updateButtons();
  try {
    await relay.request("preload", WHOLE_PRELOAD, { onStarted: (op) => (busy.preloadOp = op) });
  } catch (error) {
    // the operation broadcast reports it; only a failure before the background heard of it lands here
    if (busy.preload && error?.params?.kind === "relay") {
      busy.preload = false;
      setResult(errorWords(error, "residencyDoingPreload"), "preload-error");
    }
    if (error?.code === HOST_MISSING) {
      showHostMissing(true, error.message);
    }
  } finally {
    updateButtons();
  }
}

// ---- evict ----------------------------------------------------------------------------------

function showEvictResult(result) {
  const rows = evictRows(result, { installDir: shown.installDir });
  const box = $("residency-evict-result");
  const stayed = rows.filter((row) => typeof row.after === "number" && row.after > 0);
  const hidden = rows.filter((row) => row.status === "hidden");
  const failed = rows.filter((row) => row.status === "error");
  const parts = [
    el("p", {
      text: tn("residencyEvictDone", rows.length, [formatCount(result.pages_dropped), formatCount(rows.length), formatMs(result.elapsed_ms)]),
      attrs: { "data-testid": "residency-evict-summary" },
    }),
  ];
  if (stayed.length > 0) {
    const table = el("table", { className: "res-files" });
    const head = el("tr");
    for (const [key, cls] of [
      ["residencyColFile", null],
      ["residencyEvictColBefore", "num"],
      ["residencyEvictColStayed", "num"],
      ["residencyEvictColNote", null],
    ]) {
      head.append(el("th", { text: t(key), className: cls, attrs: { scope: "col" } }));
    }
    const body = el("tbody");
    for (const row of stayed.slice(0, EVICT_ROWS)) {
      const tr = el(
        "tr",
        {},
        el("th", { text: row.name, attrs: { scope: "row" } }),
        el("td", { text: formatCount(row.before), className: "num" }),
        el("td", { text: t("residencyEvictStayed", [formatCount(row.after), formatMB(row.stayedBytes)]), className: "num" }),
        el("td", { text: row.noteCode ? hostNoteText(row.noteCode, t) : "", className: "detail" }),
      );
      tr.dataset.name = row.name;
      tr.dataset.after = String(row.after);
      body.append(tr);
    }
    table.append(el("thead", {}, head), body);
    parts.push(el("p", { text: tn("residencyEvictStayedIntro", stayed.length) }), table);
    if (stayed.length > EVICT_ROWS) {
      parts.push(el("p", { text: tn("residencyEvictMore", stayed.length - EVICT_ROWS), className: "detail" }));
    }
  } else if (hidden.length < rows.length) {
    parts.push(el("p", { text: t("residencyEvictAllDropped") }));
  }
  if (hidden.length > 0) {
    parts.push(el("p", { text: tn("residencyEvictHidden", hidden.length), className: "detail" }));
  }
  for (const row of failed) {
    parts.push(el("p", { text: t("residencyEvictFileError", [row.name, fileErrorText(row.error, t)]), className: "detail res-error" }));
  }
  box.replaceChildren(...parts);
  box.dataset.files = String(rows.length);
  box.hidden = false;
}

function onEvict(op, { fresh }) {
  if (op.state === "running") {
    busy.evict = true;
    setResult(t("residencyEvicting"), "evict-running");
  } else {
    busy.evict = false;
    if (op.state === "ok") {
      setResult("", "evict-ok");
      showEvictResult(op.result ?? {});
    } else {
      setResult(errorWords(op.error, "residencyDoingEvict"), `evict-${op.error?.code ?? "error"}`);
    }
    if (fresh && changedCache(op)) {
      refreshResidency();
    }
  }
  updateButtons();
}

function askEvict() {
  const dialog = $("residency-evict-dialog");
  dialog.returnValue = "";
  dialog.showModal();
  $("residency-evict-no").focus();
}

async function evict() {
  busy.evict = true;
  $("residency-evict-result").hidden = true;
  updateButtons();
  try {
    await relay.request("evict", { files: null });
  } catch (error) {
    if (busy.evict && error?.params?.kind === "relay") {
      busy.evict = false;
      setResult(errorWords(error, "residencyDoingEvict"), "evict-error");
    }
    if (error?.code === HOST_MISSING) {
      showHostMissing(true, error.message);
    }
  } finally {
    updateButtons();
  }
}

export async function initResidency() {
  const section = $("residency");
  if (!section) {
    return;
  }
  $("residency-preload").addEventListener("click", startPreload);
  $("residency-cancel").addEventListener("click", () => {
    if (busy.preloadOp !== null) {
      $("residency-cancel").disabled = true;
      relay.cancel(busy.preloadOp).catch(() => {});
    }
  });
  $("residency-evict").addEventListener("click", askEvict);
  $("residency-evict-dialog").addEventListener("close", () => {
    if ($("residency-evict-dialog").returnValue === "evict") {
      evict();
    }
  });
  $("residency-refresh").addEventListener("click", () => refreshResidency());
  // Operations of every UI (this page, the popup, another tab) arrive here; those that were
  // already over when this page opened are shown but do not trigger a refresh.
  let welcomed = false;
  relay.onOperation((op) => {
    const fresh = welcomed || op.state === "running";
    if (op.command === "preload") {
      onPreload(op, { fresh });
    } else if (op.command === "evict") {
      onEvict(op, { fresh });
    }
  });
  relay.onHost(({ state, message }) => {
    welcomed = true;
    if (state === "missing") {
      showHostMissing(true, message);
    }
  });
  updateButtons();
  await refreshResidency();
}
