// Putting the page cache in each scenario's state before a launch, with the product's own host:
//   cold     about-startup-host evict (Firefox's install folder only; no Firefox is running; on
//            a squashfs install also the image behind its loop device)
//   cold-profile  cold, and the user's own files evicted too (evictUser: profile-cold.mjs,
//            after the profile's fresh copy): a profile-cold start, told apart from cold
//   launch-prefetch-cold-profile / preload-plan-traced-cold-profile  launch-prefetch and
//            preload-plan-traced on a profile-cold start: the user's files evicted after the
//            install and before the preload, so the traced plan's profile part has something
//            to read (in the plain scenarios the profile, restored just before, is cached)
//   preload  evict, then about-startup-host preload, timed, inside the slow-disk group (on a
//            squashfs install: the files, decompressed, which reads the image too)
//   preload-image  a squashfs install only (the Snap stand-in): evict, then
//            about-startup-host preload --cache image, timed, inside the slow-disk group: the
//            compressed image only, so the start still decompresses but reads nothing
//   preload-plan  evict, then about-startup-host preload --plan (only what the learned starts
//            needed, in disk order), timed, inside the slow-disk group. The plan is learned by
//            the extension (`learn` after each recorded start, into XDG_STATE_HOME = stateHome,
//            which the benchmark gives Firefox and this command alike); the first warm-up of
//            another scenario (cold) provides it, and a run without one stops here.
//   preload-plan-mapped    the same with --mapped-only: what an ordinary user's plan would hold
//   preload-plan-unsorted  the same with --file-order: no disk order
//   preload-plan-traced    the same with --source trace: what stored traces read and then used
//            (gapKib: --gap-kib for the sweep); the traces come from cold-traced launches
//   replay-recorded / replay-disk  --source trace-reads --gap-kib 0: every page the newest
//            trace read, in its recorded order / in disk order (seed 002's experiment)
//   launch-prefetch  evict; the launch itself goes through `about-startup-host launch
//            --prefetch` (bench.mjs), which starts Firefox at once and reads the traced plan
//            beside it: nothing is timed before the launch
//   hot      about-startup-host preload, untimed and unthrottled: everything is in
//   launch-prefetch-hot  hot, launched through `launch --prefetch`: what the prefetch costs
//            when it finds everything cached
// Every evict is checked (cold-check.mjs): what stayed cached is recorded with the run, and a
// process that keeps Firefox's files mapped stops the run unless --allow-warm.
// Collaborators are parameters (exec = spawnSync, now = performance.now) so tests pass fakes.
import { spawnSync } from "node:child_process";
import { evictCold } from "./cold-check.mjs";
import { ALL_AB_ARMS } from "./ab.mjs";

/**
 * The planned-preload scenarios and their extra flags: the plan as learned, the plan a user who
 * cannot see page-cache residency would get (pagemap only), and the plan in file order.
 */
export const PLAN_KNOBS = {
  "preload-plan": [],
  "preload-plan-mapped": ["--mapped-only"],
  "preload-plan-unsorted": ["--file-order"],
  "preload-plan-traced": ["--source", "trace"],
  "replay-recorded": ["--source", "trace-reads", "--recorded-order", "--gap-kib", "0"],
  "replay-disk": ["--source", "trace-reads", "--gap-kib", "0"],
};

/** The scenarios whose plan comes from stored traces, not from the learned working set. */
export const TRACED_PLANS = ["preload-plan-traced", "replay-recorded", "replay-disk"];

/** The scenarios launched through `about-startup-host launch --prefetch` (cold and hot). */
export const PREFETCH_LAUNCHES = ["launch-prefetch", "launch-prefetch-cold-profile", "launch-prefetch-hot"];

/**
 * The profile-cold scenarios: the user's own files (profile, HOME, the tabs' pages) evicted too,
 * after the install. `cold` and the rest evict only the install (issue 31: "`--cold` evicts the
 * install; a profile-cold start is its own scenario").
 */
export const COLD_PROFILE = ["cold-profile", "launch-prefetch-cold-profile", "preload-plan-traced-cold-profile"];

/** The scenario `scenario` is a profile-cold variant of (itself for the others). Pure. */
function asScenario(scenario) {
  return scenario === "cold-profile" ? "cold" : scenario.replace(/-cold-profile$/, "");
}

/** Scenarios that need a stored trace of this build: the run records one first if there is none. */
export const NEEDS_TRACE = [...TRACED_PLANS, ...PREFETCH_LAUNCHES, "preload-plan-traced-cold-profile"];

/** The extra flags of a plan scenario: its knobs, and --gap-kib for the traced plan. Pure. */
export function planFlags(scenario, gapKib = null) {
  const flags = [...PLAN_KNOBS[scenario]];
  if (scenario === "preload-plan-traced" && gapKib !== null) {
    flags.push("--gap-kib", String(gapKib));
  }
  return flags;
}

function host(exec, hostBinary, args, wrap = (argv) => argv, env = undefined) {
  const argv = wrap([hostBinary, ...args]);
  const options = { encoding: "utf8", maxBuffer: 64 << 20 };
  const result = exec(argv[0], argv.slice(1), env ? { ...options, env: { ...process.env, ...env } } : options);
  if (result.status !== 0) {
    throw new Error(`${[hostBinary, ...args].join(" ")} failed (${result.status}): ${result.stderr}`);
  }
  return JSON.parse(result.stdout);
}

