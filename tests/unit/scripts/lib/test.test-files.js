import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { rootOnlyRustTestFiles } from "../../../../scripts/lib/test-files.mjs";
import { ROOT } from "../../../../scripts/lib/project.mjs";

test("a test file whose #[ignore] reason names root is run by the root-only stage; one that does not is not", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "root-only-"));
  try {
    fs.writeFileSync(path.join(dir, "pack.rs"), '#[test]\n#[ignore = "needs root (a FUSE or loop mount)"]\nfn a() {}\n');
    fs.writeFileSync(path.join(dir, "mapped.rs"), '#[test]\n#[ignore = "the child process of another test"]\nfn b() {}\n');
    fs.writeFileSync(path.join(dir, "cli.rs"), "#[test]\nfn c() {}\n");
    fs.writeFileSync(path.join(dir, "notes.txt"), '#[ignore = "needs root"]');
    assert.deepEqual(rootOnlyRustTestFiles(dir), ["pack"]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the host's own root-only files are all found (every file with a root #[ignore] in native-host/tests)", () => {
  const dir = path.join(ROOT, "native-host", "tests");
  const found = rootOnlyRustTestFiles(dir);
  for (const name of ["hidden", "prefetch", "relaunch", "signals", "tracer"]) {
    assert.ok(found.includes(name), `${name}.rs has root-only tests and must be run: ${found}`);
  }
  assert.ok(!found.includes("mapped"), "mapped.rs's #[ignore] is a child process, not a root-only test");
});
