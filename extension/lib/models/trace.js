// The startup I/O trace (docs/export-format.md "trace", recorded by the host's `launch --trace`):
// checking one, and the aggregations the page draws. Pure: no DOM, no browser.*. Every chart is
// aggregated into bins, so a start that reads 75,000 pages draws a few hundred shapes.

export const TRACE_VERSION = 1;
export const PAGE = 4096;

/** The exact command that records a trace of a cold start (the page shows it when none exists). */
export const RECORD_COMMAND = "sudo about-startup-host launch --cold --trace";

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isNum = (v) => typeof v === "number" && Number.isFinite(v);
const isCount = (v) => Number.isInteger(v) && v >= 0;

/** What is wrong with `trace` (empty when it can be drawn). Unknown members are ignored. */
export function traceProblems(trace) {
  if (!isObject(trace)) {
    return ["trace: must be an object"];
  }
  const problems = [];
  if (trace.version !== TRACE_VERSION) {
    problems.push(`trace.version: must be ${TRACE_VERSION}`);
  }
  if (!["tracefs", "proc_sampler"].includes(trace.source)) {
    problems.push('trace.source: must be "tracefs" or "proc_sampler"');
  }
  for (const field of ["pid", "lost_events", "traced_read_bytes"]) {
    if (!isCount(trace[field])) {
      problems.push(`trace.${field}: must be a whole number ≥ 0`);
    }
  }
  for (const field of ["attached_ms", "ended_ms"]) {
    if (!isNum(trace[field])) {
      problems.push(`trace.${field}: must be a number`);
    }
  }
  if (!Array.isArray(trace.files) || trace.files.some((f) => !isObject(f) || typeof f.path !== "string" || !isCount(f.bytes_read))) {
    problems.push("trace.files: must be a list of {path, bytes_read, …}");
  }
  const fileCount = Array.isArray(trace.files) ? trace.files.length : 0;
  if (
    !Array.isArray(trace.events) ||
    trace.events.some((e) => !isObject(e) || !isNum(e.t) || !isCount(e.f) || e.f >= fileCount || !isCount(e.o) || !isCount(e.n))
  ) {
    problems.push("trace.events: must be a list of {t, f, o, n} with f an index into files");
  }
  // Every entry the charts read is checked too: an imported trace with a `null` among them, or
  // `extents` that is not a list, was stored and then broke the page half-way (issue 20 #8).
  if (!Array.isArray(trace.block ?? []) || (trace.block ?? []).some((b) => !isObject(b) || !isNum(b.t) || !isCount(b.pos) || !isCount(b.len))) {
    problems.push("trace.block: must be a list of {t, pos, len}");
  }
  if (
    !Array.isArray(trace.samples ?? []) ||
    (trace.samples ?? []).some((s) => !isObject(s) || !isNum(s.t) || !isCount(s.read_bytes) || !(s.majflt === undefined || isCount(s.majflt)))
  ) {
    problems.push("trace.samples: must be a list of {t, read_bytes, majflt}");
  }
  if (Array.isArray(trace.files)) {
    trace.files.forEach((f, i) => {
      if (!isObject(f)) {
        return;
      }
      if (!(f.size === undefined || f.size === null || isCount(f.size))) {
        problems.push(`trace.files[${i}].size: must be a whole number ≥ 0 or null`);
      }
      if (!(f.sections === undefined || (Array.isArray(f.sections) && f.sections.every((s) => isObject(s) && typeof s.name === "string" && isCount(s.offset) && isCount(s.size))))) {
        problems.push(`trace.files[${i}].sections: must be a list of {name, offset, size}`);
      }
      if (!(f.extents === undefined || (Array.isArray(f.extents) && f.extents.every((e) => Array.isArray(e) && e.length === 3 && e.every(isCount))))) {
        problems.push(`trace.files[${i}].extents: must be a list of [file offset, disk byte, length]`);
      }
      if (!(f.used === undefined || f.used === null || (Array.isArray(f.used) && f.used.every((r) => Array.isArray(r) && r.length === 2 && r.every(isCount))))) {
        problems.push(`trace.files[${i}].used: must be a list of [first page, count] or null`);
      }
    });
  }
  return problems;
}

/** The largest of `values` (numbers), or `floor` when there are none; a loop, never a spread
 * into Math.max (600,000 arguments overflow the call stack). */
export function maxOf(values, floor = -Infinity) {
  let max = floor;
  for (const v of values) {
    if (v > max) {
      max = v;
    }
  }
  return max;
}

