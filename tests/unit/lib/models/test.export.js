import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import {
  buildExport,
  checkExport,
  exportFileName,
  exportRecords,
  FORMAT,
  IMPORT_ERRORS,
  importErrorText,
  parseExport,
  problemField,
  residencySummary,
} from "../../../../extension/lib/models/export.js";
import { entriesByBuild } from "../../../../extension/lib/models/entries-by-build.js";
import { fakeTrace } from "../../fakes.js";
import { costsFromReading } from "../../../../extension/lib/models/start-costs.js";

// A start's costs made from two real readings of consecutive starts (tests/fixtures/start-costs/).
const costsReading = (n) => JSON.parse(fs.readFileSync(new URL(`../../../fixtures/start-costs/reading-${n}.json`, import.meta.url), "utf8"));
const COSTS = costsFromReading(costsReading(2), costsReading(1), { selfId: "newtab@mozilla.org" });

const schema = JSON.parse(fs.readFileSync(new URL("../../../../docs/schema/about-startup-export.schema.json", import.meta.url)));
const ajv = new Ajv2020({ allErrors: true, strict: true });
const validate = ajv.compile(schema);

// A real ESR 153 cold-start trace (trimmed; the host's cargo tests use it too): its omni.ja entries.
const REAL_TRACE = JSON.parse(fs.readFileSync(new URL("../../../../native-host/tests/fixtures/profiler/trace-esr153-cold.json", import.meta.url), "utf8"));
const OMNI_ENTRIES = entriesByBuild({ traces: [REAL_TRACE] });

const BENCH_FIXTURE = JSON.parse(fs.readFileSync(new URL("../../../fixtures/bench-cold-preload-hot.json", import.meta.url)));

const P = 1_763_768_000_123;
const record = (n, extra = {}) => ({
  id: `full-${P + n}`,
  recordedAt: P + n + 5000,
  mode: "full",
  firefox: { version: "153.0", buildId: "20261101000000" },
  os: "linux",
  kernel: "6.18.44",
  processStart: P + n,
  milestones: { start: 2, main: 300 + n, firstPaint2: 900, sessionRestored: 1800 + n },
  io: { readBytes: 1000, majorFaults: 20, treeReadBytes: null, treeMajorFaults: null, sampledAt: 5000 },
  precision: { processStart: 1, milestones: 1 },
  notes: [],
  ...extra,
});
const RESIDENCY_REPLY = {
  install_dir: "/usr/lib/firefox-esr",
  page_size: 4096,
  groups: {
    install: { files: 40, size: 308500000, pages: 75400, exact_files: 0, hidden_files: 40, error_files: 0, resident_pages: null, exact_pages: 0, mapped_pages: 60000 },
    system: { files: 120, size: 1000, pages: 1, exact_files: 120, hidden_files: 0, error_files: 0, resident_pages: 1, exact_pages: 1, mapped_pages: 1 },
  },
  elapsed_ms: 35,
};

// A small host trace.
const TRACE = fakeTrace({
  tree_read_bytes: 8192,
  traced_read_bytes: 8192,
  written_bytes: 0,
  files: [{ path: "/ff/libxul.so", size: 40960, bytes_read: 8192, requests: 1, written: false, sections: [], extents: [[0, 4096, 40960]] }],
  events: [{ t: 5, f: 0, o: 0, n: 2, p: 10, k: "sync" }],
  block: [],
  samples: [],
});

function good() {
  return buildExport({
    current: record(2),
    history: [record(1), record(2)],
    trimmed: 3,
    environment: { firefoxVersion: "153.0", buildId: "20261101000000", os: "linux", kernel: "6.18.44", mode: "full" },
    residency: residencySummary(RESIDENCY_REPLY, P + 9000),
    exportedAt: P + 10000,
  });
}

const with_ = (change) => {
  const doc = good();
  change(doc);
  return doc;
};

