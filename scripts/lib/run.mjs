// Running child processes from the scripts, with their output passed through.
import { spawn } from "node:child_process";

export class CommandError extends Error {
  constructor(message, status) {
    super(message);
    this.name = "CommandError";
    this.status = status;
  }
}

/** Runs `command args` with inherited stdio; resolves on exit 0, rejects with CommandError otherwise. */
export function run(command, args = [], { cwd, env = process.env, stdio = "inherit" } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio });
    child.on("error", (error) => {
      reject(
        new CommandError(
          error.code === "ENOENT" ? `${command} not found on PATH` : `${command}: ${error.message}`,
          127,
        ),
      );
    });
    child.on("exit", (code, signal) => {
      if (code === 0) {
        resolve();
      } else {
        const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
        reject(new CommandError(`${[command, ...args].join(" ")} ${how}`, code ?? 1));
      }
    });
  });
}
