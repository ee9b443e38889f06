import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { DEFAULTS, niceStep, startSpanEnd, tickValues, timelineLayout } from "../../../../extension/lib/models/timeline.js";

// One headless start of ESR 153 (NOTES), as ms since process.
const START = [
  { name: "process", value: 0 },
  { name: "start", value: 41 },
  { name: "main", value: 43 },
  { name: "selectProfile", value: 120 },
  { name: "afterProfileLocked", value: 122 },
  { name: "startupCrashDetectionBegin", value: 290 },
  { name: "createTopLevelWindow", value: 410 },
  { name: "sessionRestoreInit", value: 700 },
  { name: "firstPaint2", value: 1180 },
  { name: "sessionRestored", value: 1410 },
];

test("niceStep: 1, 2 or 5 times a power of ten, at most maxTicks steps", () => {
  assert.equal(niceStep(1410, 8), 200);
  assert.equal(niceStep(100, 10), 10);
  assert.equal(niceStep(9, 8), 2);
  assert.equal(niceStep(0.7, 7), 0.1);
  assert.equal(niceStep(0), 1);
  assert.equal(niceStep(Number.NaN), 1);
  for (const span of [1, 3, 17, 999, 1234, 98765]) {
    const step = niceStep(span, 6);
    assert.ok(span / step <= 6, `${span}/${step}`);
    assert.match(String(step / 10 ** Math.floor(Math.log10(step))), /^(1|2|5)$/);
  }
});

test("tickValues start at 0 and end on the first tick at or past the maximum", () => {
  assert.deepEqual(tickValues(1410, 8), [0, 200, 400, 600, 800, 1000, 1200, 1400, 1600]);
  assert.deepEqual(tickValues(1000, 5), [0, 200, 400, 600, 800, 1000]);
  assert.deepEqual(tickValues(0), [0, 1]);
});

test("each milestone is one mark, in time order, x growing with time inside the plot", () => {
  const layout = timelineLayout([...START].reverse());
  assert.deepEqual(
    layout.marks.map((m) => m.name),
    START.map((s) => s.name),
  );
  assert.equal(layout.marks[0].x, layout.left, "process is at the axis origin");
  for (let i = 1; i < layout.marks.length; i++) {
    assert.ok(layout.marks[i].x >= layout.marks[i - 1].x);
  }
  for (const mark of layout.marks) {
    assert.ok(mark.x >= layout.left && mark.x <= layout.right);
  }
  assert.equal(layout.ticks[0].x, layout.left);
  assert.equal(layout.ticks.at(-1).x, layout.right);
  assert.equal(layout.max, 1600);
});

test("opened late: the axis spans the start, and a milestone 30 s later is listed at the edge", () => {
  // The page opened more than 30 s after the start also reports startupCrashDetectionEnd.
  const late = [...START, { name: "startupCrashDetectionEnd", value: 32_012 }];
  const spanEnd = startSpanEnd(late);
  assert.equal(spanEnd, 1410, "to sessionRestored");
  const layout = timelineLayout(late, { spanEnd });
  assert.equal(layout.max, 1600, "the start fills the axis (its last tick), not a tenth of it");
  assert.deepEqual(layout.marks.map((m) => m.name), START.map((m) => m.name));
  assert.deepEqual(layout.later.map((m) => [m.name, m.value]), [["startupCrashDetectionEnd", 32_012]]);
  assert.ok(layout.height > timelineLayout(START, { spanEnd }).height, "room for the listed one");
  // Opened early, nothing later: the same axis.
  assert.equal(timelineLayout(START, { spanEnd: startSpanEnd(START) }).max, 1600);
  // Without sessionRestored (basic mode, or not reported yet): every milestone on the axis.
  const noEnd = START.filter((m) => m.name !== "sessionRestored");
  assert.equal(startSpanEnd(noEnd), 1180);
  assert.equal(startSpanEnd([]), null);
  assert.equal(timelineLayout(late).later.length, 0, "no spanEnd, no cut");
  // A trace's last read after sessionRestored extends the end.
  assert.equal(startSpanEnd(START, { lastRead: 2000 }), 2000);
  assert.equal(startSpanEnd(START, { lastRead: 900 }), 1410);
});

test("missing milestones are absent, never drawn at 0", () => {
  const layout = timelineLayout([
    { name: "process", value: 0 },
    { name: "firstPaint", value: null },
    { name: "sessionRestored", value: Number.NaN },
    { name: "negative", value: -5 },
    { name: "text", value: "12" },
    undefined,
    { name: "main", value: 50 },
  ]);
  assert.deepEqual(
    layout.marks.map((m) => m.name),
    ["process", "main"],
  );
});

test("labels in one lane never overlap, and stay inside the chart", () => {
  const items = START.map((s) => ({ ...s, label: `${s.name} ${s.value} ms` }));
  for (const width of [320, 480, 720, 1200]) {
    const layout = timelineLayout(items, { width });
    for (const mark of layout.marks) {
      assert.ok(mark.textX0 >= 0 && mark.textX1 <= width + 1e-9, `${mark.name} inside ${width}px`);
      assert.equal(mark.labelWidth, mark.label.length * DEFAULTS.charWidth);
    }
    for (let lane = 0; lane < layout.lanes; lane++) {
      const inLane = layout.marks.filter((m) => m.lane === lane).sort((a, b) => a.x - b.x);
      for (let i = 1; i < inLane.length; i++) {
        const prevEnd = Math.max(inLane[i - 1].textX1, inLane[i - 1].x);
        const start = Math.min(inLane[i].textX0, inLane[i].x);
        assert.ok(start >= prevEnd + DEFAULTS.labelGap - 1e-9, `lane ${lane} at ${width}px: ${inLane[i - 1].name} / ${inLane[i].name}`);
      }
    }
  }
});

