// The history section of the page: the stored starts grouped by Firefox version and build, mean
// ± 95% CI per milestone, the current start highlighted, and a trend chart of sessionRestored.
// Thin DOM code over lib/models/history.js and lib/models/stats.js.
import browser from "../lib/transport/browser.js";
import { t, tn } from "../lib/wording/i18n.js";
import { CURRENT_START_KEY, dismissRecovered, HISTORY_KEY, loadHistory, MAX_RECORDS, RECOVERY } from "../lib/models/history.js";
import { NOTES, recordId } from "../lib/models/record.js";
import { formatMeanCi, groupRecords, milestoneOrder, trendPoints } from "../lib/models/stats.js";
import { CLASS_KEYS, coldnessOf, hasMean, readBytesOf } from "../lib/models/coldness.js";
import { coldHotVerdict, MILESTONE_OF_MODE } from "../lib/models/verdict.js";
import { formatBytes, formatDateTime, formatMs, formatNumber, formatSeconds } from "../lib/wording/format.js";
import { startupApi } from "../lib/models/mode.js";
import { $, el, svgEl } from "./dom.js";


/** How many single starts each build shows under its average row (the average covers all). */
const STARTS_SHOWN = 10;

const state = { history: null, currentId: null, listeners: new Set() };

/** {records, currentId, trimmed} for the export and the comparison view. */
export function historyState() {
  return { records: state.history?.records ?? [], currentId: state.currentId, trimmed: state.history?.trimmed ?? 0 };
}

/** Calls `listener()` after every render of the history. */
export function onHistoryChange(listener) {
  state.listeners.add(listener);
}

const dateTime = (ms) => formatDateTime(ms);

/** This process start's record id: from the background (storage.session) or, in full mode, Firefox. */
async function currentStartId() {
  try {
    const stored = await browser.storage.session.get(CURRENT_START_KEY);
    if (stored?.[CURRENT_START_KEY]) {
      return stored[CURRENT_START_KEY];
    }
  } catch {
    // storage.session missing: fall through
  }
  const api = startupApi(browser);
  if (api) {
    const info = await api.getStartupInfo().catch(() => null);
    if (typeof info?.process === "number") {
      return recordId("full", info.process);
    }
  }
  return null;
}

const RECOVERED_KEYS = {
  [RECOVERY.corrupt]: "historyRecoveredCorrupt",
  [RECOVERY.futureVersion]: "historyRecoveredFutureVersion",
  [RECOVERY.badRecords]: "historyRecoveredBadRecords",
};

function showRecovered(recovered) {
  const box = $("history-recovered");
  const list = $("history-recovered-list");
  list.replaceChildren(
    ...recovered.map((notice) => {
      const item = el("li", {
        text: t(RECOVERED_KEYS[notice.reason] ?? "historyRecoveredCorrupt", [notice.backupKey, dateTime(notice.at)]),
      });
      item.dataset.reason = notice.reason;
      item.dataset.backupKey = notice.backupKey;
      if (notice.detail) {
        item.append(el("span", { text: ` ${t("historyRecoveredDetail", [notice.detail])}`, className: "detail" }));
      }
      return item;
    }),
  );
  box.hidden = recovered.length === 0;
}

const NOTE_KEYS = {
  [NOTES.noSessionRestored]: "historyNoteNoSessionRestored",
  [NOTES.hostUnavailable]: "historyNoteHostUnavailable",
  [NOTES.addonStartedLater]: "historyNoteAddonStartedLater",
};

/** The words for each coldness class (lib/models/coldness.js). */
export const COLDNESS_KEYS = CLASS_KEYS;

/**
 * Each class's marker shape (not colour alone): cold a square, warm a triangle, hot a circle,
 * prefetched a triangle pointing down, preloaded a plus, recorded late and unknown a hollow diamond (dashed). An
 * SVG path centred on 0,0 for radius `r`.
 */
export function markerPath(coldness, r = 4) {
  switch (coldness) {
    case "cold":
      return `M${-r},${-r}h${2 * r}v${2 * r}h${-2 * r}z`;
    case "warm":
      return `M0,${-r * 1.2}L${r * 1.15},${r * 0.9}H${-r * 1.15}z`;
    case "hot":
      return `M${-r},0a${r},${r} 0 1,0 ${2 * r},0a${r},${r} 0 1,0 ${-2 * r},0`;
    case "prefetched":
      return `M0,${r * 1.2}L${r * 1.15},${-r * 0.9}H${-r * 1.15}z`;
    case "preloaded": {
      const a = r * 0.4;
      return `M${-a},${-r}h${2 * a}v${r - a}h${r - a}v${2 * a}h${a - r}v${r - a}h${-2 * a}v${a - r}h${a - r}v${-2 * a}h${r - a}z`;
    }
    default:
      return `M0,${-r * 1.3}L${r * 1.3},0L0,${r * 1.3}L${-r * 1.3},0z`;
  }
}

