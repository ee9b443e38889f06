// What the restart tests share (test.restart.js, test.restart-trace.js): reading the page's
// restart section and this start's record, the host's restart record, and a WebDriver session on
// a Firefox that geckodriver did not start (the restarted one), attached through the Marionette
// port its profile opens again.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Builder } from "selenium-webdriver";
import firefox from "selenium-webdriver/firefox.js";
import { findGeckodriver } from "../../scripts/lib/firefox.mjs";
import { artifactsFolder, EXTENSION_ORIGIN, waitFor } from "./harness.js";
import { asUser } from "../../scripts/lib/users.mjs";
import { homeStateDir } from "../../scripts/lib/state-layout.mjs";
import { MARKER } from "../../scripts/lib/leftovers.mjs";

/** The page's restart section and this start's record, as the page holds them. */
export function readRestart(driver) {
  return driver.executeAsyncScript(`
    const done = arguments[arguments.length - 1];
    const s = document.getElementById("restart");
    (async () => {
      const { history } = await browser.storage.local.get("history");
      const { "history.currentStart": currentId } = await browser.storage.session.get("history.currentStart");
      const current = history?.records?.find((r) => r.id === currentId) ?? null;
      done({
        ready: document.body?.dataset.ready === "true",
        state: s?.dataset.state ?? null,
        offer: s?.dataset.offer ?? null,
        last: s?.dataset.last ?? null,
        lastThisStart: s?.dataset.lastThisStart === "true",
        lines: [...document.querySelectorAll("#restart-last [data-line]")].map((p) => ({ line: p.dataset.line, text: p.textContent })),
        buttonShown: !document.getElementById("restart-cold")?.hidden,
        traceButtonShown: !document.getElementById("restart-trace")?.hidden,
        traceOffer: document.getElementById("restart-trace-offer")?.dataset.reason ?? null,
        traceCommand: document.querySelector("[data-testid=restart-trace-command]")?.textContent ?? null,
        offerText: document.getElementById("restart-offer")?.textContent ?? "",
        temporary: document.getElementById("restart-temporary")?.hidden === false
          ? {
              text: document.getElementById("restart-temporary").textContent,
              relaunch: document.querySelector("[data-testid=restart-temporary-relaunch]")?.textContent ?? null,
              evict: document.querySelector("[data-testid=restart-temporary-evict]")?.textContent ?? null,
            }
          : null,
        answer: document.getElementById("answer")?.dataset.coldness ?? null,
        traceState: document.getElementById("trace")?.dataset.state ?? null,
        current,
      });
    })().catch((e) => done({ error: String(e) }));
  `);
}

/** The host's restart record in `home`'s state folder (XDG_STATE_HOME unset or $HOME/.local/state). */
export function restartRecord(home) {
  const file = path.join(homeStateDir(home), "relaunch.json");
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : null;
}

/** Waits for a record newer than `since` that is final (started or failed). */
export function waitForRecord(home, since, { timeout = 120000, stages = ["started", "failed"] } = {}) {
  return waitFor(
    () => {
      const s = restartRecord(home);
      return s && s.requested_at_ms >= since && stages.includes(s.stage) ? s : null;
    },
    { timeout, interval: 200, message: "the host's record of the restart" },
  );
}

/** Switches to a tab showing the page (about:startup, restored by session restore). */
async function findPage(driver) {
  for (const handle of await driver.getAllWindowHandles()) {
    await driver.switchTo().window(handle);
    const url = await driver.getCurrentUrl();
    if ((url === "about:startup" || url.startsWith(EXTENSION_ORIGIN)) && (await driver.executeScript("return document.body?.dataset.ready === 'true'"))) {
      return handle;
    }
  }
  return null;
}

let nextPort = 4400 + (process.pid % 400);

/**
 * A WebDriver session on the restarted Firefox of `profile`, once it listens on Marionette again
 * (a new MarionetteActivePort, written after `since`). `{driver, stop()}`.
 */
export async function attachToRestarted(profile, since) {
  const portFile = path.join(profile, "MarionetteActivePort");
  const port = Number(
    await waitFor(() => fs.existsSync(portFile) && fs.statSync(portFile).mtimeMs >= since - 1000 && fs.readFileSync(portFile, "utf8").trim(), {
      timeout: 60000,
      message: "the restarted Firefox's Marionette port",
    }),
  );
  const wdPort = nextPort++;
  const geckodriver = spawn(findGeckodriver(), ["--connect-existing", "--marionette-port", String(port), "--port", String(wdPort)], { stdio: "ignore" });
  const stop = async () => {
    if (geckodriver.exitCode === null) {
      geckodriver.kill("SIGTERM");
    }
    await sleep(100);
  };
  try {
    await waitFor(async () => (await fetch(`http://127.0.0.1:${wdPort}/status`)).ok, { timeout: 15000, interval: 100, message: "geckodriver" });
    const driver = await new Builder().forBrowser("firefox").setFirefoxOptions(new firefox.Options()).usingServer(`http://127.0.0.1:${wdPort}`).build();
    return { driver, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Waits until the restored page shows the restarted start (`check(page)` truthy); says what it saw on timeout. */
export async function waitForRestoredPage(driver, check, what) {
  let seen = null;
  return waitFor(
    async () => {
      if (!(await findPage(driver))) {
        return null;
      }
      const p = (seen = await readRestart(driver));
      return p.state === "ready" && check(p) ? p : null;
    },
    { timeout: 90000, interval: 500, message: what },
  ).catch((error) => {
    throw new Error(`${error.message}; last seen: ${JSON.stringify(seen)}`);
  });
}

/** A screenshot of the current tab with the restart section in view, into the artifacts folder. */
export async function restartScreenshot(driver, name) {
  await driver.executeScript("document.getElementById('restart').scrollIntoView()");
  fs.writeFileSync(path.join(artifactsFolder(), `${name}.png`), await driver.takeScreenshot(), "base64");
}

/**
 * Starts `command` (a line the page prints) in a shell as `uid` (the user the session's Firefox
 * runs as), as printed: with the session's HOME, this PATH and `env`, nothing else; `done`
 * resolves with {status, stdout, stderr}.
 */
export function runAsPrinted(home, command, { uid = process.getuid?.(), env = {} } = {}) {
  const argv = ["sh", "-c", command];
  // The page prints commands for a user at a desktop, whose Firefox opens a window; the tests
  // have no display. MOZ_HEADLESS is Firefox's own switch for that, so the command stays as
  // printed (a Firefox with no display now fails the command, as it should: issue 39 #3).
  // The test runner's marker (scripts/lib/leftovers.mjs) is passed on too: what the command
  // starts and leaves running is then known as this file's.
  const marker = process.env[MARKER] ? { [MARKER]: process.env[MARKER] } : {};
  const full = asUser(uid, argv, { env: { HOME: home, PATH: process.env.PATH, MOZ_HEADLESS: "1", ...marker, ...env } });
  const child = spawn(full[0], full.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (d) => (out.stdout += d));
  child.stderr.on("data", (d) => (out.stderr += d));
  return { child, out, done: new Promise((resolve) => child.on("close", (status) => resolve({ status, ...out }))) };
}
