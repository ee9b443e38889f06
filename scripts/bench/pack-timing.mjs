#!/usr/bin/env node
// The timing benchmark of a packed Firefox (issue 41), in one invocation: the plain install, the
// install packed by `about-startup-host pack` (zstd) and a Snap-shaped image (lzo, no fragments,
// its image 0600 and not the launcher's), each loop-mounted read-only as root and started by
// scripts/bench.mjs on the same throttle and readahead, one after the other; then the
// decompression CPU of each image measured apart (no throttle, no Firefox), the floors (the
// image bytes a start needs over the throttle's bandwidth, plus that CPU) and the issue's three
// targets, written into docs/benchmarks.md between `<!-- pack-timing:begin -->` and `end`.
// A script that measures, not a test: nothing here asserts a speed; the unit tests check the
// pure helpers (tests/unit/scripts/bench/test.pack-timing.js).
//
//   sudo node scripts/bench/pack-timing.mjs --packed IMAGE --snap IMAGE --state DIR
//        [--runs 10] [--snap-runs 5] [--slow-disk 30:150] [--read-ahead-kb 128]
//        [--login-delay 5] [--cpu-runs 3] [--timeout 60] [--retries 2] [--mount-read-ahead-kb KB|disk] [--work DIR] [--doc FILE]
//        [--only plain,packed,snap] [--reuse] [--packed-mount kernel|fuse] [--reverse]
//
// --packed: the image `about-startup-host pack` made (its state folder's pack/firefox.squashfs);
// --snap: an image made like the Firefox snap's (`mksquashfs DIR IMG -comp lzo -b 131072
// -no-fragments -no-xattrs -all-root`): the script makes it mode 0600 and gives it to nobody, and
// runs the Snap's scenarios with --no-dac-override, so that root's launch, preloads and Firefox
// are refused the image as a Snap user is refused a Snap's (0600 root). --state: a folder with one
// XDG_STATE_HOME per install (plain, packed, snap), kept between runs, so that a dry run records
// the traces the launch-prefetch scenarios need and the real run finds them.
//
// --packed-mount: how the packed image is mounted. `kernel` (default): the kernel's squashfs on a
// loop device, as root. `fuse`: squashfuse_ll (`squashfuse_ll -o ro IMAGE MNT`), the program
// `pack` mounts it with as the user (run as root here: this machine's /dev/fuse is root's); it
// times the plain install and the image on squashfuse_ll (cold, launch --prefetch, hot) on the
// same throttle, and writes its own section (markers `pack-timing-fuse`), so that the kernel
// mount's section stays. How a FUSE mount's cold start is made cold and slow: FUSE_TIMED.
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { welchTest } from "../../extension/lib/models/stats.js";
import { median } from "./medians.mjs";
import { READER, rangeBytes, usedRanges } from "../lib/read-ranges.mjs";
import { parseReadAheadKb, setReadAheadKb } from "../lib/read-ahead.mjs";
import { spliceSection as spliceMarked } from "../lib/doc-section.mjs";
import { diskOf } from "../lib/slow-disk.mjs";

const ROOT = path.resolve(import.meta.dirname, "..", "..");

/**
 * The runs: which install, which scenarios, how many runs, extra bench flags, whether on the
 * throttle; `group`: the --only name that picks it (its key if none). Pure.
 *
 * mount "fuse" (the packed image on squashfuse_ll): its own cold start too (what the prefetch
 * saves on the user's mount), and its own state folder (`stateKey`): the kernel mount's traces
 * name other inode numbers, and the host finds the image of a FUSE mount from the state
 * folder's pack record (packRecord).
 */
export function plans({ plainDir, packedMount, snapMount, runs, snapRuns, loginDelay, packedFormat = "zstd, 128 KiB", mount = "kernel" }) {
  const fuse = mount === "fuse";
  const packed = fuse
    ? [{ key: "packed", stateKey: "packed-fuse", label: `packed (${packedFormat}; squashfuse_ll)`, firefox: packedMount, scenarios: ["cold", "launch-prefetch", "hot"], runs, flags: [], throttled: true }]
    : // No packed cold: the targets do not need it, and it would not fit the 20 minutes' window.
      [{ key: "packed", label: `packed (${packedFormat})`, firefox: packedMount, scenarios: ["launch-prefetch", "hot"], runs, flags: [], throttled: true }];
  return [
    { key: "plain", label: "plain install", firefox: plainDir, scenarios: ["cold", "hot"], runs, flags: [], throttled: true },
    ...packed,
    {
      key: "snap",
      label: "Snap-shaped (lzo, 0600 image)",
      firefox: snapMount,
      // launch --prefetch, the login preload (the autostart entry's `preload --plan`) and the
      // planned preload the page asks for (`preload --plan`, the same code), against cold: a
      // plain launch of Firefox with nothing of the product before it.
      scenarios: ["cold", "launch-prefetch", "login", "preload-plan"],
      runs: snapRuns,
      // A small login workload (16 MiB, read well within the delay): the login scenario then
      // differs from cold by the login preload alone, not by a workload still reading.
      flags: ["--no-dac-override", "--login-delay", String(loginDelay), "--workload-mib", "16"],
      throttled: true,
    },
  ];
}

