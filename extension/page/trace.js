// "Where the start's time went, page by page": the startup I/O trace of this Firefox process
// (recorded by `about-startup-host launch --trace`, fetched from the host in pages) or of an
// imported export (sent to the host in pages). Every figure is the host's summary of the trace
// (`trace_summary`, native-host/src/trace/summary/): this module only lays it out. Four views:
// read over time on the milestone axis, seed 000's access pattern (ELF sections shaded and
// named), seed 003's disk position against time, and the per-file table (an omni.ja row opens
// into its zip entries), then the profile's share, which code faulted the pages in and which
// entries were read the most (./trace-sources.js). Everything is built with
// createElement/createElementNS; geometry is in attributes, colours are CSS classes
// (startup.css, "Trace charts"), so high-contrast mode can give them system colours, and page
// faults differ from other reads by shape as well.
import browser from "../lib/transport/browser.js";
import { milestoneRows } from "../lib/models/milestones.js";
import { startupApi } from "../lib/models/mode.js";
import { niceStep, startSpanEnd } from "../lib/models/timeline.js";
import { t, tn } from "../lib/wording/i18n.js";
import { formatBytes, formatMs, formatPercent } from "../lib/wording/format.js";
import { endedByText, hostErrorText, setAsideTexts, traceNoteTexts } from "../lib/wording/host-notes.js";
import { assembleTrace, RECORD_ARGS, uploadPages } from "../lib/models/trace.js";
import { hostHello, relay, traceRecordCommand } from "./relay.js";
import { hostCommands } from "../lib/wording/commands.js";
import { profilerControls } from "./profiler.js";
import { codeSection, entriesSection, fileCell, profileSection } from "./trace-sources.js";
import { el, svgEl } from "./dom.js";

const W = 720;
const H = 220;
const M = { left: 64, right: 12, top: 10, bottom: 28 };
/** How many section colours startup.css has (`.trace-band-0` … `.trace-band-7`). */
const SECTION_COLOURS = 8;

// `own`: this Firefox's milestones; `milestones`: those drawn with the trace shown (its own
// process's only: an imported trace brings its export's current record's, or none). `id`: the
// host's stored trace of this start; `shown`: the id the host summarizes the shown trace by
// (the stored one, or an upload's); `summary`: its summary now, `hostSummary`: the stored one's.
const state = {
  trace: null,
  host: null,
  hostSummary: null,
  summary: null,
  origin: "host",
  own: [],
  milestones: [],
  picked: null,
  id: null,
  shown: null,
};

/** The trace shown now (null without one), for the JSON export: the host's, fetched without its
 * profile's paths (the profile's files go by their part: no site name leaves in an export). */
export function currentTrace() {
  return state.origin === "host" ? state.trace : null;
}

/** The host's summary of this start's trace (null without one): the answer line's profile share. */
export function hostSummary() {
  return state.hostSummary;
}

/** Fired on the document once the host's trace of this start is drawn (detail: the trace). */
export const HOST_TRACE_EVENT = "about-startup:host-trace";

/** The host's trace of this start, even while an imported one is shown (null without one). */
export function hostTrace() {
  return state.host;
}

function section() {
  return document.getElementById("trace");
}

