// Pure logic for Firefox's startup milestones: no browser.*, no DOM.

/** The milestone every time is measured from, as the original about:startup did. */
export const ORIGIN = "process";

/**
 * Keeps only usable entries of a {name: ms since epoch} object: finite, positive numbers.
 * A missing or invalid milestone stays missing; it never becomes 0.
 */
export function cleanMilestones(raw) {
  const out = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    if (typeof value === "number" && Number.isFinite(value) && value > 0) {
      out[name] = value;
    }
  }
  return out;
}

/**
 * Turns {name: ms since epoch} into rows ordered by time (ties by name), each with
 * - `sinceOrigin`: ms since `process` (or, if `process` is missing, since the earliest milestone),
 * - `gap`: ms since the previous row (null for the first).
 * Returns {origin, rows}; `origin` names the milestone the times are relative to (null when empty).
 */
export function milestoneRows(raw) {
  const entries = Object.entries(cleanMilestones(raw)).sort(
    ([nameA, a], [nameB, b]) => a - b || (nameA < nameB ? -1 : nameA > nameB ? 1 : 0),
  );
  if (entries.length === 0) {
    return { origin: null, rows: [] };
  }
  const [originName, originMs] = entries.find(([name]) => name === ORIGIN) ?? entries[0];
  let previous = null;
  const rows = entries.map(([name, ms]) => {
    const row = {
      name,
      ms,
      sinceOrigin: ms - originMs,
      gap: previous === null ? null : ms - previous,
    };
    previous = ms;
    return row;
  });
  return { origin: originName, rows };
}

/** Whether every milestone named in `names` is present. */
export function hasMilestones(raw, names) {
  const clean = cleanMilestones(raw);
  return names.every((name) => name in clean);
}
