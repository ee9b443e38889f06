// Finding and ending the processes of one throwaway Firefox: everything it starts (content
// processes, the native host) inherits its HOME, a folder made for that Firefox alone.
// Shared by the end-to-end harness and the startup benchmark.
import fs from "node:fs";

/** PIDs of live processes whose environment has HOME=<home> (this process left out). */
export function processesWithHome(home, { procDir = "/proc", self = process.pid, fsApi = fs } = {}) {
  const marker = Buffer.from(`\0HOME=${home}\0`);
  const pids = [];
  for (const entry of fsApi.readdirSync(procDir)) {
    if (!/^\d+$/.test(entry) || Number(entry) === self) {
      continue;
    }
    try {
      const environ = Buffer.concat([Buffer.from([0]), fsApi.readFileSync(`${procDir}/${entry}/environ`)]);
      if (environ.includes(marker)) {
        pids.push(Number(entry));
      }
    } catch {
      // gone already, or not ours to read
    }
  }
  return pids;
}

/** process.kill that reports whether the signal was delivered instead of throwing. */
export function signal(pid, name) {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}