/**
 * How a packed image's cold start on squashfuse_ll is made cold and slow, as a loop mount's is
 * (each was missing until 29 Nov, when only its hot start was timed).
 */
export const FUSE_TIMED = [
  "the throttle and the readahead are the disk's that holds the image file (scripts/lib/slow-disk.mjs `diskOf`: a FUSE mount's own device is an anonymous 0:N; its squashfuse daemon, found by its operands, names the image)",
  "the squashfuse_ll daemon is moved into the throttled cgroup for the run (`createSlowDisk`), so that its reads of the image are slowed and counted (\"disk read, launch to quit\") as the loop driver's are for whoever reads a loop mount",
  "`about-startup-host evict` drops the image too (firefox/install.rs `cache_image`: the image the state folder's pack record names, checked to be the filesystem mounted), besides the mounted files' pages; the benchmark's state folder holds a pack record of this image and mount (`packRecord`)",
];

/** --packed-mount: "kernel" (root's loop mount, the default) or "fuse" (squashfuse). Pure. */
export function parsePackedMount(text) {
  const kind = text ?? "kernel";
  if (kind !== "kernel" && kind !== "fuse") {
    throw new Error(`--packed-mount wants kernel (the kernel's squashfs on a loop device) or fuse (squashfuse), not ${text}`);
  }
  return kind;
}

/** The command that mounts `image` read-only at `at`. Pure. */
export function mountArgv(kind, image, at) {
  return kind === "fuse" ? ["squashfuse_ll", "-o", "ro", image, at] : ["mount", "-t", "squashfs", "-o", "loop,ro,nodev,nosuid", image, at];
}

/** The commands that unmount `at`, tried in turn until one succeeds (root may lack fusermount). Pure. */
export function unmountArgvs(kind, at) {
  return kind === "fuse" ? [["fusermount3", "-u", at], ["fusermount", "-u", at], ["umount", at]] : [["umount", at]];
}

/** The file system type mounted exactly at `at` in a mountinfo text, or null. Pure. */
export function mountedFsType(mountinfo, at) {
  let type = null;
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    const point = left?.split(" ")[4]?.replace(/\\040/g, " ");
    // The last entry wins: a later mount at the same point hides an earlier one.
    if (point === at && right) type = right.split(" ")[0];
  }
  return type;
}

/** How the images were mounted, as the section's sentence (it ends before "the packed image is"). Pure. */
export function mountSentence(kind) {
  return kind === "fuse"
    ? `The packed image mounted read-only with ${mountWords("fuse")}, the Snap-shaped one loop-mounted read-only by root (\`mount -t squashfs -o loop,ro\`);`
    : "Both images loop-mounted read-only by root (`mount -t squashfs -o loop,ro`);";
}

/** The run's disk conditions, for the section. Pure. */
export function conditions({ slowDisk, readAheadKb, mountKb }) {
  const mounted = `the images' disk at ${mountKb === null ? "its own window" : `${mountKb} KiB`} when they were mounted`;
  return `${slowDisk} throttle\n(\`--slow-disk ${slowDisk}\`), readahead ${readAheadKb} KiB (${mounted})`;
}

/**
 * The pack record (pack.json) of `image` mounted at `mountPoint`, from the record `pack` wrote
 * beside it (`made`): what the host reads to know the image behind a FUSE mount
 * (firefox/packed.rs `image_for`). Pure.
 */
export function packRecord(made, { image, mountPoint, ino, size }) {
  return { ...made, image, mount_point: mountPoint, image_ino: ino, bytes_image: size };
}

/** The squashfuse run's note: how its cold start is made cold and slow. Pure. */
export function fuseNote() {
  return [
    "**On squashfuse_ll the cold start is made cold and slow as on a loop mount:**",
    ...FUSE_TIMED.map((how) => `- ${how}.`),
  ].join("\n");
}

/** The file name (no extension) of a run's export: a squashfuse run's apart from the kernel run's. Pure. */
export function outName(key, mount = "kernel") {
  return mount === "fuse" ? `${key}-fuse-run` : key;
}

