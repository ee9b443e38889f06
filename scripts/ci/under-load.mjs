#!/usr/bin/env node
// The test suite under the machine states issue 37 names, repeated: (a) a DAMON kdamond paging
// out idle page cache (the machine's own if it runs one, else one started here: kdamond.mjs),
// (b) a second, unrelated headless Firefox running as another user (nobody) from the same install
// as the tests (a copy staged here and handed to the suite as FIREFOX, E2E_SYSTEM_FIREFOX=1), with
// a profile of its own, and (c) load beside it (stress-ng: CPUs and I/O, as a build beside the
// tests would). Root. Everything it starts is stopped and removed when it ends.
//   node scripts/ci/under-load.mjs [--repeat N] [--min-age S] [--no-kdamond] [--no-firefox]
//       [--no-stress] [-- ARGS FOR scripts/test.mjs]
//   e.g. node scripts/ci/under-load.mjs --repeat 3 -- --only cargo-test,cargo-test-root
// Prints one line per run (passed or the stage that failed, and its time) and exits 1 if any failed.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "../lib/project.mjs";
import { stageInstallCopy } from "../lib/install-copy.mjs";
import { NOBODY } from "../lib/users.mjs";
import { memoryCgroupOf, ownKdamondStats, pausesWithin, reclaimingKdamonds, startPageoutKdamond, stopOwnKdamond } from "../lib/damon.mjs";

const USAGE = "usage: node scripts/ci/under-load.mjs [--repeat N] [--min-age S] [--no-kdamond] [--no-firefox] [--no-stress] [-- ARGS FOR scripts/test.mjs]";
const HELP = `${USAGE}

Runs scripts/test.mjs (the arguments after --) under the machine states of issue 37, --repeat
times: a DAMON pageout kdamond (the machine's own if one runs, else one started here on the run's
memory cgroup, pages idle for --min-age seconds, default 3), a second headless Firefox as nobody
from the same install, and stress-ng beside it. Root. Prints one line per run and exits 1 if any
failed. It takes no lock: run it under flock /work/e2e.lock beside others' cold starts.
  --no-kdamond, --no-firefox, --no-stress   leave that condition out
  e.g. node scripts/ci/under-load.mjs --repeat 3 -- --only e2e --files tests/e2e/test.plan.js`;

/** The options: {repeat, minAgeS, kdamond, firefox, stress, testArgs}. Pure. */
export function parseArgs(args) {
  const options = { repeat: 1, minAgeS: 3, kdamond: true, firefox: true, stress: true, testArgs: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--help" || a === "-h") {
      return { ...options, help: true };
    } else if (a === "--") {
      options.testArgs = args.slice(i + 1);
      break;
    } else if (a === "--repeat" && args[i + 1] !== undefined) {
      options.repeat = Number(args[++i]);
      if (!Number.isInteger(options.repeat) || options.repeat < 1) throw new Error(`--repeat wants a count >= 1, not ${args[i]}`);
    } else if (a === "--min-age" && args[i + 1] !== undefined) {
      options.minAgeS = Number(args[++i]);
      if (!(options.minAgeS > 0)) throw new Error(`--min-age wants seconds > 0, not ${args[i]}`);
    } else if (["--no-kdamond", "--no-firefox", "--no-stress"].includes(a)) {
      options[a.slice(5)] = false;
    } else {
      throw new Error(`unknown argument ${a}\n${USAGE}`);
    }
  }
  return options;
}

/** The stage a failed `scripts/test.mjs` run names ("=== NAME FAILED after"), or null. Pure. */
export function failedStage(output) {
  return /^=== (\S+) FAILED after/m.exec(output)?.[1] ?? null;
}

/** Ends a detached process group, SIGKILL after 5 s. */
async function endGroup(pid) {
  const alive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    return;
  }
  for (let i = 0; i < 50 && alive(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  if (alive()) process.kill(-pid, "SIGKILL");
}

/** Runs `node scripts/test.mjs args` with `env`, its output passed through; {status, stage, ms}. */
function runSuite(args, env) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [path.join(ROOT, "scripts", "test.mjs"), ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let tail = "";
    const pass = (stream, out) => (chunk) => {
      out.write(chunk);
      tail = (tail + chunk).slice(-200_000);
    };
    child.stdout.on("data", pass(child.stdout, process.stdout));
    child.stderr.on("data", pass(child.stderr, process.stderr));
    child.on("close", (status) => resolve({ status, stage: failedStage(tail), ms: performance.now() - started }));
  });
}

