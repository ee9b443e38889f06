// One Firefox run on the realistic profile while it is being made: Firefox started by us on the
// profile folder itself (headless, Marionette on a free port), a WebDriver session attached
// through `geckodriver --connect-existing` (so geckodriver writes nothing into the profile), code
// run in Firefox's parent process (the chrome context), and a clean quit, so Firefox writes the
// session, prefs, add-on and startup caches as it does for a user.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Builder } from "selenium-webdriver";
import firefox from "selenium-webdriver/firefox.js";
import { findGeckodriver } from "../lib/firefox.mjs";
import { processesWithHome, signal } from "../lib/processes.mjs";
import { freePort } from "../lib/ports.mjs";
import { geckodriverMissing } from "../lib/setup.mjs";

// Selenium must never try to download a driver or browser (no internet here).
process.env.SE_OFFLINE = "true";

/**
 * Prefs only the making runs need, in user.js: Marionette on a free port (it writes the port to
 * MarionetteActivePort) and without its automation prefs, which would change how Firefox starts
 * (no session restore after a crash, no add-on scopes…). make.mjs removes them afterwards.
 */
export const MAKING_PREFS = { "marionette.port": 0, "remote.prefs.recommended": false };

async function waitUntil(check, { timeoutMs, what }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * Wraps an async function written for Firefox's parent process (it may use Services,
 * ChromeUtils, Cc, Ci) so WebDriver runs it and hands back its result or its error.
 */
function asyncScript(fn) {
  return `const done = arguments[arguments.length - 1];
(${fn.toString()})(...Array.from(arguments).slice(0, -1)).then(
  (value) => done({ value }),
  (error) => done({ error: String(error) + "\\n" + (error && error.stack) }),
);`;
}

/**
 * Starts Firefox `binary` on `profile` with HOME=`home` (both exist), output to `logFile`;
 * through `launcher` where given (an argv that takes Firefox's arguments after it and becomes
 * Firefox, as `about-startup-host launch --prefetch --firefox BINARY --` does), with `env` added.
 * Resolves with {pid, chrome(fn, ...args), content(fn, ...args), switchTo(handle), quit()}.
 */
export async function startFirefox({ binary, profile, home, logFile, timeoutMs = 120_000, launcher = null, env: extraEnv = {} }) {
  const geckodriverBinary = findGeckodriver();
  if (!geckodriverBinary) {
    throw new Error(geckodriverMissing());
  }
  const portFile = path.join(profile, "MarionetteActivePort");
  fs.rmSync(portFile, { force: true });
  const log = fs.openSync(logFile, "a");
  const env = { ...process.env, ...extraEnv, HOME: home, MOZ_REMOTE_ALLOW_SYSTEM_ACCESS: "1", MOZ_CRASHREPORTER_DISABLE: "1" };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  const argv = [...(launcher ?? [binary]), "-marionette", "--headless", "-no-remote", "-profile", profile];
  const child = spawn(argv[0], argv.slice(1), { env, stdio: ["ignore", log, log] });
  fs.closeSync(log);
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  let geckodriver = null;
  const cleanup = async () => {
    if (geckodriver && geckodriver.exitCode === null) geckodriver.kill("SIGTERM");
    if (!exited()) signal(child.pid, "SIGKILL");
    for (const pid of processesWithHome(home)) signal(pid, "SIGKILL");
  };
  try {
    const port = await waitUntil(
      () => {
        if (exited()) throw new Error(`Firefox exited (${child.exitCode ?? child.signalCode}) before Marionette listened; see ${logFile}`);
        return fs.existsSync(portFile) && fs.readFileSync(portFile, "utf8").trim();
      },
      { timeoutMs, what: `Firefox's Marionette port (${portFile}); see ${logFile}` },
    );
    const wdPort = await freePort();
    geckodriver = spawn(geckodriverBinary, ["--connect-existing", "--marionette-port", port, "--port", String(wdPort), "--allow-system-access"], { stdio: "ignore" });
    await waitUntil(async () => (await fetch(`http://127.0.0.1:${wdPort}/status`).catch(() => null))?.ok, { timeoutMs: 15_000, what: "geckodriver" });
    const driver = await new Builder().forBrowser("firefox").setFirefoxOptions(new firefox.Options()).usingServer(`http://127.0.0.1:${wdPort}`).build();
    await driver.manage().setTimeouts({ script: timeoutMs * 5 });
    const run = async (context, fn, args) => {
      await driver.setContext(context);
      const result = await driver.executeAsyncScript(asyncScript(fn), ...args);
      // A page that navigates while a content script runs ends it without an answer.
      if (result === null) return null;
      if (result.error) throw new Error(`in Firefox: ${result.error}`);
      return result.value;
    };
    return {
      pid: child.pid,
      driver,
      chrome: (fn, ...args) => run(firefox.Context.CHROME, fn, args),
      content: (fn, ...args) => run(firefox.Context.CONTENT, fn, args),
      /** Quits the ordinary way (eAttemptQuit) and waits for the process to end. */
      async quit() {
        await driver.setContext(firefox.Context.CHROME);
        await driver.executeScript("setTimeout(() => Services.startup.quit(Ci.nsIAppStartup.eAttemptQuit), 100);");
        await waitUntil(() => exited(), { timeoutMs: 60_000, what: "Firefox to quit" }).catch(async (error) => {
          await cleanup();
          throw error;
        });
        if (geckodriver.exitCode === null) geckodriver.kill("SIGTERM");
        for (const pid of processesWithHome(home)) signal(pid, "SIGKILL");
        return child.exitCode;
      },
      kill: cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