/** The chart's frame: axes from 0 to `span` ms, with the milestones as labelled lines. */
function frame(span, yLabel, titleText) {
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, width: "100%", role: "img", "font-size": 11 });
  svg.append(svgEl("title", {}, titleText));
  const x = (ms) => M.left + (Math.max(0, ms) / span) * (W - M.left - M.right);
  const axis = svgEl("g", { stroke: "currentColor", "stroke-opacity": 0.5 });
  axis.append(
    svgEl("line", { x1: M.left, y1: H - M.bottom, x2: W - M.right, y2: H - M.bottom }),
    svgEl("line", { x1: M.left, y1: M.top, x2: M.left, y2: H - M.bottom }),
  );
  svg.append(axis);
  const step = niceStep(span);
  for (let v = 0; v <= span + 1e-9; v += step) {
    svg.append(svgEl("text", { x: x(v), y: H - 8, "text-anchor": "middle", fill: "currentColor" }, formatMs(v)));
  }
  svg.append(
    svgEl("text", { x: 4, y: M.top + 8, fill: "currentColor" }, yLabel),
  );
  let lastLabel = -Infinity;
  // Milestones after the start (startupCrashDetectionEnd, ~30 s on): listed at the right edge,
  // not drawn on an axis they would stretch.
  const later = state.milestones.filter((m) => m.sinceOrigin > span);
  later.forEach((m, i) => {
    svg.append(svgEl("text", { x: W - M.right - 4, y: M.top + 10 + i * 12, "text-anchor": "end", class: "trace-milestone-label trace-later", "font-size": 9, "data-milestone": m.name }, t("timelineLater", [m.name, formatMs(m.sinceOrigin)])));
  });
  for (const m of state.milestones) {
    if (m.sinceOrigin > span) {
      continue;
    }
    // Labels closer than a line's height would overprint: the line stays, the label goes.
    const crowded = x(m.sinceOrigin) - lastLabel < 12;
    const g = svgEl("g", { "data-milestone": m.name });
    g.append(svgEl("line", { x1: x(m.sinceOrigin), x2: x(m.sinceOrigin), y1: M.top, y2: H - M.bottom, class: "trace-milestone", "stroke-dasharray": "3 3" }));
    if (!crowded) {
      lastLabel = x(m.sinceOrigin);
      g.append(svgEl("text", { x: x(m.sinceOrigin) + 2, y: M.top + 10, class: "trace-milestone-label", "font-size": 9, transform: `rotate(90 ${x(m.sinceOrigin) + 2} ${M.top + 10})` }, m.name));
    }
    svg.append(g);
  }
  return { svg, x };
}

function readChart(trace, read, span) {
  const { bins, source, total } = read;
  const { svg, x } = frame(span, t("traceReadAxis"), t("traceReadTitle"));
  svg.dataset.testid = "trace-read-chart";
  const max = Math.max(1, read.max);
  const y = (v) => H - M.bottom - (v / max) * (H - M.top - M.bottom);
  const yc = (v) => H - M.bottom - (v / Math.max(1, total)) * (H - M.top - M.bottom);
  // Before the tracer attached (trace --pid) nothing was seen: shade it, never draw it as 0.
  if (trace.attached_ms > 1) {
    const w = x(Math.min(span, trace.attached_ms)) - x(0);
    svg.append(
      svgEl("rect", { x: x(0), y: M.top, width: w, height: H - M.top - M.bottom, class: "trace-missed", "data-missed": "true" }),
      svgEl("text", { x: x(0) + 4, y: H - M.bottom - 6, class: "trace-missed-label", "font-size": 10 }, t("traceMissed")),
    );
  }
  for (const b of bins.filter((b) => b.bytes > 0)) {
    svg.append(svgEl("rect", { x: x(b.t0), y: y(b.bytes), width: Math.max(1, x(b.t1) - x(b.t0)), height: H - M.bottom - y(b.bytes), class: "trace-bar" }));
  }
  const points = bins.map((b) => `${x(b.t1).toFixed(1)},${yc(b.cumulative).toFixed(1)}`).join(" ");
  svg.append(svgEl("polyline", { points: `${x(0)},${yc(0)} ${points}`, class: "trace-cumulative" }));
  return el("figure", {}, svg, el("figcaption", { className: "detail", text: t(source === "events" ? "traceReadCaption" : "traceReadCaptionSampled", [formatBytes(max), formatBytes(total)]) }));
}