async function main(options) {
  if (process.getuid?.() !== 0) throw new Error("needs root (a kdamond, a Firefox as nobody)");
  const cleanup = [];
  const cleanAll = async () => {
    while (cleanup.length) {
      try {
        await cleanup.pop()();
      } catch (error) {
        console.error(`under-load: cleanup: ${error.message}`);
      }
    }
  };
  for (const sig of ["SIGINT", "SIGTERM"]) {
    process.once(sig, () => cleanAll().then(() => process.exit(130)));
  }
  const env = { ...process.env };
  const said = [];
  try {
    if (options.kdamond) {
      const machine = reclaimingKdamonds();
      if (machine.length > 0) {
        said.push(`the machine's own kdamond(s) ${machine.join(", ")}`);
      } else {
        const cgroup = memoryCgroupOf(fs.readFileSync("/proc/self/cgroup", "utf8"));
        const k = startPageoutKdamond({ minAgeS: options.minAgeS, memcg: cgroup === "/" ? null : cgroup });
        cleanup.push(() => stopOwnKdamond());
        said.push(`a kdamond paging out page cache idle ${k.minAgeS} s (${k.memcg ? `of memory cgroup ${k.memcg}` : "everyone's"})`);
        // A benchmark on the machine pauses every reclaiming kdamond while it measures (and
        // turns it on again after). Ours only touches this run's cgroup: kept on, and counted.
        // Not against a pause of one of this run's own tests (its mark names this cgroup): a
        // test that needs the cache to hold still pauses it as it would the machine's own one.
        let resumed = 0;
        let heldOff = 0;
        const keepOn = setInterval(() => {
          try {
            if (fs.readFileSync(path.join(k.dir, "state"), "utf8").trim() === "off") {
              if (pausesWithin(k.memcg ?? "/").length > 0) {
                heldOff += 1;
                return;
              }
              fs.writeFileSync(path.join(k.dir, "state"), "on");
              resumed += 1;
            }
          } catch {
            // removed meanwhile
          }
        }, 5000);
        cleanup.push(() => {
          clearInterval(keepOn);
          if (resumed) console.log(`under-load: our kdamond was found off (paused by someone else) and turned on again ${resumed} time(s)`);
          if (heldOff) console.log(`under-load: our kdamond was left off ${heldOff} time(s) 5 s apart, paused by a test of this run`);
        });
      }
    }
    if (options.firefox) {
      const copy = stageInstallCopy();
      if (!copy.binary) throw new Error(copy.reason);
      cleanup.push(() => copy.remove());
      spawnSync("sync", ["-f", copy.dir]);
      env.FIREFOX = copy.binary;
      env.E2E_SYSTEM_FIREFOX = "1"; // the suite runs this copy as it is: the second Firefox's install
      const home = fs.mkdtempSync("/var/tmp/about-startup-second-firefox-");
      fs.mkdirSync(path.join(home, "profile"));
      spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, home]);
      fs.chmodSync(home, 0o755);
      cleanup.push(() => fs.rmSync(home, { recursive: true, force: true }));
      const ff = spawn("setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "--", copy.binary, "--headless", "--no-remote", "-profile", path.join(home, "profile"), "about:blank"], {
        env: { PATH: process.env.PATH, HOME: home, LANG: "C.UTF-8" },
        stdio: "ignore",
        detached: true,
      });
      cleanup.push(() => endGroup(ff.pid));
      said.push(`a second Firefox as nobody (pid ${ff.pid}) from ${copy.dir}, the suite's FIREFOX`);
    }
    if (options.stress) {
      const stress = spawn("stress-ng", ["--cpu", "2", "--io", "1", "--timeout", "24h", "--quiet"], { stdio: "ignore", detached: true });
      stress.on("error", (error) => console.error(`under-load: stress-ng: ${error.message} (apt-get install stress-ng)`));
      cleanup.push(() => endGroup(stress.pid));
      said.push("stress-ng --cpu 2 --io 1 beside it");
    }
    console.log(`under-load: ${said.join("; ") || "nothing added"}`);
    const results = [];
    for (let run = 1; run <= options.repeat; run++) {
      console.log(`\n=== under-load: run ${run} of ${options.repeat}: node scripts/test.mjs ${options.testArgs.join(" ")}`);
      results.push(await runSuite(options.testArgs, env));
    }
    const stats = ownKdamondStats();
    console.log(`\n=== under-load: ${said.join("; ")}`);
    if (stats) console.log(`our kdamond paged out ${(stats.pagedOutBytes / 1e6).toFixed(0)} MB meanwhile`);
    results.forEach((r, i) => console.log(`run ${i + 1}: ${r.status === 0 ? "passed" : `FAILED${r.stage ? ` in ${r.stage}` : ""} (exit ${r.status})`}, ${(r.ms / 60000).toFixed(1)} min`));
    return results.every((r) => r.status === 0);
  } finally {
    await cleanAll();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`under-load.mjs: ${error.message}`);
    process.exit(2);
  }
  if (options.help) {
    console.log(HELP);
    process.exit(0);
  }
  main(options).then(
    (ok) => process.exit(ok ? 0 : 1),
    (error) => {
      console.error(`under-load.mjs: ${error.message}`);
      process.exit(1);
    },
  );
}
