import browser from "./lib/transport/browser.js";
import { openStartupPage } from "./lib/models/page-url.js";
import { HOST_NAME } from "./lib/transport/host-client.js";
import { HostConnection } from "./lib/transport/host-connection.js";
import { HostRelay, RELAY_PORT_NAME } from "./lib/transport/host-relay.js";
import { recordThisStart } from "./lib/models/recorder.js";
import { learnOnce } from "./lib/models/plan.js";
import { quitFirefox, reportToBench } from "./lib/transport/bench-report.js";
import { CURRENT_START_KEY } from "./lib/models/history.js";
import { startupApi } from "./lib/models/mode.js";
import { helloHint, withHelloHint } from "./lib/transport/hello-hint.js";

// about:startup in full mode, the extension's own page in basic mode (lib/models/page-url.js).
function openPage(options) {
  return openStartupPage(browser, options);
}

// The one native-host connection (lib/transport/host-connection.js): opened on the first request, opened
// again by the next request after the host crashed or was missing. Pages and the popup reach it
// through runtime ports named RELAY_PORT_NAME, so a preload started from the popup keeps running
// when the popup closes. While the native port is open Firefox does not suspend this event page;
// the relay closes it once no page or popup is open and nothing runs.
const hostConnection = new HostConnection(() => browser.runtime.connectNative(HOST_NAME));
// A Snap or Flatpak Firefox starts the host through the desktop portal, not as its child: every
// hello then says which Firefox this is, and the host matches it against the running processes
// (lib/transport/hello-hint.js). The first hello may go out before the browser info is in; later ones
// (the page's) carry it.
let browserHint = null;
browser.runtime.getBrowserInfo().then(
  (info) => (browserHint = helloHint(info)),
  () => {},
);
withHelloHint(hostConnection, () => browserHint);
const hostRelay = new HostRelay(hostConnection);
browser.runtime.onConnect.addListener((port) => {
  if (port.name === RELAY_PORT_NAME) {
    hostRelay.attach(port);
  }
});

// A temporary install (npm start, web-ext run, about:debugging) lands the user on the page.
browser.runtime.onInstalled.addListener(({ temporary }) => {
  if (temporary) {
    openPage();
  }
});

// No browser.action.onClicked: it never fires while the action has a popup (the popup links to
// the page).

// Typing "about-startup" and Enter in the address bar opens the page where the address bar says.
browser.omnibox.setDefaultSuggestion({ description: browser.i18n.getMessage("aboutOmniboxSuggestion") });
browser.omnibox.onInputEntered.addListener((text, disposition) => {
  openPage({ disposition });
});

// Startup history (lib/models/recorder.js): one record per Firefox process start. The onStartup listener
// makes Firefox start this event page at every browser start; a page woken later (or an add-on
// installed or enabled mid-run, where onStartup never fires) finds its start already recorded, or
// records no add-on moment of its own.
let startedWithBrowser = false;
browser.runtime.onStartup.addListener(() => {
  startedWithBrowser = true;
});

async function recordStart() {
  await new Promise((resolve) => setTimeout(resolve, 1000)); // let onStartup arrive first
  const api = startupApi(browser);
  const { status, record } = await recordThisStart({
    storage: browser.storage.local,
    getStartupInfo: api ? () => api.getStartupInfo() : null,
    // An older full flavour's experiment lacks it: then the start has no costs, as in basic mode.
    getStartCosts: typeof api?.getStartCosts === "function" ? () => api.getStartCosts() : null,
    selfId: browser.runtime.id,
    requestHost: (command) => hostRelay.request(command), // the one host connection
    getBrowserInfo: () => browser.runtime.getBrowserInfo(),
    getPlatformInfo: () => browser.runtime.getPlatformInfo(),
    backgroundStartedAt: performance.timeOrigin,
    addonStartedLater: () => !startedWithBrowser,
  });
  if (record) {
    await browser.storage.session.set({ [CURRENT_START_KEY]: record.id }); // the page highlights it
  }
  console.info(`about:startup: this start ${status}`);
  if (record) {
    await learnThisStart(record);
  }
  // Only a start under `npm run bench` goes anywhere (the host refuses it otherwise).
  const sent = await reportToBench(record, (command, params) => hostRelay.request(command, params));
  if (sent === "sent") {
    // The benchmark's Firefox quits once its record is out. Closing the last window is Firefox's
    // ordinary quit on Linux; SIGTERM is not a clean one on ESR 153 (docs/benchmarks.md).
    console.info("about:startup: record handed to the benchmark; quitting");
    await quitFirefox(browser.windows);
  }
}

// Once this start is recorded (full mode: after sessionRestored), the host learns its working set
// (pages of Firefox's files the process tree mapped or cached) for the planned preload
// (lib/models/plan.js), once per process start. A missing or older host only leaves a note in storage:
// learning never gets in the way of recording. Before the benchmark report, since a benchmark's
// Firefox quits right after it.
async function learnThisStart(record) {
  try {
    const { status, entry } = await learnOnce({
      startId: record.id,
      sessionRestoredMs: record.milestones?.sessionRestored ?? null,
      storage: browser.storage.local,
      requestHost: (command, params) => hostRelay.request(command, params),
    });
    if (status === "error") {
      console.warn(`about:startup: the host could not learn this start: ${entry.error.message}`);
    } else {
      console.info(`about:startup: learn ${status}`);
    }
  } catch (error) {
    console.error("about:startup: learning this start failed:", error);
  }
}

recordStart().catch((error) => console.error("about:startup: recording this start failed:", error));
