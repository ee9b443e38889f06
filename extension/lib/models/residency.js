// Page-cache residency of Firefox's files: pure aggregation and formatting of the host's
// `residency`, `preload` and `evict` replies (docs/PROTOCOL.md). No browser.*, no DOM.
//
// Rules the UI keeps: a hidden file never gets a percentage (the kernel would lie); Firefox's
// mapped pages are a lower bound and are labelled so; a missing value is missing, never 0.

export const DEFAULT_PAGE_SIZE = 4096;
// The formatters live in the one formatter module; re-exported for the residency texts.
export { formatMB, formatPercent, formatRate } from "../wording/format.js";
import { formatBytes, formatShare } from "../wording/format.js";
import { fileErrorText, fileProblem } from "../wording/host-notes.js";

const UNKNOWN = "—";

export function displayName(path, installDir) {
  if (typeof path !== "string") {
    return UNKNOWN;
  }
  if (installDir && path.startsWith(`${installDir.replace(/\/$/, "")}/`)) {
    return path.slice(installDir.replace(/\/$/, "").length + 1);
  }
  return path;
}

const isCount = (n) => typeof n === "number" && Number.isFinite(n) && n >= 0;

/**
 * Run-length ranges `[[first, count], …]` in units of `unitPages` pages turned into page runs
 * `[[firstPage, pageCount], …]`, clipped to `pages` (a coarsened last unit may overhang).
 */
export function rangesToRuns(ranges, unitPages = 1, pages = Infinity) {
  if (!Array.isArray(ranges)) {
    return [];
  }
  const unit = isCount(unitPages) && unitPages >= 1 ? unitPages : 1;
  const runs = [];
  for (const range of ranges) {
    if (!Array.isArray(range) || !isCount(range[0]) || !isCount(range[1]) || range[1] === 0) {
      continue;
    }
    const start = range[0] * unit;
    const end = Math.min((range[0] + range[1]) * unit, pages);
    if (end > start) {
      runs.push([start, end - start]);
    }
  }
  return runs;
}

/**
 * The page-map strip: `bins` equal slices of the file, each with the fraction of its pages that
 * are resident (0…1), then adjacent slices of equal level merged into segments
 * `{start, width, level}` in slice units (an SVG with viewBox width `bins` draws them as is).
 * Slices with level 0 are left out.
 */
export function stripSegments(ranges, unitPages, pages, { bins = 300 } = {}) {
  if (!isCount(pages) || pages === 0) {
    return { bins: 0, segments: [] };
  }
  const slices = Math.max(1, Math.min(bins, pages));
  const perSlice = pages / slices;
  const covered = new Float64Array(slices);
  for (const [start, count] of rangesToRuns(ranges, unitPages, pages)) {
    const end = start + count;
    let slice = Math.floor(start / perSlice);
    while (slice < slices) {
      const sliceStart = slice * perSlice;
      const sliceEnd = sliceStart + perSlice;
      if (sliceStart >= end) {
        break;
      }
      covered[slice] += Math.min(end, sliceEnd) - Math.max(start, sliceStart);
      slice += 1;
    }
  }
  const segments = [];
  for (let i = 0; i < slices; i += 1) {
    const level = Math.min(1, Math.round((covered[i] / perSlice) * 100) / 100);
    if (level <= 0) {
      continue;
    }
    const last = segments.at(-1);
    if (last && last.start + last.width === i && last.level === level) {
      last.width += 1;
    } else {
      segments.push({ start: i, width: 1, level });
    }
  }
  return { bins: slices, segments };
}

/** One file of a residency reply, with what the UI shows. */
export function fileView(file, { pageSize = DEFAULT_PAGE_SIZE, installDir = null } = {}) {
  const pages = isCount(file?.pages) ? file.pages : null;
  const claimed = ["exact", "hidden", "error"].includes(file?.status) ? file.status : "error";
  const exact = claimed === "exact" && isCount(file.resident_pages);
  // "exact" without a count is not something to draw: show it as an error of that file
  const status = claimed === "exact" && !exact ? "error" : claimed;
  const mapped =
    file?.mapped && isCount(file.mapped.pages)
      ? {
          pages: file.mapped.pages,
          bytes: Math.min(file.mapped.pages * pageSize, file.size ?? Infinity),
          source: file.mapped.source ?? null,
          ranges: Array.isArray(file.mapped.ranges) ? file.mapped.ranges : null,
          unitPages: file.mapped.range_unit_pages ?? 1,
        }
      : null;
  return {
    path: file?.path ?? null,
    name: displayName(file?.path, installDir),
    group: file?.group ?? "install",
    size: isCount(file?.size) ? file.size : null,
    pages,
    status,
    residentPages: exact ? file.resident_pages : null,
    // bytes cached, capped at the size (the last page is partly past the end of the file): the
    // host's rule for its totals too (native-host/src/pagecache/residency/mod.rs cached_bytes)
    cachedBytes: exact ? Math.min(file.resident_pages * pageSize, file.size ?? Infinity) : null,
    // what cachedBytes is a share of
    exactSize: exact ? (isCount(file.size) ? file.size : null) : null,
    fraction: exact ? (pages ? Math.min(1, file.resident_pages / pages) : 0) : null,
    ranges: exact && Array.isArray(file.resident_ranges) ? file.resident_ranges : null,
    unitPages: file?.range_unit_pages ?? 1,
    // the host's code, worded by the page (lib/wording/host-notes.js); its English hidden_reason is not shown
    hiddenCode: status === "hidden" ? (file.hidden_code ?? null) : null,
    mapped,
    // {code, params, english} for fileErrorText (lib/wording/host-notes.js); the host's English is shown
    // only where no code fits
    error: status === "error" ? (claimed === "exact" ? { code: "no_resident_count", params: {}, english: null } : fileProblem(file)) : null,
  };
}

