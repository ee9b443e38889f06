// The startup I/O trace (docs/export-format.md "trace", recorded by the host's `launch --trace`):
// checking one, assembling it from the host's pages and cutting an imported one into pages for
// the host. Every figure the page shows of a trace (file rows, charts' bins, code, entries, the
// profile's share) is the host's (`trace_summary`, native-host/src/trace/summary/): none is
// computed here. Pure: no DOM, no browser.*.

export const TRACE_VERSION = 1;

/**
 * The arguments that record a trace of a cold start (the page shows the command when none
 * exists): the host's `trace_list` says the whole command, by the path that runs it here
 * (`record_command`); from an older host, these after its name as root.
 */
export const RECORD_ARGS = "launch --cold --trace";

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

/** How many bytes of a trace's text one `trace_upload` page carries: the host's own page size
 * (trace_fetch), so the request, with JSON escaping at most doubling it, stays under 1 MiB. */
export const UPLOAD_PAGE_BYTES = 384 * 1024;

/**
 * The JSON text of an imported trace as `trace_upload` pages: [{offset, total, data}], offsets
 * and totals in UTF-8 bytes (what the host counts), each page cut before a character, never
 * inside one, so the host's concatenation of the pages is the text's bytes exactly.
 */
export function uploadPages(text, pageBytes = UPLOAD_PAGE_BYTES) {
  const bytes = new TextEncoder().encode(text);
  const decoder = new TextDecoder();
  const pages = [];
  const continuation = (i) => i < bytes.length && (bytes[i] & 0xc0) === 0x80;
  let start = 0;
  do {
    let end = Math.min(bytes.length, start + Math.max(1, pageBytes));
    // Back off to the start of a character (continuation bytes are 10xxxxxx); a page smaller
    // than one character takes that character whole.
    while (end > start && continuation(end)) {
      end--;
    }
    if (end === start && start < bytes.length) {
      end = start + 1;
      while (continuation(end)) {
        end++;
      }
    }
    pages.push({ offset: start, total: bytes.length, data: decoder.decode(bytes.subarray(start, end)) });
    start = end;
  } while (start < bytes.length);
  return pages;
}
