// DAMON proactive reclaim, paused for the length of a benchmark.
//
// Some machines (this project's VMs among them) run a kdamond with a `pageout` scheme: memory not
// accessed for about a minute is reclaimed, page cache included, up to a quota per second. Pages
// a benchmark has just read then drain away while it measures, and "everything is cached" stops
// being a state that lasts. `pauseProactiveReclaim()` turns running kdamonds with a pageout scheme
// off and returns a function that turns them back on (also run on exit).
import fs from "node:fs";
import path from "node:path";

const ADMIN = "/sys/kernel/mm/damon/admin/kdamonds";

function read(file, fsApi) {
  try {
    return fsApi.readFileSync(file, "utf8").trim();
  } catch {
    return null;
  }
}

/** The running kdamonds (sysfs folders) that page out memory. */
export function reclaimingKdamonds({ fsApi = fs, admin = ADMIN } = {}) {
  const found = [];
  let entries;
  try {
    entries = fsApi.readdirSync(admin).filter((e) => /^\d+$/.test(e));
  } catch {
    return found;
  }
  for (const id of entries) {
    const dir = path.join(admin, id);
    if (read(path.join(dir, "state"), fsApi) !== "on") continue;
    const contexts = path.join(dir, "contexts");
    const nrContexts = Number(read(path.join(contexts, "nr_contexts"), fsApi) ?? 0);
    let pageout = false;
    for (let c = 0; c < nrContexts && !pageout; c++) {
      const schemes = path.join(contexts, String(c), "schemes");
      const nrSchemes = Number(read(path.join(schemes, "nr_schemes"), fsApi) ?? 0);
      for (let s = 0; s < nrSchemes; s++) {
        if (read(path.join(schemes, String(s), "action"), fsApi) === "pageout") pageout = true;
      }
    }
    if (pageout) found.push(dir);
  }
  return found;
}

/** Pause them; returns {paused: [dirs], restore()}. Without root or DAMON it pauses nothing. */
/**
 * Where each pause says, while it lasts, who holds kdamonds off: `<pid>.json` with its pid, its
 * memory cgroup and the kdamonds. under-load.mjs keeps its own kdamond on against other people's
 * pauses (a benchmark of another user, whose cache ours never touches) but not against a pause
 * of a test it runs (test.consistency.js, test.residency.js: the cache must hold still there).
 */
export const PAUSE_MARKS = "/run/about-startup-damon-pauses";

/**
 * Turns the running reclaiming kdamonds off; `{paused, restore()}` (restore also runs on exit).
 * With the real file system, marks the pause in PAUSE_MARKS until restored (`marks`: another
 * folder, or null for none; a fake fsApi marks nothing unless given one).
 */
export function pauseProactiveReclaim({ fsApi = fs, admin = ADMIN, marks = fsApi === fs ? PAUSE_MARKS : null, pid = process.pid, cgroupText = null } = {}) {
  const paused = [];
  for (const dir of reclaimingKdamonds({ fsApi, admin })) {
    try {
      fsApi.writeFileSync(path.join(dir, "state"), "off");
      paused.push(dir);
    } catch (error) {
      console.error(`could not pause DAMON reclaim ${dir}: ${error.message}`);
    }
  }
  const mark = marks && paused.length > 0 ? path.join(marks, `${pid}.json`) : null;
  if (mark) {
    try {
      fsApi.mkdirSync?.(marks, { recursive: true });
      const memcg = memoryCgroupOf(cgroupText ?? fsApi.readFileSync("/proc/self/cgroup", "utf8"));
      fsApi.writeFileSync(mark, JSON.stringify({ pid, memcg, kdamonds: paused }));
    } catch (error) {
      console.error(`could not mark the DAMON pause in ${marks}: ${error.message}`);
    }
  }
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    for (const dir of paused) {
      try {
        fsApi.writeFileSync(path.join(dir, "state"), "on");
      } catch (error) {
        console.error(`could not turn DAMON reclaim ${dir} back on: ${error.message} (echo on > ${dir}/state)`);
      }
    }
    if (mark) {
      try {
        fsApi.rmSync(mark, { force: true });
      } catch {
        // gone already
      }
    }
  };
  process.on("exit", restore);
  return { paused, restore };
}

/**
 * The pauses (PAUSE_MARKS) of live processes in memory cgroup `memcg` or below it:
 * [{pid, memcg, kdamonds}]. `alive(pid)` says whether a pid still runs.
 */