/** A small inline SVG of a class's marker, for tables and the legend. */
export function coldnessMark(coldness) {
  const svg = svgEl("svg", { viewBox: "-6 -6 12 12", width: "12", height: "12", class: `mark mark-${coldness}`, "aria-hidden": "true" });
  svg.append(svgEl("path", { d: markerPath(coldness, 4.5) }));
  return svg;
}

function startRow(record, milestones, currentId) {
  const tr = el("tr");
  tr.dataset.recordId = record.id;
  tr.dataset.mode = record.mode;
  if (record.id === currentId) {
    tr.dataset.current = "true";
    tr.className = "current";
  }
  const when = el("th", { text: dateTime(record.processStart), attrs: { scope: "row" } });
  if (record.id === currentId) {
    when.append(el("span", { text: ` ${t("historyCurrentMark")}`, className: "badge" }));
  }
  tr.append(when, el("td", { text: t(record.mode === "full" ? "historyModeFull" : "historyModeBasic") }));
  for (const name of milestones) {
    const value = record.milestones[name];
    const td = el("td", { text: formatNumber(value), className: "num" });
    td.dataset.milestone = name;
    if (typeof value === "number") {
      td.dataset.ms = String(value);
    }
    tr.append(td);
  }
  const coldness = coldnessOf(record);
  tr.dataset.coldness = coldness;
  const kind = el("td", { className: `coldness coldness-${coldness}` });
  kind.append(coldnessMark(coldness), ` ${t(COLDNESS_KEYS[coldness])}`);
  tr.append(kind);
  const read = readBytesOf(record);
  const readCell = el("td", { text: formatBytes(read), className: "num" });
  readCell.dataset.readBytes = String(read ?? "");
  tr.append(readCell);
  tr.append(el("td", { text: (record.notes ?? []).map((n) => t(NOTE_KEYS[n] ?? n)).join(" "), className: "detail" }));
  return tr;
}

function renderTable(records, currentId) {
  const table = $("history-table");
  const milestones = milestoneOrder(records);
  const head = el("tr");
  head.append(
    el("th", { text: t("historyColStart"), attrs: { scope: "col" } }),
    el("th", { text: t("historyColMode"), attrs: { scope: "col" } }),
    ...milestones.map((name) => {
      // Break long camelCase names (startupCrashDetectionBegin) at their capitals.
      const th = el("th", { className: "num milestone-name", attrs: { scope: "col", title: name } });
      name.split(/(?=[A-Z])/).forEach((part, i) => th.append(...(i ? [el("wbr"), part] : [part])));
      return th;
    }),
    el("th", { text: t("historyColColdness"), attrs: { scope: "col" } }),
    el("th", { text: t("historyColRead"), className: "num", attrs: { scope: "col" } }),
    el("th", { text: t("historyColNotes"), attrs: { scope: "col" } }),
  );
  table.tHead.replaceChildren(head);
  const width = milestones.length + 5;
  const bodies = groupRecords(records, { currentId, milestones }).map((group) => {
    const body = el("tbody");
    body.dataset.version = group.version ?? "";
    body.dataset.buildId = group.buildId ?? "";
    body.dataset.coldness = group.coldness;
    if (group.hasCurrent) {
      body.dataset.current = "true";
    }
    const title = el("tr", { className: "group" });
    title.append(
      el("th", {
        text: t("historyGroupClass", [group.version ?? "?", group.buildId ?? "?", t(COLDNESS_KEYS[group.coldness]), String(group.records.length)]),
        attrs: { colspan: String(width), scope: "rowgroup" },
      }),
    );
    // Unknown starts may be cold and hot mixed: their row gives the count, and says why no mean.
    const meaned = hasMean(group.coldness);
    const average = el("tr", { className: "average" });
    average.dataset.average = "true";
    average.dataset.mean = String(meaned);
    average.append(
      meaned
        ? el("th", { text: t("historyAverage"), attrs: { scope: "row", title: t("historyAverageTitle") } })
        : el("th", { text: t("historyNoMean"), attrs: { scope: "row", title: t("historyNoMeanTitle") } }),
      el("td"),
    );
    for (const name of milestones) {
      const stat = group.stats[name];
      const td = el("td", { text: formatMeanCi(stat, undefined, { unit: false }), className: "num" });
      td.dataset.milestone = name;
      td.dataset.n = String(stat.n);
      td.title =
        stat.n === 0 ? t("historyStatNone") : stat.n === 1 ? t("historyStatOne") : t("historyStatN", [String(stat.n)]);
      if (!meaned) {
        td.textContent = stat.n > 0 ? t("historyUnknownCount", [String(stat.n)]) : "—";
        td.title = t("historyNoMeanTitle");
      }
      average.append(td);
    }
    average.append(el("td"), el("td"), el("td"));
    const shown = group.records.slice(-STARTS_SHOWN).reverse();
    const current = group.records.find((r) => r.id === currentId);
    if (current && !shown.includes(current)) {
      shown.unshift(current);
    }
    body.append(title, average, ...shown.map((record) => startRow(record, milestones, currentId)));
    if (group.records.length > shown.length) {
      const more = el("tr", { className: "detail" });
      more.append(
        el("td", {
          text: t("historyMoreStarts", [String(group.records.length - shown.length)]),
          attrs: { colspan: String(width) },
        }),
      );
      body.append(more);
    }
    return body;
  });
  for (const old of [...table.tBodies]) {
    old.remove();
  }
  table.append(...bodies);
  table.hidden = records.length === 0;
  $("history-caption").hidden = table.hidden;
  $("history-basic-legend").hidden = !records.some((r) => r.mode === "basic");
}