function patternChart(grid, span) {
  const { svg, x } = frame(span, t("traceOffsetAxis"), t("tracePatternTitle", [grid.path]));
  svg.dataset.testid = "trace-pattern-chart";
  const top = M.top;
  const plotH = H - M.top - M.bottom;
  grid.bands.forEach((b, i) => {
    const y0 = top + b.from * plotH;
    const h = Math.max(1, (b.to - b.from) * plotH);
    const g = svgEl("g", { "data-section": b.name, class: `trace-band trace-band-${i % SECTION_COLOURS}` });
    g.append(
      svgEl("rect", { x: M.left, y: y0, width: W - M.left - M.right, height: h }),
      svgEl("text", { x: W - M.right - 4, y: y0 + Math.min(h, 12) - 2, "text-anchor": "end", "font-size": 10 }, b.name),
    );
    svg.append(g);
  });
  const cw = (W - M.left - M.right) / grid.cols;
  const ch = plotH / grid.rows;
  let max = 1;
  for (const [, , pages] of grid.cells) {
    max = Math.max(max, pages);
  }
  // Reads through a readahead window: flat marks filling the cell. Faults (no window): diamonds,
  // so they differ by shape, not by colour alone (high contrast, colour blindness).
  const side = Math.max(2.5, Math.min(cw, ch) * 1.4);
  grid.cells.forEach(([col, row, pages], i) => {
    const mark = grid.marks[i];
    const cx = x((col / grid.cols) * span);
    const cy = top + row * ch;
    const opacity = 0.35 + 0.65 * Math.min(1, pages / max);
    const attrs =
      mark === "fault"
        ? { ...diamond(cx + cw / 2, cy + ch / 2, side), class: "trace-fault", "fill-opacity": opacity }
        : { x: cx, y: cy, width: Math.max(1.5, cw), height: Math.max(1.5, ch), class: "trace-window", "fill-opacity": opacity };
    const rect = svgEl("rect", attrs);
    rect.dataset.mark = mark;
    svg.append(rect);
  });
  return el(
    "figure",
    {},
    svg,
    patternLegend(),
    el("figcaption", { className: "detail", text: t("tracePatternCaption", [String(grid.reads), formatBytes(grid.bytes_read), formatBytes(grid.file_size ?? 0)]) }),
  );
}

/** A square of `side` turned 45° about its centre (cx, cy): a diamond, still a rect. */
function diamond(cx, cy, side) {
  return { x: cx - side / 2, y: cy - side / 2, width: side, height: side, transform: `rotate(45 ${cx} ${cy})` };
}

/** The access pattern's legend: each mark's shape drawn as in the chart, with its meaning. */
function patternLegend() {
  const sample = (mark) => {
    const svg = svgEl("svg", { width: 14, height: 10, viewBox: "0 0 14 10", class: "trace-legend-mark", "aria-hidden": "true" });
    svg.append(
      svgEl("rect", mark === "fault" ? { ...diamond(7, 5, 6), class: "trace-fault" } : { x: 1, y: 3, width: 12, height: 4, class: "trace-window" }),
    );
    return svg;
  };
  return el(
    "ul",
    { className: "legend trace-legend", attrs: { "data-testid": "trace-pattern-legend" } },
    el("li", { attrs: { "data-mark": "fault" } }, sample("fault"), ` ${t("tracePatternLegendFault")}`),
    el("li", { attrs: { "data-mark": "window" } }, sample("window"), ` ${t("tracePatternLegendWindow")}`),
  );
}

function diskChart(v, span) {
  const { svg, x } = frame(span, t("traceDiskAxis"), t("traceDiskTitle"));
  svg.dataset.testid = "trace-disk-chart";
  const plotH = H - M.top - M.bottom;
  const ch = plotH / v.rows;
  const cw = (W - M.left - M.right) / v.cols;
  for (const [col, row] of v.cells) {
    svg.append(svgEl("rect", { x: x((col / v.cols) * span), y: M.top + row * ch, width: Math.max(1.5, cw), height: Math.max(1.5, ch), class: "trace-disk-read" }));
  }
  return el(
    "figure",
    {},
    svg,
    el("figcaption", { className: "detail", text: t(v.source === "block" ? "traceDiskCaptionBlock" : "traceDiskCaptionExtents", [formatBytes(v.min), formatBytes(v.max), String(v.seeks)]) }),
  );
}

