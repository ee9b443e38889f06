// The omni.ja entries read the most per Firefox build, across the traced starts the page holds
// (issue 21, item 5): what the export carries as `omniEntries` (docs/export-format.md, "omni.ja
// entries per build") so two builds can be set side by side, and the entries whose reads changed
// the most between two builds. Pure: no DOM, no browser.*.

export const OMNI_ENTRIES_VERSION = 1;
/** Entries kept per build: the export stays small (a cold start reads thousands of entries). */
export const ENTRIES_PER_BUILD = 100;

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isCount = (v) => Number.isInteger(v) && v >= 0;
const isStringOrNull = (v) => v === null || typeof v === "string";

/** A trace's id as the host names its stored traces: recorded_at_ms-pid-process_start_ticks. */
export function traceId(trace) {
  return `${trace.recorded_at_ms ?? "?"}-${trace.pid ?? "?"}-${trace.process_start_ticks ?? "?"}`;
}

/** Whether the host mapped this trace's archive reads to entries (an older host, /proc-only: not). */
function hasEntries(trace) {
  return (trace?.files ?? []).some((f) => Array.isArray(f.entries));
}

const entryKey = (e) => `${e.archive}\u0000${e.name}`;

/**
 * Every entry a trace's archives say its reads covered: [{archive, name, bytesRead}], the archive
 * named by its path in the install folder ("omni.ja", "browser/omni.ja"), as the host names it
 * (native-host/src/trace/summary/files.rs `short_name`).
 */
function entriesOf(trace) {
  const dir = trace.install_dir ?? "";
  const archive = (path) => (dir && path.startsWith(`${dir}/`) ? path.slice(dir.length + 1) : path);
  return (trace.files ?? []).flatMap((f) =>
    Array.isArray(f.entries) ? f.entries.map((e) => ({ archive: archive(f.path), name: e.name, bytesRead: e.bytes_read })) : [],
  );
}

/**
 * The summary of the traces and earlier summaries (imported exports' `omniEntries`) the page
 * holds: {version, builds: [{buildId, firefoxVersion, traces: [trace ids], entries: [{archive,
 * name, bytesRead (mean per traced start of the build, rounded), starts (how many of them read
 * it)}]}]}, newest build first; null when no trace has entries. A trace is counted once however
 * often it comes (the host's and an import of the same start); an earlier summary's build adds
 * its starts only when it shares none with what is counted already (a summary cannot be split).
 */
export function entriesByBuild({ traces = [], summaries = [] }, limit = ENTRIES_PER_BUILD) {
  const builds = new Map();
  const counted = new Set();
  const buildOf = (buildId, firefoxVersion) => {
    const key = buildId ?? "";
    if (!builds.has(key)) {
      builds.set(key, { buildId, firefoxVersion, traces: [], totals: new Map() });
    }
    const b = builds.get(key);
    b.firefoxVersion ??= firefoxVersion;
    return b;
  };
  const add = (b, row, bytes, starts) => {
    const key = entryKey(row);
    const e = b.totals.get(key) ?? { archive: row.archive, name: row.name, bytes: 0, starts: 0 };
    e.bytes += bytes;
    e.starts += starts;
    b.totals.set(key, e);
  };
  for (const trace of traces) {
    const id = traceId(trace);
    if (!hasEntries(trace) || counted.has(id)) {
      continue;
    }
    counted.add(id);
    const b = buildOf(trace.build_id ?? null, trace.firefox_version ?? null);
    b.traces.push(id);
    for (const row of entriesOf(trace)) {
      add(b, row, row.bytesRead, row.bytesRead > 0 ? 1 : 0);
    }
  }
  // Fuller summaries first: of two sharing a start, the one with more starts is kept.
  const earlier = summaries.flatMap((s) => s?.builds ?? []).sort((a, b) => b.traces.length - a.traces.length);
  for (const sb of earlier) {
    if (sb.traces.some((id) => counted.has(id))) {
      continue;
    }
    sb.traces.forEach((id) => counted.add(id));
    const b = buildOf(sb.buildId, sb.firefoxVersion);
    b.traces.push(...sb.traces);
    for (const row of sb.entries) {
      add(b, row, row.bytesRead * sb.traces.length, row.starts);
    }
  }
  if (builds.size === 0) {
    return null;
  }
  const out = [...builds.values()].map((b) => ({
    buildId: b.buildId,
    firefoxVersion: b.firefoxVersion,
    traces: b.traces,
    entries: [...b.totals.values()]
      .map((e) => ({ archive: e.archive, name: e.name, bytesRead: Math.round(e.bytes / b.traces.length), starts: e.starts }))
      .sort((x, y) => y.bytesRead - x.bytesRead || x.archive.localeCompare(y.archive) || x.name.localeCompare(y.name))
      .slice(0, limit),
  }));
  // Build ids are the build's time (YYYYMMDDhhmmss): newest first, an unknown build last.
  out.sort((x, y) => (y.buildId ?? "").localeCompare(x.buildId ?? ""));
  return { version: OMNI_ENTRIES_VERSION, builds: out };
}

