// Helpers the e2e files share for the processes they start themselves: the host's CLI with its
// stderr kept as an artifact, and ending a process that a test left running.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { HOST_BINARY } from "../../scripts/lib/project.mjs";
import { processesWithHome } from "../../scripts/lib/processes.mjs";
import { artifactsFolder, waitFor } from "./harness.js";

/**
 * Runs the built host's CLI with `args` and `env`; resolves with {out, err} when it exits 0,
 * rejects with its stderr otherwise. Its stderr is kept as the artifact `<name>.stderr.txt`.
 */
export function runHostCli(args, env, name) {
  return new Promise((resolve, reject) => {
    const child = spawn(HOST_BINARY, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => {
      fs.writeFileSync(path.join(artifactsFolder(), `${name}.stderr.txt`), err);
      if (code === 0) {
        resolve({ out, err });
      } else {
        reject(new Error(`${HOST_BINARY} ${args.join(" ")} exited with ${code}: ${err}`));
      }
    });
  });
}

/** Whether `pid` is gone or a zombie (exited, not yet reaped by its parent). */
function exited(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? true;
  } catch {
    return true;
  }
}

/**
 * Ends a process a test left running (a Firefox the host started): SIGTERM, up to `timeout` ms
 * for it to exit, then SIGKILL. For clean-up only: it never fails.
 */
export async function endProcess(pid, { timeout = 20000, what = `process ${pid}` } = {}) {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  await waitFor(() => exited(pid), { timeout, message: `${what} to exit` }).catch(() => {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  });
}

/**
 * Ends every process whose HOME is `home` (a folder the test made for the Firefox it started:
 * that Firefox, its children, a host it started), for a test whose command failed before
 * saying which Firefox it left running. For clean-up only: it never fails.
 */
export async function endProcessesWithHome(home, what = `the processes with HOME=${home}`) {
  await Promise.all(processesWithHome(home).map((pid) => endProcess(pid, { what: `${what}: ${pid}` })));
}
