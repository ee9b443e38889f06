// Past sessions' startup milestones from Firefox's own archived Telemetry pings, as the host's
// `telemetry` command reads them (docs/PROTOCOL.md; native-host/src/firefox/telemetry.rs). The one
// source of Firefox's own milestones a Firefox without the experiment API (Release, basic mode)
// leaves to an add-on: each session's `main` ping, written when that session ends, holds its
// `main`, `sessionRestored` and other moments in ms since its process start. Pure: no browser.*,
// no DOM; page/past-sessions.js shows what this returns.

/**
 * The words of when in its session a ping was written: the host's `written` (its one definition
 * from the ping's reason, native-host/src/firefox/telemetry.rs `written`, which the CLI's
 * "written" column words too), never guessed here. A host older than `written`: "unknown".
 */
export const WRITTEN_KEYS = {
  session_end: "pastSessionsWrittenSessionEnd",
  mid_session: "pastSessionsWrittenMidSession",
  aborted: "pastSessionsWrittenAborted",
  unknown: "pastSessionsWrittenUnknown",
};

/** The columns the table always has; a session without one shows it as missing, never 0. */
export const MAIN_MILESTONES = ["main", "firstPaint", "firstPaint2", "sessionRestored"];

/**
 * The host's reply (or its error) → what the page shows:
 * {state, key, params, rows}; `state` is "ready", "empty", "no-archive", "missing-host" or "error";
 * `key`/`params` word the status line; each row is {id, created, version, buildId, reason,
 * written, writtenKey, milestones: {name: ms | null}, others: [[name, ms]], file}.
 */
export function pastSessionsView({ archive = null, error = null } = {}) {
  if (error) {
    if (error.code === "host_missing" || error.code === "host_disconnected") {
      return { state: "missing-host", key: "pastSessionsNoHost", params: [], rows: [] };
    }
    if (error.code === "unknown_command") {
      return { state: "error", key: "pastSessionsOldHost", params: [], rows: [] };
    }
    return { state: "error", key: "pastSessionsError", params: [String(error.message ?? error.code)], rows: [] };
  }
  const folder = `${archive?.profile ?? "?"}/datareporting/archived`;
  if (!archive?.archive_found) {
    return { state: "no-archive", key: "pastSessionsNoArchive", params: [folder], rows: [] };
  }
  const rows = (archive.sessions ?? []).map((session) => {
    const milestones = {};
    for (const name of MAIN_MILESTONES) {
      const ms = session.milestones?.[name];
      milestones[name] = Number.isFinite(ms) ? ms : null;
    }
    const others = Object.entries(session.milestones ?? {})
      .filter(([name, ms]) => !MAIN_MILESTONES.includes(name) && Number.isFinite(ms))
      .sort(([, a], [, b]) => a - b);
    return {
      id: session.ping_id,
      created: Date.parse(session.created ?? "") || null,
      version: session.version ?? null,
      buildId: session.build_id ?? null,
      reason: session.reason ?? null,
      written: Object.hasOwn(WRITTEN_KEYS, session.written) ? session.written : "unknown",
      writtenKey: WRITTEN_KEYS[Object.hasOwn(WRITTEN_KEYS, session.written) ? session.written : "unknown"],
      milestones,
      others,
      file: session.file,
    };
  });
  if (rows.length === 0) {
    return { state: "empty", key: "pastSessionsEmpty", params: [folder, String(archive.main_pings ?? 0)], rows };
  }
  return { state: "ready", key: "pastSessionsReady", params: [String(rows.length), folder], rows };
}
