import { test } from "node:test";
import assert from "node:assert/strict";
import {
  buildResidency,
  cachedText,
  displayName,
  evictRows,
  fileView,
  formatMB,
  formatPercent,
  groupTotals,
  progressView,
  rangesToRuns,
  stripSegments,
} from "../../../../extension/lib/models/residency.js";

const DIR = "/usr/lib/firefox-esr";
const t = (key, subs = []) => `${key}(${subs.join("|")})`;

const libxul = {
  path: `${DIR}/libxul.so`,
  group: "install",
  size: 183672512,
  pages: 44842,
  status: "exact",
  resident_pages: 40210,
  resident_ranges: [
    [0, 1200],
    [1400, 39010],
  ],
  range_unit_pages: 1,
};
const omni = {
  path: `${DIR}/omni.ja`,
  group: "install",
  size: 41000000,
  pages: 10010,
  status: "hidden",
  hidden_reason: "the kernel reports page-cache state only for files you own or can write (Linux ≥ 5.2)",
  hidden_code: "hidden_not_owner",
  resident_pages: null,
  resident_ranges: null,
  mapped: { source: "pagemap", pid: 4242, pages: 9000, ranges: [[0, 9000]], range_unit_pages: 1 },
};
const small = { path: `${DIR}/libmozgtk.so`, group: "install", size: 10000, pages: 3, status: "exact", resident_pages: 3, resident_ranges: [[0, 3]], range_unit_pages: 1 };
const gone = { path: `${DIR}/libgone.so`, group: "install", size: 5000, pages: 2, status: "error", error: "vanished (Firefox updated?)", error_code: "vanished" };
const gtk = { path: "/usr/lib/x86_64-linux-gnu/libgtk-3.so.0", group: "system", size: 8000000, pages: 1954, status: "exact", resident_pages: 1954, resident_ranges: [[0, 1954]], range_unit_pages: 1 };

test("formatMB: decimal megabytes with one digit; missing stays missing", () => {
  assert.equal(formatMB(308_500_000, "en"), "308.5 MB");
  assert.equal(formatMB(0, "en"), "0.0 MB");
  assert.equal(formatMB(99_999, "en"), "100 kB", "below 0.1 MB: kilobytes, not 0.1 MB");
  assert.equal(formatMB(703, "en"), "1 kB", "a small file never reads as 0");
  assert.equal(formatMB(100_000, "en"), "0.1 MB");
  assert.equal(formatMB(null), "—");
  assert.equal(formatMB(Number.NaN), "—");
  assert.equal(formatMB(-1), "—");
});

test("formatPercent never rounds a little to nothing or nearly all to all", () => {
  assert.equal(formatPercent(0.95, "en"), "95%");
  assert.equal(formatPercent(0, "en"), "0%");
  assert.equal(formatPercent(1, "en"), "100%");
  assert.equal(formatPercent(0.001), "<1%");
  assert.equal(formatPercent(0.999), ">99%");
  assert.equal(formatPercent(null), "—");
});

test("displayName is relative to the install folder, absolute elsewhere", () => {
  assert.equal(displayName(`${DIR}/browser/omni.ja`, DIR), "browser/omni.ja");
  assert.equal(displayName(`${DIR}/browser/omni.ja`, `${DIR}/`), "browser/omni.ja");
  assert.equal(displayName("/usr/lib/libc.so.6", DIR), "/usr/lib/libc.so.6");
  assert.equal(displayName(`${DIR}-other/x`, DIR), `${DIR}-other/x`);
});

test("an exact file: cached bytes capped at its size, fraction of its pages", () => {
  const view = fileView(small, { installDir: DIR });
  assert.equal(view.name, "libmozgtk.so");
  assert.equal(view.cachedBytes, 10000, "3 pages of 4096 bytes, but the file is 10000 bytes");
  assert.equal(view.fraction, 1);
  const xul = fileView(libxul, { installDir: DIR });
  assert.equal(xul.cachedBytes, 40210 * 4096);
  assert.equal(xul.fraction, 40210 / 44842);
  assert.equal(xul.hiddenCode, null);
});

test("a hidden file has no cached bytes and no fraction, keeps its reason's code (not the host's English) and the mapped lower bound", () => {
  const view = fileView(omni, { installDir: DIR });
  assert.equal(view.status, "hidden");
  assert.equal(view.cachedBytes, null);
  assert.equal(view.fraction, null);
  assert.equal(view.hiddenCode, "hidden_not_owner");
  assert.equal("hiddenReason" in view, false, "the host's English is not carried to the page");
  assert.deepEqual(view.mapped, { pages: 9000, bytes: 9000 * 4096, source: "pagemap", ranges: [[0, 9000]], unitPages: 1 });
});

