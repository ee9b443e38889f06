// Export, import and the comparison view. Export writes the about-startup-export JSON
// (lib/models/export.js, docs/export-format.md) as an object-URL download; import reads such a file,
// checks it, and shows its builds beside this machine's without touching the stored history.
import browser from "../lib/transport/browser.js";
import { currentTrace, HOST_TRACE_EVENT, hostTrace, showTrace } from "./trace.js";
import { entriesByBuild } from "../lib/models/entries-by-build.js";
import { renderEntriesChanges } from "./entries-compare.js";
import { t } from "../lib/wording/i18n.js";
import { buildExport, exportFileName, exportRecords, importErrorText, parseExport, residencySummary } from "../lib/models/export.js";
import { hasMean, LIKE_NOTE_KEYS, likeWithLikeNote } from "../lib/models/coldness.js";
import { formatDateTime } from "../lib/wording/format.js";
import { modeOf } from "../lib/models/mode.js";
import { formatMeanCi, groupRecords, milestoneOrder } from "../lib/models/stats.js";
import { COLDNESS_KEYS, coldnessMark, historyState, onHistoryChange } from "./history.js";
import { IMPORTS_EVENT } from "./preload-verdict.js";
import { relay } from "./relay.js";
import { $, el } from "./dom.js";


/** The residency panel's latest reply, as {measuredAt, installDir, pageSize, groups}. */
let latestResidency = null;
/** Imported exports: {name, doc}, in the order they came. */
const imports = [];

/**
 * For the residency panel: hand over the host's `residency` reply data (its per-group totals go
 * into the export). The same happens on a document event "about-startup:residency" whose detail
 * is that data.
 */
export function setResidency(reply, measuredAt = Date.now()) {
  latestResidency = residencySummary(reply, measuredAt);
}

/**
 * The residency summary for an export: the one the residency panel handed over, else a fresh one
 * from the host (totals only; at most `timeout` ms), else null (no host: the export says null).
 */