/**
 * A small SVG chart: sessionRestored (ms since process) per start, the current start marked. In
 * basic mode, whose starts have no sessionRestored, the time to the add-on's own start: the
 * newest timed start's mode picks which (lib/models/verdict.js), and only starts of that mode show.
 */
function renderTrend(records, currentId) {
  const figure = $("history-trend");
  const milestone = coldHotVerdict(records)?.milestone ?? MILESTONE_OF_MODE.full;
  const points = trendPoints(records, milestone, currentId);
  figure.dataset.milestone = milestone;
  const svg = $("history-trend-chart");
  svg.replaceChildren();
  figure.hidden = points.length === 0;
  if (points.length === 0) {
    return;
  }
  const W = 640;
  const H = 180;
  const pad = { left: 64, right: 12, top: 12, bottom: 28 };
  const xs = points.map((p) => p.x);
  const maxY = Math.max(...points.map((p) => p.y)) * 1.1 || 1;
  const [minX, maxX] = [Math.min(...xs), Math.max(...xs)];
  // Evenly spaced by start order: starts come in bursts, and the order is what the eye follows.
  const x = (i) => (points.length === 1 ? (pad.left + W - pad.right) / 2 : pad.left + (i * (W - pad.left - pad.right)) / (points.length - 1));
  const y = (v) => H - pad.bottom - (v / maxY) * (H - pad.top - pad.bottom);
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.append(
    svgEl("line", { x1: pad.left, y1: y(0), x2: W - pad.right, y2: y(0), class: "axis" }),
    svgEl("line", { x1: pad.left, y1: pad.top, x2: pad.left, y2: y(0), class: "axis" }),
    svgEl("text", { x: pad.left - 6, y: y(0), class: "tick", "text-anchor": "end", "dominant-baseline": "middle" }, "0"),
    svgEl(
      "text",
      { x: pad.left - 6, y: y(maxY / 1.1), class: "tick", "text-anchor": "end", "dominant-baseline": "middle" },
      formatMs(maxY / 1.1),
    ),
    svgEl("text", { x: pad.left, y: H - 8, class: "tick" }, dateTime(minX)),
    svgEl("text", { x: W - pad.right, y: H - 8, class: "tick", "text-anchor": "end" }, dateTime(maxX)),
  );
  if (points.length > 1) {
    svg.append(svgEl("polyline", { points: points.map((p, i) => `${x(i)},${y(p.y)}`).join(" "), class: "trend-line" }));
  }
  points.forEach((p, i) => {
    const dot = svgEl("path", {
      d: markerPath(p.coldness, p.current ? 6 : 4),
      transform: `translate(${x(i)},${y(p.y)})`,
      class: `point coldness-${p.coldness}${p.current ? " current" : ""}`,
    });
    dot.dataset.recordId = p.id;
    dot.dataset.coldness = p.coldness;
    dot.append(
      svgEl("title", {}, `${dateTime(p.x)}: ${formatMs(p.y)}, ${t(COLDNESS_KEYS[p.coldness])}${p.current ? ` (${t("historyCurrentMark")})` : ""}`),
    );
    svg.append(dot);
  });
  svg.setAttribute(
    "aria-label",
    tn(milestone === MILESTONE_OF_MODE.basic ? "historyTrendLabelBasic" : "historyTrendLabel", points.length),
  );
  const present = new Set(points.map((p) => p.coldness));
  $("history-trend-legend").replaceChildren(
    ...Object.keys(COLDNESS_KEYS)
      .filter((kind) => present.has(kind))
      .map((kind) => {
        const item = el("li", { className: `coldness-${kind}` });
        item.dataset.coldness = kind;
        item.append(coldnessMark(kind), ` ${t(COLDNESS_KEYS[kind])}`);
        return item;
      }),
  );
}

