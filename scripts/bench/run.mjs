// The benchmark loop: for each launch of the plan (plan.mjs), put the page cache in the
// scenario's state, launch Firefox, keep the record of counted launches, print a progress line.
// Everything that touches the system comes in as a parameter, so the loop is tested with fakes.
import { benchPlan } from "./plan.mjs";
import { benchRecord } from "./results.mjs";
import { EMPTY_PROFILE_ARM } from "../../extension/lib/models/ab-saving.js";

const number = (v, digits = 0) => new Intl.NumberFormat("en-US", { maximumFractionDigits: digits }).format(v);

/** "cold         run  3/10  sessionRestored 10,234 ms  read 290.1 MB  (launch 9 of 33)". Pure. */
export function progressLine(step, runs, record, prep, index, total, prefetch = null) {
  const run = step.warmup ? "warm-up" : `run ${String(step.run).padStart(String(runs).length)}/${runs}`;
  const parts = [`${step.scenario.padEnd(12)} ${run}`];
  const sr = record?.milestones?.sessionRestored;
  parts.push(typeof sr === "number" ? `sessionRestored ${number(sr)} ms` : "no sessionRestored");
  if (typeof prep?.preloadMs === "number") {
    parts.push(`preload ${number(prep.preloadMs)} ms${typeof prep.preloadBytes === "number" ? ` (${number(prep.preloadBytes / 1e6, 1)} MB)` : ""}`);
  }
  if (typeof record?.io?.readBytes === "number") {
    parts.push(`read ${number(record.io.readBytes / 1e6, 1)} MB`);
  }
  if (typeof prefetch?.bytesRead === "number") {
    const when = prefetch.strategy === "first" ? " before the start" : "";
    parts.push(`prefetched ${number(prefetch.bytesRead / 1e6, 1)} MB${when} in ${number(prefetch.ms)} ms (${number(prefetch.bytesCached / 1e6, 1)} MB cached)`);
    if (prefetch.profile) {
      const p = prefetch.profile;
      parts.push(p.leftOut ? `profile left out (${p.leftOut})` : `profile: ${number(p.bytesPlanned / 1e6, 1)} MB planned, ${number(p.bytesRead / 1e6, 1)} MB read${p.changedFiles ? `, ${p.changedFiles} files changed since traced` : ""}`);
    }
  }
  if (prep?.stillCachedBytes > 0) {
    parts.push(`still cached after evict ${number(prep.stillCachedBytes / 1e6, 1)} MB`);
  }
  parts.push(`(launch ${index + 1} of ${total})`);
  return parts.join("  ");
}

/** Why a record cannot be counted, or null: the benchmark needs full mode and sessionRestored. */
export function recordProblem(record) {
  if (record?.mode !== "full") {
    return `the extension recorded in ${record?.mode ?? "no"} mode, not full: its experiment API is not available (does this Firefox honour extensions.experiments.enabled?)`;
  }
  if (typeof record.milestones?.sessionRestored !== "number") {
    return "the record has no sessionRestored";
  }
  return null;
}

/**
 * Runs the plan. deps: prepare(scenario) → {preloadMs, …}; launch(step) → {record, quit};
 * progress(line, {final}); now() (ms). With `deadline` (a now() value: --budget-min), no new
 * round of counted runs starts after it, so every scenario keeps the same number of runs and the
 * run ends inside its window. Returns {records (counted, with bench fields), warmups,
 * forcedQuits, rounds (complete rounds of counted runs), stoppedEarly, failedLaunches}.
 * A launch that throws (no record within the timeout, Firefox gone before its record) is
 * prepared and launched again, up to `retries` times per step; each failure is kept in
 * `failedLaunches` ([{scenario, run, error}]) and reported, never silently dropped. The start
 * that failed has no time to count: its record never came.
 */
export async function runBench({ scenarios, runs, slowDisk = null, readAheadKb = null, profilePreset = null, profileSeed = null, deadline = null, retries = 0 }, { prepare, launch, progress = () => {}, now = Date.now, warn = console.warn }) {
  const plan = benchPlan(scenarios, runs);
  const records = [];
  let warmups = 0;
  let forcedQuits = 0;
  const failedLaunches = [];
  for (const [index, step] of plan.entries()) {
    const newRound = !step.warmup && (index === 0 || plan[index - 1].run !== step.run);
    if (newRound && deadline !== null && now() > deadline) {
      return { records, warmups, forcedQuits, rounds: step.run - 1, stoppedEarly: true, failedLaunches };
    }
    let prep;
    let launched;
    for (let attempt = 0; ; attempt++) {
      prep = await prepare(step.scenario);
      try {
        // `extra`: the launch's own figures for the record (launch-prefetch: the prefetch's).
        launched = await launch(step);
        break;
      } catch (error) {
        failedLaunches.push({ scenario: step.scenario, run: step.run, error: error.message.split("\n")[0] });
        if (attempt >= retries) {
          throw error;
        }
        warn(`${step.scenario} ${step.warmup ? "warm-up" : `run ${step.run}`}: ${error.message}\n(prepared and launched again: ${attempt + 1} of ${retries} retries)`);
      }
    }
    const { record, quit, extra = {} } = launched;
    // A login scenario's preload may still be running at launch (as after a real login); its
    // end is awaited here so it never spills into the next scenario's page-cache state.
    const loginPreloadMs = prep.settle ? await prep.settle : null;
    const problem = recordProblem(record);
    if (problem) {
      throw new Error(`${step.scenario} ${step.warmup ? "warm-up" : `run ${step.run}`}: ${problem}`);
    }
    if (quit !== "clean") {
      forcedQuits += 1;
    }
    if (step.warmup) {
      warmups += 1;
    } else {
      records.push(
        benchRecord(record, {
          scenario: step.scenario,
          run: step.run,
          preloadMs: prep.preloadMs ?? null,
          quit,
          slowDisk: slowDisk?.spec ?? null,
          readAheadKb,
          // The profile the launch started on: a --profile-preset, or a fresh one (always for the
          // A/B mode's empty-profile arm: Firefox's own baseline).
          profile: step.scenario === EMPTY_PROFILE_ARM ? "fresh" : (profilePreset ?? "fresh"),
          profileSeed: profilePreset && step.scenario !== EMPTY_PROFILE_ARM ? profileSeed : undefined,
          preloadBytes: prep.preloadBytes ?? null,
          bytesPlanned: prep.bytesPlanned ?? null,
          bytesInstall: prep.bytesInstall ?? null,
          bytesPlannedProfile: prep.bytesPlannedProfile,
          profileChangedFiles: prep.profileChangedFiles,
          stillCachedBytes: prep.stillCachedBytes,
          stillCachedFiles: prep.stillCachedFiles,
          profileEvicted: prep.profileEvicted,
          ...extra,
          ...(prep.workloadMs === undefined
            ? {}
            : { workloadMs: prep.workloadMs, loginPreloadMs, loginPreloadDone: prep.loginPreloadDone, loginDelayMs: prep.loginDelayMs }),
        }),
      );
    }
    progress(progressLine(step, runs, record, prep, index, plan.length, extra.prefetch), { final: index === plan.length - 1 });
  }
  return { records, warmups, forcedQuits, rounds: runs, stoppedEarly: false, failedLaunches };
}
