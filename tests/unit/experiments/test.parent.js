// Runs the experiment script as Firefox does (a classic script) in node:vm contexts with fake
// XPCOM: once as the experiment's parent script (ExtensionAPI defined) and once as the process
// script of a content process (no ExtensionAPI), the two roles docs/design/about-startup-url.md
// describes.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import vm from "node:vm";
import { costsFromReading, MISSING } from "../../../extension/lib/models/start-costs.js";

const SCRIPT = "experiments/about-startup/parent.js";
const source = fs.readFileSync(new URL(`../../../extension/${SCRIPT}`, import.meta.url), "utf8");
const CONTRACT_ID = "@mozilla.org/network/protocol/about;1?what=startup";
const BASE = "moz-extension://uuid-1/";

/** The component registrar of one process. */
function fakeRegistrar() {
  const byContract = new Map();
  const byClass = new Map();
  return {
    byContract,
    isContractIDRegistered: (contract) => byContract.has(contract),
    isCIDRegistered: (cid) => byClass.has(cid),
    registerFactory(cid, name, contract, factory) {
      byClass.set(cid, factory);
      byContract.set(contract, { cid, factory });
    },
    unregisterFactory(cid, factory) {
      assert.equal(byClass.get(cid), factory, "unregisterFactory gets the registered factory");
      byClass.delete(cid);
      for (const [contract, entry] of byContract) {
        if (entry.cid === cid) byContract.delete(contract);
      }
    },
  };
}

/** Fake message managers: the parent's ppmm and one content process's cpmm sharing data. */
function fakeMessaging() {
  const shared = new Map();
  const listeners = new Map();
  const log = [];
  const parentListeners = new Map();
  const ppmm = {
    parentListeners,
    addMessageListener(name, listener) {
      parentListeners.set(name, [...(parentListeners.get(name) ?? []), listener]);
    },
    removeMessageListener(name, listener) {
      parentListeners.set(name, (parentListeners.get(name) ?? []).filter((l) => l !== listener));
    },
    sharedData: {
      set: (key, value) => shared.set(key, value),
      delete: (key) => shared.delete(key),
      flush: () => log.push("flush"),
    },
    loadProcessScript: (url, delayed) => log.push(["load", url, delayed]),
    removeDelayedProcessScript: (url) => log.push(["remove", url]),
    broadcastAsyncMessage(name) {
      log.push(["broadcast", name]);
      for (const listener of [...(listeners.get(name) ?? [])]) listener.receiveMessage({ name });
    },
  };
  const cpmm = {
    sharedData: { get: (key) => shared.get(key) },
    sendAsyncMessage(name) {
      log.push(["child-sent", name]);
      for (const listener of [...(parentListeners.get(name) ?? [])]) listener.receiveMessage({ name });
    },
    addMessageListener(name, listener) {
      listeners.set(name, [...(listeners.get(name) ?? []), listener]);
    },
    removeMessageListener(name, listener) {
      listeners.set(name, (listeners.get(name) ?? []).filter((l) => l !== listener));
    },
  };
  return { shared, listeners, log, ppmm, cpmm };
}

const PROCESS_TYPE_DEFAULT = 0;
const PROCESS_TYPE_CONTENT = 2;

/**
 * A browser tab as reloadStranded sees it: its current session-history entry (what session
 * restore wrote), the document it shows, whether restore is still pending.
 */
function fakeTab({ entry = null, document = null, pending = false, history = true }) {
  const tab = {
    reloads: 0,
    hasAttribute: (name) => name === "pending" && pending,
    linkedBrowser: {
      documentURI: document ? { spec: document } : null,
      browsingContext: {
        sessionHistory: history
          ? { index: entry ? 0 : -1, getEntryAtIndex: (i) => (i === 0 && entry ? { URI: { spec: entry } } : null) }
          : null,
      },
      reload: () => {
        tab.reloads += 1;
      },
    },
  };
  return tab;
}