// Documents both the schema and checkExport must accept.
const GOOD = {
  "a full export": good(),
  "no current start, no residency field, empty history": with_((d) => {
    d.current = null;
    d.history = [];
    delete d.residency;
    delete d.trimmed;
  }),
  "a bench export with a basic record and unknown milestones": with_((d) => {
    d.source = "bench";
    d.history = [record(5, { mode: "basic", milestones: { extensionBackground: 2100, someFutureMilestone: 12 }, io: null, precision: { processStart: 10 } })];
  }),
  "a recorded benchmark export (tests/fixtures/bench-cold-preload-hot.json)": BENCH_FIXTURE,
  "bench objects of a planned preload and a login scenario": with_((d) => {
    d.source = "bench";
    d.current = null;
    d.bench = { command: "npm run bench -- --runs 1", scenarios: ["preload-plan", "login-preload"], runs: 1, warmups: 2, forcedQuits: 0, readAheadKb: null };
    d.history = [
      record(1, { bench: { scenario: "preload-plan", run: 1, preloadMs: 2100, quit: "clean", slowDisk: "30:150", readAheadKb: 128, preloadBytes: 335600000, bytesPlanned: 335600000, bytesInstall: 308400000 } }),
      record(2, { bench: { scenario: "login-preload", run: 1, preloadMs: null, quit: "sigterm", slowDisk: null, readAheadKb: null, workloadMs: 30000, loginPreloadMs: 4100, loginPreloadDone: true, loginDelayMs: 30000 } }),
    ];
  }),
  "records with where the time went (costs) and one without it": with_((d) => {
    d.current.costs = COSTS;
    d.history[0].costs = { unavailable: "no-experiment-api" };
  }),
  "a startup I/O trace (optional member)": with_((d) => {
    d.trace = TRACE;
  }),
  "the omni.ja entries per build (optional member), from a recorded trace": with_((d) => {
    d.omniEntries = OMNI_ENTRIES;
  }),
  "omniEntries null": with_((d) => {
    d.omniEntries = null;
  }),
  "unknown extra fields (ignored by version 1 readers)": with_((d) => {
    d.extra = { anything: true };
    d.current.futureField = 1;
  }),
  "a record without optional os, kernel, precision, notes": with_((d) => {
    for (const f of ["os", "kernel", "precision", "notes"]) delete d.current[f];
  }),
  "records with a coldness (and one older record without)": with_((d) => {
    d.current.coldness = { class: "cold", treeReadBytes: 320000000, treeMajorFaults: 90, readBytes: 1000, needBytes: 335600000, needFrom: "plan", rule: 1 };
    d.history[0].coldness = { class: "unknown", treeReadBytes: null, treeMajorFaults: null, readBytes: null, needBytes: 268435456, needFrom: "fallback", rule: 1 };
  }),
  "residency null": with_((d) => {
    d.residency = null;
  }),
  "environment with nulls": with_((d) => {
    d.environment = { firefoxVersion: null, buildId: null, os: null, kernel: null, mode: null };
  }),
};

