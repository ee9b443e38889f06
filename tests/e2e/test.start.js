// `npm start` with a real Firefox (issue 30, item 1): a Firefox that cannot open its window
// exits at once, and npm start must say so with Firefox's own last words and end, not sit silent
// behind web-ext's banner and end 30 s later in web-ext's ECONNREFUSED stack. And the ordinary
// headless run, through the same watch, still lands on the page. Both with --no-host (the host
// is not what is tested) and a throwaway HOME; the Firefox is $FIREFOX (npm test's copy) or the
// one npm start picks.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ROOT } from "../../scripts/lib/project.mjs";

/** Starts `npm start -- ...args` in its own process group; `done` resolves with its output. */
function npmStart(args, env) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "start-e2e-"));
  const child = spawn("npm", ["start", "--", ...args], {
    cwd: ROOT,
    detached: true,
    env: { PATH: process.env.PATH, HOME: home, TMPDIR: home, npm_config_update_notifier: "false", ...(process.env.FIREFOX ? { FIREFOX: process.env.FIREFOX } : {}), ...env },
  });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (d) => (out.stdout += d));
  child.stderr.on("data", (d) => (out.stderr += d));
  const done = new Promise((resolve) => child.on("close", (status) => resolve({ status, ...out })));
  const stop = async () => {
    // Ctrl-C, as the user stops it: web-ext quits Firefox; then whatever is left of the group.
    for (const signal of ["SIGINT", "SIGTERM", "SIGKILL"]) {
      try {
        process.kill(-child.pid, signal);
      } catch {
        break; // the group is gone
      }
      if (await Promise.race([done.then(() => true), sleep(10_000, false, { ref: false })])) {
        break;
      }
    }
    await done;
    fs.rmSync(home, { recursive: true, force: true });
  };
  return { child, out, done, stop, home };
}

describe("npm start with a real Firefox", () => {
  it("a Firefox that cannot open its display: npm start ends with Firefox's own error and the --headless advice", async () => {
    // A display that is named but not there: Firefox starts and exits at once.
    const run = npmStart(["--no-host"], { DISPLAY: ":99" });
    const result = await Promise.race([run.done, sleep(120_000, null, { ref: false })]);
    await run.stop();
    assert.ok(result, "npm start ended on its own");
    console.log(result.stderr);
    assert.equal(result.status, 1, result.stdout);
    // Firefox's own words, passed on; not web-ext's connection error.
    assert.match(result.stderr, /Firefox exited with status \d+ before the add-on could be installed; its last lines on stderr:/);
    assert.match(result.stderr, /Error: cannot open display: :99/);
    assert.match(result.stderr, /npm start -- --headless/);
    assert.doesNotMatch(result.stdout + result.stderr, /ECONNREFUSED/);
  });

  it("headless: the same watch lets an ordinary start through, to the last line, and Ctrl-C ends it", async () => {
    const run = npmStart(["--headless", "--no-host"], { DISPLAY: "" });
    try {
      const deadline = Date.now() + 120_000;
      while (!/is open in headless/.test(run.out.stdout) && run.child.exitCode === null && Date.now() < deadline) {
        await sleep(250);
      }
      assert.match(run.out.stdout, /about:startup is open in headless .*Ctrl-C here stops Firefox and npm start\./, `${run.out.stdout}\n${run.out.stderr}`);
    } finally {
      await run.stop();
    }
    const result = await run.done;
    assert.doesNotMatch(result.stderr, /Firefox exited/, "a Firefox stopped after web-ext reached it is not reported as an early exit");
  });
});