/** Services.obs: observers by topic; `notify(subject, topic)` calls them as Firefox does. */
function fakeObserverService() {
  const byTopic = new Map();
  return {
    byTopic,
    addObserver(observer, topic) {
      byTopic.set(topic, [...(byTopic.get(topic) ?? []), observer]);
    },
    removeObserver(observer, topic) {
      byTopic.set(topic, (byTopic.get(topic) ?? []).filter((o) => o !== observer));
    },
    notify(subject, topic) {
      for (const observer of byTopic.get(topic) ?? []) (typeof observer === "function" ? observer : observer.observe)(subject, topic);
    },
  };
}

/**
 * A browser window: `fields` (gBrowser…) and DOM event listeners; `dispatch(type, tab)` sends a
 * session store event from one of its tabs, as SessionStore does (it bubbles to the window).
 */
function fakeWindow(fields = {}) {
  const listeners = new Map();
  return {
    closed: false,
    ...fields,
    listeners,
    addEventListener(type, listener) {
      listeners.set(type, [...(listeners.get(type) ?? []), listener]);
    },
    removeEventListener(type, listener) {
      listeners.set(type, (listeners.get(type) ?? []).filter((l) => l !== listener));
    },
    dispatch(type, tab) {
      for (const listener of [...(listeners.get(type) ?? [])]) listener({ type, target: tab });
    },
  };
}

function fakeGlobals({ registrar, messaging, processType, startupInfo = {}, extensionAPI = true, windows = [], modules = {}, glean = undefined, prefs = undefined }) {
  const globals = {
    Components: {
      manager: { QueryInterface: () => registrar },
      ID: (id) => id,
    },
    Ci: {
      nsIComponentRegistrar: "nsIComponentRegistrar",
      nsIWritablePropertyBag2: "nsIWritablePropertyBag2",
      nsIAboutModule: { URI_MUST_LOAD_IN_EXTENSION_PROCESS: 1 << 6, IS_SECURE_CHROME_UI: 1 << 8 },
      nsIXULRuntime: { PROCESS_TYPE_DEFAULT },
    },
    ChromeUtils: {
      generateQI: () =>
        function QueryInterface() {
          return this;
        },
      importESModule(url) {
        if (!(url in modules)) {
          throw new Error(`no module ${url} in this fake Firefox`);
        }
        return modules[url];
      },
    },
    Services: {
      appinfo: { processType },
      prefs,
      wm: { getEnumerator: (type) => (type === "navigator:browser" ? windows : []) },
      obs: fakeObserverService(),
      startup: { getStartupInfo: () => startupInfo },
      ppmm: messaging.ppmm,
      cpmm: messaging.cpmm,
      io: {
        newURI: (spec) => ({ spec }),
        newChannelFromURIWithLoadInfo: (uri, loadInfo) => {
          const properties = {};
          return {
            URI: uri,
            loadInfo,
            properties,
            QueryInterface() {
              return { setPropertyAsInterface: (name, value) => (properties[name] = value) };
            },
          };
        },
      },
      scriptSecurityManager: {
        createContentPrincipal: (uri, originAttributes) => ({ principalOf: uri.spec, originAttributes }),
      },
    },
  };
  if (glean) {
    globals.Glean = glean;
  }
  if (extensionAPI) {
    globals.ExtensionUtils = { ExtensionError: class ExtensionError extends Error {} };
    globals.ExtensionAPI = class {
      constructor(extension) {
        this.extension = extension;
      }
    };
  }
  return globals;
}

/** The experiment in the parent process: returns the ExtensionAPI instance. */
function loadParent({ registrar = fakeRegistrar(), messaging = fakeMessaging(), startupInfo, windows, modules, glean, prefs } = {}) {
  const context = vm.createContext(
    fakeGlobals({ registrar, messaging, processType: PROCESS_TYPE_DEFAULT, startupInfo, windows, modules, glean, prefs }),
  );
  vm.runInContext(source, context);
  const extension = {
    baseURI: { resolve: (path) => BASE + path },
    privateBrowsingAllowed: false,
  };
  const instance = new context.aboutStartup(extension);
  return { instance, api: instance.getAPI({}).aboutStartup, registrar, messaging, context };
}