/**
 * Totals of a list of fileView()s, by the host's rule: `cachedBytes` and `fraction` are null as
 * soon as one file is hidden (a sum of exact and unknown is unknown); `exactBytes` sums the exact
 * files' cached bytes, `exactSize` their sizes (what the cached bytes are a share of: unreadable
 * files are counted apart) and `mappedBytes` Firefox's mapped pages (a lower bound). The same
 * fields as summaryTotals(), so a group reads the same from the host's totals and from its files.
 */
export function groupTotals(views) {
  const totals = {
    files: views.length,
    size: 0,
    exactFiles: 0,
    hiddenFiles: 0,
    errorFiles: 0,
    exactBytes: 0,
    exactSize: 0,
    mappedBytes: null,
    cachedBytes: null,
    fraction: null,
    source: "files",
  };
  for (const view of views) {
    totals.size += view.size ?? 0;
    if (view.status === "exact") {
      totals.exactFiles += 1;
      totals.exactBytes += view.cachedBytes;
      totals.exactSize += view.size ?? 0;
    } else if (view.status === "hidden") {
      totals.hiddenFiles += 1;
    } else {
      totals.errorFiles += 1;
    }
    if (view.mapped) {
      totals.mappedBytes = (totals.mappedBytes ?? 0) + view.mapped.bytes;
    }
  }
  if (totals.hiddenFiles === 0 && totals.exactFiles > 0) {
    totals.cachedBytes = totals.exactBytes;
    totals.fraction = share(totals.exactBytes, totals.exactSize);
  }
  return totals;
}

/** `part` of `whole` as a fraction 0…1 (bars), 0 for an empty whole. */
const share = (part, whole) => (whole > 0 ? Math.min(1, part / whole) : 0);

/**
 * A group's totals from the host's final `residency` reply alone (`summary.groups[name]`), in
 * groupTotals' shape, so a caller that needs only the totals (the popup) does not keep every
 * file's page map; the page takes its group totals from here too, so the two show one figure.
 * Null when the reply has no such group.
 *
 * The figures are the host's `exact_cached_bytes` of `exact_size` (docs/PROTOCOL.md). A host
 * older than those fields sent `exact_pages`, which counts the *resident* pages of the exact
 * files (not their total: issue 19's popup divided by it and showed 100%); from such a host the
 * cached bytes are those pages (at most the group's size) and, only when no file was unreadable,
 * the share is of the group's size.
 */
export function summaryTotals(summary, name = "install") {
  const group = summary?.groups?.[name];
  if (!group || typeof group !== "object") {
    return null;
  }
  const pageSize = summary.page_size ?? DEFAULT_PAGE_SIZE;
  const count = (v) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);
  const size = count(group.size) ?? 0;
  const exactFiles = count(group.exact_files) ?? 0;
  const hiddenFiles = count(group.hidden_files) ?? 0;
  const errorFiles = count(group.error_files) ?? 0;
  const named = count(group.exact_cached_bytes) !== null && count(group.exact_size) !== null;
  const oldResident = count(group.exact_resident_pages) ?? count(group.exact_pages);
  const exactBytes = named ? group.exact_cached_bytes : oldResident === null ? null : Math.min(oldResident * pageSize, size);
  const exactSize = named ? group.exact_size : errorFiles === 0 ? size : null;
  const known = exactBytes !== null && exactSize !== null && hiddenFiles === 0 && exactFiles > 0;
  const mapped = count(group.mapped_pages);
  return {
    files: count(group.files) ?? 0,
    size,
    exactFiles,
    hiddenFiles,
    errorFiles,
    exactBytes: exactBytes ?? 0,
    exactSize: exactSize ?? 0,
    mappedBytes: mapped === null ? null : mapped * pageSize,
    cachedBytes: known ? exactBytes : null,
    fraction: known ? share(exactBytes, exactSize) : null,
    source: "summary",
  };
}

