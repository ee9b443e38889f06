// npm run bench:restart: how long "Restart cold" takes from the page (issue 23), measured through
// the real thing: a headless Firefox with the add-on installed permanently (as user `nobody` when
// run as root), the page's button pressed, the host's detached `relaunch` waiting, evicting and
// starting Firefox again, the restored page read. Per run: the click to the host's "started"
// record, Firefox's quit, the evict, and the click to the restarted start's sessionRestored; the
// start before (hot) and the restarted one (cold) side by side. Medians are written into
// docs/benchmarks.md ("Restart cold from the page"). A script, not a test: it asserts no speed.
//   node scripts/bench/restart.mjs [--runs N] [--out FILE]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { spawnSync } from "node:child_process";
import { inspectFirefox } from "../lib/firefox-kind.mjs";
import { HOST_BINARY, ROOT } from "../lib/project.mjs";
import { pauseProactiveReclaim } from "../lib/damon.mjs";
import { spliceSection } from "../lib/doc-section.mjs";
import { defaultFirefox, startFirefox, waitFor } from "../../tests/e2e/harness.js";
import { attachToRestarted, readRestart, waitForRecord, waitForRestoredPage } from "../../tests/e2e/restart-helpers.js";

const { values: opts } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    out: { type: "string", default: path.join(ROOT, "docs", "benchmarks.md") },
  },
});
const runs = Number(opts.runs);
const user = process.getuid?.() === 0 ? 65534 : null;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function once(installDir) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-bench-restart-"));
  spawnSync(HOST_BINARY, ["preload", "--firefox", installDir], { stdio: "ignore" });
  const first = await startFirefox({ profileDir: profile, temporary: false, prefs: { "xpinstall.signatures.required": false }, user });
  let attached = null;
  try {
    await first.openExtensionPage("page/startup.html");
    const before = await waitFor(async () => {
      const p = await readRestart(first.driver);
      return p.state === "ready" && p.current?.milestones?.sessionRestored && p.current.io?.treeReadBytes != null ? p : null;
    }, { timeout: 60000, message: "the first start recorded" });
    const clicked = Date.now();
    await first.driver.findElement({ css: "[data-testid=restart-cold]" }).click();
    const record = await waitForRecord(first.home, clicked);
    const startedMs = record.updated_at_ms - clicked;
    attached = await attachToRestarted(profile, clicked);
    const after = await waitForRestoredPage(attached.driver, (p) => p.lastThisStart && p.current?.milestones?.sessionRestored && p.current.io?.treeReadBytes != null, "the restarted start");
    const cold = after.current;
    return {
      started: startedMs,
      quit: record.waited_ms,
      evict: record.evicted?.elapsed_ms ?? null,
      restored: cold.processStart + cold.milestones.sessionRestored - clicked,
      hotSessionRestored: before.current.milestones.sessionRestored,
      coldSessionRestored: cold.milestones.sessionRestored,
      hotRead: before.current.io.treeReadBytes,
      coldRead: cold.io.treeReadBytes,
      coldness: cold.coldness?.class,
    };
  } finally {
    await attached?.driver.quit().catch(() => {});
    await attached?.stop();
    await first.stop();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

const firefoxBinary = defaultFirefox();
const installDir = inspectFirefox(firefoxBinary).dir;
const damon = pauseProactiveReclaim();
const results = [];
try {
  for (let i = 0; i < runs; i++) {
    const r = await once(installDir);
    results.push(r);
    console.log(`run ${i + 1}/${runs}: ${JSON.stringify(r)}`);
  }
} finally {
  damon.restore();
}

const col = (k) => results.map((r) => r[k]).filter((v) => v != null);
const ms = (v) => `${Math.round(v).toLocaleString("en")} ms`;
const mb = (v) => `${(v / 1e6).toFixed(1)} MB`;
const row = (what, k, f) => `| ${what} | ${f(median(col(k)))} | ${col(k).map(f).join(" / ")} |`;
const version = spawnSync(firefoxBinary, ["--version"], { encoding: "utf8" }).stdout.trim();
const section = `### Restart cold from the page, disk not throttled

Command: \`node scripts/bench/restart.mjs --runs ${runs}\` on ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, kernel ${os.release()}, ${version}, ${installDir}, headless, ${user === null ? "as the invoking user" : `as uid ${user} (an ordinary user)`}, the add-on installed permanently in a fresh profile${damon.paused.length ? ", DAMON proactive reclaim paused during the run" : ""}. Each run: Firefox's files preloaded, Firefox started, the page's "Restart cold" pressed; times from the click.

| | median | runs |
| --- | ---: | --- |
${row("click → Firefox started again (the host's record)", "started", ms)}
${row("of which: Firefox quitting", "quit", ms)}
${row("of which: the evict", "evict", ms)}
${row("click → the restarted start's sessionRestored", "restored", ms)}
${row("sessionRestored, the start before (hot)", "hotSessionRestored", ms)}
${row("sessionRestored, the restarted start (cold)", "coldSessionRestored", ms)}
${row("read by the Firefox processes, the start before", "hotRead", mb)}
${row("read by the Firefox processes, the restarted start", "coldRead", mb)}

Classified by the page: ${results.map((r) => r.coldness).join(", ")}.

The restart itself costs what Firefox's own quit costs plus a few tens of milliseconds: the host
waits for every Firefox process to exit (polled every 100 ms), evicts, and starts it again. On
this machine's unthrottled disk (about 0.2 s for the whole install folder) a cold start is not
slower than a hot one, and "the start before" is a fresh profile's first start under WebDriver
(the profile is created then), which is why it can take longer than the cold restart: the point
of these figures is the restart's own cost and that the restarted start really read the install
from the disk. For cold against hot with the disk throttled, see "How slow is a cold start?"
above.
`;
console.log(section);
const doc = fs.readFileSync(opts.out, "utf8");
fs.writeFileSync(opts.out, spliceSection(doc, "restart-bench", `## Restart cold from the page (issue 23)\n\n${section}`));
console.log(`written to ${path.relative(process.cwd(), opts.out)}`);
process.exit(0);
