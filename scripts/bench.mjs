#!/usr/bin/env node
// npm run bench: the startup benchmark (cold, preloaded and hot launches with 95% confidence
// intervals), and `npm run bench -- compare A.json B.json`. docs/benchmarks.md explains the
// method; `npm run bench -- --help` the options. A script that measures, not a test.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { parseBenchArgs, USAGE, UsageError } from "./bench/args.mjs";
import { benchChart } from "./bench/chart.mjs";
import { benchPaths, copyTree, freshProfile, launchFirefox, prepareTemplates, restoreTree } from "./bench/launch.mjs";
import { AB_PREFS, abRows, abTable, ALL_AB_ARMS, attributionTable, appendUserPref, ARM_TEMPLATE, armTemplate, COSTLY_ADDON_ID, costlyAddonFiles, RESTORE_OFF_ARMS, withoutAddons } from "./bench/ab.mjs";
import { packXpi } from "./profile/extensions.mjs";
import { giveSessionOverHttp, servePages } from "./bench/tabs-http.mjs";
import { benchExport, likePairs, pairs, profileWarning, readRuns, scenarioExport } from "./bench/results.mjs";
import { recordProblem, runBench } from "./bench/run.mjs";
import { dropFromCache, installedAutostart, LOGIN_SCENARIOS, prepareLogin, workloadFiles } from "./bench/login.mjs";
import { NEEDS_TRACE, PREFETCH_LAUNCHES, prepareScenario, requireLearnedPlan } from "./bench/scenarios.mjs";
import { readPrefetch } from "./bench/prefetch.mjs";
import { evictProfile } from "./bench/profile-cold.mjs";
import { presetProfile, profileMeta } from "./bench/profile.mjs";
import { attributionOf } from "../extension/lib/models/attribution.js";
import { byScenario, compareTable, runTable } from "./bench/summary.mjs";
import { buildExtension } from "./build.mjs";
import { pauseProactiveReclaim } from "./lib/damon.mjs";
import { spliceSection } from "./lib/doc-section.mjs";
import { FIREFOX_NAMES, findFirefox } from "./lib/firefox.mjs";
import { processesWithHome, signal } from "./lib/processes.mjs";
import { HOST_BINARY, HOST_MANIFEST_PATH, ROOT } from "./lib/project.mjs";
import { run } from "./lib/run.mjs";
import { withoutDacOverride } from "./lib/users.mjs";
import { readAheadKb, setReadAheadKb } from "./lib/read-ahead.mjs";
import { createSlowDisk, diskOf } from "./lib/slow-disk.mjs";

const WELCH_NOTE =
  "Differences: B − A of the means; p: Welch's two-sided t-test (unequal variances, Welch–Satterthwaite degrees of freedom); significant when p < 0.05.";