export function pausesWithin(memcg, { fsApi = fs, marks = PAUSE_MARKS, alive = (pid) => fsApi.existsSync(`/proc/${pid}`) } = {}) {
  let names;
  try {
    names = fsApi.readdirSync(marks).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  const inside = (cg) => memcg === "/" || cg === memcg || cg.startsWith(`${memcg}/`);
  return names
    .map((n) => {
      try {
        return JSON.parse(fsApi.readFileSync(path.join(marks, n), "utf8"));
      } catch {
        return null;
      }
    })
    .filter((m) => m && typeof m.memcg === "string" && inside(m.memcg) && alive(m.pid));
}

// ---- A kdamond of our own, to prove the test suite under one (issue 37) ----
//
// CI machines of this project's kind boot with a kdamond that pages out page cache left idle for
// about a minute. A machine without one (a laptop, this project's shared dev VM) never shows what
// such a kdamond does to a test that assumes the cache holds still. `startPageoutKdamond()` makes
// one through DAMON's sysfs interface: the physical address space (`paddr`), one scheme that
// pages out regions nobody accessed for `minAgeS` seconds, anonymous memory left alone (page cache
// only). With `memcg` it pages out only page cache charged to that memory cgroup (the caller's
// own, on a machine shared with others), without it everything's. It refuses where the machine
// has kdamonds of its own (writing nr_kdamonds would throw their setup away): the suite then
// already runs under the machine's.

/** Where the running kdamond of ours is noted, so that `stop` finds it from another process. */
export const OWN_KDAMOND_MARK = "/run/about-startup-kdamond.json";

/** The `System RAM` ranges of /proc/iomem as [start, end) BigInts (root sees real addresses). */
export function systemRamRanges(iomem) {
  const ranges = [];
  for (const line of iomem.split("\n")) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) : System RAM$/.exec(line);
    if (m) {
      // An ordinary user reads every address as 0: nothing to monitor.
      const [start, last] = [BigInt(`0x${m[1]}`), BigInt(`0x${m[2]}`)];
      if (last > start) ranges.push([start, last + 1n]);
    }
  }
  return ranges;
}

/** The memory cgroup of process `pid` (v1 `memory:` line, else the v2 `0::` one), "/" for none. */
export function memoryCgroupOf(cgroupText) {
  const lines = cgroupText.split("\n");
  const v1 = lines.map((l) => /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:(.*)$/.exec(l)).find(Boolean);
  const v2 = lines.map((l) => /^0::(.*)$/.exec(l)).find(Boolean);
  return (v1 ?? v2)?.[1] || "/";
}

/** The sysfs writes that set kdamond `dir` up (before `state` on), in order. Pure. */
export function pageoutKdamondWrites(dir, { ranges, minAgeS = 3, memcg = null, sampleUs = 5000, aggrUs = 100000 }) {
  if (ranges.length === 0) {
    throw new Error("no System RAM ranges (read /proc/iomem as root)");
  }
  const ctx = path.join(dir, "contexts", "0");
  const scheme = path.join(ctx, "schemes", "0");
  const writes = [
    [path.join(dir, "contexts", "nr_contexts"), "1"],
    [path.join(ctx, "operations"), "paddr"],
    [path.join(ctx, "monitoring_attrs", "intervals", "sample_us"), String(sampleUs)],
    [path.join(ctx, "monitoring_attrs", "intervals", "aggr_us"), String(aggrUs)],
    [path.join(ctx, "monitoring_attrs", "intervals", "update_us"), "1000000"],
    // Small regions: a region's pages go out together, so many small ones track idle cache closely.
    [path.join(ctx, "monitoring_attrs", "nr_regions", "min"), "2000"],
    [path.join(ctx, "monitoring_attrs", "nr_regions", "max"), "10000"],
    [path.join(ctx, "targets", "nr_targets"), "1"],
    [path.join(ctx, "targets", "0", "regions", "nr_regions"), String(ranges.length)],
  ];
  ranges.forEach(([start, end], i) => {
    const region = path.join(ctx, "targets", "0", "regions", String(i));
    writes.push([path.join(region, "start"), String(start)], [path.join(region, "end"), String(end)]);
  });
  const pattern = path.join(scheme, "access_pattern");
  writes.push(
    [path.join(ctx, "schemes", "nr_schemes"), "1"],
    [path.join(scheme, "action"), "pageout"],
    [path.join(pattern, "sz", "min"), "4096"],
    [path.join(pattern, "sz", "max"), "18446744073709551615"],
    [path.join(pattern, "nr_accesses", "min"), "0"],
    [path.join(pattern, "nr_accesses", "max"), "0"],
    // Age is counted in aggregation intervals.
    [path.join(pattern, "age", "min"), String(Math.max(1, Math.round((minAgeS * 1e6) / aggrUs)))],
    [path.join(pattern, "age", "max"), "4294967295"],
  );
  // Filters (which also replace DAMON's default "skip young pages" one: the more aggressive):
  // anonymous memory rejected; with a memcg, only its pages allowed (what matches no filter
  // gets the opposite of the last one's verdict).
  const filters = path.join(scheme, "ops_filters");
  const filter = (i, type, allow, extra = []) => [
    [path.join(filters, String(i), "type"), type],
    ...extra.map(([name, value]) => [path.join(filters, String(i), name), value]),
    [path.join(filters, String(i), "matching"), "Y"],
    [path.join(filters, String(i), "allow"), allow],
  ];
  writes.push([path.join(filters, "nr_filters"), memcg ? "2" : "1"], ...filter(0, "anon", "N"));
  if (memcg) {
    writes.push(...filter(1, "memcg", "Y", [["memcg_path", memcg]]));
  }
  return writes;
}

