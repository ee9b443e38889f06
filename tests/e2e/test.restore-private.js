// The add-on installed permanently, as a user has it, across a restart of the same profile:
// - an about:startup tab that session restore brings back shows the page, not an endless
//   about:blank (the restored load can reach the new extension process before the add-on's
//   process script does: parent.js reloadStranded);
// - in a private window, where Firefox gives the add-on no API until the user allows it, the page
//   says why and how to allow it; once allowed (what about:addons' "Run in Private Windows" does),
//   the page works there.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { EXTENSION_ID } from "../../scripts/lib/project.mjs";
import { inChrome, startFirefox, waitFor } from "./harness.js";

const MESSAGES = JSON.parse(
  fs.readFileSync(new URL("../../extension/_locales/en/messages.json", import.meta.url), "utf8"),
);

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-restore-"));
after(() => fs.rmSync(profile, { recursive: true, force: true }));

const PREFS = {
  "xpinstall.signatures.required": false, // the permanent install of an unsigned build (ESR allows it)
  "browser.startup.page": 3, // restore the previous session, as many users have it
};

/** Opens about:startup in a new tab of the most recent (private or normal) browser window. */
function openAboutStartup(driver, { privateWindow }) {
  return inChrome(
    driver,
    `const [privateWindow, done] = arguments;
     const { BrowserWindowTracker } = ChromeUtils.importESModule("resource:///modules/BrowserWindowTracker.sys.mjs");
     const win = BrowserWindowTracker.getTopWindow({ private: privateWindow });
     if (!win || PrivateBrowsingUtils.isWindowPrivate(win) !== privateWindow) {
       done(false);
       return;
     }
     // A window just opened: its tab browser exists once its delayed startup is over.
     win.delayedStartupPromise.then(() => {
       win.gBrowser.selectedTab = win.gBrowser.addTab("about:startup", {
         triggeringPrincipal: Services.scriptSecurityManager.getSystemPrincipal(),
       });
       done(true);
     });`,
    privateWindow,
  );
}

/** What every finished (body[data-ready]) about:startup tab of private or normal windows shows. */
async function finishedPages(driver, { privateWindow }) {
  const pages = [];
  for (const handle of await driver.getAllWindowHandles()) {
    await driver.switchTo().window(handle);
    if ((await driver.getCurrentUrl()) !== "about:startup") {
      continue;
    }
    const isPrivate = await inChrome(
      driver,
      `arguments[arguments.length - 1](PrivateBrowsingUtils.isWindowPrivate(window))`,
    );
    if (isPrivate !== privateWindow) {
      continue;
    }
    const page = await driver.executeScript(() => ({
      ready: document.body?.dataset.ready === "true",
      state: document.body?.dataset.state ?? null,
      apis: typeof globalThis.browser?.runtime?.connectNative === "function",
      noApi: document.getElementById("no-api")?.hidden === false ? document.getElementById("no-api").innerText : null,
      thisStartVisible: document.getElementById("this-start")?.checkVisibility() ?? false,
      mode: document.getElementById("mode")?.dataset.mode ?? null,
    }));
    if (page.ready) {
      pages.push({ ...page, handle });
    }
  }
  return pages;
}

/** The first finished about:startup page of private or normal windows, or null. */
async function finishedAboutStartup(driver, { privateWindow }) {
  return (await finishedPages(driver, { privateWindow }))[0] ?? null;
}

describe("a permanently installed add-on across a restart", () => {
  it("session restore brings the about:startup tab back showing the page; a private window says why not, then works once allowed", { timeout: 180000 }, async () => {
    const first = await startFirefox({ profileDir: profile, temporary: false, prefs: PREFS });
    try {
      assert.ok(await openAboutStartup(first.driver, { privateWindow: false }), "a normal window to open about:startup in");
      await waitFor(() => finishedAboutStartup(first.driver, { privateWindow: false }), {
        timeout: 30000,
        message: "about:startup to load in the first session",
      });
    } finally {
      await first.stop();
    }

    // The same profile again, add-on not reinstalled: it starts with Firefox, as for a user. Before
    // the fix WebDriver's New Session itself never returned here (it waits for the selected tab's
    // first load, which never ended).
    const second = await startFirefox({ profileDir: profile, installAddon: false, prefs: PREFS });
    try {
      const restored = await waitFor(() => finishedAboutStartup(second.driver, { privateWindow: false }), {
        timeout: 30000,
        message: "the restored about:startup tab to show the page (body[data-ready])",
      });
      assert.equal(restored.state, null, "the restored page is the whole page, not the no-API text");
      assert.equal(restored.apis, true, "the restored page has the add-on's API");
      assert.equal(restored.mode, "full");
      assert.equal(restored.thisStartVisible, true);
      await second.screenshot("restored-about-startup");

      // A private window, add-on not allowed there (Firefox's default for every add-on).
      await inChrome(second.driver, `OpenBrowserWindow({ private: true }); arguments[arguments.length - 1]();`);
      await waitFor(() => openAboutStartup(second.driver, { privateWindow: true }), {
        timeout: 20000,
        message: "a private window to open about:startup in",
      });
      const refused = await waitFor(() => finishedAboutStartup(second.driver, { privateWindow: true }), {
        timeout: 30000,
        message: "about:startup in the private window to finish",
      });
      assert.equal(refused.state, "no-api");
      assert.equal(refused.apis, false);
      assert.equal(refused.thisStartVisible, false, "no empty sections beside the explanation");
      assert.ok(refused.noApi.includes(MESSAGES.noApiExplanation.message), refused.noApi);
      assert.ok(refused.noApi.includes(MESSAGES.noApiHowTo.message), refused.noApi);
      await second.screenshot("private-about-startup-not-allowed");

      // Allowed, as about:addons' "Run in Private Windows" does it: the permission, then a reload
      // of the add-on (the refused tab stays open: it was never one of the add-on's contexts).
      const allowError = await inChrome(
        second.driver,
        `const [id, done] = arguments;
         const { AddonManager } = ChromeUtils.importESModule("resource://gre/modules/AddonManager.sys.mjs");
         const { ExtensionPermissions } = ChromeUtils.importESModule("resource://gre/modules/ExtensionPermissions.sys.mjs");
         (async () => {
           const addon = await AddonManager.getAddonByID(id);
           await ExtensionPermissions.add(id, { permissions: ["internal:privateBrowsingAllowed"], origins: [] },
             WebExtensionPolicy.getByID(id)?.extension);
           await addon.reload();
         })().then(() => done(null), (error) => done(String(error)));`,
        EXTENSION_ID,
      );
      assert.equal(allowError, null, "allowing the add-on in private windows");
      // What the page tells the user to do next: reload the tab. Its window handle is looked up
      // again (the add-on's reload changes it). The reload reaches the content processes a
      // moment after AddonManager's promise: a page still without the API is reloaded again.
      const allowed = await waitFor(
        async () => {
          const [tab] = await finishedPages(second.driver, { privateWindow: true });
          await second.driver.switchTo().window(tab.handle);
          await second.driver.navigate().refresh();
          const page = await waitFor(() => finishedAboutStartup(second.driver, { privateWindow: true }), {
            timeout: 10000,
            message: "the reloaded private tab to finish",
          });
          return page.apis ? page : null;
        },
        { timeout: 30000, interval: 1000, message: "the reloaded private tab to have the add-on's API" },
      );
      assert.equal(allowed.state, null);
      assert.equal(allowed.mode, "full");
      assert.equal(allowed.thisStartVisible, true);
      await second.screenshot("private-about-startup-allowed");
    } finally {
      await second.stop();
    }
  });
});
