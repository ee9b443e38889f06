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
export function pauseProactiveReclaim({ fsApi = fs, admin = ADMIN } = {}) {
  const paused = [];
  for (const dir of reclaimingKdamonds({ fsApi, admin })) {
    try {
      fsApi.writeFileSync(path.join(dir, "state"), "off");
      paused.push(dir);
    } catch (error) {
      console.error(`could not pause DAMON reclaim ${dir}: ${error.message}`);
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
  };
  process.on("exit", restore);
  return { paused, restore };
}
