import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { buildChanges, entriesByBuild, omniEntriesProblems, traceId } from "../../../../extension/lib/models/entries-by-build.js";

// A real trace of an ESR 153 cold start (build 20261103151912), trimmed: its omni.ja has five
// entries (the host's cargo tests use the same file). Only one build is installed here, so the
// second build below is this same recorded start with its build named anew and one entry's reads
// changed: what is compared is real, what differs is said at each step.
const REAL = JSON.parse(fs.readFileSync(new URL("../../../../native-host/tests/fixtures/profiler/trace-esr153-cold.json", import.meta.url), "utf8"));
const PDF_WORKER = "chrome/pdfjs/content/build/pdf.worker.mjs";
const HYPH = "hyphenation/hyph_hu.hyf";

/** REAL as another start: recorded `later` ms after it, with `edit` applied to its omni.ja entries. */
function again(later, { build = {}, edit = (entries) => entries } = {}) {
  const files = REAL.files.map((f) => (Array.isArray(f.entries) ? { ...f, entries: edit(f.entries.map((e) => ({ ...e }))) } : f));
  return { ...REAL, ...build, recorded_at_ms: REAL.recorded_at_ms + later, files };
}
const NEXT = { build_id: "20261201093000", firefox_version: "153.8.0" };

test("one recorded start: its build, its id as the host stores it, its entries most read first", () => {
  const summary = entriesByBuild({ traces: [REAL] });
  assert.equal(summary.version, 1);
  assert.equal(summary.builds.length, 1);
  const [b] = summary.builds;
  assert.equal(b.buildId, "20261103151912");
  assert.equal(b.firefoxVersion, "153.7.0");
  assert.deepEqual(b.traces, ["1795526445035-24493-916086"]);
  assert.equal(traceId(REAL), "1795526445035-24493-916086");
  assert.equal(b.entries.length, 5);
  assert.deepEqual(b.entries[0], { archive: "omni.ja", name: PDF_WORKER, bytesRead: 2193944, starts: 1 });
  assert.deepEqual(b.entries.map((e) => e.bytesRead), [2193944, 1097331, 1048817, 954935, 813780]);
  assert.equal(entriesByBuild({ traces: [REAL] }, 2).builds[0].entries.length, 2, "at most `limit` per build");
});

test("two starts of one build: bytes are the mean per start, `starts` counts the starts that read the entry", () => {
  // The second start read none of hyph_hu.hyf and half of pdf.worker.mjs.
  const second = again(60_000, { edit: (es) => es.filter((e) => e.name !== HYPH).map((e) => (e.name === PDF_WORKER ? { ...e, bytes_read: 1096972 } : e)) });
  const [b] = entriesByBuild({ traces: [REAL, second] }).builds;
  assert.equal(b.traces.length, 2);
  const byName = Object.fromEntries(b.entries.map((e) => [e.name, e]));
  assert.deepEqual(byName[PDF_WORKER], { archive: "omni.ja", name: PDF_WORKER, bytesRead: Math.round((2193944 + 1096972) / 2), starts: 2 });
  assert.deepEqual(byName[HYPH], { archive: "omni.ja", name: HYPH, bytesRead: Math.round(1048817 / 2), starts: 1 });
});

test("the same start twice (the host's and an import of it) counts once; a trace without entries not at all", () => {
  assert.deepEqual(entriesByBuild({ traces: [REAL, structuredClone(REAL)] }), entriesByBuild({ traces: [REAL] }));
  const procOnly = { ...REAL, source: "proc_sampler", files: REAL.files.map((f) => ({ ...f, entries: undefined })) };
  assert.equal(entriesByBuild({ traces: [procOnly] }), null, "nothing to say: no zip entries in it");
  assert.equal(entriesByBuild({ traces: [] }), null);
});

test("an earlier export's summary adds its build; one sharing a start with a trace here is not counted twice", () => {
  const older = entriesByBuild({ traces: [REAL] });
  const newer = again(86_400_000, { build: NEXT });
  const summary = entriesByBuild({ traces: [newer], summaries: [older] });
  assert.deepEqual(summary.builds.map((b) => b.buildId), ["20261201093000", "20261103151912"], "newest build first");
  assert.deepEqual(summary.builds[1], older.builds[0], "an imported summary of one start comes back unchanged");
  // Imported again beside the trace it was made from: the trace stands, the summary adds nothing.
  const twice = entriesByBuild({ traces: [REAL], summaries: [older, older] });
  assert.deepEqual(twice, older);
  // A summary survives a JSON round trip and is valid as the export checks it.
  assert.deepEqual(omniEntriesProblems(JSON.parse(JSON.stringify(summary))), []);
});

test("between two builds: the entries whose reads changed the most, either way, in bytes per start", () => {
  // The newer build read pdf.worker.mjs only in part and pkijs.js twice over (a larger file).
  const newer = again(86_400_000, {
    build: NEXT,
    edit: (es) =>
      es.map((e) => {
        if (e.name === PDF_WORKER) return { ...e, bytes_read: 400000 };
        if (e.name.endsWith("pkijs.js")) return { ...e, bytes_read: 1909870, len: 1909870 };
        return e;
      }),
  });
  const changes = buildChanges(entriesByBuild({ traces: [REAL, newer] }));
  assert.equal(changes.from.buildId, "20261103151912");
  assert.equal(changes.to.buildId, "20261201093000");
  assert.deepEqual(
    changes.rows.map((r) => [r.name, r.before, r.after, r.change]),
    [
      [PDF_WORKER, 2193944, 400000, -1793944],
      ["chrome/toolkit/content/global/certviewer/vendor/pkijs.js", 954935, 1909870, 954935],
    ],
  );
  assert.equal(changes.same, 3, "the other three read the same");
  assert.deepEqual([changes.onlyFrom, changes.onlyTo], [0, 0]);
});

test("an entry in one build's list only is counted apart, never compared as 0", () => {
  const newer = again(86_400_000, { build: NEXT, edit: (es) => es.filter((e) => e.name !== HYPH) });
  const changes = buildChanges(entriesByBuild({ traces: [REAL, newer] }));
  assert.equal(changes.rows.length, 0);
  assert.deepEqual([changes.onlyFrom, changes.onlyTo, changes.same], [1, 0, 4]);
  assert.equal(buildChanges(entriesByBuild({ traces: [REAL] })), null, "one build: nothing to compare");
  assert.equal(buildChanges(null), null);
});

test("a damaged summary is named field by field", () => {
  assert.deepEqual(omniEntriesProblems([]), ["omniEntries: must be an object or null"]);
  assert.deepEqual(omniEntriesProblems({ version: 2, builds: [] }), ["omniEntries.version: must be 1"]);
  const problems = omniEntriesProblems({ version: 1, builds: [{ buildId: 7, traces: ["a"], entries: [{ archive: "omni.ja", name: "x", bytesRead: -1, starts: 0 }] }] });
  assert.deepEqual(problems, [
    "omniEntries.builds[0].buildId: must be a string or null",
    "omniEntries.builds[0].entries[0]: must be {archive, name, bytesRead, starts} (whole numbers ≥ 0)",
  ]);
});