/** The same file as a content process's process script. */
function loadChild({ registrar = fakeRegistrar(), messaging, processType = PROCESS_TYPE_CONTENT }) {
  const context = vm.createContext(fakeGlobals({ registrar, messaging, processType, extensionAPI: false }));
  vm.runInContext(source, context);
  return { registrar, context };
}

test("getStartupInfo: Dates become ms since epoch", async () => {
  const { api } = loadParent({ startupInfo: { process: new Date(1000), main: new Date(1500) } });
  assert.deepEqual({ ...(await api.getStartupInfo()) }, { process: 1000, main: 1500 });
});

test("getStartupInfo: invalid, zero and non-Date milestones are left out, not 0", async () => {
  const { api } = loadParent({
    startupInfo: {
      process: new Date(1000),
      sessionRestored: new Date(Number.NaN),
      firstPaint: new Date(0),
      weird: "yesterday",
      nothing: null,
    },
  });
  assert.deepEqual({ ...(await api.getStartupInfo()) }, { process: 1000 });
});

test("the script declares nothing at the top level (process scripts share one global per process)", () => {
  const { context } = loadChild({ messaging: fakeMessaging() });
  assert.deepEqual(
    Object.keys(context).filter((k) => !["Components", "Ci", "ChromeUtils", "Services"].includes(k)),
    [],
  );
  // A second load (re-install, update: another URL in the same global) must not throw.
  vm.runInContext(source, context);
});

test("startup registers in the parent, shares the page URL, then loads itself into every process", async () => {
  const { instance, api, registrar, messaging } = loadParent();
  assert.deepEqual({ ...(await api.status()) }, { registered: false, ours: false });
  instance.onStartup();
  assert.ok(registrar.isContractIDRegistered(CONTRACT_ID));
  assert.equal(messaging.shared.get("aboutStartup:pageURL"), `${BASE}page/startup.html`);
  const load = messaging.log.find((entry) => entry[0] === "load");
  assert.ok(messaging.log.indexOf("flush") < messaging.log.indexOf(load), "shared data flushed before the script loads");
  assert.match(load[1], new RegExp(`^${BASE}${SCRIPT}\\?run=`), "the process script is this very file");
  assert.equal(load[2], true, "also for processes started later");
  assert.deepEqual({ ...(await api.status()) }, { registered: true, ours: true });
});

test("each start loads the process script under a new URL (content processes cache scripts by URL)", () => {
  const messaging = fakeMessaging();
  const registrar = fakeRegistrar();
  const first = loadParent({ registrar, messaging });
  first.instance.onStartup();
  first.instance.onShutdown(false);
  const second = loadParent({ registrar, messaging });
  second.instance.onStartup();
  const loads = messaging.log.filter((entry) => entry[0] === "load").map((entry) => entry[1]);
  assert.equal(loads.length, 2);
  assert.notEqual(loads[0], loads[1]);
});

test("the about module: extension page, about:startup as URL, extension principal, base URI", () => {
  const { instance, registrar } = loadParent();
  instance.onStartup();
  const { factory } = registrar.byContract.get(CONTRACT_ID);
  const module = factory.createInstance("nsIAboutModule");
  assert.equal(module.getURIFlags(), 1 << 6, "extension process only, not IS_SECURE_CHROME_UI (1 << 8): not Firefox's own UI");
  const aboutURI = { spec: "about:startup" };
  const loadInfo = { originAttributes: { userContextId: 0 } };
  const channel = module.newChannel(aboutURI, loadInfo);
  const page = `${BASE}page/startup.html`;
  assert.equal(channel.URI.spec, page);
  assert.equal(channel.loadInfo, loadInfo);
  assert.equal(channel.originalURI, aboutURI);
  assert.deepEqual({ ...channel.owner }, { principalOf: page, originAttributes: loadInfo.originAttributes });
  assert.equal(channel.properties.baseURI.spec, page);
  assert.equal(module.getChromeURI().spec, page);
});

