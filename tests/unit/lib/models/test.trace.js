import { test } from "node:test";
import assert from "node:assert/strict";
import {
  accessPattern,
  agreement,
  assembleTrace,
  cellMark,
  diskView,
  fileTable,
  findFile,
  maxOf,
  minOf,
  readOverTime,
  RECORD_COMMAND,
  sectionBands,
  traceFor,
  traceProblems,
} from "../../../../extension/lib/models/trace.js";

// A small trace as the host writes it (native-host/src/trace/model.rs).
function fake() {
  return {
    version: 1,
    source: "tracefs",
    pid: 10,
    process_start_ticks: 100,
    attached_ms: 0,
    ended_ms: 100,
    lost_events: 0,
    tree_read_bytes: 5 * 4096,
    traced_read_bytes: 4 * 4096,
    written_bytes: 4096,
    files: [
      {
        path: "/ff/libxul.so",
        size: 40960,
        bytes_read: 3 * 4096,
        requests: 2,
        first_ms: 5,
        last_ms: 95,
        written: false,
        sections: [
          { name: ".rela.dyn", offset: 0, size: 8192 },
          { name: ".text", offset: 8192, size: 24576 },
          { name: ".comment", offset: 40900, size: 10 },
        ],
        extents: [[0, 1048576, 40960]],
      },
      { path: "/p/new.sqlite", size: 4096, bytes_read: 4096, requests: 1, written: true, sections: [], extents: [] },
      { path: "/ff/omni.ja", size: null, bytes_read: 4096, requests: 1, written: false, sections: [], extents: [] },
    ],
    events: [
      { t: 5, f: 0, o: 0, n: 1, p: 10, k: "sync" },
      { t: 95, f: 0, o: 8, n: 2, p: 10, k: "fault" },
      { t: 10, f: 1, o: 0, n: 1, p: 10, k: "read" },
      { t: 20, f: 2, o: 0, n: 1, p: 11, k: "sync" },
    ],
    block: [],
    samples: [
      { t: 10, read_bytes: 4096, majflt: 0 },
      { t: 60, read_bytes: 12288, majflt: 1 },
    ],
  };
}

test("traceProblems accepts a host trace and names what is wrong", () => {
  assert.deepEqual(traceProblems(fake()), []);
  const bad = fake();
  bad.version = 2;
  bad.events[0].f = 9;
  const problems = traceProblems(bad);
  assert.ok(problems.some((p) => p.startsWith("trace.version")));
  assert.ok(problems.some((p) => p.startsWith("trace.events")));
  assert.deepEqual(traceProblems(null), ["trace: must be an object"]);
});

// Issue 20 #8: an import with null entries in block, samples or sections, or extents that is
// not a list, was stored and then crashed the charts; each is now a named problem.
test("traceProblems names null entries and malformed per-file lists the charts would trip on", () => {
  const cases = [
    [(t) => (t.block = [null]), "trace.block"],
    [(t) => (t.samples = [null]), "trace.samples"],
    [(t) => (t.samples = [{ t: 1, read_bytes: -1 }]), "trace.samples"],
    [(t) => (t.files[0].sections = [null]), "trace.files[0].sections"],
    [(t) => (t.files[0].extents = 5), "trace.files[0].extents"],
    [(t) => (t.files[0].extents = [[0, 1]]), "trace.files[0].extents"],
    [(t) => (t.files[0].used = [[0, "x"]]), "trace.files[0].used"],
    [(t) => (t.files[0].size = "big"), "trace.files[0].size"],
  ];
  for (const [spoil, field] of cases) {
    const t = fake();
    spoil(t);
    const problems = traceProblems(t);
    assert.ok(problems.some((p) => p.startsWith(field)), `${field}: ${problems.join("; ")}`);
  }
  const t = fake();
  t.files[0].used = null;
  delete t.files[1].extents;
  assert.deepEqual(traceProblems(t), [], "absent or null optional members are fine");
});

test("600,000 events are drawn without spreading them into Math.max", () => {
  const t = fake();
  t.events = Array.from({ length: 600_000 }, (_, i) => ({ t: i / 6000, f: 0, o: i % 10, n: 1, p: 10, k: "sync" }));
  t.files[0].size = null;
  assert.deepEqual(traceProblems(t), []);
  const pattern = accessPattern(t, 0);
  assert.ok(pattern.reads === 600_000 && pattern.size === 10 * 4096, `${pattern.reads} ${pattern.size}`);
  assert.ok(readOverTime(t).total > 0);
  const disk = diskView(t);
  assert.equal(disk.source, "extents");
  assert.ok(disk.max > disk.min);
  assert.ok(maxOf([]) === -Infinity && maxOf([3, 9, 2]) === 9 && minOf([3, 9, 2]) === 2);
});

test("assembleTrace joins pages, even split inside a string", () => {
  const text = JSON.stringify(fake());
  const chunks = [{ data: text.slice(0, 7) }, { data: text.slice(7, 100) }, { data: text.slice(100) }];
  assert.equal(assembleTrace(chunks).files.length, 3);
  assert.throws(() => assembleTrace([{ data: '{"version": 3}' }]), /trace.version/);
});

test("traceFor matches the process and its start", () => {
  const list = [
    { id: "a", pid: 10, process_start_ticks: 5 },
    { id: "b", pid: 10, process_start_ticks: 100 },
  ];
  assert.equal(traceFor(list, 10, 100).id, "b");
  assert.equal(traceFor(list, 10).id, "a");
  assert.equal(traceFor(list, 11), null);
});

