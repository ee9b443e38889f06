// What `npm start` says about the host it built: where the binary is, and how to run it by name
// in a terminal (issue 19: the page's `sudo about-startup-host …` was "command not found" after
// `npm start`, which leaves it in native-host/target/release/). The page and the CLI name the host
// by its absolute path until it is on PATH (native-host/src/invocation.rs), so both work either way.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const HOST_CLI_NAME = "about-startup-host";

function realpathOrNull(file) {
  try {
    return fs.realpathSync(file);
  } catch {
    return null;
  }
}

/**
 * The lines to print about `binary`: [where it is, how to run it by name]. `env` (PATH, HOME)
 * and `realpath` are parameters so tests can fake a machine.
 */
export function hostPathLines(binary, { env = process.env, realpath = realpathOrNull } = {}) {
  const home = env.HOME ?? os.homedir();
  const dirs = (env.PATH ?? "").split(path.delimiter).filter((dir) => path.isAbsolute(dir));
  const real = realpath(binary) ?? binary;
  const first = dirs.map((dir) => path.join(dir, HOST_CLI_NAME)).find((candidate) => realpath(candidate) !== null);
  const lines = [`the host: ${real} (Firefox starts it for the add-on; it is also a command-line tool: --help)`];
  if (first && realpath(first) === real) {
    lines.push(`on your PATH as ${HOST_CLI_NAME} (${first})`);
    return lines;
  }
  const localBin = path.join(home, ".local", "bin");
  const link = `mkdir -p ~/.local/bin && ln -sf ${real} ~/.local/bin/${HOST_CLI_NAME}`;
  if (first) {
    lines.push(`${HOST_CLI_NAME} on your PATH is another binary (${first}); to run this one by name: ${link}`);
  } else if (dirs.includes(localBin)) {
    lines.push(`to run it by name in a terminal: ${link}   (~/.local/bin is on your PATH)`);
  } else {
    lines.push(`to run it by name in a terminal: ${link}, and add ~/.local/bin to PATH (export PATH="$HOME/.local/bin:$PATH" in ~/.profile)`);
  }
  lines.push("until then the page and --help print its full path, which works as printed (with sudo too)");
  return lines;
}
