// The trace section's "which code, which resources" (issue 21): the code regions whose page
// faults read the most (and what they read), the omni.ja entries the start read the most (and
// the module Firefox loaded from each then), and an omni.ja row of the file table opening into
// its entries. Built from ../lib/models/trace-sources.js with createElement only.
import { t, tn } from "../lib/wording/i18n.js";
import { formatBytes, formatMs } from "../lib/wording/format.js";
import { entryRows, faultSiteCoverage, installName, topCode, topEntries } from "../lib/models/trace-sources.js";
import { el } from "./dom.js";

/** How many entries an omni.ja row opens into (the rest are counted). */
const ENTRY_ROWS = 100;

function headRow(keys) {
  return el("tr", {}, ...keys.map((k) => el("th", { text: t(k), attrs: { scope: "col" } })));
}

function moduleText(row) {
  return row.module === null ? "—" : t("traceModuleAt", [row.module, row.moduleMs === null ? "?" : formatMs(row.moduleMs)]);
}

/** "Which code faulted the pages in": a table, or why there is none. */
export function codeSection(trace) {
  const rows = topCode(trace, 10);
  const box = el("div", { attrs: { "data-testid": "trace-code" } });
  if (rows.length === 0) {
    box.dataset.state = "none";
    box.append(el("p", { className: "detail", text: t("traceCodeNone") }));
    return box;
  }
  box.dataset.state = "ready";
  const cover = faultSiteCoverage(trace);
  const body = rows.map((r) => {
    const what = r.read
      .slice(0, 3)
      .map((x) => `${installName(x.path, trace.install_dir ?? null)} ${formatBytes(x.bytes)}`)
      .join(", ");
    const tr = el(
      "tr",
      {},
      el("td", {}, el("code", { text: r.label })),
      el("td", { text: String(r.pages), className: "num" }),
      el("td", { text: formatBytes(r.bytes), className: "num" }),
      el("td", { text: String(r.reads), className: "num" }),
      el("td", { text: what }),
    );
    tr.dataset.code = r.label;
    tr.dataset.bytes = String(r.bytes);
    return tr;
  });
  box.append(
    el("table", {}, el("thead", {}, headRow(["traceColCode", "traceColPages", "traceColRead", "traceColReads", "traceColCodeRead"])), el("tbody", {}, ...body)),
    el("p", { className: "detail", text: t("traceCodeCaption", [String(cover.withCode)]) }),
  );
  return box;
}

/** "The entries this start read the most": a table across omni.ja and browser/omni.ja, or why none. */
export function entriesSection(trace) {
  const rows = topEntries(trace, 15);
  const box = el("div", { attrs: { "data-testid": "trace-entries" } });
  if (rows.length === 0) {
    box.dataset.state = "none";
    box.append(el("p", { className: "detail", text: t("traceEntriesNone") }));
    return box;
  }
  box.dataset.state = "ready";
  const body = rows.map((r) => {
    const tr = el(
      "tr",
      {},
      el("td", { text: r.archive }),
      el("td", {}, el("code", { text: r.name })),
      el("td", { text: formatBytes(r.bytesRead), className: "num" }),
      el("td", { text: r.firstMs === null ? "—" : formatMs(r.firstMs), className: "num" }),
      el("td", { text: moduleText(r) }),
    );
    tr.dataset.entry = r.name;
    return tr;
  });
  box.append(
    el("table", {}, el("thead", {}, headRow(["traceColArchive", "traceColEntry", "traceColRead", "traceColFirst", "traceColModule"])), el("tbody", {}, ...body)),
    el("p", { className: "detail", text: t("traceEntriesCaption") }),
  );
  return box;
}

/**
 * The file table's cell for `file`: its path, and for an omni.ja the entries its reads covered,
 * folded (a <details>: bytes read, first read, the module loaded from it then).
 */
export function fileCell(file, label) {
  const rows = entryRows(file);
  if (rows === null || rows.length === 0) {
    return el("td", { text: label });
  }
  const shown = rows.slice(0, ENTRY_ROWS).map((r) =>
    el(
      "tr",
      {},
      el("td", {}, el("code", { text: r.name })),
      el("td", { text: formatBytes(r.bytesRead), className: "num" }),
      el("td", { text: r.firstMs === null ? "—" : formatMs(r.firstMs), className: "num" }),
      el("td", { text: moduleText(r) }),
    ),
  );
  const details = el(
    "details",
    { attrs: { "data-testid": "trace-file-entries" } },
    el("summary", { text: `${label} — ${tn("traceEntriesOpen", rows.length, [String(rows.length)])}` }),
    el("table", {}, el("thead", {}, headRow(["traceColEntry", "traceColRead", "traceColFirst", "traceColModule"])), el("tbody", {}, ...shown)),
  );
  if (rows.length > ENTRY_ROWS) {
    details.append(el("p", { className: "detail", text: t("traceEntriesMore", [String(rows.length - ENTRY_ROWS)]) }));
  }
  return el("td", {}, details);
}