test("a content process registers from shared data and unregisters on the parent's message", () => {
  const messaging = fakeMessaging();
  const parent = loadParent({ messaging });
  parent.instance.onStartup();
  const child = loadChild({ messaging });
  assert.ok(child.registrar.isContractIDRegistered(CONTRACT_ID));
  const module = child.registrar.byContract.get(CONTRACT_ID).factory.createInstance("nsIAboutModule");
  assert.equal(module.newChannel({ spec: "about:startup" }, { originAttributes: {} }).URI.spec, `${BASE}page/startup.html`);

  parent.instance.onShutdown(false);
  assert.equal(child.registrar.isContractIDRegistered(CONTRACT_ID), false);
  assert.deepEqual(messaging.listeners.get("aboutStartup:unregister"), [], "the listener removed itself");
});

test("shutdown for disable/uninstall/update/reload unregisters everywhere; quit does nothing", async () => {
  const quit = loadParent();
  quit.instance.onStartup();
  quit.instance.onShutdown(true);
  assert.ok(quit.registrar.isContractIDRegistered(CONTRACT_ID), "quit: left to die with the process");
  assert.equal(
    quit.messaging.log.some((entry) => entry[0] === "broadcast"),
    false,
  );

  const { instance, api, registrar, messaging } = loadParent();
  instance.onStartup();
  const url = messaging.log.find((entry) => entry[0] === "load")[1];
  instance.onShutdown(false);
  assert.equal(registrar.isContractIDRegistered(CONTRACT_ID), false);
  assert.equal(messaging.shared.has("aboutStartup:pageURL"), false);
  assert.deepEqual(
    messaging.log.filter((entry) => entry[0] === "remove"),
    [["remove", url]],
  );
  assert.ok(messaging.log.some((entry) => entry[0] === "broadcast" && entry[1] === "aboutStartup:unregister"));
  assert.deepEqual({ ...(await api.status()) }, { registered: false, ours: false });

  // enable again (same instance kind, new start): registers again
  const again = loadParent({ registrar, messaging });
  again.instance.onStartup();
  assert.ok(registrar.isContractIDRegistered(CONTRACT_ID));
});

