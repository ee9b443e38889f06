import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { mappers, stillCached } from "../../../../scripts/bench/cold-check.mjs";

test("stillCached: bytes from resident_after, largest files first; hidden files make it unknown", () => {
  const reply = {
    files: [
      { path: "/ff/a", status: "exact", resident_after: 1 },
      { path: "/ff/b", status: "exact", resident_after: 3 },
      { path: "/ff/c", status: "exact", resident_after: 0 },
      { path: "/ff/d", status: "error" },
    ],
  };
  assert.deepEqual(stillCached(reply), { bytes: 4 * 4096, hiddenFiles: 0, files: [{ path: "/ff/b", bytes: 3 * 4096 }, { path: "/ff/a", bytes: 4096 }] });
  assert.equal(stillCached({ files: [{ path: "/ff/a", status: "hidden", resident_after: null }] }).bytes, null);
  assert.equal(stillCached({}).bytes, 0);
});

test("mappers: a real process running a program from the install folder is found and named", async (t) => {
  // A copy of `sleep` inside a stand-in install folder: the running process maps its binary.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cold-check-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const binary = path.join(dir, "firefox-esr");
  fs.copyFileSync(fs.realpathSync("/bin/sleep"), binary);
  fs.chmodSync(binary, 0o755);
  const child = spawn(binary, ["30"], { stdio: "ignore" });
  t.after(() => child.kill("SIGKILL"));
  await sleep(200);
  const found = mappers(fs.realpathSync(dir));
  const mine = found.find((p) => p.pid === child.pid);
  assert.ok(mine, `pid ${child.pid} not among ${JSON.stringify(found)}`);
  assert.equal(mine.comm, "firefox-esr");
  assert.deepEqual(mine.files, [fs.realpathSync(binary)]);
  assert.match(mine.cmdline, /firefox-esr 30$/);
  // A folder nothing maps: nobody.
  assert.deepEqual(mappers(fs.realpathSync(os.tmpdir()) + "/no-such-install-folder"), []);
});
