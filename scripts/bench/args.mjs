// The startup benchmark's command line, parsed without side effects (scripts/bench.mjs uses it).
//   npm run bench -- [--runs N] [--scenarios hot,cold,preload] [--slow-disk 30:150]
//                    [--read-ahead-kb KB] [--gap-kib KIB] [--state-home DIR] [--firefox PATH]
//                    [--out FILE] [--doc-section NAME] [--timeout S] [--allow-warm] [--prefetch-flags "…"]
//                    [--profile-preset small|medium|large] [--profile-seed N] [--profile-made DIR] [--no-dac-override]
//   npm run bench -- compare A.json[#scenario] B.json[#scenario]
import { parseArgs } from "node:util";
import { parseReadAheadKb } from "../lib/read-ahead.mjs";
import { DEFAULT_LOGIN_DELAY_S, DEFAULT_WORKLOAD_MIB } from "./login.mjs";
import { parseSlowDisk } from "../lib/slow-disk.mjs";
import { PRESET_NAMES } from "../profile/presets.mjs";

export const SCENARIOS = ["cold", "cold-profile", "cold-traced", "cold-traced-no-faults", "preload", "preload-image", "preload-plan", "preload-plan-mapped", "preload-plan-unsorted", "preload-plan-traced", "replay-recorded", "replay-disk", "launch-prefetch", "launch-prefetch-cold-profile", "preload-plan-traced-cold-profile", "login", "login-no-preload", "hot", "launch-prefetch-hot", "hot-without-costly-addon", "hot-session-restore-off", "hot-addons-off", "hot-addons-and-restore-off", "hot-empty-profile"];
/** Without --scenarios: the plan variants, the login pair and cold-traced are for a closer look, asked for by name. */
export const DEFAULT_SCENARIOS = ["cold", "preload", "preload-plan", "hot"];
export const DEFAULT_RUNS = 10;

/** A mistake on the command line: shown with the usage, without a stack trace. */
export class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = "UsageError";
  }
}

