// The trace section's "whose reads, which code, which resources" (issues 21 and 31): the user's
// profile's share of the start part by part, the code regions whose page faults read the most
// (and what they read), the omni.ja entries the start read the most (and the module Firefox
// loaded from each then), and an omni.ja row of the file table opening into its entries. Laid
// out from the host's summary (`trace_summary`) with createElement only: no figure is computed
// here.
import { t, tn } from "../lib/wording/i18n.js";
import { formatBytes, formatMs, formatShare } from "../lib/wording/format.js";
import { partAdvice, partName } from "../lib/wording/profile-text.js";
import { el } from "./dom.js";

function headRow(keys) {
  return el("tr", {}, ...keys.map((k) => el("th", { text: t(k), attrs: { scope: "col" } })));
}

function moduleText(row) {
  return row.module === null || row.module === undefined ? "—" : t("traceModuleAt", [row.module, row.module_ms === null || row.module_ms === undefined ? "?" : formatMs(row.module_ms)]);
}

/** "Which code faulted the pages in": a table, or why there is none. */
export function codeSection(summary) {
  const rows = summary.top_code;
  const box = el("div", { attrs: { "data-testid": "trace-code" } });
  if (rows.length === 0) {
    box.dataset.state = "none";
    box.append(el("p", { className: "detail", text: t("traceCodeNone") }));
    return box;
  }
  box.dataset.state = "ready";
  const body = rows.map((r) => {
    const what = r.read
      .slice(0, 3)
      .map(([name, bytes]) => `${name} ${formatBytes(bytes)}`)
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
    el("p", { className: "detail", text: t("traceCodeCaption", [String(summary.code_coverage.with_code)]) }),
  );
  return box;
}

function entryRow(r, withArchive) {
  const tr = el(
    "tr",
    {},
    ...(withArchive ? [el("td", { text: r.archive })] : []),
    el("td", {}, el("code", { text: r.name })),
    el("td", { text: formatBytes(r.bytes_read), className: "num" }),
    el("td", { text: formatMs(r.first_ms), className: "num" }),
    el("td", { text: moduleText(r) }),
  );
  tr.dataset.entry = r.name;
  return tr;
}

/** "The entries this start read the most": a table across omni.ja and browser/omni.ja, or why none. */
export function entriesSection(summary) {
  const rows = summary.top_entries;
  const box = el("div", { attrs: { "data-testid": "trace-entries" } });
  if (rows.length === 0) {
    box.dataset.state = "none";
    box.append(el("p", { className: "detail", text: t("traceEntriesNone") }));
    return box;
  }
  box.dataset.state = "ready";
  box.append(
    el(
      "table",
      {},
      el("thead", {}, headRow(["traceColArchive", "traceColEntry", "traceColRead", "traceColFirst", "traceColModule"])),
      el("tbody", {}, ...rows.map((r) => entryRow(r, true))),
    ),
    el("p", { className: "detail", text: t("traceEntriesCaption") }),
  );
  return box;
}

/**
 * The file table's cell of `row` (a summary file row): its path, and for an omni.ja the entries
 * its reads covered, folded (a <details>: bytes read, first read, the module loaded from it then).
 */
export function fileCell(row) {
  const entries = row.entries;
  if (!entries || entries.count === 0) {
    return el("td", { text: row.path });
  }
  const details = el(
    "details",
    { attrs: { "data-testid": "trace-file-entries" } },
    el("summary", { text: `${row.path} — ${tn("traceEntriesOpen", entries.count, [String(entries.count)])}` }),
    el(
      "table",
      {},
      el("thead", {}, headRow(["traceColEntry", "traceColRead", "traceColFirst", "traceColModule"])),
      el("tbody", {}, ...entries.rows.map((r) => entryRow(r, false))),
    ),
  );
  if (entries.count > entries.rows.length) {
    details.append(el("p", { className: "detail", text: t("traceEntriesMore", [String(entries.count - entries.rows.length)]) }));
  }
  return el("td", {}, details);
}

/** Why the profile's share is not told, by the host's state. */
const PROFILE_NONE_KEYS = {
  no_per_file_trace: "traceProfileNoTrace",
  not_found: "traceProfileNotFound",
};

/** "Your profile's part": its share of the reads and of the waiting, and its parts, or why not. */
export function profileSection(profile) {
  const box = el("div", { attrs: { "data-testid": "trace-profile" } });
  box.dataset.state = profile.state;
  if (profile.state !== "ready") {
    box.append(el("p", { className: "detail", text: t(PROFILE_NONE_KEYS[profile.state] ?? PROFILE_NONE_KEYS.not_found) }));
    return box;
  }
  box.dataset.profileBytes = String(profile.bytes.profile);
  box.dataset.totalBytes = String(profile.bytes.total);
  if (profile.bytes.total === 0) {
    box.append(el("p", { className: "detail", text: t("traceProfileNoReads") }));
    return box;
  }
  box.dataset.syncReads = String(profile.sync_reads.profile);
  box.dataset.totalSyncReads = String(profile.sync_reads.total);
  const block = profile.block_ms ? ` ${t("traceProfileBlock", [formatShare(profile.block_ms.profile, profile.block_ms.total)])}` : "";
  box.append(
    el("p", {
      attrs: { "data-testid": "trace-profile-share" },
      text:
        t("traceProfileShare", [
          formatBytes(profile.bytes.profile),
          formatBytes(profile.bytes.total),
          formatShare(profile.bytes.profile, profile.bytes.total),
          String(profile.sync_reads.profile),
          String(profile.sync_reads.total),
          formatShare(profile.sync_reads.profile, profile.sync_reads.total),
        ]) + block,
    }),
  );
  if (profile.parts.length > 0) {
    const body = profile.parts.map((r) => {
      const tr = el(
        "tr",
        {},
        el("td", { text: partName(r.part, t) }),
        el("td", { text: formatBytes(r.bytes), className: "num" }),
        el("td", { text: String(r.reads), className: "num" }),
        el("td", { text: String(r.sync_reads), className: "num" }),
        el("td", { text: partAdvice(r, profile.session, t) }),
      );
      tr.dataset.part = r.part.kind;
      tr.dataset.bytes = String(r.bytes);
      return tr;
    });
    box.append(el("table", {}, el("thead", {}, headRow(["traceColPart", "traceColRead", "traceColReads", "traceColWaited", "traceColAdvice"])), el("tbody", {}, ...body)));
  }
  box.append(el("p", { className: "detail", text: t("traceProfileCaption") }));
  return box;
}
