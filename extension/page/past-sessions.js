// "Firefox's own record of past sessions": the milestones Firefox archived in its Telemetry pings
// (lib/models/past-sessions.js), through the host's `telemetry` command. In basic mode the only source
// of Firefox's own milestones; in full mode an independent check of the history.
import { t } from "../lib/wording/i18n.js";
import { formatDateTime, formatMs } from "../lib/wording/format.js";
import { MAIN_MILESTONES, pastSessionsView } from "../lib/models/past-sessions.js";
import { $, el } from "./dom.js";
import { relay } from "./relay.js";

function render(view) {
  const root = $("past-sessions");
  root.dataset.state = view.state;
  $("past-sessions-status").textContent = t(view.key, view.params);
  const table = $("past-sessions-table");
  table.hidden = view.rows.length === 0;
  table.tHead.replaceChildren(
    el(
      "tr",
      {},
      el("th", { text: t("pastSessionsColWritten"), attrs: { scope: "col" } }),
      el("th", { text: t("pastSessionsColWhen"), attrs: { scope: "col" } }),
      el("th", { text: t("pastSessionsColFirefox"), attrs: { scope: "col" } }),
      ...MAIN_MILESTONES.map((name) => el("th", { text: name, className: "num", attrs: { scope: "col" } })),
      el("th", { text: t("pastSessionsColOthers"), attrs: { scope: "col" } }),
    ),
  );
  table.tBodies[0].replaceChildren(
    ...view.rows.map((row) =>
      el(
        "tr",
        { attrs: { "data-ping": row.id, title: t("pastSessionsSource", [row.file]) } },
        el("th", { text: row.created === null ? "—" : formatDateTime(row.created), attrs: { scope: "row" } }),
        el("td", { text: t(row.writtenKey, [row.reason ?? "?"]), attrs: { "data-written": row.written } }),
        el("td", { text: t("pastSessionsFirefox", [row.version ?? "?", row.buildId ?? "?"]) }),
        ...MAIN_MILESTONES.map((name) =>
          el("td", {
            text: row.milestones[name] === null ? t("pastSessionsMissing") : formatMs(row.milestones[name]),
            className: row.milestones[name] === null ? "num missing" : "num",
            attrs: { "data-milestone": name },
          }),
        ),
        el("td", { text: row.others.map(([name, ms]) => `${name} ${formatMs(ms)}`).join(", ") || "—" }),
      ),
    ),
  );
}

/** Reads the archive through the host and shows it; a missing host or an old one is said, not blank. */
export async function showPastSessions() {
  try {
    render(pastSessionsView({ archive: await relay.request("telemetry") }));
  } catch (error) {
    render(pastSessionsView({ error }));
  }
}
