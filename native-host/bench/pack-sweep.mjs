#!/usr/bin/env node
// Packing formats by bytes (issue 41): the install packed by `about-startup-host pack` with each
// squashfs compressor and block size asked for (and EROFS lz4hc where mkfs.erofs is installed),
// ordered by the traced start, and for each: the image's size, the image bytes the traced start
// needs (the host's own map of the traced plan through the image, `pack --json`'s `saving`),
// the build's wall and CPU time, and the CPU that decompressing the start's ranges costs,
// measured apart from any disk: the image hot in the page cache, a fresh loop mount, the
// traced ranges read through it, minus the same reader on the hot plain install. No throttle, no
// Firefox start: bytes and CPU seconds. It writes its table into docs/benchmarks.md. A script,
// not a test: nothing here asserts a speed.
//
//   node native-host/bench/pack-sweep.mjs --state-home DIR [--firefox DIR] [--formats lzo:128,zstd:128:15,zstd:128,…]
//        [--runs N] [--work DIR] [--out FILE]
//
// --state-home: an XDG_STATE_HOME holding a traced start of the install's build (`sudo
// about-startup-host launch --cold --trace` with it set). Needs root (loop mounts); evicts only
// its own images. EROFS: no block map in the host, so its *start needs* is not mapped.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { spliceSection } from '../../scripts/lib/doc-section.mjs';
import { READER, rangeBytes, usedRanges } from '../../scripts/lib/read-ranges.mjs';

const repo = path.resolve(import.meta.dirname, '..', '..');
const host = path.join(repo, 'native-host', 'target', 'release', 'about-startup-host');

const { values: opts } = parseArgs({
  options: {
    'state-home': { type: 'string' },
    firefox: { type: 'string', default: '/usr/lib/firefox-esr' },
    formats: { type: 'string', default: 'zstd:128,lz4:128,lzo:128,zstd:256,xz:128,zstd:64' },
    erofs: { type: 'boolean', default: true },
    runs: { type: 'string', default: '3' },
    work: { type: 'string', default: '/var/tmp/pack-sweep' },
    out: { type: 'string', default: path.join(repo, 'docs', 'benchmarks.md') },
    help: { type: 'boolean', short: 'h' },
  },
});
if (opts.help || !opts['state-home']) {
  console.log('usage: node native-host/bench/pack-sweep.mjs --state-home DIR [--firefox DIR] [--formats comp:KiB[:level],…] [--runs N] [--work DIR] [--out FILE]');
  process.exit(opts.help ? 0 : 2);
}
if (process.getuid() !== 0) {
  console.error('pack-sweep needs root (loop mounts of the images)');
  process.exit(2);
}

const install = fs.realpathSync(opts.firefox);
const stateHome = path.resolve(opts['state-home']);
const work = path.resolve(opts.work);
const mnt = path.join(work, 'mnt');
fs.mkdirSync(mnt, { recursive: true });
const runs = Number(opts.runs);
const env = { ...process.env, XDG_STATE_HOME: stateHome };

function run(cmd, args, { allowFail = false, ...o } = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...o });
  if (!allowFail && r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')}: ${r.error ?? r.stderr}`);
  }
  return r;
}