test("close milestones go to more lanes; the chart grows to hold them", () => {
  const spread = timelineLayout([
    { name: "a", value: 0 },
    { name: "b", value: 1000 },
  ]);
  const crowded = timelineLayout([
    { name: "a", value: 0 },
    { name: "b", value: 1 },
    { name: "c", value: 2 },
    { name: "d", value: 1000 },
  ]);
  assert.equal(spread.lanes, 1);
  assert.equal(crowded.lanes, 3);
  assert.ok(crowded.height > spread.height);
  // a's label runs over b's and c's marks, b's over c's: each sits above the marks it runs over
  assert.deepEqual(
    crowded.marks.map((m) => m.lane),
    [2, 1, 0, 0],
  );
  // lane 0 is nearest the axis, the labels sit above it
  for (const mark of crowded.marks) {
    assert.ok(mark.labelY < crowded.axisY);
  }
  assert.ok(crowded.marks[0].labelY < crowded.marks[1].labelY);
});

/**
 * A cold start of ESR 153 on the 30 MiB/s throttle: the first cold run of a recorded benchmark
 * (tests/fixtures/bench-cold-preload-hot.json), as ms since process.
 */
const COLD = (() => {
  const bench = JSON.parse(readFileSync(new URL("../../../fixtures/bench-cold-preload-hot.json", import.meta.url), "utf8"));
  const run = bench.history.find((record) => record.coldness?.class === "cold");
  return [{ name: "process", value: 0 }, ...Object.entries(run.milestones).map(([name, value]) => ({ name, value }))].sort((a, b) => a.value - b.value);
})();

/**
 * The marks whose line runs through another mark's label, as "line|label": the chart draws a
 * mark's line from the axis up to 10 px above its own label's baseline (page/timeline.js), and a
 * label's text from about 12 px above its baseline to 4 px below it (descenders).
 */
function struck(layout) {
  const out = [];
  for (const label of layout.marks) {
    for (const line of layout.marks) {
      const through = line !== label && line.x >= label.textX0 - 1 && line.x <= label.textX1 + 1 && line.labelY - 10 < label.labelY + 4;
      if (through) {
        out.push(`${line.name}|${label.name}`);
      }
    }
  }
  return out;
}

test("no mark's line strikes through another milestone's label (hot and cold starts, 600 to 1600 px)", () => {
  for (const [kind, start] of [
    ["hot", START],
    ["cold", COLD],
  ]) {
    const items = start.map((s) => ({ ...s, label: `${s.name} ${s.value.toLocaleString("en")} ms` }));
    for (const width of [600, 720, 900, 1000, 1200, 1600]) {
      const layout = timelineLayout(items, { width, spanEnd: startSpanEnd(items) });
      assert.deepEqual(struck(layout), [], `${kind} start at ${width}px`);
      assert.equal(layout.marks.length, start.length);
    }
  }
});

test("a cluster near the end runs its labels left, stepping up to the right", () => {
  const layout = timelineLayout(
    COLD.map((s) => ({ ...s, label: `${s.name} ${s.value} ms` })),
    { width: 720, spanEnd: 8883 },
  );
  const byName = Object.fromEntries(layout.marks.map((m) => [m.name, m]));
  assert.equal(byName.sessionRestored.anchor, "end");
  assert.equal(byName.firstPaint2.anchor, "end");
  assert.ok(byName.sessionRestored.lane > byName.firstPaint2.lane, "the later label is above the earlier mark it runs over");
});

test("a label near the right edge runs to the left of its mark", () => {
  const layout = timelineLayout(
    [
      { name: "process", value: 0 },
      { name: "sessionRestored", value: 1000 },
    ],
    { width: 400 },
  );
  const last = layout.marks.at(-1);
  assert.equal(last.anchor, "end");
  assert.equal(last.labelX, last.x - DEFAULTS.labelPad);
  assert.equal(layout.marks[0].anchor, "start");
});

test("empty input gives an empty chart without NaN", () => {
  const layout = timelineLayout([]);
  assert.deepEqual(layout.marks, []);
  assert.equal(layout.lanes, 1);
  assert.ok(Number.isFinite(layout.height) && Number.isFinite(layout.axisY));
  assert.ok(layout.ticks.every((t) => Number.isFinite(t.x)));
  assert.deepEqual(timelineLayout(undefined).marks, []);
});

test("a measure function, when given, sets the label widths", () => {
  const layout = timelineLayout([{ name: "main", value: 0, label: "main 0 ms" }], { measure: (text) => text.length * 10 });
  assert.equal(layout.marks[0].labelWidth, 90);
  assert.equal(layout.marks[0].textX1 - layout.marks[0].textX0, 90);
});

test("every string page/timeline.js and background.js use is in messages.json", async () => {
  const fs = await import("node:fs");
  const read = (rel) => fs.readFileSync(new URL(`../../../../${rel}`, import.meta.url), "utf8");
  const messages = JSON.parse(read("extension/_locales/en/messages.json"));
  const keys = [
    ...read("extension/page/timeline.js").matchAll(/\bt\("(\w+)"/g),
    ...read("extension/background.js").matchAll(/getMessage\("(\w+)"/g),
  ].map((m) => m[1]);
  assert.ok(keys.length >= 3);
  for (const key of keys) {
    assert.ok(messages[key]?.message, `messages.json lacks ${key}`);
  }
});
