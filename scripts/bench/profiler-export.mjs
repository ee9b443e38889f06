// What the Firefox Profiler export costs (issue 21): one cold start recorded with
// `launch --cold --trace --firefox-profile` (root: tracefs) at the given readahead window, then
// `trace export` of it timed, merged and alone, `--runs` times each (medians), with the files'
// sizes and what the merged profile says cost the most (code regions, omni.ja entries).
//
//   sudo node scripts/bench/profiler-export.mjs [--read-ahead-kb 128] [--runs 5] [--out FILE]
//
// Run it under the machine's e2e lock: it starts Firefox, evicts its files and changes the
// disk's read_ahead_kb (put back on exit). Prints the figures; --out writes them as JSON.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { findFirefox } from "../lib/firefox.mjs";
import { inspectFirefox } from "../lib/firefox-kind.mjs";
import { pauseProactiveReclaim } from "../lib/damon.mjs";
import { diskOf } from "../lib/slow-disk.mjs";
import { parseReadAheadKb, readAheadKb, setReadAheadKb } from "../lib/read-ahead.mjs";
import { HOST_BINARY } from "../lib/project.mjs";
import { median } from "./medians.mjs";

const { values } = parseArgs({ options: { "read-ahead-kb": { type: "string" }, runs: { type: "string", default: "5" }, out: { type: "string" } } });
if (process.getuid() !== 0) {
  console.error("profiler-export: needs root (tracefs, eviction, read_ahead_kb)");
  process.exit(2);
}
const runs = Number(values.runs);
const installDir = inspectFirefox(findFirefox()).dir;
const disk = diskOf(installDir);
const ra = values["read-ahead-kb"] === undefined ? { before: readAheadKb(disk), after: readAheadKb(disk), restore() {} } : setReadAheadKb(disk, parseReadAheadKb(values["read-ahead-kb"]));
const damon = pauseProactiveReclaim();
const work = fs.mkdtempSync(path.join(os.tmpdir(), "as-prof-bench-"));
const home = path.join(work, "home");
fs.mkdirSync(path.join(home, "p"), { recursive: true });
const env = { ...process.env, HOME: home };
delete env.XDG_STATE_HOME;

function host(args) {
  const r = spawnSync(HOST_BINARY, args, { env, encoding: "utf8", maxBuffer: 1 << 30 });
  if (r.status !== 0) {
    throw new Error(`${args.join(" ")}: ${r.stderr}`);
  }
  return r;
}

let pid = null;
try {
  console.log(`readahead ${ra.after} KiB (was ${ra.before}) on ${disk}; ${installDir}`);
  const t0 = performance.now();
  const launch = host(["launch", "--cold", "--trace", "--firefox-profile", "--profile-out", path.join(work, "launch.json"), "--json", "--", "--headless", "--no-remote", "-profile", path.join(home, "p")]);
  const trace = JSON.parse(launch.stdout);
  pid = trace.pid;
  const faults = trace.events.filter((e) => e.k === "fault").length;
  const withSite = trace.events.filter((e) => Number.isInteger(e.c)).length;
  console.log(`launch --cold --trace --firefox-profile: ${((performance.now() - t0) / 1000).toFixed(1)} s; ${(trace.traced_read_bytes / 1e6).toFixed(1)} MB in ${trace.events.length} reads (${faults} faults without a window, ${withSite} with their code), lost ${trace.lost_events}, notes: ${(trace.note_codes ?? []).map((n) => n.code).join(", ") || "none"}`);
  const timed = (extra, file) => {
    const ms = [];
    let summary = null;
    for (let i = 0; i < runs; i += 1) {
      const s = performance.now();
      summary = JSON.parse(host(["trace", "export", ...extra, "-o", file, "--json"]).stdout);
      ms.push(performance.now() - s);
    }
    return { ms, median: median(ms), bytes: fs.statSync(file).size, summary };
  };
  const merged = timed([], path.join(work, "merged.json"));
  const alone = timed(["--trace-only"], path.join(work, "alone.json"));
  const result = {
    readAheadKb: ra.after,
    firefox: trace.firefox_version,
    buildId: trace.build_id,
    traceBytes: trace.traced_read_bytes,
    reads: trace.events.length,
    faults,
    withSite,
    codeSites: trace.code?.length ?? 0,
    traceJsonBytes: Buffer.byteLength(launch.stdout),
    milestones: trace.milestones ?? null,
    merged: { medianMs: merged.median, ms: merged.ms, bytes: merged.bytes, summary: merged.summary },
    alone: { medianMs: alone.median, ms: alone.ms, bytes: alone.bytes, summary: alone.summary },
  };
  for (const [name, r] of [["merged", merged], ["trace alone", alone]]) {
    console.log(`export ${name}: median ${r.median.toFixed(0)} ms (${r.ms.map((x) => x.toFixed(0)).join(", ")}), ${(r.bytes / 1e6).toFixed(1)} MB`);
  }
  console.log(`trace JSON ${(result.traceJsonBytes / 1e6).toFixed(1)} MB; milestones ${JSON.stringify(trace.milestones ?? {})}`);
  console.log("top code:", JSON.stringify(merged.summary.top_code?.slice(0, 10)));
  console.log("top entries:", JSON.stringify(merged.summary.top_entries?.slice(0, 10)));
  console.log("missing:", JSON.stringify(merged.summary.missing));
  if (values.out) {
    fs.writeFileSync(values.out, JSON.stringify(result, null, 2));
  }
} finally {
  if (pid) {
    spawnSync("kill", [String(pid)]);
    for (let i = 0; i < 100 && fs.existsSync(`/proc/${pid}`); i += 1) {
      spawnSync("sleep", ["0.2"]);
    }
    if (fs.existsSync(`/proc/${pid}`)) {
      spawnSync("kill", ["-9", String(pid)]);
    }
  }
  ra.restore();
  damon.restore();
  fs.rmSync(work, { recursive: true, force: true });
}