// Documents both must refuse, with the code checkExport gives.
const BAD = {
  "an add-on figure that is 0 for missing, without its source": [with_((d) => (d.current.costs = { ...COSTS, addons: [{ ...COSTS.addons[0], startupMs: { value: 0 } }] })), "invalid"],
  "costs unavailable for an unknown reason": [with_((d) => (d.current.costs = { unavailable: "because" })), "invalid"],
  "a trace of a future version": [with_((d) => (d.trace = { ...TRACE, version: 2 })), "invalid"],
  // Issue 20 #8: these were stored, then broke the charts (the import half applied).
  "a trace with null block entries": [with_((d) => (d.trace = { ...TRACE, block: [null] })), "invalid"],
  "a trace with null samples": [with_((d) => (d.trace = { ...TRACE, samples: [null] })), "invalid"],
  "a trace whose extents are not a list": [
    with_((d) => (d.trace = { ...TRACE, files: TRACE.files.map((f) => ({ ...f, extents: 7 })) })),
    "invalid",
  ],
  "omniEntries of a future version": [with_((d) => (d.omniEntries = { ...OMNI_ENTRIES, version: 2 })), IMPORT_ERRORS.invalid],
  "an omniEntries build without traces": [with_((d) => (d.omniEntries = { version: 1, builds: [{ ...OMNI_ENTRIES.builds[0], traces: [] }] })), IMPORT_ERRORS.invalid],
  "an omniEntries entry with bytes as a string": [
    with_((d) => (d.omniEntries = { version: 1, builds: [{ ...OMNI_ENTRIES.builds[0], entries: [{ archive: "omni.ja", name: "a", bytesRead: "9", starts: 1 }] }] })),
    IMPORT_ERRORS.invalid,
  ],
  "an array": [[], IMPORT_ERRORS.foreign],
  "another format": [with_((d) => (d.format = "something-else")), IMPORT_ERRORS.foreign],
  "no format": [with_((d) => delete d.format), IMPORT_ERRORS.foreign],
  "a future version": [with_((d) => (d.version = 2)), IMPORT_ERRORS.futureVersion],
  "version as a string": [with_((d) => (d.version = "1")), IMPORT_ERRORS.invalid],
  "version 0": [with_((d) => (d.version = 0)), IMPORT_ERRORS.invalid],
  "no history": [with_((d) => delete d.history), IMPORT_ERRORS.invalid],
  "no current field": [with_((d) => delete d.current), IMPORT_ERRORS.invalid],
  "a milestone as a string": [with_((d) => (d.history[0].milestones.main = "300")), IMPORT_ERRORS.invalid],
  "a record without id": [with_((d) => delete d.history[1].id), IMPORT_ERRORS.invalid],
  "an unknown mode": [with_((d) => (d.current.mode = "turbo")), IMPORT_ERRORS.invalid],
  "io missing": [with_((d) => delete d.current.io), IMPORT_ERRORS.invalid],
  "negative read bytes": [with_((d) => (d.current.io.readBytes = -1)), IMPORT_ERRORS.invalid],
  "firefox without buildId": [with_((d) => delete d.current.firefox.buildId), IMPORT_ERRORS.invalid],
  "an unknown source": [with_((d) => (d.source = "cloud")), IMPORT_ERRORS.invalid],
  "exportedAt as a date string": [with_((d) => (d.exportedAt = "2026-01-01")), IMPORT_ERRORS.invalid],
  "environment mode unknown": [with_((d) => (d.environment.mode = "fast")), IMPORT_ERRORS.invalid],
  "residency without groups": [with_((d) => (d.residency = { installDir: "/x" })), IMPORT_ERRORS.invalid],
  "residency totals as strings": [with_((d) => (d.residency.groups.install.pages = "many")), IMPORT_ERRORS.invalid],
  "trimmed negative": [with_((d) => (d.trimmed = -1)), IMPORT_ERRORS.invalid],
  "an unknown coldness class": [with_((d) => (d.current.coldness = { class: "tepid" })), IMPORT_ERRORS.invalid],
  "coldness needFrom unknown": [with_((d) => (d.current.coldness = { class: "hot", needFrom: "guess" })), IMPORT_ERRORS.invalid],
  "notes not strings": [with_((d) => (d.current.notes = [1])), IMPORT_ERRORS.invalid],
};

test("the schema describes a record's bench object: it refuses a malformed one (checkExport leaves bench to its readers)", () => {
  const bench = { scenario: "cold", run: 1, preloadMs: null, quit: "clean", slowDisk: null, readAheadKb: 128 };
  const withBench = (change) =>
    with_((d) => {
      d.source = "bench";
      d.history[0].bench = { ...bench, ...change };
    });
  assert.ok(validate(withBench({})), JSON.stringify(validate.errors));
  for (const [name, change] of Object.entries({
    "a scenario that is no string": { scenario: 3 },
    "no scenario": { scenario: undefined },
    "run 0": { run: 0 },
    "a negative preload time": { preloadMs: -1 },
    "an unknown way of quitting": { quit: "crashed" },
    "planned bytes as a string": { bytesPlanned: "335600000" },
  })) {
    const doc = withBench(change);
    assert.equal(validate(JSON.parse(JSON.stringify(doc))), false, `the schema refuses ${name}`);
    assert.deepEqual(checkExport(doc), { ok: true }, `checkExport accepts ${name}`);
  }
});

test("the schema itself compiles under draft 2020-12 (strict)", () => {
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
  assert.equal(typeof validate, "function");
});

for (const [name, doc] of Object.entries(GOOD)) {
  test(`accepted by the schema and by checkExport: ${name}`, () => {
    assert.ok(validate(doc), JSON.stringify(validate.errors));
    assert.deepEqual(checkExport(doc), { ok: true });
    assert.deepEqual(checkExport(JSON.parse(JSON.stringify(doc))), { ok: true }, "survives a JSON round trip");
  });
}

