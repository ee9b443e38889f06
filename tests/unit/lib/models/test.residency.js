import { test } from "node:test";
import assert from "node:assert/strict";
import {
  buildResidency,
  cachedFigures,
  cachedText,
  displayName,
  evictRows,
  fileView,
  formatMB,
  formatPercent,
  groupTotals,
  hiddenReasons,
  progressView,
  rangesToRuns,
  stripSegments,
  summaryTotals,
} from "../../../../extension/lib/models/residency.js";
import { recordedResidency } from "../../host-replies.js";

const t = (key, subs = []) => `${key}(${subs.join("|")})`;

// Real replies of the host (tests/fixtures/host/, scripts/record-host-replies.mjs): the same
// install folder, a headless Firefox running from it, read as root (exact) and as nobody (hidden).
const exact = recordedResidency("exact");
const hidden = recordedResidency("hidden");
const DIR = exact.summary.install_dir;
const named = (reply, name) => {
  const file = reply.files.find((f) => f.path === `${DIR}/${name}`);
  assert.ok(file, `${name} is in the recorded reply`);
  return file;
};
const libxul = named(exact, "libxul.so");
const omni = named(hidden, "omni.ja");
// The one file of the recording whose last page is partly past its end and all cached.
const small = exact.files.find((f) => f.group === "install" && f.status === "exact" && f.resident_pages === f.pages && f.size % 4096 !== 0 && f.size < 100_000);
const gtk = exact.files.find((f) => f.group === "system" && f.path.includes("libgtk-3"));
// A file that vanished during the scan: a recorded file with the problem the host reports then
// (docs/PROTOCOL.md "Per-file error codes"; no recording can catch a Firefox update mid-scan).
const gone = { ...named(exact, "libmozgtk.so"), status: "error", resident_pages: null, resident_ranges: null, error: "vanished (Firefox updated?)", error_code: "vanished" };

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
  assert.equal(view.name, small.path.slice(DIR.length + 1));
  assert.equal(view.cachedBytes, small.size, "every page is cached, but the last one reaches past the end of the file");
  assert.ok(small.pages * 4096 > small.size);
  assert.equal(view.fraction, 1);
  const xul = fileView(libxul, { installDir: DIR });
  assert.equal(xul.cachedBytes, libxul.resident_pages * 4096);
  assert.equal(xul.fraction, libxul.resident_pages / libxul.pages);
  assert.ok(xul.fraction > 0 && xul.fraction < 1, "the recorded start left libxul.so partly cached");
  assert.equal(xul.hiddenCode, null);
});

test("a hidden file has no cached bytes and no fraction, keeps its reason's code (not the host's English) and the mapped lower bound", () => {
  const view = fileView(omni, { installDir: DIR });
  assert.equal(view.status, "hidden");
  assert.equal(view.cachedBytes, null);
  assert.equal(view.fraction, null);
  assert.equal(view.hiddenCode, "hidden_not_owner");
  assert.equal("hiddenReason" in view, false, "the host's English is not carried to the page");
  assert.equal(view.mapped.pages, omni.mapped.pages);
  assert.equal(view.mapped.bytes, Math.min(omni.mapped.pages * 4096, omni.size));
  assert.equal(view.mapped.source, "pagemap");
});

test("hidden is never shown as a percentage, for a file or a group", () => {
  const text = cachedText(fileView(omni), t);
  assert.equal(text, "residencyHidden()");
  assert.doesNotMatch(text, /%/);
  const totals = groupTotals([fileView(libxul), fileView(omni)]);
  assert.equal(cachedText({ ...totals, status: "group" }, t), "residencyHidden()");
  assert.equal(cachedFigures(summaryTotals(hidden.summary)), null);
});

test("an exact file's text says MB cached of MB and the percentage, in one unit", () => {
  const kB = Math.round(small.size / 1000);
  assert.equal(cachedText(fileView(small), t, "en"), `residencyCachedOf(${kB} kB|${kB} kB|100%)`);
  const xul = fileView(libxul);
  assert.match(cachedText(xul, t, "en"), /^residencyCachedOf\(\d+\.\d MB\|183\.7 MB\|\d+%\)$/);
  // A small file none of whose pages is cached: "0 kB of 14 kB", not "0.0 MB of 14 kB".
  const vulkan = fileView(named(exact, "vulkantest"));
  assert.equal(vulkan.cachedBytes, 0);
  assert.equal(cachedText(vulkan, t, "en"), "residencyCachedOf(0 kB|14 kB|0%)");
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
  assert.equal(exactOnly.cachedBytes, libxul.resident_pages * 4096 + small.size);
  assert.equal(exactOnly.size, libxul.size + small.size);
  assert.equal(exactOnly.fraction, exactOnly.cachedBytes / exactOnly.exactSize);
  assert.equal(groupTotals([fileView({ ...small, mapped: undefined })]).mappedBytes, null, "no file sent mapped: unknown, not 0");
  const mixed = groupTotals([fileView(libxul), fileView(omni), fileView(gone)]);
  assert.equal(mixed.cachedBytes, null);
  assert.equal(mixed.fraction, null);
  assert.equal(mixed.exactBytes, libxul.resident_pages * 4096);
  assert.equal(mixed.hiddenFiles, 1);
  assert.equal(mixed.errorFiles, 1);
  const withError = groupTotals([fileView(small), fileView(gone)]);
  assert.equal(withError.cachedBytes, small.size);
  assert.equal(withError.fraction, 1, "the error file is left out of the fraction, not counted as cold");
  assert.equal(withError.exactSize, small.size);
});

