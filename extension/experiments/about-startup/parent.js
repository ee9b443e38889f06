/* The aboutStartup experiment: Firefox's startup milestones, and the real about:startup address.
 *
 * This one classic script runs in two places (docs/design/about-startup-url.md):
 *  1. as the experiment's parent script (manifest experiment_apis), in Firefox's privileged
 *     sandbox that defines ExtensionAPI: it defines this.aboutStartup;
 *  2. as a process script (Services.ppmm.loadProcessScript) in every content process, where
 *     ExtensionAPI does not exist: it registers about:startup there too, because the content
 *     process re-creates the channel for about:startup itself and the document is built from
 *     *its* channel.
 * Both need the same about module. The design note kept two copies (parent.js and
 * about-child.js), because the parent script cannot load the add-on's own files
 * (loadSubScript: "Trying to load untrusted URI"). Loading this very file as the process script
 * needs no copy at all. Process scripts share one global per process and later loads of another
 * URL (re-install, update) run in it again: so nothing is declared at the top level, the whole
 * file is one function. */
/* global Cc, Components, Ci, ExtensionUtils, Glean -- both roles' privileged globals (ESLint config lists the rest) */
"use strict";

(function aboutStartupScript(global) {
  const CONTRACT_ID = "@mozilla.org/network/protocol/about;1?what=startup";
  // Fixed, so that a later run (enable, update, re-install) can register it again after unregister.
  const CLASS_ID = "{8f0c7d2e-5b1a-4c3e-9a55-1d2b3c4d5e6f}";
  const SHARED_KEY = "aboutStartup:pageURL"; // Services.ppmm.sharedData: the page URL for children
  const MSG_UNREGISTER = "aboutStartup:unregister"; // parent -> every content process
  const MSG_REGISTERED = "aboutStartup:registered"; // a content process -> parent
  const PAGE = "page/startup.html";

  const registrar = () => Components.manager.QueryInterface(Ci.nsIComponentRegistrar);

  /** The about module that shows `pageURL` (the moz-extension page) at the address about:startup. */
  function aboutModule(pageURL) {
    return {
      QueryInterface: ChromeUtils.generateQI(["nsIAboutModule"]),
      getURIFlags() {
        // The extension process, and nothing more. Not IS_SECURE_CHROME_UI: that flag only makes
        // the address bar's identity box say the page is Firefox's own UI (browser-siteIdentity.js
        // `_isSecureInternalUI`, the "Firefox" label) and hides the "Copy clean link" menu item;
        // the page loads and works without it, and an add-on's page is not Firefox's UI
        // (docs/design/about-startup-url.md). Not URI_SAFE_FOR_UNTRUSTED_CONTENT: web pages must
        // not load it, and with it nsAboutProtocolHandler would reset the owner to null.
        return Ci.nsIAboutModule.URI_MUST_LOAD_IN_EXTENSION_PROCESS;
      },
      getChromeURI() {
        return Services.io.newURI(pageURL);
      },
      newChannel(aboutURI, loadInfo) {
        const pageURI = Services.io.newURI(pageURL);
        const channel = Services.io.newChannelFromURIWithLoadInfo(pageURI, loadInfo);
        channel.originalURI = aboutURI; // the document's URL stays about:startup
        // The extension's principal: extension process, browser.* APIs in the page.
        channel.owner = Services.scriptSecurityManager.createContentPrincipal(pageURI, loadInfo.originAttributes);
        // Relative URLs in the page resolve against the moz-extension page, not about:startup.
        channel.QueryInterface(Ci.nsIWritablePropertyBag2).setPropertyAsInterface("baseURI", pageURI);
        return channel;
      },
    };
  }

  /** Registers about:startup in this process; the factory (to unregister), or null if taken. */
  function register(pageURL) {
    if (registrar().isContractIDRegistered(CONTRACT_ID)) {
      return null; // someone else's (another add-on, a future built-in page): never clobber
    }
    const module = aboutModule(pageURL);
    const factory = {
      QueryInterface: ChromeUtils.generateQI(["nsIFactory"]),
      createInstance: (iid) => module.QueryInterface(iid),
    };
    registrar().registerFactory(Components.ID(CLASS_ID), "about:startup", CONTRACT_ID, factory);
    return factory;
  }

  function unregister(factory) {
    const classID = Components.ID(CLASS_ID);
    if (factory && registrar().isCIDRegistered(classID)) {
      registrar().unregisterFactory(classID, factory);
    }
  }

  /**
   * Services.startup.getStartupInfo()'s {name: Date} as {name: ms since epoch}. A milestone that
   * is not a valid, positive time is left out: missing stays missing, never 0.
   */
  function milestonesFromStartupInfo(info) {
    const out = {};
    for (const [name, value] of Object.entries(info ?? {})) {
      const ms = value != null && typeof value.getTime === "function" ? value.getTime() : Number.NaN;
      if (Number.isFinite(ms) && ms > 0) {
        out[name] = ms;
      }
    }
    return out;
  }

  // Firefox's own per-start costs (lib/models/start-costs.js turns them into this start's figures).
  // Glean's timing distributions hold every sample since the last "metrics" ping, across
  // restarts (checked on ESR 153.8: a second start of the same profile reads count 2), so this
  // returns the raw {count, sum, values} and the model diffs it against the previous reading.
  const SESSION_RESTORE_METRICS = [
    "readFile",
    "fileSizeBytes",
    "startupInitSession",
    "startupOnloadInitialWindow",
    "restoreWindow",
    "numberOfTabsRestored",
    "numberOfEagerTabsRestored",
    "autoRestoreDurationUntilEagerTabsRestored",
  ];

  /** A Glean metric's testGetValue() as plain data: {count, sum, values}, null (no sample), or {error}. */
  function gleanValue(read) {
    try {
      const value = read();
      if (value == null) {
        return null;
      }
      if (typeof value === "number") {
        return { count: 1, sum: value, values: {} }; // a quantity or counter
      }
      return { count: value.count ?? null, sum: value.sum ?? null, values: { ...(value.values ?? {}) } };
    } catch (error) {
      return { error: String(error?.message ?? error) };
    }
  }

  /** How long startCosts waits for Firefox to initialize Glean before it gives up (ms). */
  const GLEAN_READY_TIMEOUT_MS = 30000;

  /**
   * Resolves with true once Firefox has initialized FOG (Glean) in this process, with false after
   * `timeoutMs` or where this Firefox has no known sign of it. Before that, every testGetValue()
   * blocks the main thread for good: it waits for Glean's dispatcher, which runs nothing until
   * FOG is initialized, and FOG is initialized by an idle task of that same main thread (ESR
   * 153.8, StartupTelemetry.initFOG, run from BrowserGlue's startup idle tasks). A start in which
   * about:startup was installed (the benchmark's template starts, the first start after a sideload)
   * runs its background before sessionRestored and asked that early: Firefox hung for good
   * (docs/design/start-costs.md). No notification says FOG is ready; what is known: every startup
   * idle task has begun once BrowserInitState.startupIdleTaskPromise resolves (idle tasks run in
   * order and it is resolved from the last), initFOG among them, and initFOG calls
   * Services.fog.initializeFOG() as soon as the two promises it awaits resolve, which it awaited
   * before this does.
   */
  async function gleanReady(timeoutMs = GLEAN_READY_TIMEOUT_MS) {
    const optional = (url) => {
      try {
        return ChromeUtils.importESModule(url);
      } catch {
        return {};
      }
    };
    const { BrowserInitState } = optional("resource:///modules/BrowserGlue.sys.mjs");
    if (!BrowserInitState?.startupIdleTaskPromise) {
      return false;
    }
    const { setTimeout, clearTimeout } = ChromeUtils.importESModule("resource://gre/modules/Timer.sys.mjs");
    const ready = (async () => {
      await BrowserInitState.startupIdleTaskPromise;
      await optional("resource://gre/modules/UsageReporting.sys.mjs").UsageReporting?.ensureInitialized();
      await optional("resource://gre/modules/TelemetryReportingPolicy.sys.mjs").TelemetryReportingPolicy?.ensureUserIsNotified();
      // One task more, after initFOG's continuation.
      await new Promise((resolve) => setTimeout(resolve, 0));
      return true;
    })();
    let timer = null;
    const late = new Promise((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([ready, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** How long startCosts waits for the selected tabs still loading to finish restoring (ms). */
  const TABS_RESTORED_TIMEOUT_MS = 20000;
  // What the tab watcher listens to on each browser window: a tab began restoring, a tab's restored
  // page loaded, the window went away (as BrowserWindowTracker.sys.mjs sees a window close).
  const TAB_WATCH_EVENTS = ["SSTabRestoring", "SSTabRestored", "unload"];

  /**
   * Watches, from this extension's startup on (before Firefox opens its first window), when each
   * browser window's selected tab finished restoring: SessionStore sends SSTabRestoring when a
   * tab begins restoring and SSTabRestored once its restored page has loaded (SessionStore.sys.mjs,
   * _restoreTabContentComplete). The tab that was selected when its window began restoring it is
   * the page that window's user waited for; an add-on that holds page loads (a blocking webRequest
   * listener, primed at startup) delays it and not sessionRestored. Tabs are told apart by their
   * window and `linkedPanel` (a string): keyed by objects, the event's and the window's never
   * matched here.
   * {restoredAt(timeoutMs): epoch ms when the last such tab of the windows still open had loaded,
   * or null (no window restored its selected tab, or one was still restoring after timeoutMs),
   * stop()}. The first restoredAt takes the start's reading: it waits for the SSTabRestored (or
   * the window closing) that settles it, at most timeoutMs, then stops watching (every listener
   * off every window, the new-window observer off); every later call gives that same figure.
   */
  function watchSelectedTabs() {
    const restoring = new Set(); // "window:panel" of tabs that began restoring and have not finished
    const restored = new Map(); // "window:panel" -> epoch ms the tab finished restoring
    const shown = new Map(); // window number -> "window:panel" of the tab selected when it began restoring
    const watched = new Map(); // window still open -> [its number, its listener]
    let windows = 0; // numbers the windows: a closed window's number is never reused
    let changed = null; // while restoredAt waits: looks again after each event
    const unwatch = (window, listener) => {
      for (const type of TAB_WATCH_EVENTS) {
        window.removeEventListener(type, listener);
      }
      watched.delete(window);
    };
    const watch = (window) => {
      if (watched.has(window)) {
        return;
      }
      const number = windows++;
      const listener = (event) => {
        const key = `${number}:${event.target?.linkedPanel}`;
        if (event.type === "unload") {
          unwatch(window, listener); // its tabs no longer count
        } else if (event.type === "SSTabRestoring") {
          restoring.add(key);
          if (event.target?.selected && !shown.has(number)) {
            shown.set(number, key);
          }
        } else {
          restoring.delete(key);
          restored.set(key, Date.now());
        }
        changed?.();
      };
      watched.set(window, [number, listener]);
      for (const type of TAB_WATCH_EVENTS) {
        window.addEventListener(type, listener);
      }
    };
    const observer = (subject) => watch(subject);
    Services.obs.addObserver(observer, "browser-window-before-show");
    for (const window of Services.wm.getEnumerator("navigator:browser")) {
      watch(window);
    }
    let stopped = false;
    const stop = () => {
      if (stopped) {
        return;
      }
      stopped = true;
      Services.obs.removeObserver(observer, "browser-window-before-show");
      for (const [window, [, listener]] of [...watched]) {
        unwatch(window, listener);
      }
      changed?.(); // a wait still under way (a disable during it) ends: nothing is watched now
      changed = null;
    };
    // The shown tabs of the windows still open.
    const shownKeys = () =>
      [...watched]
        .filter(([window, [number]]) => !window.closed && shown.has(number))
        .map(([, [number]]) => shown.get(number));
    const waiting = () => shownKeys().some((key) => restoring.has(key));
    const figure = () => {
      const keys = shownKeys();
      return keys.length === 0 || waiting() ? null : Math.max(...keys.map((key) => restored.get(key)));
    };
    // The start's reading: at once where no shown tab is still restoring, else on the event that
    // ends the wait or at the time limit (one timer, no polling); then the watch ends.
    const read = async (timeoutMs) => {
      try {
        if (waiting()) {
          const { setTimeout, clearTimeout } = ChromeUtils.importESModule("resource://gre/modules/Timer.sys.mjs");
          let timer = null;
          await new Promise((resolve) => {
            changed = () => {
              if (!waiting()) {
                resolve();
              }
            };
            timer = setTimeout(resolve, timeoutMs);
          });
          clearTimeout(timer);
        }
        return figure();
      } finally {
        stop();
      }
    };
    let reading = null;
    return {
      restoredAt(timeoutMs = TABS_RESTORED_TIMEOUT_MS) {
        reading ??= read(timeoutMs);
        return reading;
      },
      stop,
    };
  }

  /**
   * Every add-on the add-on manager knows as enabled, with both per-add-on Glean timings, and why
   * this extension itself started (`selfStartupReason`: APP_STARTUP when it started with Firefox).
   * Reads Glean only once Firefox has initialized it (gleanReady); throws where it has not (the
   * record then says `read-failed`), never blocks Firefox.
   */
  async function startCosts(self = null, tabs = null) {
    // First the restored tabs (the add-ons' startup is over by then too), then Glean.
    const selectedTabsRestoredAt = tabs ? await tabs.restoredAt() : undefined;
    if (!(await gleanReady())) {
      throw new ExtensionUtils.ExtensionError("Firefox has not initialized Glean (FOG) yet: reading it now would block Firefox");
    }
    const { AddonManager } = ChromeUtils.importESModule("resource://gre/modules/AddonManager.sys.mjs");
    const { ExtensionParent } = ChromeUtils.importESModule("resource://gre/modules/ExtensionParent.sys.mjs");
    const running = ExtensionParent.GlobalManager.extensionMap;
    const addons = [];
    for (const addon of await AddonManager.getAddonsByTypes(["extension", "theme"])) {
      if (!addon.isActive) {
        continue;
      }
      addons.push({
        id: addon.id,
        name: addon.name ?? null,
        version: addon.version ?? null,
        type: addon.type,
        builtIn: Boolean(addon.isBuiltin || addon.isSystem),
        state: running.get(addon.id)?.state ?? null, // "Startup: Complete" once started
        // Firefox holds page loads at startup for an add-on that may block requests, until its
        // background page has loaded (a primed blocking webRequest listener): its figure then
        // lies on the restored tabs' load (lib/models/start-costs.js causesOf).
        blockingWebRequest: running.has(addon.id) ? Boolean(running.get(addon.id).hasPermission?.("webRequestBlocking")) : null,
        startup: gleanValue(() => Glean.extensionsTiming.extensionStartupByAddonid[addon.id].testGetValue()),
        backgroundPageLoad: gleanValue(() =>
          Glean.extensionsTiming.backgroundPageLoadByAddonid[addon.id].testGetValue(),
        ),
      });
    }
    const sessionRestore = {};
    for (const metric of SESSION_RESTORE_METRICS) {
      sessionRestore[metric] = gleanValue(() => Glean.sessionRestore[metric].testGetValue());
    }
    // When SessionStore began restoring the windows (ms since the process began; set once per
    // start that restores, SessionStore.sys.mjs initializeWindow): the start of session
    // restore's own part of the path to sessionRestored (docs/design/start-costs.md).
    sessionRestore.restoringAt = gleanValue(() => Glean.sessionRestore.startupTimeline.sessionRestoreRestoring.testGetValue());
    return {
      readAt: Date.now(),
      // epoch ms the restored windows' selected tabs had all finished restoring (watchSelectedTabs)
      ...(selectedTabsRestoredAt === undefined ? {} : { selectedTabsRestoredAt }),
      selfStartupReason: self?.startupReason ?? null,
      source: "glean-testGetValue",
      addons,
      sessionRestore,
      // Glean records only while telemetry upload is on (Settings, Privacy & Security: "Allow
      // Firefox to send technical and interaction data"; Debian's firefox-esr turns it off), or
      // in FOG's test mode (port -1: record, drop every ping), which automation sets.
      gleanRecording: {
        uploadEnabled: Services.prefs.getBoolPref("datareporting.healthreport.uploadEnabled", false),
        testPort: Services.prefs.getIntPref("telemetry.fog.test.localhost_port", 0),
      },
      sessionRestorePrefs: {
        startupPage: Services.prefs.getIntPref("browser.startup.page", 1),
        restoreOnDemand: Services.prefs.getBoolPref("browser.sessionstore.restore_on_demand", true),
      },
    };
  }

  // 2. Process script in a content process: register now, unregister on the parent's word.
  if (typeof ExtensionAPI !== "function") {
    if (Services.appinfo.processType === Ci.nsIXULRuntime.PROCESS_TYPE_DEFAULT) {
      return; // the parent runs process scripts too; the experiment registers there itself
    }
    const pageURL = Services.cpmm.sharedData.get(SHARED_KEY);
    const factory = pageURL ? register(pageURL) : null;
    if (factory) {
      // A load may have reached this process before this script did (see reloadStranded).
      Services.cpmm.sendAsyncMessage(MSG_REGISTERED);
      const listener = {
        receiveMessage() {
          Services.cpmm.removeMessageListener(MSG_UNREGISTER, listener);
          unregister(factory);
        },
      };
      Services.cpmm.addMessageListener(MSG_UNREGISTER, listener);
    }
    return;
  }

  /**
   * Reloads every tab stranded on its way to about:startup. A content process started for a load
   * can receive that load before this file's process script: the child then cannot re-create the
   * about:startup channel and the tab stays on about:blank, loading forever (what NOTES recorded
   * for a module registered in the parent only). Session restore does exactly that at browser
   * start: the selected tab's about:startup load launches the extension process, and only then
   * does the process script arrive there (docs/design/about-startup-url.md, "Session restore").
   * Such a tab's current session-history entry is already about:startup (session restore wrote
   * it) while its document is not; an ordinary load in flight has no entry yet, and a tab still
   * pending restore has no document to compare and loads later, when the process has the module.
   */
  function reloadStranded() {
    for (const window of Services.wm.getEnumerator("navigator:browser")) {
      for (const tab of window.gBrowser?.tabs ?? []) {
        // (not named `browser`: web-ext lint would take it for the WebExtension API)
        const tabBrowser = tab.linkedBrowser;
        const history = tabBrowser.browsingContext?.sessionHistory;
        if (tab.hasAttribute("pending") || !history || history.index < 0) {
          continue;
        }
        const entry = history.getEntryAtIndex(history.index);
        if (entry?.URI?.spec === "about:startup" && tabBrowser.documentURI?.spec !== "about:startup") {
          tabBrowser.reload();
        }
      }
    }
  }

  // 1. The experiment API in the parent process.
  let startups = 0; // makes each run's process-script URL unique (see onStartup)

  global.aboutStartup = class extends ExtensionAPI {
    // Firefox calls this when the extension starts (browser start, install, enable, update,
    // reload) because the manifest lists "events": ["startup"] for this experiment.
    onStartup() {
      const { extension } = this;
      const pageURL = extension.baseURI.resolve(PAGE);
      this.tabs = watchSelectedTabs();
      this.factory = register(pageURL); // parent process, synchronously
      if (!this.factory) {
        return;
      }
      this.pageURL = pageURL;
      this.onRegistered = { receiveMessage: reloadStranded };
      Services.ppmm.addMessageListener(MSG_REGISTERED, this.onRegistered);
      // Children read the page URL from shared data: flush it before any of them runs the script.
      Services.ppmm.sharedData.set(SHARED_KEY, pageURL);
      Services.ppmm.sharedData.flush();
      // Content processes cache process scripts by URL for their lifetime: an update keeps the
      // UUID, so without the query the new version would run the old cached code.
      // Each start evaluates this file in a fresh global, so a counter alone would repeat; the
      // random part keeps two starts within one millisecond apart too.
      startups += 1;
      const run = `${Date.now()}-${startups}-${Math.random().toString(36).slice(2)}`;
      this.processScriptURL = `${extension.baseURI.resolve("experiments/about-startup/parent.js")}?run=${run}`;
      // true: also every content process started later (preallocated ones become extension/web).
      Services.ppmm.loadProcessScript(this.processScriptURL, true);
    }

    // Disable, uninstall, update, reload: isAppShutdown is false. Quit: true, and nothing is
    // needed because the registrations die with the processes.
    onShutdown(isAppShutdown) {
      if (!isAppShutdown) {
        this.tabs?.stop();
        this.tabs = null;
      }
      if (!this.factory || isAppShutdown) {
        return;
      }
      Services.ppmm.removeDelayedProcessScript(this.processScriptURL);
      Services.ppmm.removeMessageListener(MSG_REGISTERED, this.onRegistered);
      Services.ppmm.broadcastAsyncMessage(MSG_UNREGISTER);
      Services.ppmm.sharedData.delete(SHARED_KEY);
      Services.ppmm.sharedData.flush();
      unregister(this.factory);
      this.factory = null;
      this.pageURL = null;
    }

    getAPI() {
      const api = this;
      return {
        aboutStartup: {
          async getStartupInfo() {
            return milestonesFromStartupInfo(Services.startup.getStartupInfo());
          },
          async getStartCosts() {
            return startCosts(api.extension, api.tabs);
          },
          async status() {
            return {
              registered: registrar().isContractIDRegistered(CONTRACT_ID),
              ours: Boolean(api.factory),
            };
          },
          // tabs.create() refuses about:startup ("Illegal URL": the extension's principal may not
          // load a privileged about: page), so the page is opened here with the system principal,
          // as typing it in the address bar does.
          async openPage(where) {
            if (!api.factory) {
              throw new ExtensionUtils.ExtensionError("about:startup is not this extension's page");
            }
            const { BrowserWindowTracker } = ChromeUtils.importESModule(
              "resource:///modules/BrowserWindowTracker.sys.mjs",
            );
            const window = BrowserWindowTracker.getTopWindow(
              api.extension.privateBrowsingAllowed ? {} : { private: false },
            );
            if (!window) {
              throw new ExtensionUtils.ExtensionError("no browser window to open about:startup in");
            }
            window.openTrustedLinkIn("about:startup", where);
          },
          // "Restart cold" (page/restart.js): the host waits for Firefox to quit, evicts and
          // starts it again; this quits it. Firefox's own restart asks session restore to bring
          // this session back once (SessionStore on "quit-application" with "restart"); a plain
          // quit followed by a start from outside does not, so the same one-shot pref is set here,
          // which the next start reads and clears. Nothing else is changed. Any window may still
          // refuse (a beforeunload prompt): then the pref is taken back and false returned.
          async quitForRestart() {
            const cancel = Cc["@mozilla.org/supports-PRBool;1"].createInstance(Ci.nsISupportsPRBool);
            Services.obs.notifyObservers(cancel, "quit-application-requested");
            if (cancel.data) {
              return false;
            }
            const once = "browser.sessionstore.resume_session_once";
            const before = Services.prefs.getBoolPref(once, false);
            Services.prefs.setBoolPref(once, true);
            // Let the reply reach the page before the quit tears it down.
            Services.tm.dispatchToMainThread(() => {
              if (Services.startup.quit(Ci.nsIAppStartup.eAttemptQuit) === false) {
                Services.prefs.setBoolPref(once, before);
              }
            });
            return true;
          },
        },
      };
    }
  };
})(this);
