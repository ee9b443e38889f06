import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { byOwner, cachedBytes, evictArgv, evictProfile, ownFiles } from "../../../../scripts/bench/profile-cold.mjs";

test("each owner's files are evicted by that owner: directly for the benchmark's own, through setpriv for another's", () => {
  assert.deepEqual(
    byOwner([
      { file: "/p/a", uid: 1000, gid: 1000 },
      { file: "/p/b", uid: 0, gid: 0 },
      { file: "/p/c", uid: 1000, gid: 1000 },
    ]),
    [
      { uid: 0, gid: 0, files: ["/p/b"] },
      { uid: 1000, gid: 1000, files: ["/p/a", "/p/c"] },
    ],
  );
  assert.deepEqual(evictArgv({ uid: 1000, gid: 1000 }, 1000), ["xargs", "-0", "-I{}", "dd", "if={}", "iflag=nocache", "count=0", "status=none"]);
  assert.deepEqual(evictArgv({ uid: 1000, gid: 100 }, 0).slice(0, 5), ["setpriv", "--reuid=1000", "--regid=100", "--clear-groups", "--"]);
});

test("fincore's JSON: the bytes still cached; anything else is refused", () => {
  assert.equal(cachedBytes('{"fincore": [{"res": 4096, "file": "a"}, {"res": "8192", "file": "b"}]}'), 12288);
  assert.throws(() => cachedBytes("{}"), /fincore printed no table/);
});

test("a failing dd stops the run, naming whose files and what failed", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-profile-cold-"));
  try {
    fs.writeFileSync(path.join(dir, "prefs.js"), "x");
    const exec = () => ({ status: 1, stderr: "dd: failed to discard cache: Operation not permitted\n" });
    assert.throws(() => evictProfile([dir], { exec, self: process.getuid() }), /evicting 1 file\(s\) of uid \d+ failed \(xargs .*Operation not permitted/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// The real thing: files read into the page cache, synced, evicted; the kernel's own count
// (util-linux fincore, run here apart from the code under test) must say none stayed.
const TMPFS_MAGIC = 0x01021994;
function cachedNow(files) {
  const out = spawnSync("fincore", ["--json", "--bytes", "--output", "RES,FILE", ...files], { encoding: "utf8" });
  assert.equal(out.status, 0, out.stderr);
  return JSON.parse(out.stdout).fincore.map((row) => Number(row.res));
}
function warmFolder(owner = null) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-profile-cold-"));
  fs.mkdirSync(path.join(dir, "storage", "default"), { recursive: true });
  const files = ["prefs.js", "sessionstore.jsonlz4", "storage/default/data.sqlite"].map((f) => path.join(dir, f));
  files.forEach((f, i) => fs.writeFileSync(f, Buffer.alloc(64 * 1024 * (i + 1), i + 1)));
  if (owner !== null) spawnSync("chown", ["-R", `${owner}:${owner}`, dir]);
  spawnSync("sync");
  files.forEach((f) => fs.readFileSync(f));
  return { dir, files };
}
const onTmpfs = fs.statfsSync(os.tmpdir()).type === TMPFS_MAGIC;

test("evictProfile drops every file of the folders from the page cache", { skip: onTmpfs && `${os.tmpdir()} is tmpfs: its page cache is its storage` }, () => {
  const { dir, files } = warmFolder();
  try {
    assert.ok(cachedNow(files).every((bytes) => bytes > 0), "the files were cached before");
    const result = evictProfile([dir, path.join(dir, "missing")]);
    assert.deepEqual(cachedNow(files), [0, 0, 0]);
    assert.deepEqual([result.files, result.bytes, result.stillCachedBytes, result.owners], [3, 6 * 64 * 1024, 0, [process.getuid()]]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const rootOnly = process.getuid() !== 0 && "needs root: the files are handed to nobody (65534) to be evicted as their owner";
test("evictProfile evicts another user's files as that user (root hands them over through setpriv)", { skip: rootOnly || (onTmpfs && "tmpfs") }, () => {
  const { dir, files } = warmFolder(65534);
  try {
    assert.ok(ownFiles([dir]).every((f) => f.uid === 65534));
    assert.ok(cachedNow(files).every((bytes) => bytes > 0), "the files were cached before");
    const result = evictProfile([dir]);
    assert.deepEqual(cachedNow(files), [0, 0, 0]);
    assert.deepEqual(result.owners, [65534]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