export const USAGE = `usage: npm run bench -- [--runs N] [--scenarios ${DEFAULT_SCENARIOS.join(",")}] [--slow-disk MiB:IOPS]
                        [--read-ahead-kb KB] [--gap-kib KIB] [--state-home DIR] [--login-delay S] [--workload-mib N]
                        [--firefox PATH] [--out FILE] [--doc-section NAME] [--timeout SECONDS] [--budget-min M] [--retries N] [--allow-warm]
                        [--prefetch-flags="--batches 1:8 --ahead-mib 2 --gap-kib 16"]
                        [--profile-preset ${PRESET_NAMES.join("|")}] [--profile-seed N] [--profile-made DIR] [--no-dac-override]
       npm run bench -- compare A.json[#scenario] B.json[#scenario]

Starts Firefox N times per scenario (plus one uncounted warm-up each), interleaved run by run,
each from a fresh copy of a prepared profile with the about:startup extension, and collects
every milestone through the extension and the native host.
  cold     Firefox's own files evicted from the page cache (the rest of the system stays warm)
  cold-profile  cold, and the user's own files this start reads evicted too, as the user who
           owns them: the profile, the launch's HOME and (--profile-preset) the local pages its
           tabs show. \`cold\` leaves them cached, as after a copy: the two are told apart
  cold-traced  cold, with \`about-startup-host trace --pid\` attached at spawn (root): the
           trace's own cost
  cold-traced-no-faults  the same with \`--no-fault-sites\`: what recording which code
           faulted (exceptions:page_fault_user) adds
  preload  evicted, then read back with \`about-startup-host preload\`; its time is reported
           beside the start and added to it
  preload-image  a squashfs install only (the Snap stand-in): evicted, then only the compressed
           image behind its loop device read back (\`preload --cache image\`); timed. The start
           still decompresses, but reads nothing from the disk
  preload-plan  evicted, then \`about-startup-host preload --plan\`: only what the learned
           starts needed (the extension learns after each start), in disk order; timed
  preload-plan-mapped    the same from the pages Firefox mapped only (an ordinary user's plan,
           where the kernel hides page-cache residency)
  preload-plan-unsorted  the same plan read in file order instead of disk order
  preload-plan-traced  evicted, then \`about-startup-host preload --plan --source trace\`: the
           pages the last traced cold starts of this build read and then used, gaps up to
           --gap-kib read through, in disk order; timed. Needs stored traces: a cold-traced
           scenario earlier in the list (its warm-up), or --state-home of a run that had one;
           without either the run records one first (a traced cold start, not counted; root)
  replay-recorded  evicted, then every page the newest trace read, in the order it read them
           (contiguous reads grouped, buffered reads without kernel readahead: seed 002's
           "simulated cold"); timed, then the start
  replay-disk  the same reads sorted by disk position (FIEMAP): seed 002's "reordered I/O"
  launch-prefetch  evicted, then launched through \`about-startup-host launch --prefetch\`:
           Firefox starts at once and the traced plan is read beside it, in first-use order
           in disk-ordered batches; nothing is timed before the launch. Its figures
           (read, found cached, how long) come from the prefetcher's last-prefetch.json. Needs
           a stored trace, as preload-plan-traced. The trace the run records first is of a
           profile-cold start, so the plan holds what a cold start reads of the profile too
  launch-prefetch-cold-profile / preload-plan-traced-cold-profile  the same on a profile-cold
           start (as cold-profile: the user's own files evicted too, before the preload): the
           traced plan's profile part has something to read. In launch-prefetch and
           preload-plan-traced the profile, restored just before, is found cached
  login    what a login does: evict, start the installed autostart entry's own command (read
           from the file \`autostart enable\` wrote) and a "user at login" workload (reading
           --workload-mib of other files) together, wait --login-delay, then launch; the
           workload's time is reported beside the start
  login-no-preload  the same login without the preload (its workload time is the baseline)
  hot      everything in the page cache
  launch-prefetch-hot  hot, launched through \`launch --prefetch\`: the prefetch's cost when
           everything is cached already
  hot-without-costly-addon  A/B (scripts/bench/ab.mjs): hot, on the profile without the
           deliberately costly add-on that every launch of an A/B run carries (it holds the
           restored tabs' loads; with a --profile-preset the run serves the tabs over http);
           run it with hot
  hot-session-restore-off  A/B: hot, with browser.startup.page = 1 (no session restored)
  hot-addons-off  A/B attribution: hot, on the profile with every add-on it had removed
           (about:startup stays to record); with a --profile-preset
  hot-addons-and-restore-off  the same, and no session restored
  hot-empty-profile  A/B attribution: hot, on a new profile with about:startup only (Firefox's
           own baseline, in the same run)
--runs N          counted launches per scenario (default ${DEFAULT_RUNS})
--slow-disk B:I   throttle reads of Firefox and the preload to B MiB/s and I IOPS (a cgroup;
                  needs root), e.g. 30:150
--read-ahead-kb KB  set the disk's readahead window (read_ahead_kb) for the run and put the old
                  value back afterwards, also on Ctrl-C and failure (needs root); e.g. 128, the
                  common desktop default. Every run records the window it ran with either way
--gap-kib KIB     with preload-plan-traced: gaps up to KIB between needed ranges are read
                  through (default: the host's, 0 for the traced plan)
--state-home DIR  keep the learned working set and stored traces in DIR (XDG_STATE_HOME) instead
                  of the run's throwaway folder, so a later run's plan scenarios use them
--login-delay S   seconds from login to launch in the login scenarios (default ${DEFAULT_LOGIN_DELAY_S})
--workload-mib N  MiB the login workload reads (default ${DEFAULT_WORKLOAD_MIB})
--firefox PATH    the Firefox binary or install folder (default: $FIREFOX, then PATH)
--out FILE        the runs as an about-startup export (default artifacts/bench/bench-<time>.json);
                  the table (.md) and chart (.svg) go beside it
--doc-section NAME  also write the table into docs/benchmarks.md between
                  <!-- NAME:begin --> and <!-- NAME:end -->: that section replaced, the rest of the
                  document kept (a new NAME goes at its end); NAME: lowercase letters, digits, -
--timeout S       longest wait for one start's record (default 180)
--retries N       prepare and launch a start again when it gave no record (timed out, or Firefox
                  ended first), up to N times per launch and per template start (default 0: the
                  run stops); every failure is listed with the results
--budget-min M    start no new round of counted runs M minutes after the run began (making the
                  profile and the templates included): the run ends near its window with the
                  same n per scenario, and says it stopped early
--prefetch-flags=F  extra flags for the launch-prefetch scenarios' \`launch --prefetch\` (its
                  tuning knobs: --batches FIRST:MAX, --ahead-mib N, --gap-kib N), for a sweep
--profile-preset P  start every launch on a copy of a realistic profile (history, bookmarks,
                  favicons, a restored session of tens of tabs, add-ons with their storage, a warm
                  startup cache) made once for the run with this Firefox by
                  scripts/profile/make.mjs: ${PRESET_NAMES.join(", ")} (docs/design/realistic-profile.md).
                  Without it every launch starts on a fresh profile (one start behind it)
--profile-seed N  the seed of that profile (default 1): the same seed, preset and day give the
                  same profile
--profile-made DIR  take that profile from DIR, where scripts/profile/make.mjs made it today
                  (\`node scripts/profile/make.mjs --preset P --out DIR\`), instead of making it
                  again: its profile.json must name the same preset and seed, and today; the run
                  copies it and never writes there (a run in a short window then only measures)
--no-dac-override  run Firefox, the launch, the timed preloads and the login's command without
                  CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (setpriv; root only): a file root does
                  not own is then closed to them by its mode, as to an ordinary user. For the
                  Snap stand-in: its image made 0600 and another user's, the product sees what a
                  Snap user sees (evict and the hot preload keep them, to drop and fill the image)
--allow-warm      go on when evicting leaves Firefox's files cached because a process maps
                  them (a Firefox left running); without it the run waits 10 s for that
                  process, then stops and names it. What stayed cached is recorded either way
compare           the table for two exports or bench runs, with Welch's t-test per milestone;
                  FILE#scenario picks one scenario of a bench run`;