test("never clobbers an about:startup that someone else registered, nor removes it", async () => {
  const registrar = fakeRegistrar();
  const theirs = { theirs: true };
  registrar.registerFactory("{other}", "about:startup", CONTRACT_ID, theirs);
  const { instance, api, messaging } = loadParent({ registrar });
  instance.onStartup();
  assert.equal(registrar.byContract.get(CONTRACT_ID).factory, theirs);
  assert.equal(messaging.shared.size, 0);
  assert.equal(messaging.log.length, 0, "no process script, no shared data");
  assert.deepEqual({ ...(await api.status()) }, { registered: true, ours: false });
  await assert.rejects(api.openPage("tab"), { name: "Error", message: /not this extension's page/ });
  instance.onShutdown(false);
  assert.equal(registrar.byContract.get(CONTRACT_ID).factory, theirs);

  const child = fakeRegistrar();
  child.registerFactory("{other}", "about:startup", CONTRACT_ID, theirs);
  const childMessaging = fakeMessaging();
  childMessaging.shared.set("aboutStartup:pageURL", `${BASE}page/startup.html`);
  loadChild({ registrar: child, messaging: childMessaging });
  assert.equal(child.byContract.get(CONTRACT_ID).factory, theirs);
  assert.equal(childMessaging.listeners.size, 0);
});

test("in the parent process the process-script role does nothing (the experiment registers there)", () => {
  const messaging = fakeMessaging();
  messaging.shared.set("aboutStartup:pageURL", `${BASE}page/startup.html`);
  const { registrar } = loadChild({ messaging, processType: PROCESS_TYPE_DEFAULT });
  assert.equal(registrar.isContractIDRegistered(CONTRACT_ID), false);
});

test("a content process that registers makes the parent reload only the tabs stranded on about:startup", () => {
  const stranded = fakeTab({ entry: "about:startup" }); // restored, its load lost: initial about:blank
  const shown = fakeTab({ entry: "about:startup", document: "about:startup" });
  const pending = fakeTab({ entry: "about:startup", pending: true }); // loads later, when selected
  const elsewhere = fakeTab({ entry: "about:home", document: "about:blank" });
  const loading = fakeTab({}); // a first load in flight: no entry yet
  const noHistory = fakeTab({ history: false });
  const windows = [fakeWindow({ gBrowser: { tabs: [stranded, shown, pending] } }), fakeWindow({ gBrowser: null }), fakeWindow({ gBrowser: { tabs: [elsewhere, loading, noHistory] } })];
  const messaging = fakeMessaging();
  const parent = loadParent({ messaging, windows });
  parent.instance.onStartup();
  assert.equal(stranded.reloads, 0, "nothing before a content process has the module");

  loadChild({ messaging });
  assert.deepEqual(messaging.log.filter((entry) => entry[0] === "child-sent"), [["child-sent", "aboutStartup:registered"]]);
  assert.deepEqual(
    [stranded, shown, pending, elsewhere, loading, noHistory].map((tab) => tab.reloads),
    [1, 0, 0, 0, 0, 0],
  );

  parent.instance.onShutdown(false);
  assert.deepEqual(messaging.ppmm.parentListeners.get("aboutStartup:registered"), [], "listener removed on shutdown");
});

test("a content process that finds about:startup taken says nothing to the parent", () => {
  const messaging = fakeMessaging();
  messaging.shared.set("aboutStartup:pageURL", `${BASE}page/startup.html`);
  const registrar = fakeRegistrar();
  registrar.registerFactory("{other}", "about:startup", CONTRACT_ID, { theirs: true });
  loadChild({ registrar, messaging });
  assert.equal(messaging.log.some((entry) => entry[0] === "child-sent"), false);
});

/**
 * Firefox's FOG as ESR 153.8 starts it (StartupTelemetry.initFOG): an idle task, begun before the
 * last startup idle task resolves BrowserInitState.startupIdleTaskPromise, that awaits the usage
 * profile and the user's data-policy notification, then initializes FOG. Glean read before that
 * blocks the real Firefox for good; here it counts the read and throws.
 * `fastTimer`: Timer.sys.mjs whose waits of a second or more end at once.
 */
function fakeFog({ fastTimer = false, browserGlue = true } = {}) {
  const fog = { initialized: false, reads: 0, readsBeforeInit: 0 };
  let resolveIdle;
  let resolveNotified;
  const idle = new Promise((resolve) => (resolveIdle = resolve));
  const notified = new Promise((resolve) => (resolveNotified = resolve));
  const UsageReporting = { ensureInitialized: async () => {} };
  const TelemetryReportingPolicy = { ensureUserIsNotified: async () => notified.then(() => {}) };
  const initFOG = async () => {
    await UsageReporting.ensureInitialized();
    await TelemetryReportingPolicy.ensureUserIsNotified();
    fog.initialized = true; // Services.fog.initializeFOG()
  };
  const metric = () =>
    new Proxy(
      {},
      {
        get: (_, key) =>
          key === "testGetValue"
            ? () => {
                fog.reads += 1;
                if (!fog.initialized) {
                  fog.readsBeforeInit += 1;
                  throw new Error("testGetValue before initializeFOG: the real Firefox hangs here");
                }
                return { count: 1, sum: 5e6, values: { 4_999_999: 1 } };
              }
            : metric(),
      },
    );
  const timer = fastTimer ? { setTimeout: (fn, ms) => setTimeout(fn, ms >= 1000 ? 5 : ms), clearTimeout } : { setTimeout, clearTimeout };
  const modules = {
    "resource://gre/modules/Timer.sys.mjs": timer,
    "resource://gre/modules/UsageReporting.sys.mjs": { UsageReporting },
    "resource://gre/modules/TelemetryReportingPolicy.sys.mjs": { TelemetryReportingPolicy },
    "resource://gre/modules/AddonManager.sys.mjs": {
      AddonManager: { getAddonsByTypes: async () => [{ id: "a@x.test", name: "A", version: "1.0", type: "extension", isActive: true }] },
    },
    "resource://gre/modules/ExtensionParent.sys.mjs": { ExtensionParent: { GlobalManager: { extensionMap: new Map([["a@x.test", { state: "Startup: Complete" }]]) } } },
  };
  if (browserGlue) {
    modules["resource:///modules/BrowserGlue.sys.mjs"] = { BrowserInitState: { startupIdleTaskPromise: idle } };
  }
  const prefs = { getBoolPref: (_, fallback) => fallback, getIntPref: (name, fallback) => (name === "telemetry.fog.test.localhost_port" ? -1 : fallback) };
  return { fog, initFOG, resolveIdle, resolveNotified, modules, glean: metric(), prefs };
}

const turns = async (n = 20) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

test("getStartCosts reads Glean only once Firefox has initialized FOG: earlier, a read blocks Firefox for good", async () => {
  const firefox = fakeFog();
  const { api } = loadParent(firefox);
  const initializing = firefox.initFOG(); // the idle task, begun before the startup idle tasks end
  const reading = api.getStartCosts();
  await turns();
  assert.equal(firefox.fog.reads, 0, "no read while the startup idle tasks run");
  firefox.resolveIdle();
  await turns();
  assert.equal(firefox.fog.reads, 0, "nor while initFOG waits for the user's data-policy notification");
  firefox.resolveNotified();
  const value = await reading;
  await initializing;
  assert.equal(firefox.fog.readsBeforeInit, 0);
  assert.ok(firefox.fog.reads > 0, "read once FOG is initialized");
  assert.equal(value.addons.length, 1);
  assert.equal(value.addons[0].startup.sum, 5e6);
  assert.equal(value.addons[0].startup.error, undefined);
  assert.equal(value.addons[0].blockingWebRequest, false, "an add-on without webRequestBlocking");
});

test("getStartCosts gives up without reading where FOG is not initialized in time, or Firefox gives no sign of it", async () => {
  const late = fakeFog({ fastTimer: true });
  await assert.rejects(loadParent(late).api.getStartCosts(), /has not initialized Glean/);
  assert.equal(late.fog.reads, 0);
  const unknown = fakeFog({ browserGlue: false });
  unknown.resolveIdle();
  unknown.resolveNotified();
  await unknown.initFOG();
  await assert.rejects(loadParent(unknown).api.getStartCosts(), /has not initialized Glean/);
  assert.equal(unknown.fog.reads, 0);
});

/** A tab as the tab watcher sees it: its panel id (the string that tells tabs apart), whether selected. */
const panelTab = (panel, selected = false) => ({ linkedPanel: panel, selected, hasAttribute: () => false });

/** A browser window showing `tabs` (the selected one is the one whose `selected` is true). */
const tabsWindow = (...tabs) => fakeWindow({ gBrowser: { tabs, selectedTab: tabs.find((tab) => tab.selected) ?? null } });

/** How many listeners a fake window still has, of every event type. */
const listening = (window) => [...window.listeners.values()].reduce((n, list) => n + list.length, 0);

/**
 * Timer.sys.mjs with the test's hand on the clock: every wait asked for is logged (`asked`, in ms);
 * a 0 ms wait (one task more) runs on the next turn of the event loop, a longer one only when `fire(ms)` says so,
 * so no test waits out a real 20 s and a poll would never come round by itself.
 */
function fakeTimer() {
  const asked = [];
  const pending = new Map();
  let next = 0;
  return {
    asked,
    pending: () => [...pending.values()].map((timer) => timer.ms),
    setTimeout(fn, ms) {
      asked.push(ms);
      if (ms === 0) {
        return setImmediate(fn);
      }
      next += 1;
      pending.set(next, { fn, ms });
      return next;
    },
    clearTimeout(id) {
      if (typeof id === "number") pending.delete(id);
      else clearImmediate(id);
    },
    fire(ms) {
      for (const [id, timer] of [...pending]) {
        if (timer.ms === ms) {
          pending.delete(id);
          timer.fn();
        }
      }
    },
  };
}

/**
 * The experiment started (onStartup: the tab watcher on) in a Firefox whose FOG is initialized,
 * with `windows` open at the extension's startup and the hand-driven Timer.sys.mjs (fakeTimer).
 * `reading()`: getStartCosts under way, with `done()` telling whether it has answered.
 */
async function watchingTabs(windows = []) {
  const firefox = fakeFog();
  firefox.resolveIdle();
  firefox.resolveNotified();
  await firefox.initFOG();
  const timer = fakeTimer();
  firefox.modules["resource://gre/modules/Timer.sys.mjs"] = timer;
  const parent = loadParent({ ...firefox, windows });
  parent.instance.onStartup();
  const open = (window) => parent.context.Services.obs.notify(window, "browser-window-before-show");
  const observers = () => parent.context.Services.obs.byTopic.get("browser-window-before-show").length;
  const reading = () => {
    let answered = false;
    const promise = parent.api.getStartCosts().finally(() => (answered = true));
    return Object.assign(promise, { done: () => answered });
  };
  return { ...parent, firefox, timer, open, observers, reading };
}

test("getStartCosts: when every restored window's selected tab had finished restoring, waiting for one still restoring", async () => {
  const [shown1, pinned1, shown2, home3] = [["panel-1", true], ["panel-2", false], ["panel-3", true], ["panel-4", true]].map(([panel, selected]) => panelTab(panel, selected));
  // The first window is there when the extension starts; the second and third open later.
  const first = tabsWindow(pinned1, shown1);
  const { api, timer, open, reading } = await watchingTabs([first]);
  const second = tabsWindow(shown2);
  const third = tabsWindow(home3); // a home page: not restored
  open(second);
  open(third);
  for (const [window, tab] of [[first, pinned1], [first, shown1], [second, shown2]]) window.dispatch("SSTabRestoring", tab);
  // The tab selected when the window began restoring counts, not one the user selects after.
  const later = panelTab("panel-5");
  shown1.selected = false;
  later.selected = true;
  first.dispatch("SSTabRestoring", later);
  first.dispatch("SSTabRestored", pinned1);
  const beforeFirst = Date.now();
  first.dispatch("SSTabRestored", shown1);
  const pending = reading();
  await turns();
  assert.equal(pending.done(), false, "waits while the second window's selected tab is still restoring");
  const beforeSecond = Date.now();
  second.dispatch("SSTabRestored", shown2);
  const afterSecond = Date.now();
  await turns();
  assert.equal(pending.done(), true, "answers on the second window's SSTabRestored, with no timer run");
  const value = await pending;
  assert.ok(value.selectedTabsRestoredAt >= beforeSecond && value.selectedTabsRestoredAt <= afterSecond, "the last window's selected tab's moment");
  assert.ok(value.selectedTabsRestoredAt >= beforeFirst);
  // One wait, the 20 s limit, cleared once answered: no polling.
  assert.deepEqual(timer.asked.filter((ms) => ms === 20000 || ms === 50), [20000]);
  assert.deepEqual(timer.pending().filter((ms) => ms === 20000), []);
  // The start's figure is taken once: a later reading gives the same, whatever happened since.
  first.dispatch("SSTabRestored", later);
  second.closed = true;
  assert.equal((await api.getStartCosts()).selectedTabsRestoredAt, value.selectedTabsRestoredAt);
});

test("getStartCosts: once the start's figure is taken, the watcher has left every window and the new-window observer", async () => {
  const shown1 = panelTab("panel-1", true);
  const shown2 = panelTab("panel-2", true);
  const first = tabsWindow(shown1);
  const { instance, open, observers, reading } = await watchingTabs([first]);
  const second = tabsWindow(shown2);
  const quiet = tabsWindow(panelTab("panel-3", true)); // opened later, never restoring anything
  open(second);
  open(quiet);
  first.dispatch("SSTabRestoring", shown1);
  second.dispatch("SSTabRestoring", shown2);
  first.dispatch("SSTabRestored", shown1);
  second.dispatch("SSTabRestored", shown2);
  assert.ok([first, second, quiet].every((window) => listening(window) > 0), "watched until the reading");
  const value = await reading();
  assert.ok(Number.isFinite(value.selectedTabsRestoredAt));
  assert.deepEqual([first, second, quiet].map(listening), [0, 0, 0], "no listener left on any window");
  assert.equal(observers(), 0, "nor an observer of new windows");
  const afterwards = tabsWindow(panelTab("panel-4", true));
  open(afterwards);
  assert.equal(listening(afterwards), 0, "a window opened after the reading is not watched");
  instance.onShutdown(false); // a disable later: nothing left to remove, nothing throws
});

test("getStartCosts: a selected tab still restoring at the 20 s limit makes the figure missing, not 0, and ends the watch", async () => {
  const shown = panelTab("panel-1", true);
  const window = tabsWindow(shown);
  const { timer, observers, reading } = await watchingTabs([window]);
  window.dispatch("SSTabRestoring", shown);
  const pending = reading();
  await turns();
  assert.equal(pending.done(), false);
  timer.fire(20000);
  await turns();
  assert.equal(pending.done(), true, "answers at the limit");
  const value = await pending;
  assert.equal(value.selectedTabsRestoredAt, null);
  assert.deepEqual(costsFromReading(value, null, { processStart: value.readAt - 5000 }).sessionRestore.selectedTabsRestoredAtMs, { missing: MISSING.noRestoredTab });
  assert.equal(listening(window), 0);
  assert.equal(observers(), 0);
  // The tab's load after the limit changes nothing: the start's figure was taken.
  window.dispatch("SSTabRestored", shown);
  assert.equal((await reading()).selectedTabsRestoredAt, null);
});

test("getStartCosts: a window closing while its selected tab restores ends the wait at once, with the other windows' moment", async () => {
  const shown1 = panelTab("panel-1", true);
  const shown2 = panelTab("panel-2", true);
  const first = tabsWindow(shown1);
  const second = tabsWindow(shown2);
  const { timer, reading } = await watchingTabs([first, second]);
  first.dispatch("SSTabRestoring", shown1);
  second.dispatch("SSTabRestoring", shown2);
  const before = Date.now();
  first.dispatch("SSTabRestored", shown1);
  const after = Date.now();
  const pending = reading();
  await turns();
  assert.equal(pending.done(), false);
  second.dispatch("unload"); // Firefox closes it (its `closed` may still read false then)
  await turns();
  assert.equal(pending.done(), true, "no wait for the time limit");
  const value = await pending;
  assert.ok(value.selectedTabsRestoredAt >= before && value.selectedTabsRestoredAt <= after, "the first window's moment");
  assert.deepEqual(timer.pending().filter((ms) => ms === 20000), []);
  assert.deepEqual([first, second].map(listening), [0, 0]);
});

test("getStartCosts: a disable during the wait ends it, and the watch", async () => {
  const shown = panelTab("panel-1", true);
  const window = tabsWindow(shown);
  const { instance, timer, observers, reading } = await watchingTabs([window]);
  window.dispatch("SSTabRestoring", shown);
  const pending = reading();
  await turns();
  instance.onShutdown(false);
  await turns();
  assert.equal(pending.done(), true);
  assert.equal((await pending).selectedTabsRestoredAt, null);
  assert.equal(listening(window), 0);
  assert.equal(observers(), 0);
  assert.deepEqual(timer.pending().filter((ms) => ms === 20000), []);
});

test("getStartCosts: no window restored its selected tab (session restore off): null, at once", async () => {
  const home = panelTab("panel-1", true);
  const pinned = panelTab("panel-2");
  const window = tabsWindow(pinned, home);
  const { firefox, timer, reading } = await watchingTabs([window]);
  window.dispatch("SSTabRestoring", pinned); // restore off still restores the pinned tabs
  window.dispatch("SSTabRestored", pinned);
  const value = await reading();
  assert.equal(value.selectedTabsRestoredAt, null);
  assert.equal(timer.asked.includes(20000), false, "no wait");
  assert.equal(listening(window), 0);
  // A reading without the watch (an experiment not started through onStartup) has no such field.
  assert.equal("selectedTabsRestoredAt" in (await loadParent(firefox).api.getStartCosts()), false);
});