/** The verdict line: what a cold start costs here against a hot one, or what it still needs. */
function renderVerdict(records) {
  const element = $("history-verdict");
  const verdict = coldHotVerdict(records);
  element.hidden = verdict === null;
  if (!verdict) {
    element.dataset.state = "none";
    return;
  }
  element.dataset.state = verdict.state;
  element.dataset.milestone = verdict.milestone;
  if (verdict.state === "ready") {
    // Basic mode's times are to the add-on's own start (lib/models/verdict.js milestoneOf): say so.
    element.textContent = t(verdict.milestone === MILESTONE_OF_MODE.basic ? "verdictReadyBasic" : "verdictReady", [
      formatSeconds(verdict.diffMs),
      String(verdict.cold.n),
      String(verdict.hot.n),
      formatSeconds(verdict.cold.mean),
      formatSeconds(verdict.hot.mean),
    ]);
    return;
  }
  const need = [];
  if (verdict.needCold > 0) {
    need.push(t(verdict.needCold === 1 ? "verdictNeedColdOne" : "verdictNeedCold", [String(verdict.needCold)]));
  }
  if (verdict.needHot > 0) {
    need.push(t(verdict.needHot === 1 ? "verdictNeedHotOne" : "verdictNeedHot", [String(verdict.needHot)]));
  }
  element.textContent = t("verdictThin", [need.join(t("verdictAnd")), String(verdict.cold.n), String(verdict.hot.n)]);
}

// One render at a time: two overlapping loads of a corrupt value would back it up twice.
let rendering = Promise.resolve();
function render() {
  rendering = rendering.then(renderNow, renderNow);
  return rendering;
}

async function renderNow() {
  const { history } = await loadHistory(browser.storage.local);
  state.history = history;
  state.currentId = state.currentId ?? (await currentStartId());
  const { records, trimmed, recovered } = history;
  const section = $("history-section");
  const status = $("history-status");
  const hasCurrent = records.some((r) => r.id === state.currentId);
  section.dataset.state = records.length === 0 ? "empty" : "ready";
  section.dataset.current = hasCurrent ? "recorded" : "pending";
  const groups = new Set(records.map((r) => `${r.firefox.version}\u0000${r.firefox.buildId}`)).size;
  status.textContent =
    records.length === 0
      ? t("historyEmpty")
      : t("historyCount", [String(records.length), String(groups)]) + (hasCurrent ? "" : ` ${t("historyCurrentPending")}`);
  $("history-trimmed").hidden = trimmed === 0;
  $("history-trimmed").textContent = t("historyTrimmed", [String(trimmed), String(MAX_RECORDS)]);
  showRecovered(recovered);
  renderTable(records, state.currentId);
  renderTrend(records, state.currentId);
  renderVerdict(records);
  for (const listener of state.listeners) {
    listener();
  }
}

export async function initHistory() {
  $("history-recovered-dismiss").addEventListener("click", async () => {
    await dismissRecovered(browser.storage.local);
    await render();
  });
  browser.storage.onChanged.addListener((changes, area) => {
    if (area === "local" && HISTORY_KEY in changes) {
      render();
    } else if (area === "session" && CURRENT_START_KEY in changes) {
      state.currentId = changes[CURRENT_START_KEY].newValue ?? state.currentId;
      render();
    }
  });
  try {
    await render();
  } catch (error) {
    $("history-section").dataset.state = "error";
    $("history-status").textContent = t("historyError", [String(error?.message ?? error)]);
  }
}
