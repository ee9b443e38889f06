// The cold-profile scenario (issue 31, item 3: "`--cold` evicts the install; a profile-cold start
// is its own scenario"): besides Firefox's install (the host's evict, as for cold), the user's own
// files this start reads leave the page cache too: the profile, the launch's HOME (Firefox's HTTP
// cache and the native-messaging manifest) and the local pages the restored tabs show. They belong
// to the user, so they are evicted as the user who owns them, with no root and no host: GNU dd's
// `iflag=nocache count=0` drops a whole file's clean pages (posix_fadvise DONTNEED), for its owner
// through `setpriv` when that is someone else. The copy that made them was synced first
// (freshProfile): dirty pages cannot be dropped. What stayed is counted by util-linux's fincore.
// Collaborators are parameters (exec = spawnSync, fsApi = fs) so the policy is tested with fakes.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { asUser } from "../lib/users.mjs";

/** Every regular file under `dirs` (symlinks not followed), with its owner and size. */
export function ownFiles(dirs, { fsApi = fs } = {}) {
  const files = [];
  const walk = (dir) => {
    for (const entry of fsApi.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(file);
      } else if (entry.isFile()) {
        const st = fsApi.statSync(file);
        files.push({ file, uid: st.uid, gid: st.gid, size: st.size });
      }
    }
  };
  for (const dir of dirs) {
    if (fsApi.existsSync(dir)) walk(dir);
  }
  return files;
}

/** The files grouped by owner: [{uid, gid, files: [path]}], in uid order. Pure. */
export function byOwner(files) {
  const groups = new Map();
  for (const f of files) {
    if (!groups.has(f.uid)) groups.set(f.uid, { uid: f.uid, gid: f.gid, files: [] });
    groups.get(f.uid).files.push(f.file);
  }
  return [...groups.values()].sort((a, b) => a.uid - b.uid);
}

/**
 * The command that evicts one owner's files, reading their NUL-separated paths on stdin: xargs
 * runs dd once per file; as `self` (the benchmark's user) directly, as another owner through
 * setpriv (which needs root, as the benchmark has when the files are someone else's). Pure.
 */
export function evictArgv({ uid, gid }, self) {
  const dd = ["xargs", "-0", "-I{}", "dd", "if={}", "iflag=nocache", "count=0", "status=none"];
  return asUser(uid, dd, { gid, self });
}

/** fincore --json --bytes output → bytes still cached (sum of res). Throws on what is not its JSON. Pure. */
export function cachedBytes(fincoreJson) {
  const rows = JSON.parse(fincoreJson).fincore;
  if (!Array.isArray(rows)) throw new Error("fincore printed no table");
  return rows.reduce((sum, row) => sum + Number(row.res), 0);
}

/**
 * Evicts every file under `dirs` as its owner and counts what stayed cached. Returns {files,
 * bytes (their size), owners: [uid], stillCachedBytes}. Throws, saying what failed, when dd or
 * fincore does.
 */
export function evictProfile(dirs, { exec = spawnSync, fsApi = fs, self = process.getuid() } = {}) {
  const files = ownFiles(dirs, { fsApi });
  const owners = byOwner(files);
  for (const owner of owners) {
    const argv = evictArgv(owner, self);
    const result = exec(argv[0], argv.slice(1), { input: owner.files.join("\0"), encoding: "utf8" });
    if (result.status !== 0) {
      throw new Error(`cold-profile: evicting ${owner.files.length} file(s) of uid ${owner.uid} failed (${argv.slice(0, 5).join(" ")} …: ${result.error?.message ?? result.stderr.trim()})`);
    }
  }
  let stillCachedBytes = 0;
  // A file gone since the walk has nothing cached (a Firefox that just quit may still be clearing
  // its cache2/doomed folder), and fincore would fail on it.
  const left = files.filter((f) => fsApi.existsSync(f.file));
  // fincore takes paths as arguments: in slices, so no command line grows too long.
  for (let i = 0; i < left.length; i += 500) {
    const slice = left.slice(i, i + 500).map((f) => f.file);
    const result = exec("fincore", ["--json", "--bytes", "--output", "RES,FILE", ...slice], { encoding: "utf8", maxBuffer: 16 << 20 });
    if (result.status !== 0) {
      throw new Error(`cold-profile: fincore (util-linux) failed: ${result.error?.message ?? result.stderr.trim()}`);
    }
    stillCachedBytes += cachedBytes(result.stdout);
  }
  return {
    files: files.length,
    bytes: files.reduce((sum, f) => sum + f.size, 0),
    owners: owners.map((o) => o.uid),
    stillCachedBytes,
  };
}
