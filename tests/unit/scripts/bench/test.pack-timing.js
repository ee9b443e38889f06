import { test } from "node:test";
import assert from "node:assert/strict";
import { byScenario, floorMs, imageFormat, mountReadAheadKb, plans, rows, spliceSection, table, targetLines, targets, waitMs } from "../../../../scripts/bench/pack-timing.mjs";

// Bench records as scripts/bench.mjs writes them (only the fields these helpers read).
const rec = (scenario, sessionRestored, more = {}) => ({ milestones: { sessionRestored }, bench: { scenario, preloadMs: null, ...more }, io: { readBytes: 1e6 } });
const many = (scenario, values, more) => values.map((v) => rec(scenario, v, more));

function runs({ packedHot = [600, 610, 590, 605, 595, 600, 615, 585, 600, 610], snapLogin = [4100, 4000, 4200, 4050, 4150] } = {}) {
  return {
    plain: { cold: many("cold", [12000, 12100, 11900, 12050, 11950]), hot: many("hot", [600, 610, 590, 605, 595, 600, 615, 585, 600, 610]) },
    packed: {
      cold: many("cold", [4000, 4100, 3900]),
      "launch-prefetch": many("launch-prefetch", [2900, 3000, 3100], { prefetch: { bytesRead: 77e6, bytesPlanned: 212e6, ms: 2500, strategy: "beside", compressed: { format: "squashfs", verdict: "image_ranges", leftOff: null } } }),
      hot: many("hot", packedHot),
    },
    snap: {
      cold: many("cold", [4100, 4000, 4200, 4050, 4150]),
      "launch-prefetch": many("launch-prefetch", [4100, 4050, 4150, 4000, 4200], { prefetch: { bytesRead: 0, ms: 1, strategy: "beside", compressed: { format: "squashfs", verdict: "left_off", leftOff: "image_not_readable" } } }),
      login: many("login", snapLogin),
      // preload-plan: its preload is timed before the launch and counts in the wait.
      "preload-plan": many("preload-plan", [4000, 4100, 4050, 3950, 4150], { preloadMs: 20 }),
    },
  };
}

test("the wait is the preload timed before the launch plus sessionRestored; no sessionRestored, no wait", () => {
  assert.equal(waitMs(rec("preload-plan", 4000, { preloadMs: 25 })), 4025);
  assert.equal(waitMs(rec("cold", 4000)), 4000);
  assert.equal(waitMs({ milestones: {}, bench: { scenario: "cold" } }), null);
});

test("the three runs: the Snap's without root's DAC capabilities, its login a few seconds before the launch", () => {
  const p = plans({ plainDir: "/usr/lib/firefox-esr", packedMount: "/w/mnt-packed", snapMount: "/w/mnt-snap", runs: 10, snapRuns: 5, loginDelay: 5 });
  assert.deepEqual(p.map((x) => [x.key, x.firefox, x.scenarios.join(","), x.runs]), [
    ["plain", "/usr/lib/firefox-esr", "cold,hot", 10],
    ["packed", "/w/mnt-packed", "launch-prefetch,hot", 10],
    ["snap", "/w/mnt-snap", "cold,launch-prefetch,login,preload-plan", 5],
  ]);
  assert.deepEqual(p[2].flags, ["--no-dac-override", "--login-delay", "5", "--workload-mib", "16"]);
  assert.deepEqual(p[0].flags, []);
});

test("targets: 3,000 / 12,000 ms is 0.25x and holds; the hot starts alike are within noise; no Snap path slower", () => {
  const t = targets(runs());
  assert.equal(t.a.ratio, 3000 / 12000);
  assert.equal(t.a.holds, true);
  assert.deepEqual(t.a.n, [5, 3]);
  assert.equal(t.b.holds, true);
  assert.equal(t.b.diff, 0);
  assert.equal(t.c.holds, true);
  assert.deepEqual(t.c.paths.map((p) => [p.scenario, p.n, p.slower]), [["launch-prefetch", 5, false], ["login", 5, false], ["preload-plan", 5, false]]);
});

test("targets fail when they should: a hot start plainly slower, a Snap path plainly slower, too few runs", () => {
  const slowHot = targets(runs({ packedHot: [900, 910, 890, 905, 895, 900, 915, 885, 900, 910] }));
  assert.equal(slowHot.b.holds, false);
  assert.ok(slowHot.b.p < 0.05);
  const slowLogin = targets(runs({ snapLogin: [6100, 6000, 6200, 6050, 6150] }));
  assert.equal(slowLogin.c.holds, false);
  assert.equal(slowLogin.c.paths.find((p) => p.scenario === "login").slower, true);
  const fewHot = targets(runs({ packedHot: [600, 610, 590] }));
  assert.equal(fewHot.b.holds, false, "n >= 10 each is part of the target");
  const fewSnap = targets(runs({ snapLogin: [4100, 4000] }));
  assert.equal(fewSnap.c.holds, false, "n >= 5 each is part of the target");
  const over = runs();
  over.packed["launch-prefetch"] = many("launch-prefetch", [3100, 3200, 3300]);
  assert.equal(targets(over).a.holds, false);
});

