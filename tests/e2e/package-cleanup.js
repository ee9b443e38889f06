// What the package tests (test.package.js, test.restart-trace.js) leave behind once they remove
// the package: processes of the packaged host they started. Firefox's own host and the user's
// detached restart carry the throwaway HOME and go with the harness's stop(); root's side of a
// traced restart runs through pkexec with root's environment, so it is found by its executable.
// The tests run only where the package was not installed before them, so every such process is
// theirs.
import fs from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { PACKAGED_HOST } from "../../scripts/package.mjs";

/** Pids of processes running the packaged host (also once dpkg removed its file). */
export function packagedHosts() {
  const pids = [];
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
    if (exe === PACKAGED_HOST || exe === `${PACKAGED_HOST} (deleted)`) {
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