/** The mount in words, for the section and the JSON. Pure. */
export function mountWords(kind) {
  return kind === "fuse"
    ? "squashfuse_ll (`squashfuse_ll -o ro IMAGE MNT`, the program `pack` mounts the image with as the user; run as root here, whose /dev/fuse this machine keeps 0600)"
    : "the kernel's squashfs on a loop device (`mount -t squashfs -o loop,ro`, as root)";
}

/** What the user waits for in a record: the preload (if timed before the launch) plus the start. Pure. */
export function waitMs(record) {
  const restored = record.milestones?.sessionRestored;
  return typeof restored === "number" ? (record.bench?.preloadMs ?? 0) + restored : null;
}

/** {scenario: [records]} of one bench export. Pure. */
export function byScenario(doc) {
  const out = {};
  for (const r of doc.history ?? []) {
    (out[r.bench?.scenario] ??= []).push(r);
  }
  return out;
}

/**
 * The issue's three targets from the three runs' records ({plain, packed, snap}: {scenario:
 * [records]}). Pure: (a) the packed launch-prefetch's median wait against the plain cold's, at
 * most `ratio`; (b) the packed hot against the plain hot, "within noise" = Welch's test not
 * significant at 5%; (c) on the Snap each product path's wait against the Snap's plain cold
 * launch: not slower = its median no higher, or the difference not significant.
 */
export function targets(runs, { ratio = 0.25 } = {}) {
  const waits = (records) => (records ?? []).map(waitMs).filter((v) => v !== null);
  const med = (records) => median(waits(records));
  const plainCold = med(runs.plain?.cold);
  const packedPrefetch = med(runs.packed?.["launch-prefetch"]);
  const a = {
    plainCold,
    packedPrefetch,
    n: [waits(runs.plain?.cold).length, waits(runs.packed?.["launch-prefetch"]).length],
    ratio: plainCold && packedPrefetch !== null ? packedPrefetch / plainCold : null,
  };
  a.holds = a.ratio !== null && a.ratio <= ratio;
  const plainHot = waits(runs.plain?.hot);
  const packedHot = waits(runs.packed?.hot);
  const test = welchTest(plainHot, packedHot);
  const b = {
    plainHot: median(plainHot),
    packedHot: median(packedHot),
    n: [plainHot.length, packedHot.length],
    diff: test?.diff ?? null,
    p: test?.p ?? null,
    holds: test !== null && !test.significant && plainHot.length >= 10 && packedHot.length >= 10,
  };
  const snapCold = waits(runs.snap?.cold);
  const c = {
    cold: median(snapCold),
    n: snapCold.length,
    paths: ["launch-prefetch", "login", "preload-plan"].map((scenario) => {
      const w = waits(runs.snap?.[scenario]);
      const t = welchTest(snapCold, w);
      const m = median(w);
      const slower = m !== null && median(snapCold) !== null && m > median(snapCold) && t !== null && t.significant;
      return { scenario, median: m, n: w.length, ratio: m !== null && median(snapCold) ? m / median(snapCold) : null, p: t?.p ?? null, slower };
    }),
  };
  c.holds = c.n >= 5 && c.paths.every((p) => p.n >= 5 && p.median !== null && !p.slower);
  return { a, b, c };
}

/**
 * An image's format as `unsquashfs -s` prints it: "zstd level 19, 128 KiB" (the level only
 * where the image stores compressor options; mksquashfs's zstd default is 15), or null. Pure.
 */
export function imageFormat(stat) {
  const comp = /^Compression (\S+)$/m.exec(stat)?.[1];
  const block = Number(/^Block size (\d+)$/m.exec(stat)?.[1]);
  if (!comp || !block) return null;
  const level = /^\s*compression-level (\d+)$/m.exec(stat)?.[1] ?? (comp === "zstd" ? "15" : null);
  const frag = /^Fragments are not stored$/m.test(stat) ? ", no fragments" : "";
  return `${comp}${level ? ` level ${level}` : ""}, ${block / 1024} KiB${frag}`;
}

/** The images' disk's window at mount time in KiB: --mount-read-ahead-kb, else --read-ahead-kb; "disk": null (left as it is). Pure. */
export function mountReadAheadKb(mount, readAhead) {
  const text = mount ?? readAhead;
  return text === "disk" ? null : parseReadAheadKb(text);
}

/** The floor of a start from an image: its needed bytes over the bandwidth, plus the CPU. Pure. */
export function floorMs(bytes, bps, cpuS) {
  if (!bytes || !bps) return null;
  return (bytes / bps) * 1000 + (cpuS ?? 0) * 1000;
}

