import { test } from "node:test";
import assert from "node:assert/strict";
import { ABOUT_URL, isAboutRegistered, openStartupPage, pageUrl, whereFor } from "../../../../extension/lib/models/page-url.js";

const getURL = (path) => `moz-extension://uuid/${path}`;

test("pageUrl: about:startup when registered, else the extension page", () => {
  assert.equal(pageUrl({ aboutRegistered: true, getURL }), ABOUT_URL);
  assert.equal(pageUrl({ aboutRegistered: false, getURL }), "moz-extension://uuid/page/startup.html");
});

test("whereFor maps the omnibox dispositions to openTrustedLinkIn's where", () => {
  assert.equal(whereFor("currentTab"), "current");
  assert.equal(whereFor("newForegroundTab"), "tab");
  assert.equal(whereFor("newBackgroundTab"), "tabshifted");
  assert.equal(whereFor(undefined), "tab");
});

/** A fake browser: `aboutStartup` only in the full flavour; records what was opened. */
function fakeBrowser({ status = null, openPageFails = false } = {}) {
  const calls = [];
  const api = {
    calls,
    runtime: { getURL },
    tabs: {
      create: async (options) => calls.push(["create", options]),
      update: async (options) => calls.push(["update", options]),
    },
  };
  if (status) {
    api.aboutStartup = {
      status: async () => {
        if (status instanceof Error) throw status;
        return status;
      },
      openPage: async (where) => {
        if (openPageFails) throw new Error("no window");
        calls.push(["openPage", where]);
      },
    };
  }
  return api;
}

test("isAboutRegistered: only when the experiment says the address is ours", async () => {
  assert.equal(await isAboutRegistered(fakeBrowser()), false);
  assert.equal(await isAboutRegistered(fakeBrowser({ status: { registered: true, ours: true } })), true);
  assert.equal(await isAboutRegistered(fakeBrowser({ status: { registered: true, ours: false } })), false);
  assert.equal(await isAboutRegistered(fakeBrowser({ status: new Error("boom") })), false);
  assert.equal(await isAboutRegistered(undefined), false);
});

test("full mode opens about:startup through the experiment, where the omnibox asked", async () => {
  const browser = fakeBrowser({ status: { registered: true, ours: true } });
  assert.equal(await openStartupPage(browser), ABOUT_URL);
  assert.equal(await openStartupPage(browser, { disposition: "currentTab" }), ABOUT_URL);
  assert.equal(await openStartupPage(browser, { disposition: "newBackgroundTab" }), ABOUT_URL);
  assert.deepEqual(browser.calls, [
    ["openPage", "tab"],
    ["openPage", "current"],
    ["openPage", "tabshifted"],
  ]);
});

test("basic mode (no experiment) opens the extension page with tabs.create / tabs.update", async () => {
  const browser = fakeBrowser();
  const page = "moz-extension://uuid/page/startup.html";
  assert.equal(await openStartupPage(browser), page);
  await openStartupPage(browser, { disposition: "newBackgroundTab" });
  await openStartupPage(browser, { disposition: "currentTab" });
  assert.deepEqual(browser.calls, [
    ["create", { url: page, active: true }],
    ["create", { url: page, active: false }],
    ["update", { url: page }],
  ]);
});

test("about:startup taken by someone else, or openPage failing: the extension page", async () => {
  const taken = fakeBrowser({ status: { registered: true, ours: false } });
  await openStartupPage(taken);
  assert.deepEqual(taken.calls, [["create", { url: "moz-extension://uuid/page/startup.html", active: true }]]);
  const failing = fakeBrowser({ status: { registered: true, ours: true }, openPageFails: true });
  assert.equal(await openStartupPage(failing), "moz-extension://uuid/page/startup.html");
});
