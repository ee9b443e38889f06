import browser from "./lib/browser.js";

const PAGE = "page/startup.html";

function openPage() {
  return browser.tabs.create({ url: browser.runtime.getURL(PAGE) });
}

// A temporary install (npm start, web-ext run, about:debugging) lands the user on the page.
browser.runtime.onInstalled.addListener(({ temporary }) => {
  if (temporary) {
    openPage();
  }
});

browser.action.onClicked.addListener(() => {
  openPage();
});