test("rows set each scenario against the plain cold and against its own install's cold", () => {
  const list = rows(runs(), { plain: "plain install", packed: "packed", snap: "Snap-shaped" });
  const lp = list.find((r) => r.install === "packed" && r.scenario === "launch-prefetch");
  assert.equal(lp.wait, 3000);
  assert.equal(lp.vsPlainCold, 0.25);
  assert.equal(lp.vsOwnCold, 3000 / 4000);
  assert.equal(lp.prefetchBytes, 77e6);
  const pp = list.find((r) => r.install === "Snap-shaped" && r.scenario === "preload-plan");
  assert.equal(pp.wait, 4070);
  assert.match(table(list), /\| packed \| launch-prefetch \| 3 \| 3,000 ms \| — \| 3,000 ms \| 2900 3000 3100 \| 0\.25x \| 0\.75x \| image raw, beside; 77\.0 MB, 2,500 ms \|/);
  assert.equal(list.find((r) => r.install === "Snap-shaped" && r.scenario === "launch-prefetch").prefetchDid, "left off: image_not_readable");
  assert.equal(list.find((r) => r.scenario === "cold").prefetchDid, null);
  assert.match(targetLines(targets(runs())), /\(a\) .* = \*\*0\.25x\*\*; target <= 0\.25x: \*\*holds\*\*/);
  const none = targetLines(targets({ snap: runs().snap }));
  assert.match(none, /\(a\) .*: \*\*not measured\*\*/);
  assert.match(none, /\(b\) .*: \*\*not measured\*\*/);
});

test("the floor: needed bytes over the bandwidth plus the CPU; nothing known, no floor", () => {
  assert.equal(floorMs(31457280, 31457280, 0.5), 1500);
  assert.equal(floorMs(null, 31457280, 0.5), null);
  assert.equal(floorMs(1e6, null, 0.5), null);
});

test("byScenario groups an export's history", () => {
  const g = byScenario({ history: [rec("cold", 1), rec("hot", 2), rec("cold", 3)] });
  assert.deepEqual(Object.keys(g), ["cold", "hot"]);
  assert.equal(g.cold.length, 2);
});

test("the section goes before the pack sweep the first time, and replaces itself after", () => {
  const doc = "# B\n\n<!-- pack-sweep:begin -->\nsweep\n<!-- pack-sweep:end -->\n";
  const once = spliceSection(doc, "first\n");
  assert.equal(once, "# B\n\n<!-- pack-timing:begin -->\nfirst\n<!-- pack-timing:end -->\n\n<!-- pack-sweep:begin -->\nsweep\n<!-- pack-sweep:end -->\n");
  assert.equal(spliceSection(once, "second $& $1\n"), once.replace("first", () => "second $& $1"), "a replacement pattern in the block is kept as it is");
  assert.throws(() => spliceSection("# nothing\n", "x\n"), /neither <!-- pack-timing:begin --> nor <!-- pack-sweep:begin -->/);
});

test("the packed image's format is read from unsquashfs -s: the level where stored, zstd's default where not", () => {
  const stat = (more) => `Found a valid SQUASHFS 4:0 superblock on x.\nCompression zstd\n${more}Block size 131072\nFragments are compressed\n`;
  assert.equal(imageFormat(stat("")), "zstd level 15, 128 KiB");
  assert.equal(imageFormat(stat("\tcompression-level 19\n").replace("131072", "262144")), "zstd level 19, 256 KiB");
  assert.equal(imageFormat("Compression lzo\nBlock size 131072\nFragments are not stored\n"), "lzo, 128 KiB, no fragments");
  assert.equal(imageFormat("not squashfs"), null);
  assert.equal(plans({ plainDir: "/p", packedMount: "/m", snapMount: "/s", runs: 1, snapRuns: 1, loginDelay: 5, packedFormat: "zstd level 19, 128 KiB" })[1].label, "packed (zstd level 19, 128 KiB)");
});

test("the images are mounted at the throttle's readahead unless told otherwise; 'disk' leaves the disk's", () => {
  assert.equal(mountReadAheadKb(undefined, "128"), 128);
  assert.equal(mountReadAheadKb("8192", "128"), 8192);
  assert.equal(mountReadAheadKb("disk", "128"), null);
  assert.throws(() => mountReadAheadKb("lots", "128"), /whole number of KiB/);
});