async function residencyForExport({ timeout = 15000 } = {}) {
  if (latestResidency) {
    return latestResidency;
  }
  let timer;
  const expired = new Promise((resolve) => {
    timer = setTimeout(() => resolve(null), timeout);
  });
  try {
    // Totals only: no file events from the host (summary_only), none forwarded by the relay.
    const reply = await Promise.race([relay.request("residency", { files: null, mapped: true, summary_only: true }), expired]);
    return reply ? residencySummary(reply, Date.now()) : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

const dateTime = (ms) => formatDateTime(ms);

/**
 * The omni.ja entries per build from every traced start the page holds: the host's trace of this
 * start, imported traces, and imported exports' own omniEntries (so builds add up from export to
 * export). Null without any.
 */
function omniEntries() {
  return entriesByBuild({
    traces: [hostTrace(), ...imports.map((entry) => entry.doc.trace)].filter(Boolean),
    summaries: imports.map((entry) => entry.doc.omniEntries).filter(Boolean),
  });
}

function renderEntries() {
  renderEntriesChanges($("compare-entries"), omniEntries());
}

async function environment(records, currentId) {
  const [info, platform] = await Promise.all([
    browser.runtime.getBrowserInfo().catch(() => ({})),
    browser.runtime.getPlatformInfo().catch(() => ({})),
  ]);
  const current = records.find((r) => r.id === currentId);
  const kernel = current?.kernel ?? records.findLast((r) => r.kernel)?.kernel ?? null;
  return {
    firefoxVersion: info.version ?? null,
    buildId: info.buildID ?? null,
    os: platform.os ?? null,
    kernel,
    mode: modeOf(browser),
  };
}

function setStatus(id, state, text) {
  const element = $(id);
  element.dataset.state = state;
  element.textContent = text;
  element.hidden = !text;
}

async function exportJson() {
  const { records, currentId, trimmed } = historyState();
  const now = new Date();
  const doc = buildExport({
    current: records.find((r) => r.id === currentId) ?? null,
    history: records,
    trimmed,
    environment: await environment(records, currentId),
    residency: await residencyForExport(),
    trace: currentTrace(),
    omniEntries: omniEntries(),
    exportedAt: now.getTime(),
  });
  const filename = exportFileName(now);
  // An object-URL download through a link: Firefox saves it like any download, and the add-on
  // needs no `downloads` permission for it.
  const url = URL.createObjectURL(new Blob([`${JSON.stringify(doc, null, 2)}\n`], { type: "application/json" }));
  const link = el("a", { attrs: { href: url, download: filename, hidden: "" } });
  document.body.append(link);
  try {
    link.click();
    setStatus("export-status", "done", t("exportDone", [filename, String(records.length)]));
    $("export-status").dataset.filename = filename;
  } finally {
    link.remove();
    // Firefox has read the blob once the download started; a minute is plenty.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }
}

async function importFile(file) {
  let text;
  try {
    text = await file.text();
  } catch (error) {
    showImportError("read", t("importReadError", [file.name, String(error?.message ?? error)]));
    return;
  }
  const result = parseExport(text);
  if (!result.ok) {
    // the page names the fields; what is wrong with each, in English, is for the console
    console.warn(`about:startup: ${file.name} was not imported:`, result.problems);
    showImportError(result.code, importErrorText(file.name, result, t));
    return;
  }
  const key = `${file.name}\u0000${result.doc.exportedAt}`;
  const existing = imports.findIndex((entry) => entry.key === key);
  const entry = { key, name: file.name, doc: result.doc };
  if (existing >= 0) {
    imports[existing] = entry;
  } else {
    imports.push(entry);
  }
  $("import-error").hidden = true;
  if (result.doc.trace) {
    showTrace(result.doc.trace, file.name, result.doc.current?.milestones);
  }
  setStatus(
    "import-status",
    "done",
    t("importDone", [file.name, String(exportRecords(result.doc).length), result.doc.source, dateTime(result.doc.exportedAt)]),
  );
  renderComparison();
  renderEntries();
  document.dispatchEvent(
    new CustomEvent(IMPORTS_EVENT, { detail: imports.map((item) => ({ name: item.name, records: exportRecords(item.doc) })) }),
  );
}

function showImportError(code, text) {
  const element = $("import-error");
  element.dataset.code = code;
  element.textContent = text;
  element.hidden = false;
  setStatus("import-status", "error", "");
}

/** Columns: this machine's builds, then each import's builds, labelled by where they come from. */
function renderComparison() {
  const view = $("compare");
  const table = $("compare-table");
  if (imports.length === 0) {
    view.dataset.state = "empty";
    table.hidden = true;
    $("compare-empty").hidden = false;
    return;
  }
  const { records, currentId } = historyState();
  const sets = [
    { origin: "local", source: "extension", label: t("compareThisMachine"), records },
    ...imports.map((entry) => ({
      origin: "import",
      source: entry.doc.source,
      label: t("compareImported", [entry.name, entry.doc.source]),
      records: exportRecords(entry.doc),
    })),
  ];
  const milestones = milestoneOrder(sets.flatMap((set) => set.records));
  const columns = sets.flatMap((set) =>
    groupRecords(set.records, { currentId: set.origin === "local" ? currentId : null, milestones }).map((group) => ({
      ...set,
      group,
    })),
  );
  const head = el("tr");
  head.append(el("th", { text: t("colMilestone"), attrs: { scope: "col" } }));
  for (const column of columns) {
    const th = el("th", { className: `num origin-${column.origin}`, attrs: { scope: "col" } });
    th.dataset.origin = column.origin;
    th.dataset.source = column.source;
    th.append(
      el("span", { text: column.label, className: "origin" }),
      el("br"),
      el("span", {
        text: t("compareGroup", [column.group.version ?? "?", column.group.buildId ?? "?", String(column.group.records.length)]),
      }),
      el("br"),
      coldnessMark(column.group.coldness),
      ` ${t(COLDNESS_KEYS[column.group.coldness])}`,
    );
    th.dataset.coldness = column.group.coldness;
    head.append(th);
  }
  table.tHead.replaceChildren(head);
  table.tBodies[0].replaceChildren(
    ...milestones.map((name) => {
      const tr = el("tr");
      tr.dataset.milestone = name;
      tr.append(el("th", { text: name, attrs: { scope: "row" } }));
      for (const column of columns) {
        const stat = column.group.stats[name];
        const td = el("td", { text: formatMeanCi(stat), className: `num origin-${column.origin}` });
        td.dataset.origin = column.origin;
        td.dataset.n = String(stat.n);
        if (!hasMean(column.group.coldness)) {
          // Unknown starts may mix cold and hot ones: their count, not a mean (as in the history).
          td.textContent = stat.n > 0 ? t("historyUnknownCount", [String(stat.n)]) : "—";
          td.title = t("historyNoMeanTitle");
        }
        tr.append(td);
      }
      return tr;
    }),
  );
  // Like with like: each import's classes against this machine's, and say which cannot be compared.
  const notes = [];
  const words = (classes) => classes.map((c) => t(COLDNESS_KEYS[c])).join(", ") || "—";
  for (const set of sets.slice(1)) {
    const like = likeWithLikeNote(records, set.records);
    if (!like) {
      continue;
    }
    const subs = {
      importEmpty: [set.label],
      nothingHere: [set.label],
      unmatchedHere: [set.label, words(like.onlyA)],
    }[like.note] ?? [set.label, words(like.onlyB), words(like.onlyA)];
    notes.push(t(LIKE_NOTE_KEYS[like.note], subs));
  }
  const unmatched = $("compare-unmatched");
  unmatched.replaceChildren(...notes.map((text) => el("li", { text })));
  unmatched.hidden = notes.length === 0;
  view.dataset.state = "ready";
  view.dataset.imports = String(imports.length);
  table.hidden = false;
  $("compare-empty").hidden = true;
}

export function initCompare() {
  $("export-button").addEventListener("click", () => {
    exportJson().catch((error) => setStatus("export-status", "error", t("exportFailed", [String(error?.message ?? error)])));
  });
  const input = $("import-file");
  input.addEventListener("change", async () => {
    const files = [...input.files];
    for (const file of files) {
      await importFile(file);
    }
    input.value = ""; // the same file can be chosen again
  });
  document.addEventListener("about-startup:residency", (event) => setResidency(event.detail));
  document.addEventListener(HOST_TRACE_EVENT, renderEntries);
  onHistoryChange(renderComparison);
  renderComparison();
  renderEntries();
}