/** --doc-section's marker name, or null: a name the markers can hold and a reader can find. */
function docSection(name) {
  if (name === undefined) {
    return null;
  }
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(name)) {
    throw new UsageError(`--doc-section wants a name of lowercase letters, digits and -, not ${JSON.stringify(name)}`);
  }
  return name;
}

function nonNegativeInteger(text, flag) {
  if (!/^\d{1,3}$/.test(text)) {
    throw new UsageError(`${flag} wants a whole number ≥ 0, not ${text}`);
  }
  return Number(text);
}

function positiveInteger(value, flag) {
  if (!/^\d+$/.test(String(value)) || Number(value) < 1) {
    throw new UsageError(`${flag} wants a whole number ≥ 1, not ${value}`);
  }
  return Number(value);
}

/** "run.json#cold" → {file: "run.json", scenario: "cold"}; without "#": scenario null. */
export function parseSource(text) {
  const hash = text.lastIndexOf("#");
  if (hash > 0 && hash < text.length - 1) {
    return { file: text.slice(0, hash), scenario: text.slice(hash + 1) };
  }
  return { file: text, scenario: null };
}

/**
 * argv (after `npm run bench --`) → {command: "help"} | {command: "compare", a, b} |
 * {command: "run", runs, scenarios, slowDisk, readAheadKb, gapKib, stateHome, loginDelayMs, workloadMib, firefox, out, timeoutMs, allowWarm, prefetchFlags, profilePreset, profileSeed}. Throws UsageError.
 */