/**
 * The per-file table of one kind: files the start read from disk, or (`written`) files it
 * wrote, whose pages entered the cache without a disk read: kept apart, so no written file is
 * counted as a read.
 */
function table(summary, { written = false } = {}) {
  const rows = summary.files.filter((r) => r.written === written);
  const head = el(
    "tr",
    {},
    ...[written ? "traceColFileWritten" : "traceColFile", written ? "traceColWritten" : "traceColRead", "traceColShare", "traceColReads", "traceColFirst", "traceColLast"].map((k) =>
      el("th", { text: t(k), attrs: { scope: "col" } }),
    ),
  );
  const body = rows.slice(0, 60).map((r) => {
    const tr = el(
      "tr",
      {},
      fileCell(r),
      el("td", { text: formatBytes(r.bytes_read), className: "num" }),
      el("td", { text: r.share === null ? "—" : formatPercent(r.share), className: "num" }),
      el("td", { text: String(r.requests), className: "num" }),
      el("td", { text: formatMs(r.first_ms), className: "num" }),
      el("td", { text: formatMs(r.last_ms), className: "num" }),
    );
    tr.dataset.path = r.path;
    tr.dataset.bytesRead = String(r.bytes_read);
    tr.dataset.written = String(r.written);
    return tr;
  });
  return el("table", { attrs: { "data-testid": written ? "trace-files-written" : "trace-files" } }, el("thead", {}, head), el("tbody", {}, ...body));
}

/** The imported traces already sent to the host, by the object the page holds: their upload ids. */
const uploads = new WeakMap();

/** The id the host summarizes `trace` by: the stored trace's, or an upload of an import's text. */
async function summaryId(trace, origin) {
  if (origin === "host") {
    return state.id;
  }
  if (!uploads.has(trace)) {
    let upload = null;
    for (const page of uploadPages(JSON.stringify(trace))) {
      const reply = await relay.request("trace_upload", { ...page, ...(upload ? { upload } : {}) });
      upload = reply.upload;
    }
    uploads.set(trace, upload);
  }
  return uploads.get(trace);
}

/** The host's summary of the shown trace on its axis, with file `file`'s access pattern. */
function summarize(file = null) {
  const axisEnd = startSpanEnd(state.milestones.map((m) => ({ name: m.name, value: m.sinceOrigin })));
  return relay.request("trace_summary", {
    trace: state.shown,
    ...(axisEnd === null ? {} : { axis_end_ms: axisEnd }),
    ...(file === null ? {} : { file }),
  });
}

/**
 * Draws `trace` (from the host, or an import named `origin`) into the section, from the host's
 * summary of it. `milestones` ({name: ms since process}) are the traced process's; the host's
 * trace is of this Firefox.
 */
export async function showTrace(trace, origin = "host", milestones = null) {
  state.trace = trace;
  state.origin = origin;
  state.milestones =
    origin === "host"
      ? state.own
      : Object.entries(milestones ?? {})
          .filter(([, ms]) => typeof ms === "number" && Number.isFinite(ms) && ms >= 0)
          .map(([name, ms]) => ({ name, sinceOrigin: ms }))
          .sort((a, b) => a.sinceOrigin - b.sinceOrigin);
  let summary;
  try {
    state.shown = await summaryId(trace, origin);
    summary = await summarize();
  } catch (error) {
    showNone("traceSummaryError", hostErrorText(error, t));
    return null;
  }
  if (state.trace !== trace) {
    return null; // another trace was shown meanwhile
  }
  state.summary = summary;
  draw(trace, summary, origin);
  return summary;
}