const fmtMs = (v) => (v === null || v === undefined ? "—" : `${Math.round(v).toLocaleString("en-US")} ms`);
const fmtX = (v) => (v === null || v === undefined ? "—" : `${v.toFixed(2)}x`);
const fmtMb = (v) => (v === null || v === undefined ? "—" : `${(v / 1e6).toFixed(1)} MB`);
const fmtP = (p) => (p === null || p === undefined ? "—" : p < 0.001 ? "p < 0.001" : `p = ${p.toFixed(2)}`);

/** One row per (install, scenario): n, medians, what was read, ratios. Pure. */
export function rows(runs, labels) {
  const plainCold = median((runs.plain?.cold ?? []).map(waitMs));
  const out = [];
  for (const [key, scenarios] of Object.entries(runs)) {
    const ownCold = median((scenarios.cold ?? []).map(waitMs));
    for (const [scenario, records] of Object.entries(scenarios)) {
      const wait = median(records.map(waitMs));
      out.push({
        install: labels[key] ?? key,
        scenario,
        n: records.length,
        sessionRestored: median(records.map((r) => r.milestones?.sessionRestored)),
        preloadMs: median(records.map((r) => r.bench?.preloadMs)),
        wait,
        runs: records.map(waitMs),
        prefetchBytes: median(records.map((r) => r.bench?.prefetch?.bytesRead)),
        // What the prefetch did on a compressed mount: "image_ranges" (read raw, beside or
        // first) or why it was left off; every run's, so that a mixed run shows.
        prefetchDid: [...new Set(records.filter((r) => r.bench?.prefetch).map((r) => prefetchDid(r.bench.prefetch)))].join(", ") || null,
        prefetchMs: median(records.map((r) => r.bench?.prefetch?.ms)),
        loginPreloadMs: median(records.map((r) => r.bench?.loginPreloadMs)),
        readBytes: median(records.map((r) => r.io?.readBytes)),
        diskReadBytes: median(records.map((r) => r.bench?.diskReadBytes)),
        vsPlainCold: plainCold && wait !== null ? wait / plainCold : null,
        vsOwnCold: ownCold && wait !== null ? wait / ownCold : null,
      });
    }
  }
  return out;
}

/**
 * What one launch's prefetch did: "image raw, beside", "image raw + decompressed ahead, beside"
 * (a FUSE mount's files read through it behind the image), "left off: image_not_readable",
 * "files, beside". Pure.
 */
export function prefetchDid(prefetch) {
  const c = prefetch.compressed;
  if (c?.verdict === "left_off") return `left off: ${c.leftOff}`;
  const ahead = prefetch.imageRead?.bytesWarmed > 0 ? " + decompressed ahead" : "";
  return `${c?.verdict === "image_ranges" ? `image raw${ahead}` : "files"}, ${prefetch.strategy}`;
}

/** The markdown table of [rows]. Pure. */
export function table(list) {
  const head = [
    "| install | scenario | n | sessionRestored | preload (before) | the wait | the runs | vs plain cold | vs its own cold | prefetch (what, read, time) | read (parent) | disk read, launch to quit |",
    "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
  ];
  return [
    ...head,
    ...list.map(
      (r) =>
        `| ${r.install} | ${r.scenario} | ${r.n} | ${fmtMs(r.sessionRestored)} | ${r.preloadMs === null ? "—" : fmtMs(r.preloadMs)} | ${fmtMs(r.wait)} | ${r.runs.map((v) => (v === null ? "—" : Math.round(v))).join(" ")} | ${fmtX(r.vsPlainCold)} | ${fmtX(r.vsOwnCold)} | ${r.prefetchDid === null ? "—" : `${r.prefetchDid}; ${fmtMb(r.prefetchBytes)}, ${fmtMs(r.prefetchMs)}`} | ${fmtMb(r.readBytes)} | ${fmtMb(r.diskReadBytes)} |`,
    ),
  ].join("\n");
}

