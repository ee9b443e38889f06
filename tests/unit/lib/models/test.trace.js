import { test } from "node:test";
import assert from "node:assert/strict";
import { assembleTrace, RECORD_ARGS, traceFor, traceProblems, uploadPages } from "../../../../extension/lib/models/trace.js";
import { fakeTrace } from "../../fakes.js";

// A small trace as the host writes it.
function fake() {
  return fakeTrace({
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
  });
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

test("the command to record one is the host's", () => {
  assert.equal(RECORD_ARGS, "launch --cold --trace", "the host's trace_list says the whole command");
});

test("uploadPages cuts a trace's text into pages the host joins back byte for byte", () => {
  const text = JSON.stringify({ ...fake(), install_dir: "/opt/firefox-ésr/ünïcödé" });
  const bytes = new TextEncoder().encode(text);
  for (const size of [1, 2, 7, 64, 1 << 20]) {
    const pages = uploadPages(text, size);
    assert.ok(pages.every((p) => p.total === bytes.length));
    assert.deepEqual(pages.map((p) => p.offset), pages.map((_, i) => pages.slice(0, i).reduce((n, q) => n + new TextEncoder().encode(q.data).length, 0)));
    assert.equal(pages.map((p) => p.data).join(""), text, `page size ${size}`);
    assert.ok(pages.every((p) => !p.data.includes("\uFFFD") && !p.data.includes("\ufffd") && !p.data.includes("�")), "no character cut in two");
  }
  assert.deepEqual(uploadPages(""), [{ offset: 0, total: 0, data: "" }]);
});

test("the docs' access-pattern SVG lays out the host's bins: sections named, text escaped", async () => {
  const { accessPatternSvg } = await import("../../../../scripts/bench/trace-chart.mjs");
  // A summary's pattern as the host writes it (native-host/src/trace/summary/bins.rs).
  const summary = {
    span_ms: 100,
    pattern: {
      file: 0,
      path: "/ff/<lib>&/libxul.so",
      cols: 10,
      rows: 10,
      size: 40960,
      file_size: 40960,
      reads: 2,
      bytes_read: 12288,
      cells: [[0, 0, 1], [9, 8, 1], [9, 9, 1]],
      marks: ["window", "fault", "fault"],
      bands: [{ name: ".text", from: 0.2, to: 0.8 }],
    },
  };
  const svg = accessPatternSvg(summary);
  assert.match(svg, /^<svg /);
  assert.match(svg, />\.text</);
  assert.match(svg, /&lt;lib&gt;&amp;/);
  assert.ok(!svg.includes("<lib>"));
  assert.equal((svg.match(/fill="#222"/g) ?? []).length, 1, "the one cell read through a window; the two others are faults");
  assert.throws(() => accessPatternSvg({ span_ms: 1, pattern: null }), /no access pattern/);
});
