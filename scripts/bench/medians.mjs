// Medians of bench runs kept in several files (one scenario per run, as on a shared machine), with
// each scenario's ratio to cold and to the floor:
//   floor = (bytes a cold start must read) / throttle bandwidth + a hot start
// where "must read" is what the stored traces say the start read from disk and then used, in the
// install folder (the only files the benchmark evicts). docs/benchmarks.md uses it.
//   node scripts/bench/medians.mjs --traces DIR [--traces DIR …] RUN.json[=LABEL] …
// Pure helpers are exported for the unit tests; main() reads files.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";

export function median(values) {
  const v = values.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** Bytes of the pages a trace says were read and then used, in files under `installDir`. */
export function usedInstallBytes(trace, installDir) {
  const prefix = installDir.endsWith("/") ? installDir : `${installDir}/`;
  let pages = 0;
  for (const file of trace.files ?? []) {
    if (!file.written && file.resolved && String(file.path).startsWith(prefix)) {
      for (const [, count] of file.used ?? []) pages += count;
    }
  }
  return pages * 4096;
}

/**
 * Rows per (readahead, scenario) from bench records: n, sessionRestored, preload, their sum (the
 * user's wait) as medians; `vsCold` and `vsFloor` where cold (and hot, and floorBytes[readahead])
 * of the same readahead are there. `bps`: the throttle's bytes per second.
 */
export function medianRows(records, { floorBytes = {}, bps = null } = {}) {
  const groups = new Map();
  for (const r of records) {
    const key = `${r.bench?.readAheadKb ?? "?"}\u0000${r.bench?.scenario}`;
    if (!groups.has(key)) groups.set(key, { readAheadKb: r.bench?.readAheadKb ?? null, scenario: r.bench?.scenario, runs: [] });
    groups.get(key).runs.push(r);
  }
  const rows = [...groups.values()].map((g) => {
    const restored = g.runs.map((r) => r.milestones?.sessionRestored);
    const preload = g.runs.map((r) => r.bench?.preloadMs);
    const total = g.runs.map((r) => (r.milestones?.sessionRestored ?? NaN) + (r.bench?.preloadMs ?? 0));
    return {
      readAheadKb: g.readAheadKb,
      scenario: g.scenario,
      n: g.runs.length,
      sessionRestored: median(restored),
      preloadMs: median(preload),
      totalMs: median(total),
      preloadBytes: median(g.runs.map((r) => r.bench?.preloadBytes)),
      readBytes: median(g.runs.map((r) => r.io?.treeReadBytes)),
      // launch-prefetch: what the prefetcher beside the start read, and how long it ran.
      prefetchBytes: median(g.runs.map((r) => r.bench?.prefetch?.bytesRead)),
      prefetchMs: median(g.runs.map((r) => r.bench?.prefetch?.ms)),
      prefetchFirst: g.runs.some((r) => r.bench?.prefetch?.strategy === "first"),
      // Everything the launch read from the disk (Firefox and the prefetcher), launch to quit.
      diskReadBytes: median(g.runs.map((r) => r.bench?.diskReadBytes)),
    };
  });
  for (const row of rows) {
    const cold = rows.find((r) => r.readAheadKb === row.readAheadKb && r.scenario === "cold");
    const hot = rows.find((r) => r.readAheadKb === row.readAheadKb && r.scenario === "hot");
    row.vsCold = cold?.totalMs ? row.totalMs / cold.totalMs : null;
    const bytes = floorBytes[row.readAheadKb];
    row.floorMs = bytes && bps && hot ? (bytes / bps) * 1000 + hot.sessionRestored : null;
    row.vsFloor = row.floorMs ? row.totalMs / row.floorMs : null;
  }
  return rows;
}

const ms = (v) => (v === null ? "—" : `${Math.round(v).toLocaleString("en-US")} ms`);
const x = (v) => (v === null ? "—" : `${v.toFixed(2)}×`);
const mb = (v) => (v === null ? "—" : `${(v / 1e6).toFixed(1)} MB`);

export function markdown(rows) {
  const head = "| readahead | scenario | n | preload | sessionRestored | preload + start | vs cold | vs floor | preload read | prefetch read | tree read from disk | disk read, launch to quit |\n| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |";
  const lines = rows.map((r) => `| ${r.readAheadKb} KiB | ${r.scenario} | ${r.n} | ${r.preloadMs === null ? "—" : ms(r.preloadMs)} | ${ms(r.sessionRestored)} | ${ms(r.totalMs)} | ${x(r.vsCold)} | ${x(r.vsFloor)} | ${mb(r.preloadBytes)} | ${r.prefetchBytes === null ? "—" : `${mb(r.prefetchBytes)} ${r.prefetchFirst ? "first" : "beside"}, in ${ms(r.prefetchMs)}`} | ${mb(r.readBytes)} | ${mb(r.diskReadBytes)} |`);
  return [head, ...lines].join("\n");
}

function main(argv) {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { traces: { type: "string", multiple: true } } });
  // RUN.json=LABEL names that run's scenario LABEL in the table (e.g. one point of a gap sweep).
  const docs = positionals.map((arg) => {
    const [file, label] = arg.split("=");
    const doc = JSON.parse(fs.readFileSync(file, "utf8"));
    if (label) {
      doc.history = (doc.history ?? []).map((r) => ({ ...r, bench: { ...r.bench, scenario: label } }));
    }
    return doc;
  });
  const records = docs.flatMap((d) => d.history ?? []);
  const bps = docs.find((d) => d.bench?.slowDisk)?.bench.slowDisk.bps ?? null;
  const installDir = docs.find((d) => d.bench?.firefox)?.bench.firefox.installDir ?? "/usr/lib/firefox-esr";
  const floorBytes = {};
  for (const dir of (values.traces ?? []).map((d) => path.resolve(d))) {
    const traces = fs
      .readdirSync(dir)
      .filter((n) => /^\d.*\d\.json$/.test(n))
      .map((n) => JSON.parse(fs.readFileSync(path.join(dir, n), "utf8")))
      .filter((t) => t.use_counts);
    // The traces of a state folder were recorded at one readahead: the runs' records say which.
    const ra = docs.find((d) => d.bench?.stateHome && dir.startsWith(d.bench.stateHome))?.bench.readAheadKb;
    const bytes = median(traces.map((t) => usedInstallBytes(t, installDir)));
    if (ra !== undefined && bytes !== null) floorBytes[ra] = bytes;
    console.log(`traces in ${dir}: ${traces.length}, read and then used in ${installDir}: median ${mb(bytes)} (readahead ${ra ?? "?"} KiB)`);
  }
  const rows = medianRows(records, { floorBytes, bps });
  console.log(markdown(rows));
  for (const [ra, bytes] of Object.entries(floorBytes)) {
    const floor = rows.find((r) => String(r.readAheadKb) === ra && r.floorMs)?.floorMs ?? null;
    console.log(`floor at ${ra} KiB: ${mb(bytes)} / ${mb(bps)}/s + hot = ${ms(floor)}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2));
}