/** The targets as sentences, each saying whether it holds. Pure. */
export function targetLines({ a, b, c }) {
  const holds = (ok, measured = true) => (!measured ? "**not measured**" : ok ? "**holds**" : "**does not hold**");
  return [
    `- (a) packed \`launch --prefetch\` against the plain cold start: ${fmtMs(a.packedPrefetch)} against ${fmtMs(a.plainCold)} (medians, n = ${a.n[1]} and ${a.n[0]}) = **${fmtX(a.ratio)}**; target <= 0.25x: ${holds(a.holds, a.ratio !== null)}.`,
    `- (b) packed hot against plain hot: ${fmtMs(b.packedHot)} against ${fmtMs(b.plainHot)} (medians, n = ${b.n[1]} and ${b.n[0]}); difference of the means ${b.diff === null ? "—" : `${b.diff >= 0 ? "+" : "−"}${Math.abs(Math.round(b.diff))} ms`}, Welch ${fmtP(b.p)}; target "within noise" (not significant at 5%, n >= 10 each): ${holds(b.holds, b.p !== null)}.`,
    `- (c) Snap-shaped, each product path against launching Firefox plainly (cold ${fmtMs(c.cold)}, n = ${c.n}): ${c.paths
      .map((p) => `${p.scenario} ${fmtMs(p.median)} (${fmtX(p.ratio)}, n = ${p.n}, Welch ${fmtP(p.p)})`)
      .join("; ")}; target "none slower" (n >= 5): ${holds(c.holds, c.n > 0)}.`,
  ].join("\n");
}

/**
 * `doc` with `block` between the markers of `name` (replaced, or put before the pack-sweep
 * section). "pack-timing": the kernel mount's section; "pack-timing-fuse": squashfuse's, a
 * section of its own, so that neither run overwrites the other's figures. Pure.
 */
export function spliceSection(doc, block, name = "pack-timing") {
  return spliceMarked(doc, name, block, { before: "<!-- pack-sweep:begin -->" });
}

// ---- the run (root) ------------------------------------------------------------------------

function sh(cmd, args, { allowFail = false, ...o } = {}) {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 64 << 20, ...o });
  if (!allowFail && r.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")}: ${r.error ?? r.stderr}`);
  }
  return r;
}

/** Unmount whatever is at `at` (the commands of `kind` in turn); true if something was. */
function unmountImage(at, kind = "kernel") {
  return unmountArgvs(kind, at).some(([cmd, ...args]) => spawnSync(cmd, args, { stdio: "ignore" }).status === 0);
}