/** `cmd args` under /usr/bin/time: {wall, cpu (user + sys of it and its children, s), out}. */
function timed(cmd, args, o = {}) {
  const r = run('/usr/bin/time', ['-f', '@@time %e %U %S', cmd, ...args], o);
  const line = r.stderr.split('\n').find((l) => l.startsWith('@@time '));
  const [wall, user, sys] = line.split(' ').slice(1).map(Number);
  return { wall, cpu: user + sys, out: r.stdout };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const mb = (b) => (b == null ? '—' : (b / 1e6).toFixed(1));

// The traced start's used ranges of the install's files (the newest trace of this build), as
// [relative path, [[offset, len]…]] for the reader.
const buildId = /BuildID=(\d+)/.exec(fs.readFileSync(path.join(install, 'application.ini'), 'utf8'))[1];
const tracesDir = path.join(stateHome, 'about-startup', 'traces');
const trace = fs
  .readdirSync(tracesDir)
  .filter((n) => n.endsWith('.json') && !n.endsWith('.meta.json'))
  .map((n) => JSON.parse(fs.readFileSync(path.join(tracesDir, n), 'utf8')))
  .filter((t) => t.build_id === buildId && t.files.some((f) => f.used))
  .sort((a, b) => b.recorded_at_ms - a.recorded_at_ms)[0];
if (!trace) {
  throw new Error(`no trace of build ${buildId} with page use in ${tracesDir}`);
}
const ranges = usedRanges(trace, install);
const rangesFile = path.join(work, 'ranges.json');
fs.writeFileSync(rangesFile, JSON.stringify(ranges));
const plainBytes = rangeBytes(ranges);

// The reader (scripts/lib/read-ranges.mjs): the traced ranges of each file under a root, read
// with pread, nothing else, timed as a child process.
const reader = READER;

/** CPU seconds of reading the ranges under `root` (median of `runs`; `fresh()` before each). */
function readCpu(root, fresh = () => {}) {
  const cpus = [];
  for (let i = 0; i < runs; i++) {
    fresh();
    cpus.push(timed(process.execPath, [reader, root, rangesFile]).cpu);
  }
  return median(cpus);
}

function umount() {
  run('umount', [mnt], { allowFail: true });
}

/** Decompression CPU of a built image: hot in the page cache, each read on a fresh mount. */
function measure(image, fsType) {
  const mount = () => {
    umount();
    run('mount', ['-t', fsType, '-o', 'loop,ro', image, mnt]);
  };
  run('cat', [image], { stdio: ['ignore', 'ignore', 'pipe'] });
  const cpu = readCpu(mnt, mount);
  umount();
  return { cpu };
}

// The baseline: the same reader on the plain install, hot (read once first).
run(process.execPath, [reader, install, rangesFile]);
const plainCpu = readCpu(install);
console.log(`traced start of build ${buildId}: ${mb(plainBytes)} MB used of the install's files; reading them hot, plain: ${plainCpu.toFixed(2)} s CPU`);

const version = run('mksquashfs', ['-version'], { allowFail: true }).stdout.split('\n')[0];
const rows = [];
const installBytes = Number(run('du', ['-sb', install]).stdout.split('\t')[0]);
for (const spec of opts.formats.split(',')) {
  // comp:KiB[:level] (no level: pack's default for the compressor, zstd's 19).
  const [comp, kib, level] = spec.split(':');
  console.log(`squashfs ${comp}${level ? ` level ${level}` : ''}, ${kib} KiB: packing …`);
  const built = timed(host, ['pack', '--json', '--comp', comp, '--block-kib', kib, ...(level ? ['--level', level] : []), '--firefox', install], { env });
  const reply = JSON.parse(built.out);
  const image = reply.packed.image;
  const m = measure(image, 'squashfs');
  const row = {
    format: `squashfs ${comp}${reply.packed.level ? ` level ${reply.packed.level}` : ''}`,
    kib: Number(kib),
    bytesImage: reply.packed.bytes_image,
    needed: reply.saving?.bytes_compressed ?? null,
    plain: reply.saving?.bytes_plain ?? null,
    buildS: reply.packed.build_ms / 1000,
    buildCpu: built.cpu,
    decompCpu: Math.max(0, m.cpu - plainCpu),
  };
  console.log(row);
  rows.push(row);
  write();
}
run(host, ['unpack'], { env, allowFail: true });

if (opts.erofs && run('sh', ['-c', 'command -v mkfs.erofs'], { allowFail: true }).status === 0) {
  const image = path.join(work, 'firefox.erofs');
  console.log('EROFS lz4hc: packing …');
  // 128 KiB physical clusters, lz4hc at its default level; mkfs.erofs 1.5 has no file order.
  const built = timed('mkfs.erofs', ['-zlz4hc', '-C131072', '-x-1', image, install]);
  const m = measure(image, 'erofs');
  const row = {
    format: 'EROFS lz4hc',
    kib: 128,
    bytesImage: fs.statSync(image).size,
    needed: null,
    plain: null,
    buildS: built.wall,
    buildCpu: built.cpu,
    // EROFS decompresses in the kernel's workers, not in the reader: its CPU is not the
    // reader's (measured 0.00 s above the plain read), so it is not shown as a figure.
    decompCpu: null,
    readerCpu: m.cpu - plainCpu,
  };
  console.log(row);
  rows.push(row);
  write();
  fs.rmSync(image);
}


function write() {
const table = [
  '| format | block | image | image vs folder | start needs (host map) | vs plain | build wall | build CPU | decompression CPU |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.format} | ${r.kib} KiB | ${mb(r.bytesImage)} MB | ${(r.bytesImage / installBytes).toFixed(2)}x | ${r.needed == null ? 'not mapped' : `${mb(r.needed)} MB`} | ${r.needed == null ? '—' : `${(r.needed / r.plain).toFixed(2)}x`} | ${r.buildS.toFixed(0)} s | ${r.buildCpu.toFixed(0)} s | ${r.decompCpu == null ? `not the reader's (kernel workers; reader ${r.readerCpu.toFixed(2)} s)` : `${r.decompCpu.toFixed(2)} s`} |`,
  ),
];
const section = `### Packing formats by bytes (issue 41)

\`node native-host/bench/pack-sweep.mjs --state-home … --formats ${opts.formats}\` on
${new Date().toISOString().slice(0, 10)}, as root: the install ${install} (${mb(installBytes)} MB, build ${buildId})
packed by \`about-startup-host pack\` (${version.trim()}, \`-sort\` by the traced start), and
with \`mkfs.erofs -zlz4hc -C131072\` where installed. **The machine was shared** (2 cores, other
helpers' builds and tests): wall and CPU times are of one run on a busy machine.

- *start needs*: the image bytes the traced start needs, the host's own map of its plan through
  the image (\`pack --json\`'s \`saving.bytes_compressed\`, whole compressed blocks), against the
  plan's ${mb(rows.find((r) => r.plain)?.plain ?? null)} MB of the plain files (*vs plain*).
- *decompression CPU*: CPU seconds (user + system) of reading the traced start's used pages
  (${mb(plainBytes)} MB of the install's files) through a fresh
  mount of the image hot in the page cache, minus the same reader on the hot plain install
  (${plainCpu.toFixed(2)} s); median of ${runs}.

${table.join('\n')}
`;
console.log(section);

const doc = fs.readFileSync(opts.out, 'utf8');
fs.writeFileSync(opts.out, spliceSection(doc, 'pack-sweep', section, { before: '## What do preload and prefetch buy?' }));
console.log(`written to ${opts.out}`);
}