/** The smallest of `values`, or `ceiling` when there are none (see maxOf). */
export function minOf(values, ceiling = Infinity) {
  let min = ceiling;
  for (const v of values) {
    if (v < min) {
      min = v;
    }
  }
  return min;
}

/** The JSON text of a trace fetched in pages (`trace_fetch`), parsed and checked. */
export function assembleTrace(chunks) {
  const text = chunks.map((c) => c.data).join("");
  const trace = JSON.parse(text);
  const problems = traceProblems(trace);
  if (problems.length > 0) {
    throw new Error(problems.join("; "));
  }
  return trace;
}

/** The stored trace of the process `pid` (and start ticks, when known), else null. */
export function traceFor(list, pid, startTicks = null) {
  return (
    (list ?? []).find((m) => m.pid === pid && (startTicks === null || m.process_start_ticks === startTicks)) ?? null
  );
}

/** The span the charts share: 0 to the later of the trace's end and the last milestone. */
export function timeSpan(trace, milestoneMax = 0) {
  const last = maxOf((trace.events ?? []).map((e) => e.t), 0);
  return Math.max(1, trace.ended_ms ?? 0, last, milestoneMax ?? 0);
}

/**
 * Bytes read per time bin: [{t0, t1, bytes, cumulative}] over [0, span]. Without events (the
 * /proc fallback) the sampled read_bytes series is binned instead (`source` says which).
 */
export function readOverTime(trace, { bins = 120, span = timeSpan(trace) } = {}) {
  const width = span / bins;
  const out = Array.from({ length: bins }, (_, i) => ({ t0: i * width, t1: (i + 1) * width, bytes: 0, cumulative: 0 }));
  const events = (trace.events ?? []).filter((e) => !trace.files[e.f]?.written);
  let source = "events";
  if (events.length > 0) {
    for (const e of events) {
      const i = Math.min(bins - 1, Math.max(0, Math.floor(e.t / width)));
      out[i].bytes += e.n * PAGE;
    }
  } else {
    source = "samples";
    let previous = 0;
    for (const s of trace.samples ?? []) {
      const i = Math.min(bins - 1, Math.max(0, Math.floor(s.t / width)));
      out[i].bytes += Math.max(0, s.read_bytes - previous);
      previous = Math.max(previous, s.read_bytes);
    }
  }
  let sum = 0;
  for (const bin of out) {
    sum += bin.bytes;
    bin.cumulative = sum;
  }
  return { bins: out, source, total: sum };
}

/** The per-file table: bytes read, share of the file, reads, first and last ms; largest first. */
export function fileTable(trace) {
  return trace.files
    .map((f, index) => ({
      index,
      path: f.path,
      bytesRead: f.bytes_read,
      share: isCount(f.size) && f.size > 0 ? Math.min(1, f.bytes_read / f.size) : null,
      requests: f.requests ?? null,
      firstMs: f.first_ms ?? null,
      lastMs: f.last_ms ?? null,
      written: Boolean(f.written),
    }))
    .sort((a, b) => b.bytesRead - a.bytesRead || a.path.localeCompare(b.path));
}

/** The index of the file whose name ends with `name` ("libxul.so"), or -1. */
export function findFile(trace, name) {
  return trace.files.findIndex((f) => f.path === name || f.path.endsWith(`/${name}`));
}

/**
 * Seed 000's access pattern of file `f`, aggregated: a grid of `cols` time bins × `rows` offset
 * bins, each cell the pages read there and then. Returns {cells:[{col,row,pages,kinds}], span,
 * size (bytes), reads}.
 */
export function accessPattern(trace, f, { cols = 160, rows = 100, span = timeSpan(trace) } = {}) {
  const file = trace.files[f];
  const events = trace.events.filter((e) => e.f === f);
  const pagesInFile = Math.max(1, isCount(file?.size) ? Math.ceil(file.size / PAGE) : maxOf(events.map((e) => e.o + e.n), 1));
  const cells = new Map();
  for (const e of events) {
    const col = Math.min(cols - 1, Math.max(0, Math.floor((e.t / span) * cols)));
    const r0 = Math.floor((e.o / pagesInFile) * rows);
    const r1 = Math.min(rows - 1, Math.floor(((e.o + e.n - 1) / pagesInFile) * rows));
    for (let row = Math.max(0, r0); row <= r1; row++) {
      const key = col * rows + row;
      const cell = cells.get(key) ?? { col, row, pages: 0, kinds: {} };
      const share = Math.max(1, Math.round(e.n / (r1 - r0 + 1)));
      cell.pages += share;
      cell.kinds[e.k] = (cell.kinds[e.k] ?? 0) + share;
      cells.set(key, cell);
    }
  }
  return { cells: [...cells.values()], span, size: pagesInFile * PAGE, reads: events.length, cols, rows };
}