/**
 * The entries whose reads changed the most between two builds of `summary` (by default the two
 * newest: `to` the newest, `from` the one before): {from, to, rows: [{archive, name, before,
 * after, change}], onlyFrom, onlyTo} with at most `limit` rows, biggest change (either way)
 * first; null with fewer than two builds. Only entries in both builds' lists are compared: an
 * entry missing from one list was read less than its last entry there (or not at all), not 0.
 */
export function buildChanges(summary, { limit = 10, from = null, to = null } = {}) {
  const builds = summary?.builds ?? [];
  if (builds.length < 2) {
    return null;
  }
  const newer = to ?? builds[0];
  const older = from ?? builds.find((b) => b !== newer);
  const before = new Map(older.entries.map((e) => [entryKey(e), e]));
  const after = new Map(newer.entries.map((e) => [entryKey(e), e]));
  const rows = [];
  for (const [key, a] of after) {
    const b = before.get(key);
    if (b) {
      rows.push({ archive: a.archive, name: a.name, before: b.bytesRead, after: a.bytesRead, change: a.bytesRead - b.bytesRead });
    }
  }
  rows.sort((x, y) => Math.abs(y.change) - Math.abs(x.change) || x.name.localeCompare(y.name));
  return {
    from: older,
    to: newer,
    rows: rows.filter((r) => r.change !== 0).slice(0, limit),
    same: rows.filter((r) => r.change === 0).length,
    onlyFrom: [...before.keys()].filter((k) => !after.has(k)).length,
    onlyTo: [...after.keys()].filter((k) => !before.has(k)).length,
  };
}

/** What is wrong with an export's `omniEntries` ("field: what is wrong" each), [] when nothing. */
export function omniEntriesProblems(x, at = "omniEntries") {
  if (!isObject(x)) {
    return [`${at}: must be an object or null`];
  }
  if (x.version !== OMNI_ENTRIES_VERSION) {
    return [`${at}.version: must be ${OMNI_ENTRIES_VERSION}`];
  }
  if (!Array.isArray(x.builds)) {
    return [`${at}.builds: must be a list`];
  }
  const problems = [];
  x.builds.forEach((b, i) => {
    const here = `${at}.builds[${i}]`;
    if (!isObject(b)) {
      problems.push(`${here}: must be an object`);
      return;
    }
    for (const field of ["buildId", "firefoxVersion"]) {
      if (!isStringOrNull(b[field] ?? null)) {
        problems.push(`${here}.${field}: must be a string or null`);
      }
    }
    if (!Array.isArray(b.traces) || b.traces.length === 0 || !b.traces.every((id) => typeof id === "string")) {
      problems.push(`${here}.traces: must be a list of trace ids, at least one`);
    }
    if (!Array.isArray(b.entries)) {
      problems.push(`${here}.entries: must be a list`);
      return;
    }
    b.entries.forEach((e, j) => {
      const ok = isObject(e) && typeof e.archive === "string" && typeof e.name === "string" && isCount(e.bytesRead) && isCount(e.starts);
      if (!ok) {
        problems.push(`${here}.entries[${j}]: must be {archive, name, bytesRead, starts} (whole numbers ≥ 0)`);
      }
    });
  });
  return problems;
}
