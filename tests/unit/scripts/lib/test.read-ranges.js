import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { READER, rangeBytes, readRanges, usedRanges } from "../../../../scripts/lib/read-ranges.mjs";

test("the used pages of the install's files, as byte ranges relative to it", () => {
  // The shape of a stored trace's files (trace/model.rs): pages [first, count].
  const trace = {
    files: [
      { path: "/mnt/ff/libxul.so", used: [[0, 2], [10, 1]] },
      { path: "/mnt/ff/browser/omni.ja", used: [[3, 1]] },
      { path: "/mnt/ff/dictionaries/en-US.dic", used: null },
      { path: "/mnt/ffx/other.so", used: [[0, 1]] },
      { path: "/usr/lib/x86_64-linux-gnu/libc.so.6", used: [[0, 1]] },
    ],
  };
  const ranges = usedRanges(trace, "/mnt/ff");
  assert.deepEqual(ranges, [
    ["libxul.so", [[0, 8192], [40960, 4096]]],
    ["browser/omni.ja", [[12288, 4096]]],
  ]);
  assert.equal(rangeBytes(ranges), 16384);
  assert.deepEqual(usedRanges({}, "/mnt/ff"), []);
});

test("the reader reads the ranges, stops at a file's end, and prints the bytes as a child", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "read-ranges-"));
  try {
    fs.mkdirSync(path.join(dir, "browser"));
    fs.writeFileSync(path.join(dir, "a"), Buffer.alloc(3 << 20, 1));
    fs.writeFileSync(path.join(dir, "browser", "b"), Buffer.alloc(5000, 2));
    // 2.5 MiB of a in two ranges; b's range runs 904 bytes past its end.
    const ranges = [
      ["a", [[0, 1 << 20], [1 << 20, (3 << 19)]]],
      ["browser/b", [[1000, 4904]]],
    ];
    const want = (1 << 20) + (3 << 19) + 4000;
    assert.equal(readRanges(dir, ranges), want);
    const file = path.join(dir, "ranges.json");
    fs.writeFileSync(file, JSON.stringify(ranges));
    const r = spawnSync(process.execPath, [READER, dir, file], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), String(want));
    assert.throws(() => readRanges(dir, [["missing", [[0, 1]]]]), /ENOENT/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
