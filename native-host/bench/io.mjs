#!/usr/bin/env node
// Host I/O benchmark: residency scans and preloads of Firefox's install folder, against the
// reference tools vmtouch, fincore and cat. It prints medians and ratios from one run and writes
// them into docs/benchmarks.md. It is a script, not a test: nothing here asserts a speed.
//
//   node native-host/bench/io.mjs [--runs N] [--slow-disk MiB:IOPS] [--firefox DIR] [--out FILE]
//
// Needs root (eviction of root-owned files must be visible, and the slow disk is a cgroup).

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';

import { pauseProactiveReclaim } from '../../scripts/lib/damon.mjs';
import { spliceSection } from '../../scripts/lib/doc-section.mjs';
import { createSlowDisk } from '../../scripts/lib/slow-disk.mjs';

const repo = path.resolve(import.meta.dirname, '..', '..');
const host = path.join(repo, 'native-host', 'target', 'release', 'about-startup-host');

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    'slow-disk': { type: 'string' },
    firefox: { type: 'string' },
    out: { type: 'string', default: path.join(repo, 'docs', 'benchmarks.md') },
    help: { type: 'boolean', short: 'h' },
  },
});

if (opts.help) {
  console.log(`usage: node native-host/bench/io.mjs [--runs N] [--slow-disk MiB:IOPS] [--firefox DIR] [--out FILE]

Times, on Firefox's install folder:
  residency scan   about-startup-host residency   vs  vmtouch DIR, fincore FILES
  preload (cold)   about-startup-host preload     vs  cat FILES, vmtouch -t DIR
Each preload starts from an evicted folder and ends when every page is resident.
--slow-disk 30:150 throttles the measured commands to 30 MiB/s and 150 IOPS (cgroup v1 blkio
or v2 io.max), as in shared/NOTES.md; the group is removed afterwards.
DAMON proactive reclaim (a kdamond with a pageout scheme), if the machine runs one, is paused
for the run and turned back on afterwards: it would page out what the preloads read.`);
  process.exit(0);
}

function fail(message) {
  console.error(`bench: ${message}`);
  process.exit(1);
}

const runs = Number.parseInt(opts.runs, 10);
if (!(runs >= 1)) fail(`--runs must be a positive integer, not ${opts.runs}`);
if (process.getuid() !== 0) fail('run as root: eviction and the slow-disk cgroup need it');
for (const tool of ['vmtouch', 'fincore']) {
  if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
    fail(`${tool} is missing: apt-get install -y ${tool === 'fincore' ? 'util-linux' : tool}`);
  }
}
if (!fs.existsSync(host)) {
  fail(`${host} is missing: cargo build --release --manifest-path native-host/Cargo.toml`);
}

// --- helpers -----------------------------------------------------------------------------------

