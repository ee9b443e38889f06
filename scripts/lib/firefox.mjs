// Finding a Firefox to run: $FIREFOX first, then the usual names on PATH.
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./project.mjs";

export const FIREFOX_NAMES = ["firefox", "firefox-esr", "firefox-developer-edition", "firefox-nightly"];

export class FirefoxNotFoundError extends Error {
  constructor(message) {
    super(message);
    this.name = "FirefoxNotFoundError";
  }
}

/** Whether `file` is a regular file this user may execute. */
export function isExecutableFile(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Returns the absolute path of the Firefox to use. Collaborators are parameters so tests can
 * pass fakes: `env` (FIREFOX, PATH) and `isExecutable(path)`.
 * Throws FirefoxNotFoundError with what to install when there is none.
 */
export function findFirefox({ env = process.env, isExecutable = isExecutableFile } = {}) {
  if (env.FIREFOX) {
    if (isExecutable(env.FIREFOX)) {
      return path.resolve(env.FIREFOX);
    }
    throw new FirefoxNotFoundError(
      `FIREFOX=${env.FIREFOX} is not an executable file; point it at a Firefox binary or unset it.`,
    );
  }
  const dirs = (env.PATH ?? "").split(path.delimiter).filter(Boolean);
  for (const name of FIREFOX_NAMES) {
    for (const dir of dirs) {
      const candidate = path.join(dir, name);
      if (isExecutable(candidate)) {
        return path.resolve(candidate);
      }
    }
  }
  throw new FirefoxNotFoundError(
    `No Firefox found: looked for ${FIREFOX_NAMES.join(", ")} on PATH.\n` +
      "Install one that honours extension experiments, e.g. on Debian/Ubuntu: sudo apt-get install firefox-esr\n" +
      "(or Firefox Developer Edition / Nightly / an unbranded build), or set FIREFOX=/path/to/firefox.\n" +
      "Snap and Flatpak builds cannot reach native hosts and are not supported.",
  );
}

/**
 * geckodriver: $GECKODRIVER, else PATH, else ~/.cargo/bin/geckodriver, else the project's cache
 * (.cache/geckodriver/bin, where `npm test` builds it). Null when none.
 */
export function findGeckodriver({
  env = process.env,
  isExecutable = isExecutableFile,
  cache = path.join(ROOT, ".cache", "geckodriver"),
} = {}) {
  if (env.GECKODRIVER) {
    return isExecutable(env.GECKODRIVER) ? path.resolve(env.GECKODRIVER) : null;
  }
  const dirs = (env.PATH ?? "").split(path.delimiter).filter(Boolean);
  if (env.HOME) {
    dirs.push(path.join(env.HOME, ".cargo", "bin"));
  }
  dirs.push(path.join(cache, "bin"));
  for (const dir of dirs) {
    const candidate = path.join(dir, "geckodriver");
    if (isExecutable(candidate)) {
      return path.resolve(candidate);
    }
  }
  return null;
}
