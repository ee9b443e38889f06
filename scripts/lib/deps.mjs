// `npm start` and `npm test` must work right after a clone: install node_modules first if needed.
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./project.mjs";
import { run } from "./run.mjs";

export async function ensureDependencies() {
  if (fs.existsSync(path.join(ROOT, "node_modules", ".package-lock.json"))) {
    return;
  }
  console.log("node_modules is missing: running npm ci");
  await run("npm", ["ci", "--no-audit", "--no-fund"], { cwd: ROOT });
}
