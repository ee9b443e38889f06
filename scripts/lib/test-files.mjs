// Test files are named test.<module>.js (as in web-ext). Node 20's `node --test <dir>` does not
// pick that name up, so the scripts list the files themselves.
import fs from "node:fs";
import path from "node:path";

export function testFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      out.push(...testFiles(full));
    } else if (/^test\..+\.js$/.test(entry.name)) {
      out.push(full);
    }
  }
  return out.sort();
}

/**
 * The host's integration test files (native-host/tests/<name>.rs) with tests that need root:
 * those with an `#[ignore = "…root…"]` reason. Derived, not listed by hand, so a new root-only
 * file (pack.rs, compressed.rs) is run by the root-only stage the day it is added instead of
 * being skipped in silence. `#[ignore]`s whose reason does not name root (a child process run
 * by its own test) are not picked up.
 */
export function rootOnlyRustTestFiles(dir, { fsApi = fs } = {}) {
  return fsApi
    .readdirSync(dir)
    .filter((name) => name.endsWith(".rs"))
    .filter((name) => /#\[ignore\s*=\s*"[^"]*\broot\b/.test(fsApi.readFileSync(path.join(dir, name), "utf8")))
    .map((name) => name.slice(0, -".rs".length))
    .sort();
}
