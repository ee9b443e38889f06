// "omni.ja entries between builds" (issue 21, item 5): under the comparison, the entries whose
// reads changed the most between the two newest Firefox builds the page holds traces of (this
// start's, imported traces, imported exports' omniEntries), from ../lib/models/entries-by-build.js.
// Built with createElement only.
import { t, tn } from "../lib/wording/i18n.js";
import { formatBytes } from "../lib/wording/format.js";
import { buildChanges, ENTRIES_PER_BUILD } from "../lib/models/entries-by-build.js";
import { el } from "./dom.js";

function buildText(b) {
  return t("compareEntriesBuild", [b.firefoxVersion ?? "?", b.buildId ?? "?", tn("compareEntriesStarts", b.traces.length, [String(b.traces.length)])]);
}

function changeText(change) {
  return t(change > 0 ? "compareEntriesMore" : "compareEntriesLess", [formatBytes(Math.abs(change))]);
}

/**
 * Renders `summary` (entriesByBuild's, or null) into `box`: nothing without a traced build, a
 * sentence with one build, the table of changes with two or more.
 */
export function renderEntriesChanges(box, summary) {
  const builds = summary?.builds ?? [];
  box.dataset.builds = String(builds.length);
  if (builds.length === 0) {
    box.replaceChildren();
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const heading = el("h3", { text: t("compareEntriesHeading") });
  const changes = buildChanges(summary);
  if (changes === null) {
    box.dataset.state = "one-build";
    box.replaceChildren(heading, el("p", { className: "detail", text: t("compareEntriesOneBuild", [buildText(builds[0])]) }));
    return;
  }
  box.dataset.state = "ready";
  const parts = [heading, el("p", { text: t("compareEntriesIntro", [buildText(changes.from), buildText(changes.to)]) })];
  if (changes.rows.length === 0) {
    parts.push(el("p", { className: "detail", attrs: { "data-testid": "compare-entries-same" }, text: t("compareEntriesNoChange") }));
  } else {
    const head = el(
      "tr",
      {},
      ...["traceColArchive", "traceColEntry", "compareEntriesColBefore", "compareEntriesColAfter", "compareEntriesColChange"].map((k) =>
        el("th", { text: t(k), attrs: { scope: "col" } }),
      ),
    );
    const body = changes.rows.map((r) => {
      const tr = el(
        "tr",
        {},
        el("td", { text: r.archive }),
        el("td", {}, el("code", { text: r.name })),
        el("td", { text: formatBytes(r.before), className: "num" }),
        el("td", { text: formatBytes(r.after), className: "num" }),
        el("td", { text: changeText(r.change), className: "num" }),
      );
      tr.dataset.entry = r.name;
      tr.dataset.change = String(r.change);
      return tr;
    });
    parts.push(el("div", { className: "table-scroll" }, el("table", { attrs: { "data-testid": "compare-entries-table" } }, el("thead", {}, head), el("tbody", {}, ...body))));
  }
  const rest = [t("compareEntriesSame", [String(changes.same)])];
  if (changes.onlyFrom + changes.onlyTo > 0) {
    rest.push(t("compareEntriesOnly", [String(changes.onlyFrom), String(ENTRIES_PER_BUILD), String(changes.onlyTo)]));
  }
  parts.push(el("p", { className: "detail", text: rest.join(" ") }));
  if (builds.length > 2) {
    parts.push(el("p", { className: "detail", text: t("compareEntriesMoreBuilds", [builds.map(buildText).join("; ")]) }));
  }
  box.replaceChildren(...parts);
}
