// Basic mode's startup milestones: a past session's, from the profile's archived Telemetry
// pings, which the host reads (`startup_pings`, docs/PROTOCOL.md). Release has no experiment API,
// so this start's own milestones are out of reach; each main ping Firefox archives at the end of
// a session holds that session's startup timestamps in `payload.simpleMeasurements`, in ms since
// its process started. Pure: no browser.*, no DOM.

/**
 * The entries of simpleMeasurements that are startup milestones (ms since the process started).
 * The others there (totalTime in s, uptime in min, activeTicks, counters, shutdown times) are
 * not shown as milestones.
 */
export const PING_MILESTONES = new Set([
  "start",
  "main",
  "selectProfile",
  "afterProfileLocked",
  "startupCrashDetectionBegin",
  "startupCrashDetectionEnd",
  "createTopLevelWindow",
  "sessionRestoreInit",
  "firstPaint",
  "firstPaint2",
  "sessionRestored",
  "delayedStartupStarted",
  "delayedStartupFinished",
]);

/**
 * The newest ping of a `startup_pings` reply that holds at least one milestone, as
 * {ping, rows}: rows ordered by time, each {name, sinceOrigin, gap, ms: null} like
 * milestoneRows' (no time of day: the ping gives none for the milestones). null when none does.
 */
export function pingMilestones(reply) {
  for (const ping of reply?.pings ?? []) {
    const entries = Object.entries(ping?.simple_measurements ?? {})
      .filter(([name, value]) => PING_MILESTONES.has(name) && typeof value === "number" && Number.isFinite(value) && value >= 0)
      .sort(([nameA, a], [nameB, b]) => a - b || (nameA < nameB ? -1 : nameA > nameB ? 1 : 0));
    if (entries.length === 0) {
      continue;
    }
    let previous = null;
    const rows = entries.map(([name, value]) => {
      const row = { name, ms: null, sinceOrigin: value, gap: previous === null ? null : value - previous };
      previous = value;
      return row;
    });
    return { ping, rows };
  }
  return null;
}
