// What the package tests (test.package.js, test.restart-trace.js) leave behind once they remove
// the package: processes of the packaged host they started. Firefox's own host and the user's
// detached restart carry the throwaway HOME and go with the harness's stop(); root's side of a
// traced restart runs through pkexec with root's environment, so it is found by its executable
// and by the cgroup the test runner gave this file (scripts/lib/leftovers.mjs), which pkexec and
// everything else keep: another checkout's packaged host (another suite on the machine) is left
// alone. Run without the runner's cgroup (node --test by hand), every packaged host counts: the
// tests run only where the package was not installed before them.
import fs from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { PACKAGED_HOST } from "../../scripts/package.mjs";
import { cgroupV2Of } from "../../scripts/lib/leftovers.mjs";

const read = (file) => {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
};

/** This file's cgroup (v2) where the runner made it one, else null. */
function fileCgroup() {
  const own = cgroupV2Of(read("/proc/self/cgroup"));
  return own && /\/about-startup-e2e-[^/]+$/.test(own) ? own : null;
}

/** Pids of this file's processes running the packaged host (also once dpkg removed its file). */
export function packagedHosts() {
  const pids = [];
  const ours = fileCgroup();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) {
      continue;
    }
    let exe;
    try {
      exe = fs.readlinkSync(`/proc/${name}/exe`);
    } catch {
      continue; // gone, or a kernel thread
    }
    if (exe !== PACKAGED_HOST && exe !== `${PACKAGED_HOST} (deleted)`) {
      continue;
    }
    const group = cgroupV2Of(read(`/proc/${name}/cgroup`));
    if (ours === null || (group && (group === ours || group.startsWith(`${ours}/`)))) {
      pids.push(Number(name));
    }
  }
  return pids;
}

/** Ends the packaged host's processes (TERM, then KILL); returns what was running, with each
 * one's command line, for the test to report. */
export async function stopPackagedHosts() {
  const found = packagedHosts().map((pid) => {
    let cmdline = "?";
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    } catch {
      // gone meanwhile
    }
    return { pid, cmdline };
  });
  for (let attempt = 0; attempt < 20 && packagedHosts().length > 0; attempt++) {
    for (const pid of packagedHosts()) {
      try {
        process.kill(pid, attempt < 10 ? "SIGTERM" : "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    await sleep(200);
  }
  return found;
}