export function parseBenchArgs(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        runs: { type: "string" },
        scenarios: { type: "string" },
        "slow-disk": { type: "string" },
        "read-ahead-kb": { type: "string" },
        "gap-kib": { type: "string" },
        "state-home": { type: "string" },
        "login-delay": { type: "string" },
        "workload-mib": { type: "string" },
        firefox: { type: "string" },
        out: { type: "string" },
        "doc-section": { type: "string" },
        timeout: { type: "string" },
        "budget-min": { type: "string" },
        retries: { type: "string" },
        "allow-warm": { type: "boolean" },
        "prefetch-flags": { type: "string" },
        "profile-preset": { type: "string" },
        "profile-seed": { type: "string" },
        "profile-made": { type: "string" },
        "no-dac-override": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new UsageError(error.message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    return { command: "help" };
  }
  if (positionals[0] === "compare") {
    if (positionals.length !== 3) {
      throw new UsageError("compare wants two files: npm run bench -- compare A.json B.json");
    }
    const runOnly = ["runs", "scenarios", "slow-disk", "read-ahead-kb", "gap-kib", "state-home", "login-delay", "workload-mib", "firefox", "out", "doc-section", "timeout", "budget-min", "retries", "allow-warm", "prefetch-flags", "profile-preset", "profile-seed", "profile-made", "no-dac-override"].filter((k) => k in values);
    if (runOnly.length > 0) {
      throw new UsageError(`compare takes no --${runOnly[0]}`);
    }
    return { command: "compare", a: parseSource(positionals[1]), b: parseSource(positionals[2]) };
  }
  if (positionals.length > 0) {
    throw new UsageError(`unknown command ${positionals[0]}; the commands are (none: run) and compare`);
  }
  const scenarios = values.scenarios === undefined ? [...DEFAULT_SCENARIOS] : values.scenarios.split(",").map((s) => s.trim());
  for (const s of scenarios) {
    if (!SCENARIOS.includes(s)) {
      throw new UsageError(`unknown scenario ${JSON.stringify(s)}; choose from ${SCENARIOS.join(", ")}`);
    }
  }
  if (new Set(scenarios).size !== scenarios.length || scenarios.length === 0) {
    throw new UsageError("--scenarios names each scenario at most once, and at least one");
  }
  let slowDisk = null;
  if (values["slow-disk"] !== undefined) {
    try {
      slowDisk = { spec: values["slow-disk"], ...parseSlowDisk(values["slow-disk"]) };
    } catch (error) {
      throw new UsageError(error.message);
    }
  }
  let readAheadKb = null;
  if (values["read-ahead-kb"] !== undefined) {
    try {
      readAheadKb = parseReadAheadKb(values["read-ahead-kb"]);
    } catch (error) {
      throw new UsageError(error.message);
    }
  }
  let gapKib = null;
  if (values["gap-kib"] !== undefined) {
    if (!/^\d+$/.test(values["gap-kib"])) {
      throw new UsageError(`--gap-kib wants a whole number of KiB ≥ 0, not ${values["gap-kib"]}`);
    }
    gapKib = Number(values["gap-kib"]);
  }
  const profilePreset = values["profile-preset"] ?? null;
  if (profilePreset !== null && !PRESET_NAMES.includes(profilePreset)) {
    throw new UsageError(`unknown --profile-preset ${JSON.stringify(profilePreset)}; choose from ${PRESET_NAMES.join(", ")}`);
  }
  if (values["profile-seed"] !== undefined && profilePreset === null) {
    throw new UsageError("--profile-seed goes with --profile-preset (the seed of the realistic profile)");
  }
  if (values["profile-made"] !== undefined && profilePreset === null) {
    throw new UsageError("--profile-made goes with --profile-preset (the folder where that profile was made)");
  }
  if (values["profile-seed"] !== undefined && !/^\d{1,9}$/.test(values["profile-seed"])) {
    throw new UsageError(`--profile-seed wants a whole number (up to 9 digits), not ${values["profile-seed"]}`);
  }
  return {
    command: "run",
    profilePreset,
    profileSeed: profilePreset === null ? null : Number(values["profile-seed"] ?? 1),
    profileMade: values["profile-made"] ?? null,
    gapKib,
    stateHome: values["state-home"] ?? null,
    runs: values.runs === undefined ? DEFAULT_RUNS : positiveInteger(values.runs, "--runs"),
    scenarios,
    slowDisk,
    readAheadKb,
    loginDelayMs: (values["login-delay"] === undefined ? DEFAULT_LOGIN_DELAY_S : positiveInteger(values["login-delay"], "--login-delay")) * 1000,
    workloadMib: values["workload-mib"] === undefined ? DEFAULT_WORKLOAD_MIB : positiveInteger(values["workload-mib"], "--workload-mib"),
    firefox: values.firefox ?? null,
    out: values.out ?? null,
    docSection: docSection(values["doc-section"]),
    timeoutMs: values.timeout === undefined ? 180000 : positiveInteger(values.timeout, "--timeout") * 1000,
    budgetMs: values["budget-min"] === undefined ? null : positiveInteger(values["budget-min"], "--budget-min") * 60000,
    retries: values.retries === undefined ? 0 : nonNegativeInteger(values.retries, "--retries"),
    allowWarm: values["allow-warm"] === true,
    noDacOverride: values["no-dac-override"] === true,
    prefetchFlags: (values["prefetch-flags"] ?? "").split(/\s+/).filter(Boolean),
  };
}