test("hidden is never shown as a percentage, for a file or a group", () => {
  const text = cachedText(fileView(omni), t);
  assert.equal(text, "residencyHidden()");
  assert.doesNotMatch(text, /%/);
  const totals = groupTotals([fileView(libxul), fileView(omni)]);
  assert.equal(cachedText({ ...totals, status: "group" }, t), "residencyHidden()");
});

test("an exact file's text says MB cached of MB and the percentage", () => {
  assert.equal(cachedText(fileView(small), t, "en"), "residencyCachedOf(10 kB|10 kB|100%)");
  assert.equal(cachedText(fileView(libxul), t, "en"), "residencyCachedOf(164.7 MB|183.7 MB|90%)");
});

test("an error file says its error in words", () => {
  const view = fileView(gone);
  assert.equal(view.status, "error");
  assert.equal(cachedText(view, t), "residencyFileError(fileErrorVanished())");
  const noCount = fileView({ ...small, resident_pages: null });
  assert.equal(noCount.status, "error", "exact without a count is not drawn");
  assert.equal(cachedText(noCount, t), "residencyFileError(fileErrorNoResidentCount())");
});

test("a file's error is worded from its code; the host's English only where no code fits", () => {
  const denied = { ...gone, error: "cannot open: Permission denied (os error 13)", error_code: "open_failed", error_params: { os_error: 13, detail: "Permission denied (os error 13)" } };
  assert.equal(cachedText(fileView(denied), t), "residencyFileError(fileErrorOpenFailed(osErrorPermission()))");
  const odd = { ...denied, error_params: { os_error: 40, detail: "Too many levels of symbolic links (os error 40)" } };
  assert.equal(cachedText(fileView(odd), t), "residencyFileError(fileErrorOpenFailed(Too many levels of symbolic links (os error 40)))");
  const oldHost = { ...gone, error_code: undefined };
  assert.equal(cachedText(fileView(oldHost), t), "residencyFileError(fileErrorHostWords(vanished (Firefox updated?)))");
  assert.equal(cachedText(fileView({ ...gone, error: undefined, error_code: undefined }), t), "residencyFileError(fileErrorUnknown())");
});

test("group totals: exact sums; one hidden file makes the total unknown, never a sum of known parts", () => {
  const exactOnly = groupTotals([fileView(libxul), fileView(small)]);
  assert.equal(exactOnly.cachedBytes, 40210 * 4096 + 10000);
  assert.equal(exactOnly.size, 183672512 + 10000);
  assert.equal(exactOnly.fraction, exactOnly.cachedBytes / exactOnly.size);
  assert.equal(exactOnly.mappedBytes, null, "no file sent mapped: unknown, not 0");
  const mixed = groupTotals([fileView(libxul), fileView(omni), fileView(gone)]);
  assert.equal(mixed.cachedBytes, null);
  assert.equal(mixed.fraction, null);
  assert.equal(mixed.exactBytes, 40210 * 4096);
  assert.equal(mixed.hiddenFiles, 1);
  assert.equal(mixed.errorFiles, 1);
  assert.equal(mixed.mappedBytes, 9000 * 4096);
  const withError = groupTotals([fileView(small), fileView(gone)]);
  assert.equal(withError.cachedBytes, 10000);
  assert.equal(withError.fraction, 1, "the error file is left out of the fraction, not counted as cold");
});

test("buildResidency groups by install/system, sorts by size, reads the summary", () => {
  const built = buildResidency([small, gtk, omni, libxul, gone], { install_dir: DIR, page_size: 4096, elapsed_ms: 35 });
  assert.deepEqual(
    built.groups.install.files.map((f) => f.name),
    ["libxul.so", "omni.ja", "libmozgtk.so", "libgone.so"],
  );
  assert.equal(built.groups.system.files[0].name, "/usr/lib/x86_64-linux-gnu/libgtk-3.so.0");
  assert.equal(built.groups.install.totals.files, 4);
  assert.equal(built.elapsedMs, 35);
  const streaming = buildResidency([libxul], null);
  assert.equal(streaming.installDir, null);
  assert.equal(streaming.groups.install.files[0].name, `${DIR}/libxul.so`);
});

test("rangesToRuns: units of pages, clipped to the file, bad entries skipped", () => {
  assert.deepEqual(rangesToRuns([[0, 2], [5, 1]], 1, 10), [[0, 2], [5, 1]]);
  assert.deepEqual(rangesToRuns([[0, 2], [5, 1]], 4, 22), [[0, 8], [20, 2]], "the last 4-page unit overhangs 22 pages");
  assert.deepEqual(rangesToRuns([[1, 0], [-1, 2], "x", [2, 1]], 1, 10), [[2, 1]]);
  assert.deepEqual(rangesToRuns(null, 1, 10), []);
});