function draw(trace, summary, origin) {
  const root = section();
  root.dataset.state = "ready";
  root.dataset.origin = origin;
  const span = summary.span_ms;
  root.dataset.span = String(span);
  const a = summary.agreement;
  root.dataset.lostEvents = String(a.lost_events);
  root.dataset.tracedBytes = String(a.traced_bytes);
  root.dataset.treeReadBytes = String(a.tree_read_bytes ?? "");
  const summaryLine = el("p", {
    attrs: { "data-testid": "trace-summary" },
    text: tn("traceSummary", a.read_files, [
      formatBytes(a.traced_bytes),
      String(a.read_files),
      a.tree_read_bytes === null ? "—" : formatBytes(a.tree_read_bytes),
      a.ratio === null ? "—" : formatPercent(a.ratio, undefined, { fractionDigits: 1 }),
      String(a.lost_events),
      formatBytes(a.written_bytes),
    ]),
  });
  const lost = el("p", { className: "detail res-warning", attrs: { "data-testid": "trace-lost" }, text: tn("traceLost", a.lost_events) });
  lost.hidden = a.lost_events === 0;
  const about = el("p", {
    className: "detail",
    text: t("traceAbout", [String(trace.pid), trace.firefox_version ?? "?", trace.build_id ?? "?", formatMs(Math.max(0, trace.attached_ms)), formatMs(trace.ended_ms), endedByText(trace, t), trace.source]),
  });
  const notes = traceNoteTexts(trace, t).map((text) => el("p", { className: "detail", text }));
  const picker = el("select", { attrs: { "data-testid": "trace-file-picker", "aria-label": t("tracePickFile") } });
  const candidates = summary.files.filter((r) => !r.written && r.bytes_read > 0);
  for (const r of candidates.slice(0, 80)) {
    picker.append(el("option", { text: r.path, attrs: { value: String(r.index) } }));
  }
  state.picked = summary.pattern?.file ?? null;
  if (state.picked !== null) {
    picker.value = String(state.picked);
  }
  const patternBox = el("div", { attrs: { "data-testid": "trace-pattern" } });
  const drawPattern = (grid) => {
    patternBox.replaceChildren(grid ? patternChart(grid, span) : el("p", { text: t("traceNoFiles") }));
  };
  picker.addEventListener("change", async () => {
    state.picked = Number(picker.value);
    patternBox.dataset.state = "loading";
    try {
      const picked = await summarize(state.picked);
      drawPattern(picked.pattern);
    } catch (error) {
      patternBox.replaceChildren(el("p", { className: "detail res-warning", text: t("traceSummaryError", [hostErrorText(error, t)]) }));
    }
    patternBox.dataset.state = "ready";
  });
  drawPattern(summary.pattern);
  // The Firefox Profiler (issue 21): the host exports the traces it stores; an imported one is
  // exported with the CLI (its `trace export` reads an about:startup export file).
  const profiler =
    origin === "host" && state.id
      ? profilerControls(state.id, { request: (command, params) => relay.request(command, params), recordCommand: () => traceRecordCommand() })
      : importedProfilerNote();
  root.replaceChildren(
    el("h2", { text: t("traceHeading"), attrs: { id: "trace-heading" } }),
    summaryLine,
    lost,
    about,
    ...notes,
    profiler,
    el("h3", { text: t("traceReadHeading") }),
    readChart(trace, summary.read_over_time, span),
    el("h3", { text: t("tracePatternHeading") }),
    el("label", { text: `${t("tracePickFile")} ` }, picker),
    patternBox,
    el("h3", { text: t("traceDiskHeading") }),
    diskChart(summary.disk, span),
    el("h3", { text: t("traceFilesHeading") }),
    table(summary),
    ...(summary.files.some((f) => f.written) ? [el("h3", { text: t("traceWrittenHeading") }), el("p", { className: "detail", text: t("traceWrittenExplanation") }), table(summary, { written: true })] : []),
    el("h3", { text: t("traceProfileHeading") }),
    profileSection(summary.profile),
    el("h3", { text: t("traceCodeHeading") }),
    codeSection(summary),
    el("h3", { text: t("traceEntriesHeading") }),
    entriesSection(summary),
  );
}