test("readOverTime bins read bytes, leaves written files out, falls back to samples", () => {
  const { bins, source, total } = readOverTime(fake(), { bins: 10, span: 100 });
  assert.equal(source, "events");
  assert.equal(bins[0].bytes, 4096);
  assert.equal(bins[1].bytes, 0); // the written file's page at 10 ms is not a read
  assert.equal(bins[2].bytes, 4096);
  assert.equal(bins[9].bytes, 8192);
  assert.equal(total, 4 * 4096);
  assert.equal(bins[9].cumulative, total);
  const sampled = fake();
  sampled.events = [];
  const s = readOverTime(sampled, { bins: 10, span: 100 });
  assert.equal(s.source, "samples");
  assert.equal(s.bins[1].bytes, 4096);
  assert.equal(s.bins[6].bytes, 8192);
});

test("fileTable sorts by bytes with share of the file", () => {
  const rows = fileTable(fake());
  assert.equal(rows[0].path, "/ff/libxul.so");
  assert.equal(rows[0].share, 0.3);
  assert.equal(rows.find((r) => r.path === "/ff/omni.ja").share, null);
  assert.equal(rows.find((r) => r.written).path, "/p/new.sqlite");
  assert.equal(findFile(fake(), "libxul.so"), 0);
  assert.equal(findFile(fake(), "xul.so"), -1);
});

test("accessPattern aggregates into a bounded grid: 75,000 pages stay a few hundred cells", () => {
  const small = accessPattern(fake(), 0, { cols: 10, rows: 10, span: 100 });
  assert.equal(small.reads, 2);
  assert.deepEqual(
    small.cells.map((c) => [c.col, c.row, c.pages]).sort(),
    [
      [0, 0, 1],
      [9, 8, 1],
      [9, 9, 1],
    ],
  );
  const big = fake();
  big.files[0].size = 75000 * 4096;
  big.events = Array.from({ length: 75000 }, (_, i) => ({ t: i / 1000, f: 0, o: i, n: 1, p: 10, k: "sync" }));
  const grid = accessPattern(big, 0, { cols: 160, rows: 100, span: 75 });
  assert.ok(grid.cells.length <= 160 * 100);
  assert.equal(
    grid.cells.reduce((s, c) => s + c.pages, 0),
    75000,
  );
});

test("cellMark: a cell is a fault (drawn as a diamond) when most of its pages came without a readahead window", () => {
  assert.equal(cellMark({ pages: 10, kinds: { fault: 6, sync: 4 } }), "fault");
  assert.equal(cellMark({ pages: 10, kinds: { fault: 3, read: 3, async: 4 } }), "fault", "faults and reads seen neither way count together");
  assert.equal(cellMark({ pages: 10, kinds: { fault: 5, sync: 5 } }), "window", "half is not most");
  assert.equal(cellMark({ pages: 4, kinds: { sync: 2, order: 2 } }), "window");
  assert.equal(cellMark({ pages: 0, kinds: {} }), "window");
  const grid = accessPattern(fake(), 0, { cols: 10, rows: 10, span: 100 });
  assert.ok(grid.cells.every((c) => ["fault", "window"].includes(cellMark(c))));
});

test("sectionBands keeps large and named sections as fractions", () => {
  const bands = sectionBands(fake().files[0]);
  assert.deepEqual(
    bands.map((b) => b.name),
    [".rela.dyn", ".text"],
  );
  assert.equal(bands[1].from, 0.2);
  assert.equal(bands[1].to, 0.8);
  assert.deepEqual(sectionBands(fake().files[2]), []);
});

test("diskView places reads through extents and counts seeks; block requests win", () => {
  const v = diskView(fake(), { cols: 10, rows: 10, span: 100 });
  assert.equal(v.source, "extents");
  assert.equal(v.min, 1048576);
  assert.equal(v.cells.length, 2);
  const fewBlocks = fake();
  fewBlocks.block = [{ t: 1, pos: 0, len: 4096, lat_ms: 1, p: 10 }];
  assert.equal(diskView(fewBlocks, { cols: 10, rows: 10, span: 100 }).source, "extents", "block requests covering under half the reads");
  const withBlock = fake();
  withBlock.traced_read_bytes = 12288;
  withBlock.block = [
    { t: 1, pos: 0, len: 4096, lat_ms: 1, p: 10 },
    { t: 2, pos: 100 * 1024 * 1024, len: 4096, lat_ms: 2, p: 10 },
    { t: 3, pos: 100 * 1024 * 1024 + 4096, len: 4096, lat_ms: 1, p: 10 },
  ];
  const b = diskView(withBlock, { cols: 10, rows: 10, span: 100 });
  assert.equal(b.source, "block");
  assert.equal(b.seeks, 1);
});

test("agreement and the command to record one", () => {
  const a = agreement(fake());
  assert.equal(a.ratio, 0.8);
  assert.equal(a.lost, 0);
  const none = fake();
  none.tree_read_bytes = null;
  assert.equal(agreement(none).ratio, null);
  assert.match(RECORD_COMMAND, /^sudo about-startup-host launch --cold --trace$/);
});

test("the docs' access-pattern SVG: sections named, text escaped, cells bounded", async () => {
  const { accessPatternSvg } = await import("../../../../scripts/bench/trace-chart.mjs");
  const trace = fake();
  trace.files[0].path = "/ff/<lib>&/libxul.so";
  const svg = accessPatternSvg(trace, "libxul.so", { span: 100 });
  assert.match(svg, /^<svg /);
  assert.match(svg, />\.text</);
  assert.match(svg, /&lt;lib&gt;&amp;/);
  assert.ok(!svg.includes("<lib>"));
  assert.throws(() => accessPatternSvg(trace, "nothing.so"), /not in the trace/);
});
