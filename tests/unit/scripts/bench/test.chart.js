import { test } from "node:test";
import assert from "node:assert/strict";
import { benchChart } from "../../../../scripts/bench/chart.mjs";

const rows = [
  { scenario: "cold", runs: [{ preloadMs: null, sessionRestored: 9000 }, { preloadMs: null, sessionRestored: 9400 }] },
  { scenario: "preload", runs: [{ preloadMs: 9800, sessionRestored: 450 }, { preloadMs: 9900, sessionRestored: 470 }] },
  { scenario: "hot", runs: [{ preloadMs: null, sessionRestored: 440 }] },
];

test("an SVG document with a row per scenario, the preload stacked, a dot per run", () => {
  const svg = benchChart(rows, { title: "Firefox 153: time to sessionRestored", subtitle: "30 MiB/s" });
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  assert.ok(svg.trimEnd().endsWith("</svg>"));
  for (const scenario of ["cold", "preload", "hot"]) {
    assert.ok(svg.includes(`>${scenario}</text>`), scenario);
  }
  assert.equal((svg.match(/<circle /g) ?? []).length, 5);
  assert.equal((svg.match(/fill="url\(#hatch\)"/g) ?? []).length, 1); // only preload has a preload bar
  assert.match(svg, /10\.31 s \(preload 9\.85 s \+ start 0\.46 s\)/);
  // Whiskers only where there is an interval (n ≥ 2): cold and preload, not hot.
  assert.equal((svg.match(/<path /g) ?? []).length, 2);
});

test("text is escaped", () => {
  const svg = benchChart([{ scenario: "<script>&", runs: [] }], { title: 'a "b" <c>' });
  assert.ok(!svg.includes("<script>"));
  assert.ok(svg.includes("&lt;script&gt;&amp;"));
  assert.ok(svg.includes("a &quot;b&quot; &lt;c&gt;"));
});
