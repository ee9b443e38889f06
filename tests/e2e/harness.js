// End-to-end harness: a real headless Firefox, driven through geckodriver, with the extension
// installed temporarily and (optionally) the real release host registered, all under a
// throwaway HOME so the user's own ~/.mozilla is never read or written.
//
//   const ff = await startFirefox({ experiments: true, installHost: true, flavour: "full" });
//   await ff.openExtensionPage("page/startup.html");
//   await ff.screenshot("full-mode");
//   await ff.stop();   // always: quits, kills what is left, removes the temp HOME
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, afterEach, before } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Builder } from "selenium-webdriver";
import firefox from "selenium-webdriver/firefox.js";
import { buildExtension } from "../../scripts/build.mjs";
import { findFirefox, findGeckodriver } from "../../scripts/lib/firefox.mjs";
import { findCandidates } from "../../scripts/lib/firefox-kind.mjs";
import { EXTENSION_ID, HOST_BINARY, HOST_NAME, ROOT } from "../../scripts/lib/project.mjs";
import { run } from "../../scripts/lib/run.mjs";
import { processesWithHome } from "../../scripts/lib/processes.mjs";
import { freePort } from "../../scripts/lib/ports.mjs";
import { asUser as userArgv } from "../../scripts/lib/users.mjs";
import { stageInstallCopy } from "../../scripts/lib/install-copy.mjs";

// Selenium must never try to download a driver or browser (no internet here).
process.env.SE_OFFLINE = "true";

/** The extension's internal UUID, pinned with extensions.webextensions.uuids. */
export const EXTENSION_UUID = "5f0b7a4e-3c1d-4e8a-9b6f-a60057a27a01";
export const EXTENSION_ORIGIN = `moz-extension://${EXTENSION_UUID}`;

let artifactsDir = null;

/** The folder screenshots and logs go to: $E2E_ARTIFACTS_DIR or artifacts/e2e-<timestamp>/. */
export function artifactsFolder() {
  if (!artifactsDir) {
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    artifactsDir = process.env.E2E_ARTIFACTS_DIR ?? path.join(ROOT, "artifacts", `e2e-${stamp}`);
    fs.mkdirSync(artifactsDir, { recursive: true });
    console.log(`e2e artifacts (screenshots, logs): ${artifactsDir}`);
  }
  return artifactsDir;
}

/** Polls `check` until it returns a truthy value; throws `message` (plus the last error) on timeout. */
export async function waitFor(check, { timeout = 20000, interval = 250, message = "condition" } = {}) {
  const deadline = Date.now() + timeout;
  let lastError = null;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) {
        return value;
      }
    } catch (error) {
      lastError = error;
    }
    await sleep(interval);
  }
  throw new Error(`timed out after ${timeout} ms waiting for ${message}${lastError ? `: ${lastError.message}` : ""}`);
}