function run(argv, { quiet = true } = {}) {
  const result = spawnSync(argv[0], argv.slice(1), {
    stdio: ['ignore', quiet ? 'ignore' : 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (result.status !== 0) {
    fail(`${argv.join(' ')} failed (${result.status}): ${result.stderr}`);
  }
  return result.stdout;
}

function hostJson(args) {
  return JSON.parse(run([host, ...args, '--json'], { quiet: false }));
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

// Wall time of one command, in ms; inside the throttled cgroup when there is one.
function timed(argv, cgroup) {
  const wrapped = cgroup ? cgroup.wrap(argv) : argv;
  const start = process.hrtime.bigint();
  run(wrapped);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function residentFraction(dir) {
  const { summary } = hostJson(['residency', '--no-mapped', '--firefox', dir]);
  const g = summary.groups.install;
  return g.resident_pages / g.pages;
}

// readahead(2) and fadvise(WILLNEED) return once the reads are queued, not done: a preload is
// only finished when the pages are in. Every method gets the same wait, so the comparison is fair.
async function waitResident(dir, startMs) {
  for (;;) {
    if (residentFraction(dir) >= 0.99) return performance.now() - startMs;
    if (performance.now() - startMs > 600_000) fail('preload did not finish within 10 minutes');
    await sleep(20); // lets SIGINT/SIGTERM in, so the cgroup and DAMON are restored
  }
}

async function timedPreload(argv, dir, cgroup) {
  run(['vmtouch', '-q', '-e', dir]);
  const before = residentFraction(dir);
  const start = performance.now();
  timed(argv, cgroup);
  const ms = await waitResident(dir, start);
  return { ms, before };
}

for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

// --- the run -----------------------------------------------------------------------------------

const located = hostJson(['residency', '--no-mapped', ...(opts.firefox ? ['--firefox', opts.firefox] : [])]);
const dir = located.install.dir;
const files = located.files.map((f) => f.path);
const totalMB = located.files.reduce((s, f) => s + f.size, 0) / 1e6;
let cgroup = null;
try {
  cgroup = opts['slow-disk'] ? createSlowDisk(opts['slow-disk'], dir) : null;
} catch (error) {
  fail(error.message);
}
const damon = pauseProactiveReclaim();
const firefoxVersion = located.install.version ?? 'unknown';

console.log(`install folder: ${dir} (${files.length} files, ${totalMB.toFixed(1)} MB, Firefox ${firefoxVersion})`);
console.log(`disk: ${cgroup ? `throttled, ${cgroup.label}` : 'not throttled'}; ${runs} runs per figure, medians`);
console.log(`DAMON proactive reclaim: ${damon.paused.length ? `paused for the run (${damon.paused.length} kdamond)` : 'not running'}\n`);

const scanRuns = Math.max(runs, 11);
const scans = {
  'about-startup-host residency': [host, 'residency', '--json', '--no-mapped', '--firefox', dir],
  // As a person runs it: it also looks for a running Firefox of the folder for the mapped column
  // (issue 20: that look cost more than the scan itself).
  'about-startup-host residency (mapped column)': [host, 'residency', '--json', '--firefox', dir],
  'vmtouch DIR': ['vmtouch', dir],
  'fincore FILES': ['fincore', ...files],
};
const preloads = {
  'about-startup-host preload (auto)': [host, 'preload', '--firefox', dir],
  'about-startup-host preload --method read --jobs 1': [host, 'preload', '--firefox', dir, '--method', 'read', '--jobs', '1'],
  'about-startup-host preload --method read --jobs 2': [host, 'preload', '--firefox', dir, '--method', 'read', '--jobs', '2'],
  'about-startup-host preload --method read --jobs 4': [host, 'preload', '--firefox', dir, '--method', 'read', '--jobs', '4'],
  'about-startup-host preload --method readahead': [host, 'preload', '--firefox', dir, '--method', 'readahead'],
  'about-startup-host preload --method fadvise': [host, 'preload', '--firefox', dir, '--method', 'fadvise'],
  'cat FILES > /dev/null': ['sh', '-c', 'cat "$@" > /dev/null', 'sh', ...files],
  'vmtouch -t DIR': ['vmtouch', '-q', '-t', dir],
};

const scanMs = Object.fromEntries(Object.keys(scans).map((k) => [k, []]));
// Warm the folder once so every scan sees the same state, then interleave the tools run by run.
run(['vmtouch', '-q', '-t', dir]);
for (let i = 0; i < scanRuns; i++) {
  for (const [name, argv] of Object.entries(scans)) scanMs[name].push(timed(argv, null));
}
process.stdout.write(`residency scans done (${scanRuns} runs each)\n`);

const preloadMs = Object.fromEntries(Object.keys(preloads).map((k) => [k, []]));
for (let i = 0; i < runs; i++) {
  for (const [name, argv] of Object.entries(preloads)) {
    const { ms, before } = await timedPreload(argv, dir, cgroup);
    if (before > 0.05) console.error(`bench: warning: ${(before * 100).toFixed(1)}% still resident after eviction (a running Firefox keeps its mapped pages)`);
    preloadMs[name].push(ms);
    process.stdout.write(`\rpreload run ${i + 1}/${runs}: ${name.padEnd(52)} ${ms.toFixed(0).padStart(7)} ms`);
  }
}
process.stdout.write('\n\n');

function table(title, samples, refs) {
  const rows = Object.entries(samples).map(([name, xs]) => ({ name, med: median(xs) }));
  const lines = [`| ${title} | median ms | ${refs.map((r) => `vs ${r}`).join(' | ')} |`,
    `| --- | ---: | ${refs.map(() => '---:').join(' | ')} |`];
  for (const { name, med } of rows) {
    const ratios = refs.map((r) => `${(med / median(samples[r])).toFixed(2)}×`);
    lines.push(`| \`${name}\` | ${med.toFixed(1)} | ${ratios.join(' | ')} |`);
  }
  return lines.join('\n');
}

const scanTable = table('residency scan', scanMs, ['vmtouch DIR', 'fincore FILES']);
const preloadTable = table('preload from evicted', preloadMs, ['cat FILES > /dev/null', 'vmtouch -t DIR']);
const mbps = Object.entries(preloadMs)
  .map(([name, xs]) => `- \`${name}\`: ${(totalMB / (median(xs) / 1000)).toFixed(1)} MB/s`)
  .join('\n');

const heading = cgroup ? `Host I/O, slow disk (${cgroup.label.replace(/ \(.*/, '')})` : 'Host I/O, disk not throttled';
const command = `node native-host/bench/io.mjs --runs ${runs}${opts['slow-disk'] ? ` --slow-disk ${opts['slow-disk']}` : ''}`;
const section = `### ${heading}

Command: \`${command}\` on ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, kernel ${os.release()}, Firefox ${firefoxVersion}, ${dir} (${files.length} files, ${totalMB.toFixed(1)} MB)${damon.paused.length ? ', DAMON proactive reclaim paused during the run' : ''}. Ratios below 1 mean faster than the reference.

${scanTable}

${preloadTable}

Throughput (install size / median time):
${mbps}
`;

console.log(section);

// Replace this scenario's section in the output file, keep everything else.
const marker = cgroup ? 'io-bench-slow' : 'io-bench-fast';
const doc = fs.existsSync(opts.out) ? fs.readFileSync(opts.out, 'utf8') : '# Benchmarks\n';
fs.writeFileSync(opts.out, spliceSection(doc, marker, section));
console.log(`written to ${path.relative(process.cwd(), opts.out) || opts.out}`);