/**
 * Starts a pageout kdamond (above); returns {dir, minAgeS, memcg, stop()}. Throws where DAMON's
 * sysfs interface is missing, the machine has kdamonds configured, or a write is refused (not
 * root). `stop()` (also `stopOwnKdamond()` from another process) turns it off and removes it.
 */
export function startPageoutKdamond({ minAgeS = 3, memcg = null, fsApi = fs, admin = ADMIN, iomem = "/proc/iomem", mark = OWN_KDAMOND_MARK } = {}) {
  const nr = read(path.join(admin, "nr_kdamonds"), fsApi);
  if (nr === null) {
    throw new Error(`no DAMON sysfs interface at ${admin} (a kernel without CONFIG_DAMON_SYSFS?)`);
  }
  if (Number(nr) !== 0) {
    throw new Error(`${admin} has ${nr} kdamond(s) of the machine's own: left as they are (the suite already runs under them; ${reclaimingKdamonds({ fsApi, admin }).length} reclaiming)`);
  }
  const ranges = systemRamRanges(fsApi.readFileSync(iomem, "utf8"));
  const dir = path.join(admin, "0");
  fsApi.writeFileSync(path.join(admin, "nr_kdamonds"), "1");
  try {
    for (const [file, value] of pageoutKdamondWrites(dir, { ranges, minAgeS, memcg })) {
      fsApi.writeFileSync(file, value);
    }
    fsApi.writeFileSync(path.join(dir, "state"), "on");
    fsApi.writeFileSync(mark, JSON.stringify({ dir, admin, minAgeS, memcg, pid: process.pid, started: new Date().toISOString() }));
  } catch (error) {
    removeKdamonds(admin, fsApi);
    throw error;
  }
  return { dir, minAgeS, memcg, stop: () => stopOwnKdamond({ fsApi, mark }) };
}

function removeKdamonds(admin, fsApi) {
  try {
    fsApi.writeFileSync(path.join(admin, "0", "state"), "off");
  } catch {
    // not on
  }
  fsApi.writeFileSync(path.join(admin, "nr_kdamonds"), "0");
}

/** Turns off and removes the kdamond `startPageoutKdamond` started (its mark says which); false where there is none. */
export function stopOwnKdamond({ fsApi = fs, mark = OWN_KDAMOND_MARK } = {}) {
  const noted = read(mark, fsApi);
  if (noted === null) return false;
  const { admin } = JSON.parse(noted);
  removeKdamonds(admin, fsApi);
  fsApi.rmSync?.(mark, { force: true });
  return true;
}

/** What our kdamond (if any) did so far: bytes paged out, per its scheme's stats. */
export function ownKdamondStats({ fsApi = fs, mark = OWN_KDAMOND_MARK } = {}) {
  const noted = read(mark, fsApi);
  if (noted === null) return null;
  const { dir } = JSON.parse(noted);
  try {
    fsApi.writeFileSync(path.join(dir, "state"), "update_schemes_stats");
  } catch {
    // Off (a benchmark pauses every reclaiming kdamond while it measures): the last counts stand.
  }
  const stats = path.join(dir, "contexts", "0", "schemes", "0", "stats");
  return {
    state: read(path.join(dir, "state"), fsApi),
    pagedOutBytes: Number(read(path.join(stats, "sz_applied"), fsApi) ?? 0),
    triedBytes: Number(read(path.join(stats, "sz_tried"), fsApi) ?? 0),
  };
}