function kill(pid, signal) {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

let sessions = 0;

/**
 * The Firefox the tests drive by default: $FIREFOX, else the one `npm start` would pick for the
 * full flavour (ESR before a Release `firefox` on PATH), else findFirefox()'s.
 */
export function defaultFirefox() {
  if (process.env.FIREFOX) {
    return findFirefox();
  }
  const full = findCandidates().find((i) => i.experiments && (i.kind === "distribution" || i.kind === "tarball"));
  return full ? full.binary : findFirefox();
}

/**
 * A copy of the install under test (defaultFirefox()'s) that no other process maps, for a test
 * whose assertions need a cold start: evict cannot drop pages a running Firefox of the same
 * install maps (another user's, a leftover), and the start then reads a fraction of a cold
 * one's. Under /var/tmp (on disk: tmpfs pages cannot be evicted), in the test file's own
 * folder there where the runner gave it one (E2E_VAR_TMPDIR: what runs from it is the file's,
 * scripts/lib/leftovers.mjs), reachable by every user, synced (dirty pages cannot be evicted
 * either). {binary, dir, remove()}.
 */
export function privateInstall() {
  const copy = stageInstallCopy({ parent: process.env.E2E_VAR_TMPDIR ?? "/var/tmp", find: defaultFirefox });
  if (!copy.binary) {
    throw new Error(`no install folder to copy: ${copy.reason}`);
  }
  spawnSync("sync", ["-f", copy.dir]);
  return copy;
}

/**
 * Starts a headless Firefox with the extension installed temporarily.
 * - experiments: sets extensions.experiments.enabled (the full flavour needs it)
 * - installHost: registers the real release host in the temp HOME (`about-startup-host install`)
 * - flavour: "full" or "basic" (built fresh from extension/ into the temp folder)
 * - temporary: install as a temporary add-on (as web-ext run does); false installs it
 *   permanently into the fresh profile (unsigned: needs xpinstall.signatures.required=false)
 * - prefs: more Firefox preferences
 * - env: more environment for geckodriver, Firefox and the host Firefox starts (e.g. XDG_DATA_DIRS)
 * - firefox: the Firefox binary to drive (default: defaultFirefox())
 * - profileDir: a profile folder to run in place (kept after stop(), e.g. for a second session
 *   of the same profile); default: a fresh copy geckodriver makes and removes
 * - installAddon: false starts without installing (a second session of a profileDir that has the
 *   add-on installed permanently, as a user's Firefox starts)
 * - asUser: a uid (65534, nobody) to run Firefox and its host as an ordinary user (root only):
 *   geckodriver stays root and starts Firefox through a wrapper that hands it the profile and
 *   switches user (setpriv); the host runs from a copy every user can reach (Debian's /root is
 *   0700), registered in the throwaway HOME, which that user owns. `session.host` is the host
 *   binary Firefox starts, `session.uid` the user.
 * - env: more environment variables for geckodriver and Firefox (values may name `$HOME`, the
 *   session's throwaway home folder)
 * - user: a uid (root only) to run geckodriver, Firefox and the host as, an ordinary user: the
 *   session's folders (and profileDir) are given to that user and geckodriver is copied where it
 *   can run it (setpriv, no supplementary groups)
 */
export async function startFirefox({
  experiments = true,
  installHost = true,
  flavour = "full",
  temporary = true,
  prefs = {},
  firefox: firefoxOption = null,
  profileDir = null,
  installAddon = true,
  asUser = null,
  user = null,
  env: extraEnv = {},
} = {}) {
  const n = ++sessions;
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), "about-startup-e2e-"));
  const home = path.join(root, "home");
  const tmp = path.join(root, "tmp");
  await fsp.mkdir(home, { recursive: true });
  await fsp.mkdir(tmp, { recursive: true });
  const state = { root, home, driver: null, geckodriver: null, log: null, stopped: false };
  let hostBinary = HOST_BINARY;

  const session = {
    home,
    uid: asUser ?? process.getuid?.() ?? null,
    get host() {
      return hostBinary;
    },
    // The Firefox binary this session drives (before any copy staged for another user).
    firefox: null,
    flavour,
    get driver() {
      return state.driver;
    },
    extensionUrl: (page) => `${EXTENSION_ORIGIN}/${page.replace(/^\//, "")}`,
    openExtensionPage: (page) => openExtensionPage(state.driver, session.extensionUrl(page)),
    screenshot: (name) => screenshot(state.driver, name),
    stop: () => stop(state),
  };

  try {
    const firefoxBinary = firefoxOption ?? defaultFirefox();
    session.firefox = firefoxBinary;
    const geckodriverBinary = findGeckodriver();
    if (!geckodriverBinary) {
      throw new Error("geckodriver not found: set GECKODRIVER, put it on PATH, or `cargo install --locked geckodriver`");
    }

    let firefoxToRun = firefoxBinary;
    if (asUser !== null) {
      if (process.getuid?.() !== 0) {
        throw new Error("asUser needs root (to hand Firefox to another user)");
      }
      ({ host: hostBinary, firefox: firefoxToRun } = await stageForUser(root, asUser, firefoxBinary));
    } else if (user !== null) {
      // The user's Firefox starts the host: a copy it can reach, not the checkout's (which may
      // be in a 0700 home, as Debian 12 makes them; issue 30 #7).
      hostBinary = await reachableHost(root);
    }
    if (installHost) {
      if (!fs.existsSync(HOST_BINARY)) {
        throw new Error(
          `${HOST_BINARY} is missing: cargo build --release --manifest-path native-host/Cargo.toml (npm test does it)`,
        );
      }
      await run(hostBinary, ["install", "--extension-id", EXTENSION_ID], {
        env: { ...process.env, HOME: home },
        stdio: ["ignore", "ignore", "inherit"],
      });
      const manifest = path.join(home, ".mozilla", "native-messaging-hosts", `${HOST_NAME}.json`);
      if (!fs.existsSync(manifest)) {
        throw new Error(`about-startup-host install did not write ${manifest}`);
      }
    }
    if (asUser !== null) {
      // The user owns its HOME (the manifest in it too) and the temp folder the profile goes in.
      await run("chown", ["-R", `${asUser}:${asUser}`, home, tmp]);
    }

    const built = await buildExtension({ distDir: path.join(root, "dist") });
    const addon = built[flavour]?.xpi;
    if (!addon) {
      throw new Error(`unknown flavour ${flavour}`);
    }

    let driverCommand = [geckodriverBinary];
    if (user !== null) {
      // Everything the user's processes write is theirs; what they only read stays root's.
      const copy = path.join(root, "geckodriver");
      await fsp.copyFile(geckodriverBinary, copy);
      await fsp.chmod(copy, 0o755);
      for (const dir of [root, profileDir].filter(Boolean)) {
        await run("chown", ["-R", `${user}:${user}`, dir]);
      }
      // The host stays root's, as an installed one is: the user runs it and cannot replace it.
      await run("chown", ["-R", "0:0", path.dirname(hostBinary)]);
      driverCommand = userArgv(user, [copy], { self: null });
    }

    const port = await freePort();
    // Named by the test file too: the runner runs each file in a process of its own, whose
    // session count starts again at 1 (one log must not overwrite another file's).
    const file = path.basename(process.argv[1] ?? "e2e", ".js");
    const logFile = path.join(artifactsFolder(), `firefox-${file}-${n}-${flavour}.log`);
    state.log = fs.createWriteStream(logFile);
    const env = { ...process.env, HOME: home, TMPDIR: tmp, MOZ_REMOTE_ALLOW_SYSTEM_ACCESS: "1" };
    for (const [name, value] of Object.entries(extraEnv)) {
      env[name] = value.replaceAll("$HOME", home);
    }
    // In the session's own folder, not the checkout's: Firefox inherits geckodriver's working
    // folder, and a Firefox run as another user must be able to enter it (a checkout in a 0700
    // home, as Debian 12 makes them, is not; issue 30 #7). `root` is 0755 for asUser.
    const child = spawn(
      driverCommand[0],
      [...driverCommand.slice(1), "--port", String(port), "--allow-system-access", "--profile-root", tmp],
      { env, cwd: root, stdio: ["ignore", "pipe", "pipe"] },
    );
    state.geckodriver = child;
    child.stdout.pipe(state.log, { end: false });
    child.stderr.pipe(state.log, { end: false });
    const url = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => {
        if (child.exitCode !== null) {
          throw new Error(`geckodriver exited with ${child.exitCode} (log: ${logFile})`);
        }
        const response = await fetch(`${url}/status`);
        return response.ok;
      },
      { timeout: 15000, interval: 100, message: "geckodriver to listen" },
    );

    const options = new firefox.Options()
      .setBinary(firefoxToRun)
      .addArguments("-headless", "--width=1280", "--height=1024")
      .setPreference("extensions.experiments.enabled", experiments)
      .setPreference("extensions.webextensions.uuids", JSON.stringify({ [EXTENSION_ID]: EXTENSION_UUID }));
    for (const [name, value] of Object.entries(prefs)) {
      options.setPreference(name, value);
    }
    if (profileDir) {
      options.addArguments("-profile", profileDir);
    }
    // Bounded: New Session waits for the selected tab's first load, and a load that never ends
    // (an about:startup tab stranded by session restore) would otherwise hang the suite with
    // Firefox left running; stop() below kills what is left.
    state.driver = await withTimeout(
      new Builder().forBrowser("firefox").setFirefoxOptions(options).usingServer(url).build(),
      60000,
      "WebDriver New Session (Firefox's start and its selected tab's first load)",
    );
    if (installAddon) {
      await state.driver.installAddon(addon, temporary);
    }
    return session;
  } catch (error) {
    await stop(state);
    throw error;
  }
}