test("stripSegments: slices with their resident fraction, equal neighbours merged", () => {
  assert.deepEqual(stripSegments([[0, 10]], 1, 10, { bins: 10 }), { bins: 10, segments: [{ start: 0, width: 10, level: 1 }] });
  assert.deepEqual(stripSegments([[0, 3], [6, 2]], 1, 10, { bins: 10 }), {
    bins: 10,
    segments: [
      { start: 0, width: 3, level: 1 },
      { start: 6, width: 2, level: 1 },
    ],
  });
  // 100 pages in 10 slices; pages 0-4 resident: the first slice is half full
  assert.deepEqual(stripSegments([[0, 5]], 1, 100, { bins: 10 }).segments, [{ start: 0, width: 1, level: 0.5 }]);
  // fewer pages than bins: one slice per page
  assert.equal(stripSegments([[0, 1]], 1, 3, { bins: 300 }).bins, 3);
  assert.deepEqual(stripSegments([], 1, 0), { bins: 0, segments: [] });
});

test("stripSegments honours coarsened units (range_unit_pages)", () => {
  // 1000 pages, unit 100: units 2 and 3 resident = pages 200-399
  const { segments } = stripSegments([[2, 2]], 100, 1000, { bins: 10 });
  assert.deepEqual(segments, [{ start: 2, width: 2, level: 1 }]);
  // a coarse unit overhanging the end is clipped, never drawn past the file
  const clipped = stripSegments([[9, 1]], 100, 950, { bins: 19 });
  const last = clipped.segments.at(-1);
  assert.ok(last.start + last.width <= clipped.bins);
});

test("progressView: fraction of bytes, missing total is unknown", () => {
  assert.deepEqual(
    progressView({ bytes_done: 50, bytes_total: 200, files_done: 1, files_total: 4, current_file: "/x" }),
    { bytesDone: 50, bytesTotal: 200, fraction: 0.25, filesDone: 1, filesTotal: 4, currentFile: "/x" },
  );
  assert.equal(progressView({ bytes_done: 5 }).fraction, null);
  assert.equal(progressView(null).bytesDone, null);
});

test("evictRows: pages that stayed first, hidden results stay unknown", () => {
  const rows = evictRows(
    {
      files: [
        { path: `${DIR}/omni.ja`, pages: 10, status: "hidden", resident_before: null, resident_after: null, note: "evicted, but …", note_code: "evicted_hidden" },
        { path: `${DIR}/libxul.so`, pages: 44842, status: "exact", resident_before: 44842, resident_after: 30120, note: "pages mapped …", note_code: "pages_stayed" },
        { path: `${DIR}/a.so`, pages: 5, status: "exact", resident_before: 5, resident_after: 0 },
      ],
    },
    { installDir: DIR },
  );
  assert.deepEqual(
    rows.map((r) => [r.name, r.after, r.dropped]),
    [
      ["libxul.so", 30120, 14722],
      ["a.so", 0, 5],
      ["omni.ja", null, null],
    ],
  );
  assert.equal(rows[0].stayedBytes, 30120 * 4096);
  assert.deepEqual(rows.map((r) => r.noteCode), ["pages_stayed", null, "evicted_hidden"]);
});

test("evictRows: a failed file keeps its code and params for the page to word", () => {
  const [row] = evictRows({
    files: [{ path: `${DIR}/omni.ja`, pages: 0, status: "error", resident_before: null, resident_after: null, error: "refused: …", error_code: "escaped" }],
  });
  assert.deepEqual(row.error, { code: "escaped", params: {}, english: "refused: …" });
  const [fine] = evictRows({ files: [{ path: `${DIR}/a.so`, pages: 5, status: "exact", resident_before: 5, resident_after: 0 }] });
  assert.equal(fine.error, null);
});

test("summaryTotals: the popup's totals from the reply's group summary alone", async () => {
  const { summaryTotals } = await import("../../../../extension/lib/models/residency.js");
  const exact = {
    page_size: 4096,
    groups: { install: { files: 2, size: 8192 * 10, pages: 20, exact_files: 2, hidden_files: 0, error_files: 0, resident_pages: 5, exact_pages: 20, mapped_pages: 3 } },
  };
  assert.deepEqual(summaryTotals(exact), {
    files: 2,
    size: 81920,
    exactFiles: 2,
    hiddenFiles: 0,
    errorFiles: 0,
    mappedBytes: 3 * 4096,
    cachedBytes: 5 * 4096,
    fraction: 0.25,
  });
  const hidden = { page_size: 4096, groups: { install: { ...exact.groups.install, hidden_files: 1, exact_files: 1, resident_pages: null } } };
  assert.equal(summaryTotals(hidden).cachedBytes, null, "a sum of exact and hidden is unknown");
  assert.equal(summaryTotals(hidden).fraction, null);
  assert.equal(summaryTotals({ groups: {} }), null);
});