/**
 * How an access-pattern cell is marked: "fault" when most of its pages came without a readahead
 * window (a page fault, or a read seen neither way: kinds `fault` and `read`), else "window".
 * The chart draws the two as different shapes, not only in different colours.
 */
export function cellMark(cell) {
  const without = (cell?.kinds?.fault ?? 0) + (cell?.kinds?.read ?? 0);
  return without > (cell?.pages ?? 0) / 2 ? "fault" : "window";
}

/**
 * The sections to shade on the access pattern: those covering at least `minShare` of the file,
 * plus the ones seed 000 names, as {name, from, to} fractions of the file.
 */
export const NAMED_SECTIONS = [".rela.dyn", ".rel.dyn", ".relr.dyn", ".text", ".rodata", ".data.rel.ro", ".data", ".eh_frame"];
export function sectionBands(file, minShare = 0.02) {
  const size = isCount(file?.size) && file.size > 0 ? file.size : null;
  if (!size || !Array.isArray(file.sections)) {
    return [];
  }
  return file.sections
    .filter((s) => s.size / size >= minShare || (NAMED_SECTIONS.includes(s.name) && s.size / size >= 0.002))
    .map((s) => ({ name: s.name, from: s.offset / size, to: (s.offset + s.size) / size }));
}

/**
 * Seed 003's disk view: where on the disk the reads were, against time. From the block requests
 * when the trace has them, else from the reads placed through each file's extents.
 * Returns {cells:[{col,row,bytes}], min, max (disk bytes), source, seeks}.
 */
export function diskView(trace, { cols = 160, rows = 100, span = timeSpan(trace) } = {}) {
  let points = [];
  let source = "block";
  // Block requests count only where the tree issued them itself; under blk-throttle a kernel
  // worker dispatches most, so below half the traced bytes the extents tell more.
  const blockBytes = (trace.block ?? []).reduce((sum, b) => sum + b.len, 0);
  if (blockBytes > 0 && blockBytes >= 0.5 * (trace.traced_read_bytes ?? 0)) {
    points = trace.block.map((b) => ({ t: b.t, pos: b.pos, len: b.len }));
  } else {
    source = "extents";
    for (const e of trace.events) {
      const file = trace.files[e.f];
      const ofs = e.o * PAGE;
      const ext = (file?.extents ?? []).find(([logical, , length]) => ofs >= logical && ofs < logical + length);
      if (ext) {
        points.push({ t: e.t, pos: ext[1] + (ofs - ext[0]), len: e.n * PAGE });
      }
    }
  }
  if (points.length === 0) {
    return { cells: [], min: 0, max: 0, source, seeks: 0 };
  }
  points.sort((a, b) => a.t - b.t);
  const min = minOf(points.map((p) => p.pos));
  const max = maxOf(points.map((p) => p.pos + p.len));
  const range = Math.max(1, max - min);
  const cells = new Map();
  let seeks = 0;
  let end = null;
  for (const p of points) {
    if (end !== null && Math.abs(p.pos - end) > 1024 * 1024) {
      seeks++;
    }
    end = p.pos + p.len;
    const col = Math.min(cols - 1, Math.max(0, Math.floor((p.t / span) * cols)));
    const row = Math.min(rows - 1, Math.floor(((p.pos - min) / range) * rows));
    const key = col * rows + row;
    const cell = cells.get(key) ?? { col, row, bytes: 0 };
    cell.bytes += p.len;
    cells.set(key, cell);
  }
  return { cells: [...cells.values()], min, max, source, seeks, cols, rows };
}

/** The agreement line: traced bytes vs /proc read_bytes, and lost events (never hidden). */
export function agreement(trace) {
  const tree = isCount(trace.tree_read_bytes) && trace.tree_read_bytes > 0 ? trace.tree_read_bytes : null;
  return {
    traced: trace.traced_read_bytes,
    tree,
    ratio: tree === null ? null : trace.traced_read_bytes / tree,
    lost: trace.lost_events,
    written: trace.written_bytes ?? 0,
  };
}
