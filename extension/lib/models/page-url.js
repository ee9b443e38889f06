// Which address is "the page", and how to open it: about:startup when the experiment registered
// it (full mode), else the extension's own moz-extension page (basic mode, or about:startup taken
// by someone else). Pure: the WebExtension API comes in as a parameter.

import { isAboutRegistered } from "./mode.js";

// The mode detection is lib/models/mode.js's; re-exported for the callers that open the page.
export { isAboutRegistered };

export const PAGE = "page/startup.html";
export const ABOUT_URL = "about:startup";

/** The page's URL: `getURL` is runtime.getURL (or a fake). */
export function pageUrl({ aboutRegistered, getURL }) {
  return aboutRegistered ? ABOUT_URL : getURL(PAGE);
}

/** omnibox dispositions -> the `where` of Firefox's openTrustedLinkIn (experiment openPage). */
const WHERE = {
  currentTab: "current",
  newForegroundTab: "tab",
  newBackgroundTab: "tabshifted",
};

export function whereFor(disposition) {
  return WHERE[disposition] ?? "tab";
}


/**
 * Opens the page and resolves with the URL it opened. about:startup goes through the
 * experiment's openPage (tabs.create refuses privileged about: URLs); if that fails, and in
 * basic mode, the moz-extension page opens with tabs.create/tabs.update.
 * `disposition` is the omnibox's: "currentTab", "newForegroundTab" (default), "newBackgroundTab".
 */
export async function openStartupPage(browserApi, { disposition = "newForegroundTab" } = {}) {
  const getURL = (path) => browserApi.runtime.getURL(path);
  if (await isAboutRegistered(browserApi)) {
    try {
      await browserApi.aboutStartup.openPage(whereFor(disposition));
      return ABOUT_URL;
    } catch {
      // e.g. no normal browser window: the extension page still works
    }
  }
  const url = pageUrl({ aboutRegistered: false, getURL });
  if (disposition === "currentTab") {
    await browserApi.tabs.update({ url });
  } else {
    await browserApi.tabs.create({ url, active: disposition !== "newBackgroundTab" });
  }
  return url;
}