/** Orders files by size, largest first (ties by name). */
export function bySize(a, b) {
  return (b.size ?? -1) - (a.size ?? -1) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * Assembles a residency request: the `file` events and the final reply's data (or null while
 * streaming). Returns {installDir, pageSize, elapsedMs, groups: {install, system}}, each group
 * {files (sorted by size), totals}. A group's totals are the host's (summaryTotals), the figures
 * the popup and the CLI show; summed from the files only while there is no final reply.
 */
export function buildResidency(fileEvents, summary = null) {
  const installDir = summary?.install_dir ?? null;
  const pageSize = summary?.page_size ?? DEFAULT_PAGE_SIZE;
  const groups = { install: [], system: [] };
  for (const file of fileEvents) {
    const view = fileView(file, { pageSize, installDir });
    (groups[view.group] ??= []).push(view);
  }
  const out = { installDir, pageSize, elapsedMs: summary?.elapsed_ms ?? null, groups: {} };
  for (const [name, views] of Object.entries(groups)) {
    views.sort(bySize);
    out.groups[name] = { files: views, totals: summaryTotals(summary, name) ?? groupTotals(views) };
  }
  return out;
}

/**
 * The three figures of "MB cached of MB (percent)" for a file view or a group's totals, in one
 * unit (kB for small files) and by the one percentage rule (formatShare), for the page's rows
 * and group lines and the popup. Null when the residency is not known exactly.
 */
export function cachedFigures(entry, locale = undefined) {
  if (typeof entry?.cachedBytes !== "number") {
    return null;
  }
  const of = typeof entry.exactSize === "number" ? entry.exactSize : entry.size;
  return [formatBytes(entry.cachedBytes, locale, { unitOf: of }), formatBytes(of, locale), formatShare(entry.cachedBytes, of, locale)];
}

/** The one-line "cached" text for a file or a group's totals; `t(key, subs)` words it. */
export function cachedText(entry, t, locale = undefined) {
  if (entry.status === "error") {
    return t("residencyFileError", [fileErrorText(entry.error, t)]);
  }
  const figures = cachedFigures(entry, locale);
  return figures ? t("residencyCachedOf", figures) : t("residencyHidden");
}

/**
 * The distinct reasons the kernel hides files of `views` ({code, files}), most files first: the
 * page says each once per section, not on every row.
 */
export function hiddenReasons(views) {
  const counts = new Map();
  for (const view of views) {
    if (view.status === "hidden") {
      counts.set(view.hiddenCode, (counts.get(view.hiddenCode) ?? 0) + 1);
    }
  }
  return [...counts].map(([code, files]) => ({ code, files })).sort((a, b) => b.files - a.files);
}

/**
 * The `preload` request of a button a person clicked and watches (the page's and the popup's):
 * `idle: false`, full speed, still cancellable, with progress. Only the login preload
 * (`preload --plan --idle`, which nobody watches) runs idle: an idle planned preload backs off
 * while anyone else waits on I/O, so one clicked during a backup or a build did not move at all
 * (issue 37), and the idle I/O class puts a whole-folder one behind everyone else's reads.
 */
export function watchedPreload(params) {
  return Object.freeze({ ...params, idle: false });
}

/** The whole install folder, as the page's "Preload" and the popup's second button send it. */
export const WHOLE_PRELOAD = watchedPreload({ files: null });

/** A preload progress event as numbers for a bar and words. */
export function progressView(progress) {
  const done = isCount(progress?.bytes_done) ? progress.bytes_done : null;
  const total = isCount(progress?.bytes_total) ? progress.bytes_total : null;
  return {
    bytesDone: done,
    bytesTotal: total,
    fraction: done !== null && total ? Math.min(1, done / total) : null,
    filesDone: progress?.files_done ?? null,
    filesTotal: progress?.files_total ?? null,
    currentFile: progress?.current_file ?? null,
  };
}

/** Per-file rows of an evict reply: what stayed, in pages and MB (null = not visible). */
export function evictRows(result, { installDir = null, pageSize = DEFAULT_PAGE_SIZE } = {}) {
  const rows = (result?.files ?? []).map((file) => {
    const before = isCount(file.resident_before) ? file.resident_before : null;
    const after = isCount(file.resident_after) ? file.resident_after : null;
    return {
      path: file.path,
      name: displayName(file.path, installDir),
      status: file.status ?? "error",
      pages: file.pages ?? null,
      before,
      after,
      dropped: before !== null && after !== null ? Math.max(0, before - after) : null,
      stayedBytes: after !== null ? after * pageSize : null,
      noteCode: file.note_code ?? null,
      // as fileView's: {code, params, english}, or null
      error: file.error_code || file.error ? fileProblem(file) : null,
    };
  });
  // files where pages stayed first, most first; then the rest by name
  rows.sort((a, b) => (b.after ?? -1) - (a.after ?? -1) || (a.name < b.name ? -1 : 1));
  return rows;
}
