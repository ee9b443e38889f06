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
