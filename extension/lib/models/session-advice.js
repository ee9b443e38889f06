// Advice for a session file grown large (issue 40, item 4): Firefox reads and parses the whole
// file (sessionstore.jsonlz4) at every start before it restores the first window, so its size is
// work of every start. The advice says what shrinks it; what that saves is given only where an
// imported A/B run measured turning session restore off (hot → hot-session-restore-off), with the
// benchmark's own file size beside it, never a figure of this start read as a saving. Pure.
import { abRows } from "./ab-saving.js";
import { median } from "./start-costs.js";

/**
 * From this size on the page calls the session file large and offers the advice. Assumed: no
 * published distribution of session file sizes was found (docs/design/realistic-profile.md); the
 * realistic presets' files are far below it, a few hundred tabs with their history reach it.
 */
export const LARGE_SESSION_FILE_BYTES = 5_000_000;

const valueOf = (figure) => (figure && typeof figure.value === "number" && Number.isFinite(figure.value) ? figure.value : null);

/**
 * The measured saving of turning session restore off, from the newest import ([{name, records}],
 * newest last) whose A/B run has that arm with a saving: {ms, low, high, nHot, nArm, from,
 * benchFileBytes (the median session file of its hot starts, or null)}; null where none has it.
 */
export function sessionRestoreSaving(imports) {
  for (const item of [...(imports ?? [])].reverse()) {
    const row = abRows(item.records ?? []).find((r) => r.arm === "hot-session-restore-off" && r.saving);
    if (row) {
      const sizes = (item.records ?? []).filter((r) => r.bench?.scenario === "hot").map((r) => valueOf(r.costs?.sessionRestore?.fileSizeBytes)).filter((v) => v !== null);
      const { ms, low, high, nHot, nArm } = row.saving;
      return { ms, low, high, nHot, nArm, from: item.name ?? null, benchFileBytes: sizes.length > 0 ? median(sizes) : null };
    }
  }
  return null;
}

/**
 * The advice for this start's session file, or null where it is not large (or its size is
 * unknown): {fileSizeBytes, readFileMs (or null), saving (sessionRestoreSaving, or null)}.
 */
export function sessionFileAdvice(costs, imports, { largeBytes = LARGE_SESSION_FILE_BYTES } = {}) {
  const size = valueOf(costs?.sessionRestore?.fileSizeBytes);
  if (size === null || size < largeBytes) {
    return null;
  }
  return { fileSizeBytes: size, readFileMs: valueOf(costs.sessionRestore.readFileMs), saving: sessionRestoreSaving(imports) };
}
