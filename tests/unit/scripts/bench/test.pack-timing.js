import { test } from "node:test";
import assert from "node:assert/strict";
import { byScenario, conditions, floorMs, FUSE_TIMED, fuseNote, imageFormat, mountArgv, mountedFsType, mountReadAheadKb, mountSentence, outName, packRecord, prefetchDid, parsePackedMount, plans, rows, spliceSection, table, targetLines, targets, unmountArgvs, waitMs } from "../../../../scripts/bench/pack-timing.mjs";

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
  assert.equal(prefetchDid({ strategy: "beside", compressed: { verdict: "image_ranges" }, imageRead: { bytesWarmed: 1e6 } }), "image raw + decompressed ahead, beside");
  assert.equal(prefetchDid({ strategy: "beside", compressed: { verdict: "image_ranges" }, imageRead: { bytesWarmed: 0 } }), "image raw, beside");
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

test("--packed-mount: the kernel's loop mount unless fuse is asked for; anything else is refused", () => {
  assert.equal(parsePackedMount(undefined), "kernel");
  assert.equal(parsePackedMount("kernel"), "kernel");
  assert.equal(parsePackedMount("fuse"), "fuse");
  assert.throws(() => parsePackedMount("squashfuse"), /--packed-mount wants kernel .* or fuse .*, not squashfuse/);
});

test("squashfuse_ll mounts the packed image read-only and is unmounted by fusermount3 or fusermount, else umount; the kernel's by umount", () => {
  assert.deepEqual(mountArgv("fuse", "/i/ff.sqfs", "/w/mnt-packed"), ["squashfuse_ll", "-o", "ro", "/i/ff.sqfs", "/w/mnt-packed"]);
  assert.deepEqual(mountArgv("kernel", "/i/ff.sqfs", "/w/mnt-packed"), ["mount", "-t", "squashfs", "-o", "loop,ro,nodev,nosuid", "/i/ff.sqfs", "/w/mnt-packed"]);
  assert.deepEqual(unmountArgvs("fuse", "/w/m"), [["fusermount3", "-u", "/w/m"], ["fusermount", "-u", "/w/m"], ["umount", "/w/m"]]);
  assert.deepEqual(unmountArgvs("kernel", "/w/m"), [["umount", "/w/m"]]);
});

test("the type mounted at a point is read from mountinfo: exactly that point, the last mount there, escaped spaces", () => {
  // Lines as this machine's /proc/self/mountinfo writes them.
  const info = [
    "22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro",
    "301 22 7:3 / /var/tmp/w/mnt-packed ro,nosuid,nodev,relatime shared:150 - squashfs /dev/loop3 ro,errors=continue",
    "302 301 0:61 / /var/tmp/w/mnt-packed ro,relatime shared:151 - fuse.squashfuse /var/tmp/ff.sqfs ro,user_id=0,group_id=0",
    "303 22 0:62 / /var/tmp/my\\040mnt ro,relatime shared:152 - fuse.squashfuse /var/tmp/ff.sqfs ro,user_id=0,group_id=0",
  ].join("\n");
  assert.equal(mountedFsType(info, "/var/tmp/w/mnt-packed"), "fuse.squashfuse");
  assert.equal(mountedFsType(info, "/var/tmp/my mnt"), "fuse.squashfuse");
  assert.equal(mountedFsType(info, "/var/tmp/w"), null);
  assert.equal(mountedFsType(info.split("\n").slice(0, 2).join("\n"), "/var/tmp/w/mnt-packed"), "squashfs");
});