for (const [name, [doc, code]] of Object.entries(BAD)) {
  test(`refused by the schema and by checkExport: ${name}`, () => {
    assert.equal(validate(doc), false, "the schema refuses it");
    const checked = checkExport(doc);
    assert.equal(checked.ok, false);
    assert.equal(checked.code, code);
    assert.ok(checked.problems.length > 0);
  });
}

test("parseExport: text that is not JSON is its own error", () => {
  const result = parseExport("{ this is not json");
  assert.equal(result.ok, false);
  assert.equal(result.code, IMPORT_ERRORS.notJson);
  assert.equal(parseExport("").code, IMPORT_ERRORS.notJson);
  assert.equal(parseExport("null").code, IMPORT_ERRORS.foreign);
  assert.equal(parseExport('{"format":"about-startup-export","version":99}').code, IMPORT_ERRORS.futureVersion);
  const ok = parseExport(JSON.stringify(good()));
  assert.equal(ok.ok, true);
  assert.equal(ok.doc.format, FORMAT);
});

test("a refused import is worded from its code; an invalid one names its fields, not the English problems", () => {
  const t = (key, subs = []) => `${key}(${subs.join("|")})`;
  const milestone = checkExport(BAD["a milestone as a string"][0]);
  assert.equal(importErrorText("b.json", milestone, t), "importInvalidFields(b.json|history[0].milestones.main)");
  const many = { code: IMPORT_ERRORS.invalid, problems: ["a: x", "b: y", "b: z", "c: w", "d: v", "e: u"] };
  assert.match(importErrorText("b.json", many, t), /^importInvalidFieldsMore\(b\.json\|a.*b.*c\|2\)$/);
  assert.equal(
    importErrorText("b.json", parseExport('{"format":"about-startup-export","version":99}'), t),
    "importFutureVersion(b.json|importFutureVersionDetail(99|1))",
  );
  assert.equal(importErrorText("b.json", parseExport("null"), t), "importForeign(b.json)");
  // not JSON: the parser's message is the only detail there is
  assert.match(importErrorText("b.json", parseExport("{ nope"), t), /^importNotJson\(b\.json\|.+\)$/);
});

test("every problem checkExport finds names its field before the English", () => {
  for (const [name, [doc, code]] of Object.entries(BAD)) {
    if (code !== IMPORT_ERRORS.invalid) {
      continue;
    }
    for (const problem of checkExport(doc).problems) {
      assert.match(problemField(problem), /^[\w.[\]]+( and [\w.[\]]+)?$/, `${name}: ${problem}`);
    }
  }
});

test("residencySummary keeps the per-group totals only", () => {
  const summary = residencySummary(RESIDENCY_REPLY, 5);
  assert.deepEqual(Object.keys(summary.groups), ["install", "system"]);
  assert.equal(summary.groups.install.resident_pages, null, "hidden stays unknown, not 0");
  assert.equal(summary.groups.install.mapped_pages, 60000);
  assert.equal(summary.installDir, "/usr/lib/firefox-esr");
  assert.equal(summary.measuredAt, 5);
  assert.equal(residencySummary(null), null);
  assert.equal(residencySummary({ files: [] }), null);
});

test("exportFileName: dated, local time, minutes", () => {
  assert.equal(exportFileName(new Date(2026, 0, 5, 9, 7, 30)), "about-startup-2026-01-05-0907.json");
});

test("exportRecords: an older export's records are classified from their own figures", () => {
  const doc = good();
  doc.history = [record(1, { io: null }), record(2, { io: { ...record(2).io, treeReadBytes: 0 } })];
  doc.current = null;
  const records = exportRecords(doc);
  assert.deepEqual(
    records.map((r) => r.coldness.class),
    ["unknown", "hot"],
  );
  assert.equal(doc.history[0].coldness, undefined, "the document itself is not changed");
});

test("exportRecords: history plus current, once", () => {
  const doc = good();
  assert.deepEqual(
    exportRecords(doc).map((r) => r.id),
    [`full-${P + 1}`, `full-${P + 2}`],
  );
  doc.history = [record(1)];
  assert.equal(exportRecords(doc).length, 2);
});