function compare({ a, b }) {
  const read = (source) => {
    if (!fs.existsSync(source.file)) {
      throw new UsageError(`${source.file} does not exist`);
    }
    return readRuns(fs.readFileSync(source.file, "utf8"), source.file);
  };
  const aGroups = read(a);
  const bGroups = read(b);
  console.log(`A: ${a.file}${a.scenario ? `#${a.scenario}` : ""}\nB: ${b.file}${b.scenario ? `#${b.scenario}` : ""}\n`);
  // Like with like: each pair split by coldness class, unless both scenarios were named.
  const explicit = Boolean(a.scenario && b.scenario);
  for (const pair of pairs(aGroups, bGroups, a.scenario, b.scenario)) {
    const warning = profileWarning(pair.a, pair.b, pair.label);
    if (warning) {
      console.log(`Warning: ${warning}\n`);
    }
    const { comparisons, notes } = likePairs(pair, { explicit });
    for (const like of comparisons) {
      console.log(`### ${like.label}\n`);
      console.log(`${compareTable(like.a, like.b, { aLabel: `A ${like.aName}`, bLabel: `B ${like.bName}` })}\n`);
    }
    for (const note of notes) {
      console.log(`Note: ${note}\n`);
    }
  }
  console.log(WELCH_NOTE);
}

/**
 * The traced scenario's tracer: `about-startup-host trace --pid` attached right after the spawn
 * (outside the slow-disk group), stopped with SIGINT once the start is recorded (the host keeps
 * what it has, removes its tracefs instance and prints the trace). finish() → summary or null.
 */
function attachTracer(pid, stateHome, { faults = true } = {}) {
  const child = spawn(HOST_BINARY, ["trace", "--pid", String(pid), "--seconds", "300", "--json", ...(faults ? [] : ["--no-fault-sites"])], {
    env: { ...process.env, XDG_STATE_HOME: stateHome },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const closed = new Promise((resolve) => child.on("close", resolve));
  let finished = null;
  return {
    finish() {
      finished ??= (async () => {
        child.kill("SIGINT");
        await closed;
        try {
          const t = JSON.parse(out);
          const summary = { traced: t.traced_read_bytes, readBytes: t.tree_read_bytes, lost: t.lost_events, source: t.source, attachedMs: t.attached_ms };
          console.log(`\n  trace: ${(summary.traced / 1e6).toFixed(1)} MB traced, read_bytes ${(summary.readBytes / 1e6).toFixed(1)} MB, lost ${summary.lost}, attached at ${summary.attachedMs.toFixed(0)} ms (${summary.source})`);
          return summary;
        } catch {
          console.log(`\n  trace: no trace (${err.trim().split("\n").pop()})`);
          return null;
        }
      })();
      return finished;
    },
  };
}

/**
 * The traced plan and the launch prefetch need a stored trace of this build with page use. When
 * the state folder has none, record one first: a traced cold start (root: tracefs and
 * /proc/kpageflags), not counted. Returns that trace's summary, or null when one was there.
 * That start is profile-cold (`evictUser`: the user's own files evicted too, as cold-profile
 * does): the profile, restored just before, would otherwise be cached, and the trace, hence the
 * plan, would hold nothing of what a cold start reads of it (learn/plan/profile.rs).
 */
async function ensureTrace({ options, firefox, stateHome, paths, wrap, cold, evictUser }) {
  if (!options.scenarios.some((s) => NEEDS_TRACE.includes(s))) {
    return null;
  }
  const status = spawnSync(HOST_BINARY, ["plan", "--source", "trace", "--firefox", firefox.installDir, "--json"], {
    env: { ...process.env, XDG_STATE_HOME: stateHome },
    encoding: "utf8",
  });
  if (status.status === 0 && JSON.parse(status.stdout).learned) {
    return null;
  }
  console.log(`no stored trace of Firefox build ${firefox.buildId} with page use in ${stateHome}: recording one first (a traced cold start, not counted) …`);
  freshProfile(paths);
  prepareScenario("cold-traced", { hostBinary: HOST_BINARY, installDir: firefox.installDir, stateHome, cold });
  const evicted = evictUser();
  console.log(`  profile-cold: ${(evicted.bytes / 1e6).toFixed(1)} MB of the user's own files evicted, ${(evicted.stillCachedBytes / 1e6).toFixed(1)} MB still cached`);
  const launched = await launchFirefox({
    binary: firefox.binary,
    paths,
    wrap,
    timeoutMs: options.timeoutMs,
    extraEnv: { XDG_STATE_HOME: stateHome },
    onSpawn: (pid) => attachTracer(pid, stateHome),
  });
  if (launched.traced?.source !== "tracefs") {
    throw new Error(
      `could not record a trace with page use (${launched.traced ? `source ${launched.traced.source}` : "no trace"}): it needs root and tracefs. Record one with \`sudo about-startup-host launch --cold --trace\`, or give --state-home of a run that has one`,
    );
  }
  return launched.traced;
}

/** The install folder of a Firefox binary or folder, or null (e.g. a wrapper script). */
function installOf(candidate) {
  let binary = candidate;
  if (fs.existsSync(binary) && fs.statSync(binary).isDirectory()) {
    binary = ["firefox-esr", "firefox"].map((n) => path.join(candidate, n)).find((f) => fs.existsSync(f)) ?? binary;
  }
  if (!fs.existsSync(binary) || fs.statSync(binary).isDirectory()) {
    return null;
  }
  const real = fs.realpathSync(binary);
  const installDir = path.dirname(real);
  return fs.existsSync(path.join(installDir, "application.ini")) ? { binary: real, installDir } : null;
}

/**
 * The Firefox binary to launch: --firefox (a binary or an install folder), else $FIREFOX, else
 * the first of firefox, firefox-esr, … on PATH that is a real binary in an install folder (the
 * benchmark launches the binary itself, not a wrapper script).
 */
function resolveFirefox(given) {
  let found;
  if (given) {
    found = installOf(given);
    if (!found) {
      throw new UsageError(`--firefox ${given} is neither a Firefox binary inside its install folder (beside application.ini) nor such a folder`);
    }
  } else {
    const dirs = (process.env.PATH ?? "").split(path.delimiter).filter(Boolean);
    const candidates = [findFirefox(), ...FIREFOX_NAMES.flatMap((name) => dirs.map((dir) => path.join(dir, name)))];
    found = candidates.map(installOf).find(Boolean);
    if (!found) {
      throw new UsageError(`no Firefox binary inside an install folder found (only wrapper scripts?); use --firefox /path/to/firefox`);
    }
  }
  const ini = fs.readFileSync(path.join(found.installDir, "application.ini"), "utf8");
  const field = (name) => new RegExp(`^${name}=(.*)$`, "m").exec(ini)?.[1]?.trim() ?? null;
  return { ...found, version: field("Version"), buildId: field("BuildID") };
}

/** "128 KiB (set for the run; was 8192 KiB) on 254:0", "8192 KiB on 254:0", "unknown on …". */
function readAheadText({ before, after }, disk) {
  if (after === null) return `unknown on ${disk}`;
  return before === after ? `${after} KiB on ${disk}` : `${after} KiB (set for the run; was ${before} KiB) on ${disk}`;
}

/**
 * For the login scenarios: the workload's files (made once, on the same disk as the run's
 * folder) and, for `login`, the autostart entry installed in the run's own config folder and
 * the command it runs. Null without a login scenario.
 */
function prepareLoginRun(options, { root, stateHome }) {
  if (!options.scenarios.some((s) => LOGIN_SCENARIOS.includes(s))) {
    return null;
  }
  const files = workloadFiles(path.join(root, "workload"), options.workloadMib);
  const installed = options.scenarios.includes("login")
    ? installedAutostart({ hostBinary: HOST_BINARY, configHome: path.join(root, "config"), stateHome })
    : { file: null, argv: null };
  console.log(
    `login: workload ${options.workloadMib} MiB in ${files.length} files, launch ${options.loginDelayMs / 1000} s after login${installed.argv ? `; autostart runs: ${installed.argv.join(" ")} (from ${installed.file})` : ""}`,
  );
  return { files, ...installed };
}

function defaultOut() {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
  return path.join(ROOT, "artifacts", "bench", `bench-${stamp}.json`);
}

function commandLine(argv) {
  return `npm run bench${argv.length ? ` -- ${argv.join(" ")}` : ""}`;
}

async function benchmark(options, argv) {
  if (options.slowDisk && process.getuid() !== 0) {
    throw new UsageError("--slow-disk needs root: the throttle is a cgroup (run as root, or leave --slow-disk out)");
  }
  if (options.readAheadKb !== null && process.getuid() !== 0) {
    throw new UsageError("--read-ahead-kb needs root: it writes /sys/dev/block/…/queue/read_ahead_kb (run as root, or leave it out)");
  }
  if (options.noDacOverride && process.getuid() !== 0) {
    throw new UsageError("--no-dac-override needs root: it takes root's two capabilities to read any file away (run as root, or leave it out)");
  }
  const firefox = resolveFirefox(options.firefox);
  const out = path.resolve(options.out ?? defaultOut());
  fs.mkdirSync(path.dirname(out), { recursive: true });

  console.log("building the host (cargo build --release) …");
  await run("cargo", ["build", "--release", "--quiet", "--manifest-path", HOST_MANIFEST_PATH]);

  // --budget-min counts from here: the profile's making and the templates are inside the window too.
  const deadline = options.budgetMs === null ? null : Date.now() + options.budgetMs;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-bench-"));
  const paths = benchPaths(root);
  const cleanup = () => {
    for (const pid of processesWithHome(paths.home)) {
      signal(pid, "SIGKILL");
    }
  };
  process.on("exit", () => {
    cleanup();
    fs.rmSync(root, { recursive: true, force: true });
  });
  for (const name of ["SIGINT", "SIGTERM"]) {
    process.on(name, () => {
      console.error(`\nbench: ${name}: stopping Firefox, removing the throttle and ${root}`);
      process.exit(130); // the exit handlers above, of the cgroup and of DAMON do the rest
    });
  }

  // A cgroup for Firefox and the preload only; evict and the hot scenario's untimed preload run outside.
  const group = options.slowDisk ? createSlowDisk(options.slowDisk.spec, firefox.installDir) : null;
  const throttled = group ? group.wrap : (argv2) => argv2;
  // --no-dac-override: what runs in the group runs as an ordinary user would see the files.
  const wrap = options.noDacOverride ? (argv2) => throttled(withoutDacOverride(argv2)) : throttled;
  const damon = pauseProactiveReclaim();
  // The readahead window shapes a cold start as much as the throttle does: recorded always, set
  // for the run with --read-ahead-kb (restored on exit, Ctrl-C and failure by its exit hook).
  const blockDevice = diskOf(firefox.installDir);
  const readAhead =
    options.readAheadKb === null
      ? { before: readAheadKb(blockDevice), after: readAheadKb(blockDevice) }
      : setReadAheadKb(blockDevice, options.readAheadKb);

  console.log(`Firefox ${firefox.version} (${firefox.buildId}) at ${firefox.binary}`);
  console.log(`disk: ${group ? `throttled, ${group.label}` : "not throttled"}${damon.paused.length ? "; DAMON proactive reclaim paused" : ""}`);
  console.log(`readahead: ${readAheadText(readAhead, blockDevice)}`);
  console.log(`scenarios ${options.scenarios.join(", ")}; ${options.runs} counted runs each + 1 warm-up; work folder ${root}`);

  const built = await buildExtension({ distDir: path.join(root, "dist") });
  // --retries: a template's first start that gives no record is made again from its base (the
  // medium preset's hung in 3 of 8 tries on a loaded machine, 29 Nov: the experiment read Glean
  // before Firefox had initialized FOG, which hangs Firefox; fixed, docs/design/start-costs.md);
  // every failure is kept for the results.
  const templateFailures = [];
  const withRetries = async (what, make) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await make();
      } catch (error) {
        templateFailures.push({ template: what, error: error.message.split("\n")[0] });
        if (attempt >= options.retries) {
          throw error;
        }
        console.warn(`${what}: ${error.message}\n(made again: ${attempt + 1} of ${options.retries} retries)`);
      }
    }
  };
  // --profile-preset: the realistic profile, made once for the run with this very Firefox; every
  // launch starts on a copy of the template made from it, so every run starts from the same bytes.
  const preset = await presetProfile(options, { root, firefox });
  console.log(`preparing the template profile (its first start ${preset ? `adds the extension to the ${options.profilePreset} profile` : "creates it"}) …`);
  // The A/B mode: the deliberately costly add-on in every launch's profile (scripts/bench/ab.mjs).
  const abArms = options.scenarios.filter((s) => ALL_AB_ARMS.includes(s));
  // With a preset, the A/B mode restores its tabs over http (tabs-http.mjs): the costly add-on
  // holds page loads, which webRequest sees only for http(s). Every arm's template is made from
  // this one base, so all restore the same tabs; the server runs until the run ends.
  let tabsServer = null;
  let abBase = preset?.profileDir ?? null;
  if (abArms.length > 0 && preset) {
    tabsServer = await servePages(preset.pagesDir);
    abBase = path.join(root, "base-tabs-http");
    fs.rmSync(abBase, { recursive: true, force: true });
    copyTree(preset.profileDir, abBase);
    const changed = giveSessionOverHttp(abBase, preset.pagesDir, tabsServer.base);
    console.log(`  the A/B mode's session: ${changed} page address(es) of ${preset.pagesDir} served at ${tabsServer.base}`);
  }
  const extraXpis = abArms.length > 0 ? [{ id: COSTLY_ADDON_ID, bytes: await packXpi(costlyAddonFiles()) }] : [];
  const extraPrefs = abArms.length > 0 ? AB_PREFS : {};
  // The arms' own templates (ARM_TEMPLATE), each made the way `hot`'s is, from its own base
  // profile: never installed there rather than removed from the finished template (a first try
  // removed the costly add-on from it; that start was ended by a SIGTERM on the small preset, and
  // uninstalling is work no later start of a user does).
  const armBases = {
    // the same base profile, without the costly add-on
    "hot-without-costly-addon": () => abBase,
    // the preset's own add-ons removed too (their first start here tells Firefox they are gone)
    "hot-addons-off": () => {
      if (!preset) {
        return null;
      }
      const base = path.join(root, "base-addons-off");
      const removed = withoutAddons(abBase, base, { copy: copyTree });
      console.log(`  hot-addons-off: the profile without its ${removed.length} add-on(s): ${removed.join(", ") || "none"}`);
      return base;
    },
    // a new profile: Firefox's own baseline
    "hot-empty-profile": () => null,
  };
  for (const arm of new Set(abArms.map((a) => ARM_TEMPLATE[a]).filter(Boolean))) {
    console.log(`preparing the template of ${arm} …`);
    fs.rmSync(paths.profile, { recursive: true, force: true }); // a new profile where no base is given
    const base = armBases[arm]();
    const made = await withRetries(`the template of ${arm}`, () => {
      fs.rmSync(paths.profile, { recursive: true, force: true });
      return prepareTemplates({ paths, binary: firefox.binary, xpi: built.full.xpi, hostBinary: HOST_BINARY, timeoutMs: options.timeoutMs, baseProfile: base, extraPrefs });
    });
    if (recordProblem(made)) {
      throw new Error(`the template of ${arm}: ${recordProblem(made)} (Firefox's output: ${paths.log})`);
    }
    copyTree(paths.templateProfile, armTemplate(root, arm));
  }
  fs.rmSync(paths.profile, { recursive: true, force: true }); // `hot`'s template starts from its base (or new) too
  const first = await withRetries("the template profile", () => {
    fs.rmSync(paths.profile, { recursive: true, force: true });
    return prepareTemplates({ paths, binary: firefox.binary, xpi: built.full.xpi, hostBinary: HOST_BINARY, timeoutMs: options.timeoutMs, baseProfile: abBase, extraXpis, extraPrefs });
  });
  const firstProblem = recordProblem(first);
  if (firstProblem) {
    throw new Error(`the template profile's first start: ${firstProblem} (Firefox's output: ${paths.log})`);
  }
  const firstSessionRestored = first.milestones?.sessionRestored ?? null;
  console.log(`template ready; its first start (a new profile, not counted) reached sessionRestored at ${firstSessionRestored} ms`);

  // --state-home keeps the learned set and the traces for later runs (e.g. one scenario per run).
  const stateHome = options.stateHome ? path.resolve(options.stateHome) : path.join(root, "state");
  fs.mkdirSync(stateHome, { recursive: true });
  const login = prepareLoginRun(options, { root, stateHome });
  // Every evict is checked: a process keeping Firefox's files mapped stops the run (cold-check.mjs).
  const cold = { allowWarm: options.allowWarm };
  const startedAt = Date.now();
  // The user's own files, after their fresh (synced) copy: profile, HOME, the tabs' pages (the
  // profile-cold scenarios and the traced start recorded first).
  const evictUser = () => evictProfile([paths.profile, paths.home, preset?.pagesDir].filter(Boolean));
  const tracedWarmup = await ensureTrace({ options, firefox, stateHome, paths, wrap, cold, evictUser });
  // The profile is restored (freshProfile) before each scenario is prepared, so that a preload
  // reads the very profile the launch then starts (the traced plan's profile part).
  const launchStep = async (step) => {
    if (step?.scenario === "cold-traced" || step?.scenario === "cold-traced-no-faults") {
      const faults = step.scenario === "cold-traced";
      return launchFirefox({ binary: firefox.binary, paths, wrap, timeoutMs: options.timeoutMs, extraEnv: { XDG_STATE_HOME: stateHome }, onSpawn: (pid) => attachTracer(pid, stateHome, { faults }) });
    }
    if (PREFETCH_LAUNCHES.includes(step?.scenario)) {
      // The host becomes Firefox (same pid, inside the throttle); its prefetcher records
      // what it did in the state folder, read back for the record.
      const launcher = [HOST_BINARY, "launch", "--prefetch", ...options.prefetchFlags, "--firefox", firefox.binary, "--"];
      const launched = await launchFirefox({ binary: firefox.binary, paths, wrap, timeoutMs: options.timeoutMs, extraEnv: { XDG_STATE_HOME: stateHome }, launcher });
      const prefetch = await readPrefetch(stateHome, launched.pid);
      if (!prefetch) {
        throw new Error(`${step.scenario}: the prefetcher wrote no record for Firefox ${launched.pid} in ${stateHome}/about-startup/last-prefetch.json (Firefox's output: ${paths.log})`);
      }
      return { ...launched, extra: { prefetch } };
    }
    // The learned working set outlives the per-launch HOME copy: the extension's `learn` after
    // every start writes it here, and preload-plan reads it from here.
    return launchFirefox({ binary: firefox.binary, paths, wrap, timeoutMs: options.timeoutMs, extraEnv: { XDG_STATE_HOME: stateHome } });
  };
  const tty = process.stdout.isTTY;
  const { records, warmups, forcedQuits, rounds, stoppedEarly, failedLaunches } = await runBench({ ...options, readAheadKb: readAhead.after, deadline }, {
    prepare: async (scenario) => {
      freshProfile(paths);
      if (ARM_TEMPLATE[scenario]) {
        restoreTree(armTemplate(root, ARM_TEMPLATE[scenario]), paths.profile);
      }
      if (RESTORE_OFF_ARMS.includes(scenario)) {
        appendUserPref(paths.profile, "browser.startup.page", 1);
      }
      if (ARM_TEMPLATE[scenario] || RESTORE_OFF_ARMS.includes(scenario)) {
        spawnSync("sync");
      }
      const where = { hostBinary: HOST_BINARY, installDir: firefox.installDir, stateHome, gapKib: options.gapKib, wrap, cold, evictUser };
      if (!LOGIN_SCENARIOS.includes(scenario)) {
        return prepareScenario(scenario, where);
      }
      if (scenario === "login") {
        requireLearnedPlan(scenario, where);
      }
      const { evicted } = prepareScenario("cold", where);
      dropFromCache(login.files);
      const env = { ...process.env, XDG_STATE_HOME: stateHome };
      return { evicted, ...(await prepareLogin(scenario, { autostartArgv: login.argv, files: login.files, delayMs: options.loginDelayMs, wrap, env })) };
    },
    launch: async (step) => {
      // What the whole launch read from the disk, by every reader in the throttled group
      // (Firefox, and the prefetcher, which is not in its process tree), launch to quit.
      const before = group?.readBytes() ?? null;
      const launched = await launchStep(step);
      const after = group?.readBytes() ?? null;
      const diskReadBytes = before === null || after === null ? null : after - before;
      return { ...launched, extra: { ...launched.extra, diskReadBytes } };
    },
    progress: (line, { final }) => {
      if (tty) {
        process.stdout.write(`\r\x1b[K${line}${final ? "\n" : ""}`);
      } else {
        console.log(line);
      }
    },
  });
  const finishedAt = Date.now();
  await tabsServer?.close();

  const meta = {
    command: commandLine(argv),
    scenarios: options.scenarios,
    runs: options.runs,
    // --budget-min: the complete rounds of counted runs done before the budget ran out.
    rounds,
    stoppedEarly,
    // --retries: the launches and template starts that gave no record and were made again.
    failedLaunches,
    templateFailures,
    budgetMin: options.budgetMs === null ? null : options.budgetMs / 60000,
    warmups,
    slowDisk: group ? { spec: options.slowDisk.spec, bps: options.slowDisk.bps, iops: options.slowDisk.iops, how: group.label } : null,
    firefox: { binary: firefox.binary, installDir: firefox.installDir, version: firefox.version, buildId: firefox.buildId },
    cores: os.cpus().length,
    kernel: os.release(),
    damonPaused: damon.paused.length > 0,
    allowWarm: options.allowWarm,
    // Firefox, the launch, the timed preloads and the login's command ran without root's
    // CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (--no-dac-override).
    noDacOverride: options.noDacOverride,
    prefetchFlags: options.prefetchFlags,
    // The traced cold start recorded first because the state folder had no trace (null: it had one).
    tracedWarmup,
    gapKib: options.gapKib,
    stateHome: options.stateHome ? stateHome : null,
    login: login && { delayMs: options.loginDelayMs, workloadMib: options.workloadMib, autostartFile: login.file, command: login.argv },
    // KiB; null where the disk has no readahead file. readAheadKbBefore differs when --read-ahead-kb set it.
    readAheadKb: readAhead.after,
    readAheadKbBefore: readAhead.before,
    disk: blockDevice,
    forcedQuits,
    // The profile every launch started on (--profile-preset), or "fresh".
    profile: profileMeta(preset),
    // The template's first start: profile creation and add-on install, unthrottled, page cache
    // as it was; not counted, kept to show what a first start costs.
    templateFirstStart: { sessionRestored: firstSessionRestored },
    startedAt,
    finishedAt,
  };
  const doc = benchExport(records, meta, { kernel: os.release() });
  const base = out.replace(/\.json$/, "");
  fs.writeFileSync(out, `${JSON.stringify(doc, null, 1)}\n`);
  for (const scenario of options.scenarios) {
    fs.writeFileSync(`${base}.${scenario}.json`, `${JSON.stringify(scenarioExport(doc, scenario), null, 1)}\n`);
  }
  const groups = byScenario(records);
  const disk = group ? `slow disk ${group.label}` : "disk not throttled";
  const svg = benchChart(
    options.scenarios.map((scenario) => ({
      scenario,
      runs: (groups.get(scenario) ?? []).map((r) => ({ preloadMs: r.bench.preloadMs, sessionRestored: r.milestones.sessionRestored })),
    })),
    { title: `Firefox ${firefox.version}: time to sessionRestored`, subtitle: `${disk}, profile ${meta.profile.preset}, ${options.runs} runs per scenario, ${new Date(startedAt).toISOString().slice(0, 10)}` },
  );
  fs.writeFileSync(`${base}.svg`, svg);
  const table = runTable(records, { scenarios: options.scenarios });
  const attribution = attributionTable(attributionOf(records));
  const minutes = ((finishedAt - startedAt) / 60000).toFixed(1);
  const markdown = `Command: \`${meta.command}\` on ${new Date(startedAt).toISOString().slice(0, 10)}, Firefox ${firefox.version} (build ${firefox.buildId}, ${firefox.installDir}), headless, kernel ${os.release()}, ${os.cpus().length} cores, profile: ${meta.profile.description}, ${disk}, readahead ${readAheadText(readAhead, meta.disk)}${meta.damonPaused ? ", DAMON proactive reclaim paused" : ""}; ${stoppedEarly ? `${rounds} counted runs per scenario (of ${options.runs} asked: the --budget-min ${options.budgetMs / 60000} min ran out)` : `${options.runs} counted runs per scenario`} after one warm-up each, interleaved; ${minutes} min. Mean ± half the 95% confidence interval (Student's t); "vs cold": difference of the means, Welch's t-test, "n.s." = not significant at 5%.${forcedQuits ? ` ${forcedQuits} launch(es) did not quit by themselves and were signalled.` : ""}${failedLaunches.length + templateFailures.length ? ` ${failedLaunches.length} launch(es) and ${templateFailures.length} template start(s) gave no record and were made again (--retries; listed in the results' meta): ${[...templateFailures.map((f) => f.template), ...failedLaunches.map((f) => `${f.scenario} ${f.run === 0 ? "warm-up" : `run ${f.run}`}`)].join(", ")}.` : ""}

${table}
${abArms.length > 0 ? `\nA/B (scripts/bench/ab.mjs): what taking each away saved on sessionRestored and, for the add-on, on the restored windows' selected tabs having loaded, against \`hot\`, beside the busy time the page showed for it in the \`hot\` starts:\n\n${abTable(abRows(records))}\n` : ""}${attribution ? `\nWhere the hot start's time above the empty profile went (lib/models/attribution.js: each step is what taking it away saved after the step before):\n\n${attribution}\n` : ""}`;
  fs.writeFileSync(`${base}.md`, markdown);
  console.log(`\n${markdown}`);
  if (options.docSection) {
    // Into the document itself, so that a run's figures are not copied by hand (the words around
    // the section, the overview row, stay the reader's to write).
    const doc = path.join(ROOT, "docs", "benchmarks.md");
    fs.writeFileSync(doc, spliceSection(fs.readFileSync(doc, "utf8"), options.docSection, markdown));
    console.log(`written to docs/benchmarks.md, section ${options.docSection}`);
  }
  console.log(`runs: ${out} (+ one file per scenario: ${path.basename(base)}.<scenario>.json, for the page's Import)`);
  console.log(`table: ${base}.md\nchart: ${base}.svg`);
}

async function main(argv) {
  const options = parseBenchArgs(argv);
  if (options.command === "help") {
    console.log(USAGE);
  } else if (options.command === "compare") {
    compare(options);
  } else {
    await benchmark(options, argv);
  }
}

main(process.argv.slice(2)).catch((error) => {
  if (error instanceof UsageError) {
    console.error(`bench: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  console.error(`bench: ${error.message}`);
  process.exit(1);
});