test("the host's totals and the sum of its files agree, so the page's rows, its total and the popup say one figure", () => {
  for (const reply of [exact, hidden]) {
    for (const name of ["install", "system"]) {
      const fromHost = summaryTotals(reply.summary, name);
      const fromFiles = groupTotals(reply.files.filter((f) => f.group === name).map((f) => fileView(f, { pageSize: reply.summary.page_size })));
      for (const field of ["files", "size", "exactFiles", "hiddenFiles", "errorFiles", "exactBytes", "exactSize", "cachedBytes", "fraction"]) {
        assert.equal(fromHost[field], fromFiles[field], `${name}.${field} of the ${reply === exact ? "exact" : "hidden"} reply`);
      }
    }
  }
});

test("buildResidency groups by install/system, sorts by size, takes the host's totals", () => {
  const built = buildResidency(exact.files, exact.summary);
  assert.equal(built.groups.install.files[0].name, "libxul.so", "largest first");
  assert.ok(built.groups.install.files.every((f, i, all) => i === 0 || (all[i - 1].size ?? -1) >= (f.size ?? -1)));
  assert.ok(built.groups.system.files.length > 0);
  assert.equal(built.groups.install.totals.files, exact.summary.groups.install.files);
  assert.equal(built.groups.install.totals.source, "summary");
  assert.equal(built.elapsedMs, exact.summary.elapsed_ms);
  const streaming = buildResidency([libxul], null);
  assert.equal(streaming.installDir, null);
  assert.equal(streaming.groups.install.files[0].name, libxul.path);
  assert.equal(streaming.groups.install.totals.source, "files", "while streaming, the files' sum");
  if (gtk) {
    assert.equal(built.groups.system.files.find((f) => f.path === gtk.path).status, "exact");
  }
});

test("hiddenReasons: each reason once per group, with how many files it hides", () => {
  const built = buildResidency(hidden.files, hidden.summary);
  assert.deepEqual(hiddenReasons(built.groups.install.files), [{ code: "hidden_not_owner", files: built.groups.install.files.length }]);
  assert.deepEqual(hiddenReasons(buildResidency(exact.files, exact.summary).groups.install.files), []);
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

test("summaryTotals: the popup's totals from the reply's group summary alone, resident against total pages", () => {
  // The recorded start left 95% of the install cached. `exact_pages` counts the *resident* pages
  // of the exact files: the popup once divided by it as if it were their total and said 100%.
  const install = exact.summary.groups.install;
  assert.ok(install.exact_resident_pages < install.exact_total_pages, "the recording is not all cached");
  assert.equal(install.exact_pages, install.exact_resident_pages, "the old name is the resident count");
  const totals = summaryTotals(exact.summary);
  assert.equal(totals.cachedBytes, install.exact_cached_bytes);
  assert.equal(totals.exactSize, install.exact_size);
  assert.ok(totals.fraction < 1);
  const [cached, of, percent] = cachedFigures(totals, "en");
  assert.equal(of, formatMB(install.size, "en"));
  assert.notEqual(percent, "100%");
  assert.equal(cached, formatMB(install.exact_cached_bytes, "en"));
  assert.equal(totals.mappedBytes, install.mapped_pages * 4096);
  // Hidden: no total, the mapped pages as the lower bound.
  const none = summaryTotals(hidden.summary);
  assert.equal(none.cachedBytes, null, "a sum of exact and hidden is unknown");
  assert.equal(none.fraction, null);
  assert.equal(none.hiddenFiles, hidden.summary.groups.install.files);
  assert.equal(none.mappedBytes, hidden.summary.groups.install.mapped_pages * 4096);
  assert.equal(summaryTotals({ groups: {} }), null);
});

test("summaryTotals from a host older than the named fields: exact_pages is resident pages, never the total", () => {
  const old = { ...exact.summary.groups.install };
  for (const field of ["exact_resident_pages", "exact_total_pages", "exact_cached_bytes", "exact_size"]) {
    delete old[field];
  }
  const totals = summaryTotals({ ...exact.summary, groups: { install: old } });
  assert.equal(totals.cachedBytes, Math.min(old.exact_pages * 4096, old.size));
  assert.equal(totals.exactSize, old.size);
  assert.ok(totals.fraction < 1, "95% cached reads as 95%, not 100%");
  // With an unreadable file an older host does not say what the share is of: none is given.
  const withError = summaryTotals({ ...exact.summary, groups: { install: { ...old, error_files: 1 } } });
  assert.equal(withError.cachedBytes, null);
});
