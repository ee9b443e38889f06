// The e2e tests evict and preload the Firefox they run, and the host serves the install folder
// of its parent Firefox. Run against the system's own Firefox, a test run would evict
// /usr/lib/firefox-esr for every other program on the machine (and leave a cold Firefox behind).
// So `npm test` stages a copy of the install folder under /var/tmp (on disk: tmpfs pages cannot
// be evicted) and runs the e2e suites on it; the copy is removed when the run ends.
import fs from "node:fs";
import path from "node:path";
import { FIREFOX_NAMES, findFirefox } from "./firefox.mjs";

/** The install folder of a Firefox binary (symlinks resolved), or null for a wrapper script. */
export function installFolderOf(binary, { fsApi = fs } = {}) {
  const real = fsApi.realpathSync(binary);
  const dir = path.dirname(real);
  return fsApi.existsSync(path.join(dir, "application.ini")) ? { dir, name: path.basename(real) } : null;
}

/**
 * Copies the install folder of the Firefox the tests would run into a new folder under
 * `parent`; returns {binary, dir, remove()} or, where the Firefox is a wrapper script and its
 * folder cannot be found, {binary: null, reason}.
 */
export function stageInstallCopy({ parent = "/var/tmp", find = findFirefox, env = process.env, fsApi = fs } = {}) {
  const original = find();
  // Debian's /usr/bin/firefox is a shell script that runs firefox-esr: then the first of the
  // usual names on PATH that is a binary in an install folder.
  const candidates = [
    original,
    ...FIREFOX_NAMES.flatMap((name) => (env.PATH ?? "").split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, name))),
  ];
  let found = null;
  let used = original;
  for (const candidate of candidates) {
    found = fsApi.existsSync(candidate) ? installFolderOf(candidate, { fsApi }) : null;
    if (found) {
      used = candidate;
      break;
    }
  }
  if (!found) {
    return { binary: null, reason: `${original} is not a binary inside an install folder (a wrapper script?), nor is any firefox on PATH` };
  }
  const root = fsApi.mkdtempSync(path.join(parent, "about-startup-e2e-firefox-"));
  // Reachable by every user, as /usr/lib is: the unprivileged e2e runs the host as nobody on it.
  fsApi.chmodSync(root, 0o755);
  const dir = path.join(root, path.basename(found.dir));
  // Symlinks are kept as links; a relative one that leaves the folder (Debian's
  // `distribution -> ../../share/firefox-esr/distribution`) is pointed at the same absolute place.
  fsApi.cpSync(found.dir, dir, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
  for (const name of fsApi.readdirSync(dir)) {
    const link = path.join(dir, name);
    if (!fsApi.lstatSync(link).isSymbolicLink()) continue;
    const target = fsApi.readlinkSync(link);
    const absolute = path.resolve(found.dir, target);
    if (!path.isAbsolute(target) && !absolute.startsWith(`${found.dir}${path.sep}`)) {
      fsApi.unlinkSync(link);
      fsApi.symlinkSync(absolute, link);
    }
  }
  let removed = false;
  const remove = () => {
    if (!removed) {
      removed = true;
      fsApi.rmSync(root, { recursive: true, force: true });
    }
  };
  return { binary: path.join(dir, found.name), dir, original: used, remove };
}