test("on squashfuse_ll: cold, launch --prefetch and hot of the image, in a state folder of its own, on the plain install's throttle; the kernel's run keeps launch --prefetch", () => {
  const args = { plainDir: "/p", packedMount: "/m", snapMount: "/s", runs: 10, snapRuns: 5, loginDelay: 5, packedFormat: "zstd level 19, 128 KiB" };
  const fuse = plans({ ...args, mount: "fuse" });
  assert.deepEqual(fuse.map((x) => [x.key, x.stateKey ?? x.key, x.firefox, x.scenarios.join(","), x.throttled]), [
    ["plain", "plain", "/p", "cold,hot", true],
    ["packed", "packed-fuse", "/m", "cold,launch-prefetch,hot", true],
    ["snap", "snap", "/s", "cold,launch-prefetch,login,preload-plan", true],
  ]);
  assert.equal(fuse[1].label, "packed (zstd level 19, 128 KiB; squashfuse_ll)");
  const kernel = plans(args);
  assert.deepEqual(kernel.map((x) => [x.key, x.stateKey ?? x.key, x.scenarios.join(","), x.throttled]), [
    ["plain", "plain", "cold,hot", true],
    ["packed", "packed", "launch-prefetch,hot", true],
    ["snap", "snap", "cold,launch-prefetch,login,preload-plan", true],
  ]);
  assert.equal(kernel[1].label, "packed (zstd level 19, 128 KiB)");
  assert.equal(outName("packed", "fuse"), "packed-fuse-run", "a squashfuse run keeps the kernel run's exports");
  assert.equal(outName("plain", "fuse"), "plain-fuse-run");
  assert.equal(outName("packed", "kernel"), "packed");
  assert.equal(conditions({ slowDisk: "30:150", readAheadKb: "128", mountKb: null }), "30:150 throttle\n(`--slow-disk 30:150`), readahead 128 KiB (the images' disk at its own window when they were mounted)");
  assert.match(conditions({ slowDisk: "30:150", readAheadKb: "128", mountKb: 128 }), /readahead 128 KiB \(the images' disk at 128 KiB when they were mounted\)$/);
});

test("the benchmark's pack record names this image and mount, the rest as pack wrote it", () => {
  // pack.json as `pack` wrote it (/var/tmp/pack41e, 29 Nov 2026).
  const made = { install_dir: "/usr/lib/firefox-esr", version: "153.8.0", build_id: "20261117185949", image: "/var/tmp/a/pack/firefox.squashfs", mount_point: "/var/tmp/a/pack/mnt", image_ino: 1581090, compressor: "zstd", block_size: 131072, sorted_files: 23, bytes_install: 308438507, bytes_image: 100671488, build_ms: 502161, built_at_ms: 1795939377779 };
  assert.deepEqual(packRecord(made, { image: "/i/ff.sqfs", mountPoint: "/w/mnt-packed", ino: 7, size: 100671488 }), { ...made, image: "/i/ff.sqfs", mount_point: "/w/mnt-packed", image_ino: 7 });
});

test("the section says how the image was mounted, and on squashfuse_ll how its cold start was made cold and slow", () => {
  assert.match(mountSentence("kernel"), /^Both images loop-mounted read-only by root/);
  assert.match(mountSentence("fuse"), /^The packed image mounted read-only with squashfuse_ll \(`squashfuse_ll -o ro IMAGE MNT`/);
  assert.match(mountSentence("fuse"), /the Snap-shaped one loop-mounted/);
  const note = fuseNote();
  assert.match(note, /^\*\*On squashfuse_ll the cold start is made cold and slow as on a loop mount:\*\*/);
  assert.equal(note.split("\n").filter((l) => l.startsWith("- ")).length, FUSE_TIMED.length);
  assert.match(note, /daemon is moved into the throttled cgroup/);
  assert.match(note, /diskOf/);
  assert.match(note, /evict/);
});

test("the squashfuse section is its own: the kernel mount's figures stay, and each run replaces only its own", () => {
  const doc = "# B\n\n<!-- pack-timing:begin -->\nkernel\n<!-- pack-timing:end -->\n\nnotes\n\n<!-- pack-sweep:begin -->\nsweep\n<!-- pack-sweep:end -->\n";
  const withFuse = spliceSection(doc, "fuse 1\n", "pack-timing-fuse");
  assert.equal(withFuse, "# B\n\n<!-- pack-timing:begin -->\nkernel\n<!-- pack-timing:end -->\n\nnotes\n\n<!-- pack-timing-fuse:begin -->\nfuse 1\n<!-- pack-timing-fuse:end -->\n\n<!-- pack-sweep:begin -->\nsweep\n<!-- pack-sweep:end -->\n");
  const again = spliceSection(withFuse, "fuse 2\n", "pack-timing-fuse");
  assert.equal(again, withFuse.replace("fuse 1", "fuse 2"));
  assert.equal(spliceSection(again, "kernel 2\n"), again.replace("kernel\n", "kernel 2\n"));
});