/**
 * No trace of this start: why, and the command that records one, as the host says it runs here
 * (`recordCommand`: trace_list's record_command; else hello's root command and RECORD_ARGS).
 */
function showNone(reasonKey, detail = "", recordCommand = null) {
  const root = section();
  root.dataset.state = "none";
  const command = recordCommand ?? hostCommands(null).runAsRoot(RECORD_ARGS);
  root.replaceChildren(
    el("h2", { text: t("traceHeading"), attrs: { id: "trace-heading" } }),
    el("p", { text: t(reasonKey, [detail]) }),
    el("p", { text: t("traceHowTo") }),
    el("pre", {}, el("code", { text: command, attrs: { "data-testid": "trace-command" } })),
    // The sudo advice only where the command has sudo (a host run as root prints none).
    el("p", { className: "detail", text: t(command.startsWith("sudo ") ? "traceHowToDetail" : "traceHowToDetailRoot") }),
  );
}

/** How to get an imported trace into the Profiler: the host's `trace export`, by the name or path that runs it here. */
function importedProfilerNote() {
  const note = el("p", { className: "detail", attrs: { "data-testid": "profiler-imported" }, text: t("profilerImported", [hostCommands(null).run(EXPORT_ARGS)]) });
  hostHello()
    .then((hello) => {
      note.textContent = t("profilerImported", [hostCommands(hello).run(EXPORT_ARGS)]);
    })
    .catch(() => {});
  return note;
}

/** The host's command that writes a Firefox Profiler profile from an about:startup export file. */
const EXPORT_ARGS = "trace export FILE";

async function loadMilestones() {
  try {
    const raw = await startupApi(browser).getStartupInfo();
    state.own = milestoneRows(raw).rows;
  } catch {
    state.own = [];
  }
}

async function fetchTrace(id) {
  const chunks = [];
  let offset = 0;
  for (;;) {
    const chunk = await relay.request("trace_fetch", { trace: id, offset, redact: true });
    chunks.push(chunk);
    if (chunk.next_offset === null || chunk.next_offset === undefined) {
      return assembleTrace(chunks);
    }
    offset = chunk.next_offset;
  }
}

/** Shows this process's trace if the host has one, else the command that records one. */
export async function initTrace() {
  const root = section();
  if (!root) {
    return;
  }
  root.dataset.state = "loading";
  await loadMilestones();
  let listing;
  try {
    listing = await relay.request("trace_list");
  } catch (error) {
    showNone("traceNoHost", hostErrorText(error, t));
    return;
  }
  // Stored traces the host found damaged (cut short) and set aside with this listing: said once
  // by the host, so kept on the section whatever it shows next (issue 39 #4).
  const setAside = setAsideTexts(listing, t);
  const saySetAside = () => {
    const lines = setAside.map((text) => el("p", { text, className: "detail res-warning", attrs: { "data-line": "set-aside" } }));
    const heading = root.querySelector("h2");
    if (heading) heading.after(...lines);
    else root.prepend(...lines);
  };
  // The host marks the trace of its own Firefox (same pid and process start).
  const meta = listing.current ? (listing.traces.find((m) => m.id === listing.current) ?? null) : null;
  if (!meta) {
    let pid = "?";
    try {
      pid = String((await relay.request("firefox")).pid);
    } catch {
      // the explanation below stands without the pid
    }
    showNone("traceNone", pid, await traceRecordCommand(listing));
    saySetAside();
    return;
  }
  try {
    state.id = meta.id;
    state.host = await fetchTrace(meta.id);
    state.hostSummary = await showTrace(state.host, "host");
    document.dispatchEvent(new CustomEvent(HOST_TRACE_EVENT, { detail: state.host }));
  } catch (error) {
    showNone("traceFetchError", String(error?.message ?? error), await traceRecordCommand(listing));
  }
  saySetAside();
}