/** Throws unless the benchmark's state folder holds a learned start (the plan's source). */
export function requireLearnedPlan(scenario, { hostBinary, installDir, stateHome = null, exec = spawnSync }) {
  const env = stateHome ? { XDG_STATE_HOME: stateHome } : undefined;
  const status = host(exec, hostBinary, ["plan", "--firefox", installDir, "--json"], undefined, env);
  if (!status.learned) {
    throw new Error(`${scenario}: no start has been learned yet; list a scenario that launches Firefox (cold) before ${scenario}, so its warm-up teaches the plan`);
  }
}

/**
 * Prepares `scenario`. Returns {preloadMs: number | null, evicted: pages dropped | null,
 * preloadMbPerS: number | null}, and for the preloads preloadBytes (read), and for preload-plan
 * bytesPlanned, bytesInstall (the whole folder) and order ("disk" | "file"); after an evict
 * also stillCachedBytes (null: hidden) and, where something stayed, stillCachedFiles.
 * `cold` holds evictCold's options (allowWarm; fakes for tests). The profile-cold scenarios
 * ([COLD_PROFILE]) call `evictUser()` (profile-cold.mjs's evictProfile for this run's files) right
 * after the install's evict and return what it says as `profileEvicted`.
 */
export function prepareScenario(requested, { hostBinary, installDir, stateHome = null, gapKib = null, wrap = (argv) => argv, exec = spawnSync, now = () => performance.now(), cold = {}, evictUser = null }) {
  if (COLD_PROFILE.includes(requested) && !evictUser) {
    throw new Error(`${requested}: no way to evict the user's files was given (evictUser)`);
  }
  const scenario = COLD_PROFILE.includes(requested) ? asScenario(requested) : requested;
  const args = (command) => [command, "--firefox", installDir, "--json"];
  // The A/B arms (ab.mjs) are hot starts of a changed profile.
  if (scenario === "hot" || scenario === "launch-prefetch-hot" || ALL_AB_ARMS.includes(scenario)) {
    host(exec, hostBinary, args("preload"));
    return { preloadMs: null, evicted: null, preloadMbPerS: null };
  }
  // With the run's state folder: there the host finds a packed install's image (pack.json), which
  // a FUSE mount does not name, and drops it too (install.rs cache_image).
  const stateEnv = stateHome ? { XDG_STATE_HOME: stateHome } : undefined;
  const checked = evictCold(() => host(exec, hostBinary, args("evict"), undefined, stateEnv), { installDir, ...cold });
  const evicted = checked.reply;
  // What stayed cached, recorded with the run (null: hidden from this user).
  const coldState = {
    stillCachedBytes: checked.stillCachedBytes,
    ...(checked.stillCachedFiles.length > 0 ? { stillCachedFiles: checked.stillCachedFiles } : {}),
    ...(COLD_PROFILE.includes(requested) ? { profileEvicted: evictUser() } : {}),
  };
  // cold-traced(-no-faults): the same cold state; the benchmark attaches the trace to the launch (the
  // trace's own cost, docs/benchmarks.md). launch-prefetch: the prefetch runs with the launch.
  if (scenario === "cold" || scenario === "cold-traced" || scenario === "cold-traced-no-faults" || scenario === "launch-prefetch") {
    return { preloadMs: null, evicted: evicted.pages_dropped ?? null, preloadMbPerS: null, ...coldState };
  }
  if (scenario === "preload" || scenario === "preload-image") {
    const extra = scenario === "preload-image" ? ["--cache", "image"] : [];
    const start = now();
    const summary = host(exec, hostBinary, [...args("preload"), ...extra], wrap);
    // The wall time of the whole command (process start included): what a user waits for.
    const preloadMs = now() - start;
    return { preloadMs, evicted: evicted.pages_dropped ?? null, preloadMbPerS: summary.mb_per_s ?? null, preloadBytes: summary.bytes ?? null, ...coldState };
  }
  if (scenario in PLAN_KNOBS) {
    const env = stateHome ? { XDG_STATE_HOME: stateHome } : undefined;
    if (!TRACED_PLANS.includes(scenario)) {
      // (A traced plan without a trace fails in the preload itself, saying what to record.)
      requireLearnedPlan(scenario, { hostBinary, installDir, stateHome, exec });
    }
    const start = now();
    const summary = host(exec, hostBinary, ["preload", "--plan", ...planFlags(scenario, gapKib), "--firefox", installDir, "--json"], wrap, env);
    const preloadMs = now() - start;
    return {
      preloadMs,
      evicted: evicted.pages_dropped ?? null,
      preloadMbPerS: summary.mb_per_s ?? null,
      preloadBytes: summary.bytes ?? null,
      bytesPlanned: summary.bytes_planned ?? null,
      bytesInstall: summary.bytes_install ?? null,
      // The traced plan's part in the user's profile (absent from other plans and older hosts).
      ...(summary.bytes_planned_profile === undefined ? {} : { bytesPlannedProfile: summary.bytes_planned_profile, profileChangedFiles: summary.profile_changed_files ?? 0 }),
      order: summary.order ?? null,
      ...coldState,
    };
  }
  throw new Error(`unknown scenario ${requested}`);
}
