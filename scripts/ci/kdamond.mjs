#!/usr/bin/env node
// A DAMON kdamond that pages out idle page cache, as CI machines of this kind run one from boot
// (scripts/lib/damon.mjs), to prove the test suite under one on a machine that has none. Root.
//   node scripts/ci/kdamond.mjs start [--min-age SECONDS] [--all | --memcg PATH]
//   node scripts/ci/kdamond.mjs status
//   node scripts/ci/kdamond.mjs stop
// --min-age: idle this long, paged out (default 3 s: far harsher than the ~1 min of CI's).
// Whose page cache: by default this process's own memory cgroup when it is not the root one (a
// machine shared with others: theirs is left alone), else all of it; --all or --memcg say.
import fs from "node:fs";
import { memoryCgroupOf, ownKdamondStats, startPageoutKdamond, stopOwnKdamond } from "../lib/damon.mjs";

const USAGE = "usage: node scripts/ci/kdamond.mjs start [--min-age SECONDS] [--all | --memcg PATH] | status | stop";

/** The options of `start`: {minAgeS, memcg} (memcg null: all page cache). */
export function parseStart(args, { ownCgroup }) {
  let minAgeS = 3;
  let memcg = ownCgroup === "/" ? null : ownCgroup;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--min-age" && args[i + 1] !== undefined) {
      minAgeS = Number(args[++i]);
      if (!(minAgeS > 0)) throw new Error(`--min-age wants seconds > 0, not ${args[i]}`);
    } else if (args[i] === "--all") {
      memcg = null;
    } else if (args[i] === "--memcg" && args[i + 1]) {
      memcg = args[++i];
    } else {
      throw new Error(`unknown argument ${args[i]}\n${USAGE}`);
    }
  }
  return { minAgeS, memcg };
}

function main([verb, ...args]) {
  if (verb === "start") {
    const options = parseStart(args, { ownCgroup: memoryCgroupOf(fs.readFileSync("/proc/self/cgroup", "utf8")) });
    const k = startPageoutKdamond(options);
    console.log(`kdamond started (${k.dir}): pages out page cache idle ${k.minAgeS} s or more, ${k.memcg ? `of memory cgroup ${k.memcg}` : "of every process"}; stop it with: node scripts/ci/kdamond.mjs stop`);
  } else if (verb === "stop") {
    console.log(stopOwnKdamond() ? "kdamond stopped and removed" : "no kdamond of ours is running");
  } else if (verb === "status") {
    const stats = ownKdamondStats();
    console.log(stats ? `our kdamond: ${stats.state}, ${(stats.pagedOutBytes / 1e6).toFixed(1)} MB paged out so far` : "no kdamond of ours is running");
  } else {
    throw new Error(USAGE);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    console.error(`kdamond.mjs: ${error.message}`);
    process.exit(1);
  }
}