/** A copy of the host in the session's folder (made 0755), which every user can run. */
async function reachableHost(root) {
  await fsp.chmod(root, 0o755);
  const bin = path.join(root, "bin");
  await fsp.mkdir(bin, { mode: 0o755 });
  const host = path.join(bin, "about-startup-host");
  await fsp.copyFile(HOST_BINARY, host);
  await fsp.chmod(host, 0o755);
  return host;
}

/**
 * For a Firefox run as `uid`: the folder made reachable, a copy of the host every user can run,
 * and a wrapper geckodriver starts instead of Firefox, which gives the profile geckodriver made
 * (as root) to `uid` and runs Firefox as `uid` with the same arguments and environment.
 */
async function stageForUser(root, uid, firefoxBinary) {
  const host = await reachableHost(root);
  const bin = path.dirname(host);
  const wrapper = path.join(bin, "firefox-as-user");
  const quote = (text) => `'${String(text).replace(/'/g, "'\\''")}'`;
  await fsp.writeFile(
    wrapper,
    [
      "#!/bin/sh",
      "# geckodriver (root) made the profile: hand it to the user, then run Firefox as that user.",
      'prev=""',
      'for arg in "$@"; do',
      `  if [ "$prev" = "-profile" ] || [ "$prev" = "--profile" ]; then chown -R ${uid}:${uid} "$arg"; fi`,
      '  prev="$arg"',
      "done",
      `exec setpriv --reuid=${uid} --regid=${uid} --clear-groups -- ${quote(firefoxBinary)} "$@"`,
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  return { host, firefox: wrapper };
}

/**
 * Opens a moz-extension:// page in a new tab and switches the driver to it. WebDriver refuses to
 * navigate to moz-extension:// URLs, so the tab is opened from the chrome context with the
 * system principal (needs MOZ_REMOTE_ALLOW_SYSTEM_ACCESS / --allow-system-access).
 */
async function openExtensionPage(driver, url) {
  const before = new Set(await driver.getAllWindowHandles());
  await driver.setContext(firefox.Context.CHROME);
  try {
    await driver.executeScript(
      `const tab = gBrowser.addTab(arguments[0], {
         triggeringPrincipal: Services.scriptSecurityManager.getSystemPrincipal(),
       });
       gBrowser.selectedTab = tab;`,
      url,
    );
  } finally {
    await driver.setContext(firefox.Context.CONTENT);
  }
  // The new tab is one of the handles that were not there before; the add-on may have opened
  // its own tab with the same page on install, and either is the page we want.
  const handle = await waitFor(
    async () => {
      const fresh = (await driver.getAllWindowHandles()).filter((h) => !before.has(h));
      for (const h of fresh.reverse()) {
        await driver.switchTo().window(h);
        if ((await driver.getCurrentUrl()) === url) {
          return h;
        }
      }
      return null;
    },
    { timeout: PAGE_READY_MS, message: `a tab with ${url}` },
  );
  await waitForPageReady(driver, url);
  return handle;
}

/**
 * How long a page may take to finish its first render: a limit, not a measure. The page sets
 * body[data-ready] once every section's first host answer is in (a residency scan among them),
 * which on a 2-core machine loaded by builds took over 15 s (test.consistency.js, CI).
 */
const PAGE_READY_MS = 120000;

/** The page's sections and their data-state, to say what a page that never got ready waited for. */
function pageStates(driver) {
  return driver
    .executeScript(() =>
      [...document.querySelectorAll("[data-state]")].map((e) => `${e.id || e.dataset.testid || e.tagName.toLowerCase()}=${e.dataset.state}`).join(", "),
    )
    .catch((error) => `(could not read it: ${error.message})`);
}

async function screenshot(driver, name) {
  const file = path.join(artifactsFolder(), `${name.replace(/[^\w.-]+/g, "_")}.png`);
  const data = await driver.takeFullPageScreenshot();
  await fsp.writeFile(file, Buffer.from(data, "base64"));
  return file;
}

async function stop(state) {
  if (state.stopped) {
    return;
  }
  state.stopped = true;
  if (state.driver) {
    await withTimeout(state.driver.quit(), 20000, "driver.quit()").catch((error) => {
      console.error(`e2e: ${error.message}; killing what is left`);
    });
  }
  if (state.geckodriver && state.geckodriver.exitCode === null) {
    kill(state.geckodriver.pid, "SIGTERM");
  }
  // Firefox, its content processes and any host it started all carry HOME=<temp home>.
  for (let attempt = 0; attempt < 20; attempt++) {
    const left = processesWithHome(state.home);
    if (left.length === 0) {
      break;
    }
    for (const pid of left) {
      kill(pid, attempt < 10 ? "SIGTERM" : "SIGKILL");
    }
    await sleep(200);
  }
  state.log?.end();
  await fsp.rm(state.root, { recursive: true, force: true, maxRetries: 3 });
}

/**
 * One Firefox for a describe block: started before its tests (optionally on an extension page),
 * a screenshot after each test whether it failed or not (`prefix-<test name>.png`; no prefix, no
 * screenshot), and stopped after the block even when a test failed. `options` is
 * startFirefox's, or a function returning them (evaluated when the block starts, so an earlier
 * `before` can prepare folders). Suites that need more add their own hooks after this call:
 * node:test runs hooks in the order they were registered.
 */
export function useFirefox(options, suite = {}) {
  if (typeof suite !== "object" || suite === null) {
    throw new TypeError(`useFirefox(options, {prefix, page}): got ${JSON.stringify(suite)} as the second argument`);
  }
  const { prefix = null, page = null } = suite;
  const ctx = { ff: null };
  before(async () => {
    ctx.ff = await startFirefox(typeof options === "function" ? options() : options);
    if (page) {
      await ctx.ff.openExtensionPage(page);
    }
  });
  afterEach(async (t) => {
    if (prefix && ctx.ff?.driver) {
      await ctx.ff.screenshot(`${prefix}-${t.name}`).catch(() => {});
    }
  });
  after(async () => {
    await ctx.ff?.stop();
  });
  return ctx;
}

/** What the about:startup page shows, read from its stable ids / data attributes. */
export async function readStartupPage(driver) {
  return driver.executeScript(() => {
    const text = (id) => document.getElementById(id)?.textContent.trim() ?? null;
    const shown = (id) => {
      const element = document.getElementById(id);
      return Boolean(element) && !element.hidden;
    };
    return {
      mode: document.getElementById("mode").dataset.mode,
      modeName: text("mode-name"),
      modeExplanation: text("mode-explanation"),
      milestonesState: document.getElementById("milestones-status").dataset.state,
      milestonesTableShown: shown("milestones"),
      milestones: [...document.querySelectorAll("#milestones tbody tr")].map((tr) => ({
        name: tr.dataset.milestone,
        ms: Number(tr.dataset.ms),
        sinceOrigin: Number(tr.dataset.sinceOrigin),
      })),
      hostState: document.getElementById("host").dataset.state,
      hostStatus: text("host-status"),
      hostMissingShown: shown("host-missing"),
      hostInstallCommand: text("host-install-command"),
      hostErrorDetail: text("host-error-detail"),
      hostMissingSandboxed: text("host-missing-sandboxed"),
      hostVersion: text("host-version"),
      browserVersion: text("browser-version"),
      firefoxState: document.getElementById("firefox-details").dataset.state,
      firefoxVersion: text("firefox-version"),
      firefoxReadBytes: text("firefox-read-bytes"),
      firefoxMajorFaults: text("firefox-major-faults"),
      firefoxError: shown("firefox-error") ? text("firefox-error") : null,
    };
  });
}

/**
 * The export the page's Export button makes, as it hands it to Firefox: the object URL's blob,
 * caught on its way, and the download link's one click held back (no file left in the test
 * user's downloads).
 */
export async function readExport(driver) {
  await driver.executeScript(() => {
    const make = URL.createObjectURL.bind(URL);
    window.e2eExported = null;
    URL.createObjectURL = (blob) => {
      window.e2eExported = blob;
      return make(blob);
    };
    const click = HTMLAnchorElement.prototype.click;
    HTMLAnchorElement.prototype.click = function () {
      HTMLAnchorElement.prototype.click = click;
      if (!this.hasAttribute("download")) {
        click.call(this);
      }
    };
  });
  await driver.executeScript(() => document.getElementById("export-button").click());
  const text = await waitFor(() => driver.executeAsyncScript((done) => (window.e2eExported ? window.e2eExported.text().then(done) : done(null))), {
    timeout: 20000,
    message: "the export the button made",
  });
  return JSON.parse(text);
}

/**
 * Runs `script` (a function body; `arguments` as in executeAsyncScript, the last one is the
 * callback `done`) in the chrome context and switches back to content. It may use Services,
 * ChromeUtils, gBrowser. Example: inChrome(driver, "arguments[0](Services.appinfo.version)").
 */
export async function inChrome(driver, script, ...args) {
  await driver.setContext(firefox.Context.CHROME);
  try {
    return await driver.executeAsyncScript(script, ...args);
  } finally {
    await driver.setContext(firefox.Context.CONTENT);
  }
}

/**
 * Waits until the current tab's page has finished its first render (body[data-ready]); on
 * timeout says the state of each of its sections (which host answer it still waited for).
 */
export async function waitForPageReady(driver, what = "the page") {
  try {
    return await waitFor(() => driver.executeScript("return document.body?.dataset.ready === 'true'"), {
      timeout: PAGE_READY_MS,
      message: `${what} to finish loading (body[data-ready])`,
    });
  } catch (error) {
    error.message += `; its sections: ${await pageStates(driver)}`;
    throw error;
  }
}