/** Mount `image` at `at` read-only (`kind`: "kernel" or "fuse"), and check that it is mounted there. */
function mountImage(image, at, kind = "kernel") {
  fs.mkdirSync(at, { recursive: true });
  unmountImage(at, kind);
  const [cmd, ...args] = mountArgv(kind, image, at);
  // squashfuse_ll returns once mounted, its daemon left running until the unmount.
  sh(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
  const type = mountedFsType(fs.readFileSync("/proc/self/mountinfo", "utf8"), at);
  const wanted = kind === "fuse" ? /^fuse\.squashfuse_ll$/ : /^squashfs$/;
  if (!wanted.test(type ?? "")) {
    throw new Error(`${cmd} ${args.join(" ")}: ${at} holds ${type ?? "nothing"} afterwards, not ${kind === "fuse" ? "fuse.squashfuse_ll" : "squashfs"}`);
  }
}

/** The 1, 5 and 15 minutes' load averages, as /proc/loadavg says them. */
function loadAverage() {
  return fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

/** CPU seconds (user + system) of `argv` and its children, from /usr/bin/time. */
function cpuOf(argv) {
  const r = sh("/usr/bin/time", ["-f", "@@time %U %S", ...argv]);
  const line = r.stderr.split("\n").find((l) => l.startsWith("@@time "));
  const [user, sys] = line.split(" ").slice(1).map(Number);
  return user + sys;
}

/** The newest trace with page use under `stateHome`, its used ranges relative to `installDir`. */
function tracedRanges(stateHome, installDir) {
  const dir = path.join(stateHome, "about-startup", "traces");
  const traces = fs
    .readdirSync(dir)
    .filter((n) => n.endsWith(".json") && !n.endsWith(".meta.json"))
    .map((n) => JSON.parse(fs.readFileSync(path.join(dir, n), "utf8")))
    .filter((t) => (t.files ?? []).some((f) => f.used && String(f.path).startsWith(`${installDir}/`)))
    .sort((x, y) => y.recorded_at_ms - x.recorded_at_ms);
  if (!traces[0]) throw new Error(`no trace with page use of ${installDir} in ${dir}`);
  return usedRanges(traces[0], installDir);
}

/**
 * Decompression CPU of reading the traced start's used pages from `image` (hot in the page
 * cache, a fresh mount for each read), less the same reader on the hot plain install; median of
 * `runs`. The same method as native-host/bench/pack-sweep.mjs.
 */
function decompressionCpu(image, { work, plainDir, rangesFile, runs }) {
  const reader = READER;
  sh(process.execPath, [reader, plainDir, rangesFile]);
  const plain = median(Array.from({ length: runs }, () => cpuOf([process.execPath, reader, plainDir, rangesFile])));
  sh("cat", [image], { stdio: ["ignore", "ignore", "pipe"] });
  const at = path.join(work, "mnt-cpu");
  const cpus = [];
  for (let i = 0; i < runs; i++) {
    mountImage(image, at);
    cpus.push(cpuOf([process.execPath, reader, at, rangesFile]));
    sh("umount", [at]);
  }
  return { cpu: Math.max(0, median(cpus) - plain), plain };
}

async function main(argv) {
  const { values: o } = parseArgs({
    args: argv,
    options: {
      packed: { type: "string" },
      snap: { type: "string" },
      state: { type: "string" },
      firefox: { type: "string", default: "/usr/lib/firefox-esr" },
      runs: { type: "string", default: "10" },
      "snap-runs": { type: "string", default: "5" },
      "slow-disk": { type: "string", default: "30:150" },
      "read-ahead-kb": { type: "string", default: "128" },
      "login-delay": { type: "string", default: "5" },
      "cpu-runs": { type: "string", default: "3" },
      timeout: { type: "string", default: "60" },
      retries: { type: "string", default: "2" },
      "mount-read-ahead-kb": { type: "string" },
      work: { type: "string", default: "/var/tmp/pack-timing" },
      doc: { type: "string", default: path.join(ROOT, "docs", "benchmarks.md") },
      only: { type: "string" },
      reuse: { type: "boolean" },
      "packed-mount": { type: "string", default: "kernel" },
      reverse: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (o.help || !o.packed || !o.snap || !o.state) {
    console.log("usage: sudo node scripts/bench/pack-timing.mjs --packed IMAGE --snap IMAGE --state DIR [--runs 10] [--snap-runs 5] [--slow-disk 30:150] [--read-ahead-kb 128] [--login-delay 5] [--cpu-runs 3] [--timeout 60] [--retries 2] [--mount-read-ahead-kb KB|disk] [--work DIR] [--doc FILE] [--only plain,packed,snap] [--reuse] [--packed-mount kernel|fuse] [--reverse]");
    process.exit(o.help ? 0 : 2);
  }
  if (process.getuid() !== 0) {
    console.error("pack-timing needs root (loop mounts, the throttle, the readahead window)");
    process.exit(2);
  }
  const command = `sudo node scripts/bench/pack-timing.mjs ${argv.join(" ")}`;
  const packedMount = parsePackedMount(o["packed-mount"]);
  const work = path.resolve(o.work);
  const state = path.resolve(o.state);
  fs.mkdirSync(work, { recursive: true });
  const plainDir = fs.realpathSync(o.firefox);
  const packedImage = fs.realpathSync(o.packed);
  const packedFormat = imageFormat(sh("unsquashfs", ["-s", packedImage]).stdout) ?? "squashfs";
  const snapImage = fs.realpathSync(o.snap);
  // The Snap's image: 0600 and not root's, so that root without its DAC capabilities (the
  // Snap run's --no-dac-override) is refused it by its mode, as a Snap user is.
  fs.chownSync(snapImage, 65534, 65534);
  fs.chmodSync(snapImage, 0o600);
  const mounts = { packed: path.join(work, "mnt-packed"), snap: path.join(work, "mnt-snap") };
  const unmountAll = () => {
    unmountImage(mounts.packed, packedMount);
    for (const at of [mounts.snap, path.join(work, "mnt-cpu")]) {
      unmountImage(at);
    }
  };
  process.on("exit", unmountAll);
  for (const name of ["SIGINT", "SIGTERM"]) {
    process.on(name, () => process.exit(130));
  }
  // --mount-read-ahead-kb: the images' disk's readahead window while they are mounted (default:
  // --read-ahead-kb; "disk" keeps the disk's own). The loop driver reads its backing file through
  // the page cache with the window that file was opened with (the disk's at mount time, not
  // bench.mjs's --read-ahead-kb set later): at this VM's 8 MiB a start through the mount reads
  // most of the image (docs/benchmarks.md, issue 41). The emulated disk is a desktop's, whose
  // window (the kernel's default 128 KiB) is the same at mount time as at the start. squashfuse
  // reads the image with pread on its own open file, whose window its open took from the disk
  // the same way: so the same setting while it mounts.
  const mountKb = mountReadAheadKb(o["mount-read-ahead-kb"], o["read-ahead-kb"]);
  const mountReadAhead = mountKb === null ? null : setReadAheadKb(diskOf(path.dirname(packedImage)), mountKb);
  mountImage(packedImage, mounts.packed, packedMount);
  mountImage(snapImage, mounts.snap);
  mountReadAhead?.restore();
  if (packedMount === "fuse") {
    // The host knows the image behind a FUSE mount from the state folder's pack record only.
    const made = JSON.parse(fs.readFileSync(path.join(path.dirname(packedImage), "pack.json"), "utf8"));
    const { ino, size } = fs.statSync(packedImage);
    const pack = path.join(state, "packed-fuse", "about-startup", "pack");
    fs.mkdirSync(pack, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(pack, "pack.json"), `${JSON.stringify(packRecord(made, { image: packedImage, mountPoint: mounts.packed, ino, size }), null, 2)}\n`, { mode: 0o600 });
  }

  const started = new Date();
  const all = plans({ plainDir, packedMount: mounts.packed, snapMount: mounts.snap, runs: Number(o.runs), snapRuns: Number(o["snap-runs"]), loginDelay: Number(o["login-delay"]), packedFormat, mount: packedMount });
  const picked = o.only ? all.filter((p) => o.only.split(",").includes(p.group ?? p.key)) : all;
  // --reverse: the runs in the opposite order, a control for load that changes during the run.
  const chosen = o.reverse ? [...picked].reverse() : picked;
  const docs = {};
  const minutes = {};
  const loads = {};
  for (const p of chosen) {
    const out = path.join(work, `${outName(p.key, packedMount)}.json`);
    if (o.reuse && fs.existsSync(out)) {
      // --reuse: a run that stopped part-way goes on where it stopped, the finished runs kept.
      docs[p.key] = JSON.parse(fs.readFileSync(out, "utf8"));
      minutes[p.key] = (docs[p.key].bench.finishedAt - docs[p.key].bench.startedAt) / 60000;
      console.log(`== ${p.label}: kept from ${out} (--reuse)`);
      continue;
    }
    const throttle = p.throttled ? ["--slow-disk", o["slow-disk"], "--read-ahead-kb", o["read-ahead-kb"]] : [];
    const args = ["scripts/bench.mjs", "--runs", String(p.runs), ...throttle, "--firefox", p.firefox, "--scenarios", p.scenarios.join(","), "--state-home", path.join(state, p.stateKey ?? p.key), "--timeout", o.timeout, "--retries", o.retries, "--out", out, ...p.flags];
    console.log(`\n== ${p.label}: node ${args.join(" ")}`);
    const t0 = Date.now();
    const loadBefore = loadAverage();
    // A start that gives no record is made again (--retries, default 2: seen here, a template
    // profile's first start whose record never came, on the busy machine); and one more try of
    // the whole run when it fails all the same; a second failure stops the benchmark.
    let r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: "inherit" });
    if (r.status !== 0) {
      console.log(`\n== ${p.label}: the run failed (${r.status}); once more`);
      r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: "inherit" });
    }
    minutes[p.key] = (Date.now() - t0) / 60000;
    // The runs are one after the other, not interleaved: what else ran meanwhile, said per run.
    loads[p.key] = `load ${loadBefore} at its start, ${loadAverage()} at its end`;
    if (r.status !== 0) {
      throw new Error(`the ${p.label} run failed twice (${r.status}); its output is above`);
    }
    docs[p.key] = JSON.parse(fs.readFileSync(out, "utf8"));
  }
  unmountAll();

  // The floors: the image bytes a start needs (the traced start's plan mapped through each image
  // by the host, as the prefetch maps it) over the throttle's bandwidth, plus decompression CPU.
  const bps = docs.packed?.bench?.slowDisk?.bps ?? docs.plain?.bench?.slowDisk?.bps ?? null;
  const floors = {};
  if (docs.packed && byScenario(docs.packed)["launch-prefetch"]) {
    const ranges = tracedRanges(path.join(state, all.find((p) => p.key === "packed").stateKey ?? "packed"), mounts.packed);
    const rangesFile = path.join(work, "ranges.json");
    fs.writeFileSync(rangesFile, JSON.stringify(ranges));
    const usedBytes = rangeBytes(ranges);
    // An image's floor only where its starts were timed in this run (--only).
    for (const [key, image] of [["packed", packedImage], ["snap", snapImage]].filter(([key]) => docs[key])) {
      const records = docs[key]?.history?.filter((r) => r.bench?.scenario === "launch-prefetch") ?? [];
      // For the Snap the prefetch is left off (it reads nothing): its need is what its cold start
      // read through the loop device (read_bytes counts the image's compressed bytes).
      const needed =
        key === "packed"
          ? median(records.map((r) => r.bench?.prefetch?.imageRead?.bytesImagePlanned))
          : median((docs.snap?.history ?? []).filter((r) => r.bench?.scenario === "cold").map((r) => r.io?.readBytes));
      const { cpu, plain } = decompressionCpu(image, { work, plainDir, rangesFile, runs: Number(o["cpu-runs"]) });
      floors[key] = { needed, cpu, plainCpu: plain, usedBytes, floorMs: floorMs(needed, bps, cpu) };
      console.log(`${key}: needs ${fmtMb(needed)}, decompression ${cpu.toFixed(2)} s CPU, floor ${fmtMs(floors[key].floorMs)}`);
    }
  }

  const runs = Object.fromEntries(Object.entries(docs).map(([k, d]) => [k, byScenario(d)]));
  const labels = Object.fromEntries(all.map((p) => [p.key, p.label]));
  const list = rows(runs, labels);
  const goals = targets(runs);
  const ff = docs.plain?.bench?.firefox ?? docs.packed?.bench?.firefox ?? {};
  const load = loadAverage();
  const plainCold = goals.a.plainCold;
  const fuse = packedMount === "fuse";
  const floorLines = Object.entries(floors).map(
    ([key, f]) =>
      `- ${labels[key]}: the start needs ${fmtMb(f.needed)} of image (${key === "packed" ? "the traced plan mapped through the image's blocks, as the prefetch reads it" : "what its cold start read through the loop device"}) = ${fmtMs(f.needed && bps ? (f.needed / bps) * 1000 : null)} at ${fmtMb(bps)}/s, plus ${f.cpu.toFixed(2)} s of decompression CPU (reading the traced start's ${fmtMb(f.usedBytes)} of used pages through a fresh ${fuse && key === "packed" ? "kernel loop mount (the kernel's decompression: squashfuse_ll decompresses in its daemon, whose CPU this does not measure)" : "mount"} of the image hot in the page cache, less ${f.plainCpu.toFixed(2)} s for the same reads of the hot plain install; median of ${o["cpu-runs"]}): floor **${fmtMs(f.floorMs)}**, ${fmtX(f.floorMs && plainCold ? f.floorMs / plainCold : null)} the plain cold start.`,
  );
  const title = fuse ? "A packed Firefox on squashfuse_ll (the user's mount) against the plain install, timed (issue 41)" : "A packed Firefox against the plain install, timed (issue 41)";
  const block = `### ${title}

Command (as root, under \`flock /work/bench.lock\`): \`${command}\` on
${started.toISOString().slice(0, 16).replace("T", " ")} UTC, Firefox ${ff.version ?? "?"} (build ${ff.buildId ?? "?"}), headless, ${conditions({ slowDisk: o["slow-disk"], readAheadKb: o["read-ahead-kb"], mountKb })}, DAMON paused. ${["No", "One run", "Two runs", "Three runs", "Four runs"][chosen.length]} of \`npm run bench\`, one after
the other: ${chosen.map((p) => `${p.label} (${p.runs} counted runs per scenario, ${(minutes[p.key] ?? 0).toFixed(1)} min${loads[p.key] ? `, ${loads[p.key]}` : ""})`).join(", ")}.
${mountSentence(packedMount)} the packed image is
\`about-startup-host pack\`'s (${packedFormat}, \`-sort\` by the traced start), the Snap-shaped one
\`mksquashfs … -comp lzo -b 131072 -no-fragments -no-xattrs\` made 0600 and another user's,
its scenarios run with \`--no-dac-override\` (Firefox, the launch and the preloads as root
without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH: refused the image by its mode, as a Snap user is
refused a Snap's). **The machine was shared** (2 cores; load average ${load} at the end): medians and
ratios of this run. "The wait" is the preload timed before the launch (preload-plan) plus
sessionRestored; the login's preload ran ${o["login-delay"]} s before the launch, beside a login workload of 16 MiB.

${fuse ? `${fuseNote()}\n\n` : ""}${table(list)}

The issue's targets:

${targetLines(goals)}

The floors (what a start from each image cannot go below on this throttle):

${floorLines.length ? floorLines.join("\n") : "- none: the packed `launch --prefetch` was not timed in this run."}
`;
  console.log(`\n${block}`);
  const doc = path.resolve(o.doc);
  fs.writeFileSync(doc, spliceSection(fs.readFileSync(doc, "utf8"), block, fuse ? "pack-timing-fuse" : "pack-timing"));
  const figures = path.join(work, `${fuse ? "pack-timing-fuse" : "pack-timing"}.json`);
  fs.writeFileSync(figures, `${JSON.stringify({ command, packedMount, mount: mountWords(packedMount), rows: list, targets: goals, floors }, null, 1)}\n`);
  console.log(`written to ${doc}; figures in ${figures}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(`pack-timing: ${error.message}`);
    process.exit(1);
  });
}
