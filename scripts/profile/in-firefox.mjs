// Functions make.mjs and the e2e test run inside Firefox's parent process (firefox.mjs's
// chrome()): they write the profile through Firefox's own code (Places, the favicon service, the
// cookie and permission managers, the session store), so every table, trigger-maintained column
// and file is what Firefox itself makes. Each is serialized and run there: no imports from this
// module, only Firefox's globals (Services, ChromeUtils, Cc, Ci, WebExtensionPolicy).

/** Waits until this start has reached sessionRestored; resolves with the milestone names. */
export async function waitSessionRestored() {
  for (;;) {
    const info = Services.startup.getStartupInfo();
    if (info.sessionRestored) {
      return Object.keys(info);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The state of each add-on `ids`: installed and active (the add-on manager), its background
 * (Firefox's own state of it: starting, running, suspending, stopped), its internal UUID, and
 * whether its storage.local holds `filledKey` (the add-on wrote its data).
 */
export async function addonStates(ids, filledKey) {
  const { AddonManager } = ChromeUtils.importESModule("resource://gre/modules/AddonManager.sys.mjs");
  const { ExtensionStorageIDB } = ChromeUtils.importESModule("resource://gre/modules/ExtensionStorageIDB.sys.mjs");
  const states = [];
  for (const id of ids) {
    const addon = await AddonManager.getAddonByID(id);
    const policy = WebExtensionPolicy.getByID(id);
    let filled = false;
    if (policy?.extension) {
      const db = await ExtensionStorageIDB.open(ExtensionStorageIDB.getStoragePrincipal(policy.extension));
      const got = await db.get([filledKey]);
      filled = Boolean(got && got[filledKey]);
    }
    states.push({
      id,
      installed: Boolean(addon),
      active: Boolean(addon?.isActive),
      background: policy?.extension?.backgroundState ?? null,
      uuid: policy?.mozExtensionHostname ?? null,
      filled,
    });
  }
  return states;
}

/** Adds history through Places' own API: pages [{url, title, guid, visits: [{date (ms), transition}]}]. */
export async function insertHistory(pages) {
  const { PlacesUtils } = ChromeUtils.importESModule("resource://gre/modules/PlacesUtils.sys.mjs");
  await PlacesUtils.history.insertMany(
    pages.map((p) => ({ url: p.url, title: p.title, guid: p.guid, visits: p.visits.map((v) => ({ date: new Date(v.date), transition: v.transition })) })),
  );
  return pages.length;
}

/** Adds the bookmark tree {toolbar, menu, unfiled: [bookmark | folder]} with the bookmarks API. */
export async function insertBookmarks(tree) {
  const { PlacesUtils } = ChromeUtils.importESModule("resource://gre/modules/PlacesUtils.sys.mjs");
  const node = (item) =>
    item.kind === "folder"
      ? { type: PlacesUtils.bookmarks.TYPE_FOLDER, guid: item.guid, title: item.title, dateAdded: new Date(item.dateAdded), children: item.children.map(node) }
      : { url: item.url, guid: item.guid, title: item.title, dateAdded: new Date(item.dateAdded) };
  let count = 0;
  for (const [root, guid] of [
    ["toolbar", PlacesUtils.bookmarks.toolbarGuid],
    ["menu", PlacesUtils.bookmarks.menuGuid],
    ["unfiled", PlacesUtils.bookmarks.unfiledGuid],
  ]) {
    if (tree[root].length) {
      count += (await PlacesUtils.bookmarks.insertTree({ guid, children: tree[root].map(node) })).length;
    }
  }
  return count;
}

/**
 * Stores favicons: [{url (the icon's), root, dataUrl, pages: [page urls that showed it]}]. The
 * favicon service stores each icon with its first page (decoding it, its size, its expiry: rows
 * as Firefox makes them). A root /favicon.ico is then done: Firefox links no page to it (it
 * serves the whole origin). A declared icon's other pages are linked through Places' own
 * connection with the favicon service's own two statements (nsFaviconService, ESR 153: the
 * page row, then its link with the icon's expiry), each bound to every page of the batch at once:
 * one call per page took most of the large preset's 944 s. Resolves with the pages linked.
 */
export async function setIcons(icons) {
  const { PlacesUtils } = ChromeUtils.importESModule("resource://gre/modules/PlacesUtils.sys.mjs");
  const links = [];
  for (const icon of icons) {
    const [first, ...rest] = icon.pages;
    await PlacesUtils.favicons.setFaviconForPage(Services.io.newURI(first), Services.io.newURI(icon.url), Services.io.newURI(icon.dataUrl));
    if (!icon.root) {
      for (const page of rest) links.push({ page_url: page, from_url: first });
    }
  }
  if (links.length > 0) {
    await PlacesUtils.withConnectionWrapper("about-startup realistic profile: favicons", async (db) => {
      // One statement with an array of bindings runs as one transaction (mozStorage).
      await db.execute(
        "INSERT OR IGNORE INTO moz_pages_w_icons (page_url, page_url_hash) VALUES (:page_url, hash(:page_url))",
        links.map(({ page_url }) => ({ page_url })),
      );
      await db.execute(
        `INSERT INTO moz_icons_to_pages (page_id, icon_id, expire_ms)
           SELECT (SELECT id FROM moz_pages_w_icons WHERE page_url_hash = hash(:page_url) AND page_url = :page_url), icon_id, expire_ms
           FROM moz_icons_to_pages
           WHERE page_id = (SELECT id FROM moz_pages_w_icons WHERE page_url_hash = hash(:from_url) AND page_url = :from_url)
         ON CONFLICT (page_id, icon_id) DO UPDATE SET expire_ms = excluded.expire_ms`,
        links,
      );
    });
  }
  return icons.filter((i) => !i.root).length + links.length;
}

/** How many of `urls` have a page row linked to an icon (favicons.sqlite), by Firefox's connection. */
export async function linkedIconPages(urls) {
  const { PlacesUtils } = ChromeUtils.importESModule("resource://gre/modules/PlacesUtils.sys.mjs");
  const db = await PlacesUtils.promiseDBConnection();
  let linked = 0;
  for (let i = 0; i < urls.length; i += 500) {
    const slice = urls.slice(i, i + 500);
    const [row] = await db.execute(
      `SELECT count(DISTINCT p.id) AS n FROM moz_pages_w_icons p JOIN moz_icons_to_pages l ON l.page_id = p.id WHERE p.page_url IN (${slice.map((_, k) => `:u${k}`).join(", ")})`,
      Object.fromEntries(slice.map((u, k) => [`u${k}`, u])),
    );
    linked += row.getResultByName("n");
  }
  return linked;
}

/** Stores cookies through the cookie manager (persistent ones: they land in cookies.sqlite). */
export async function addCookies(cookies) {
  for (const c of cookies) {
    const result = Services.cookies.add(c.host, c.path, c.name, c.value, c.secure, c.httpOnly, false, c.expiry, {}, Ci.nsICookie[`SAMESITE_${c.sameSite}`], Ci.nsICookie[`SCHEME_${c.scheme}`]);
    if (result && result.result !== undefined && result.result !== Ci.nsICookieValidation.eOK) {
      throw new Error(`cookie ${c.name} for ${c.host} refused: ${result.errorString}`);
    }
  }
  return cookies.length;
}

/** Stores site permissions through the permission manager: [{origin, type, action: allow|deny}]. */
export async function addPermissions(permissions) {
  for (const p of permissions) {
    const principal = Services.scriptSecurityManager.createContentPrincipalFromOrigin(p.origin);
    Services.perms.addFromPrincipal(principal, p.type, p.action === "allow" ? Services.perms.ALLOW_ACTION : Services.perms.DENY_ACTION);
  }
  return permissions.length;
}

/** Computes every outdated frecency now, as Firefox's idle task would later (pages and origins). */
export async function recalculateFrecency() {
  const recalculator = Cc["@mozilla.org/places/frecency-recalculator;1"].getService(Ci.nsIObserver).wrappedJSObject;
  await recalculator.recalculateAnyOutdatedFrecencies();
  return true;
}

/**
 * Computes up to `chunkSize` outdated page frecencies and as many origins', as Firefox's idle
 * task does a chunk at a time (PlacesFrecencyRecalculator's recalculateSomeFrecencies). Resolves
 * with how many pages are still outdated. One call for all of the large preset's 100,000 pages
 * outlasted the driver's script timeout (600 s) on a loaded machine.
 */
export async function recalculateFrecencyChunk(chunkSize) {
  const { PlacesUtils } = ChromeUtils.importESModule("resource://gre/modules/PlacesUtils.sys.mjs");
  const recalculator = Cc["@mozilla.org/places/frecency-recalculator;1"].getService(Ci.nsIObserver).wrappedJSObject;
  await recalculator.recalculateSomeFrecencies({ chunkSize });
  const db = await PlacesUtils.promiseDBConnection();
  const [row] = await db.execute("SELECT count(*) AS n FROM moz_places WHERE recalc_frecency = 1");
  return row.getResultByName("n");
}

/**
 * Replaces the session with `state` (session.mjs's browserState; `principal: null` entries get
 * the system principal, `referrer` becomes Firefox's serialized referrerInfo) and waits until
 * Firefox has restored it. Resolves with the tab count.
 */
export async function setSession(state) {
  const { SessionStore } = ChromeUtils.importESModule("resource:///modules/sessionstore/SessionStore.sys.mjs");
  const { E10SUtils } = ChromeUtils.importESModule("resource://gre/modules/E10SUtils.sys.mjs");
  // The referrer as Firefox serializes it for a link followed from the page before.
  const referrerInfo = (url) => {
    const info = Cc["@mozilla.org/referrer-info;1"].createInstance(Ci.nsIReferrerInfo);
    info.init(Ci.nsIReferrerInfo.STRICT_ORIGIN_WHEN_CROSS_ORIGIN, true, Services.io.newURI(url));
    return E10SUtils.serializeReferrerInfo(info);
  };
  const fill = (tab) =>
    tab.entries.forEach((e) => {
      e.triggeringPrincipal_base64 ??= E10SUtils.SERIALIZED_SYSTEMPRINCIPAL;
      if (e.referrer) {
        e.referrerInfo = referrerInfo(e.referrer);
        delete e.referrer;
      }
    });
  for (const w of state.windows) {
    w.tabs.forEach(fill);
    w._closedTabs.forEach((c) => fill(c.state));
  }
  const restored = new Promise((resolve) => {
    const observer = () => {
      Services.obs.removeObserver(observer, "sessionstore-browser-state-restored");
      resolve();
    };
    Services.obs.addObserver(observer, "sessionstore-browser-state-restored");
  });
  SessionStore.setBrowserState(JSON.stringify(state));
  await restored;
  let tabs = 0;
  for (const win of Services.wm.getEnumerator("navigator:browser")) tabs += win.gBrowser.tabs.length;
  return tabs;
}

/**
 * The restored windows as Firefox has them: per window, every tab's current URL (a tab not yet
 * loaded keeps its URL in the session store), whether it is pinned, and the WebDriver handle of
 * its selected tab.
 */
export async function openWindows() {
  const { SessionStore } = ChromeUtils.importESModule("resource:///modules/sessionstore/SessionStore.sys.mjs");
  // WebDriver's handle of a tab is the remote agent's id for its browser.
  const { NavigableManager } = ChromeUtils.importESModule("chrome://remote/content/shared/NavigableManager.sys.mjs");
  const windows = [];
  for (const win of Services.wm.getEnumerator("navigator:browser")) {
    const raw = SessionStore.getWindowState(win);
    const state = (typeof raw === "string" ? JSON.parse(raw) : raw).windows[0];
    windows.push({
      tabs: state.tabs.map((t) => ({ url: t.entries[t.index - 1]?.url ?? null, pinned: Boolean(t.pinned) })),
      selectedHandle: NavigableManager.getIdForBrowser(win.gBrowser.selectedBrowser),
      selectedUrl: win.gBrowser.selectedBrowser.currentURI.spec,
    });
  }
  return windows;
}

/** The session as Firefox holds it now (SessionStore.getBrowserState), parsed. */
export async function sessionState() {
  const { SessionStore } = ChromeUtils.importESModule("resource:///modules/sessionstore/SessionStore.sys.mjs");
  const raw = SessionStore.getBrowserState();
  return typeof raw === "string" ? JSON.parse(raw) : raw;
}

/** (Content context.) What a shown page got back from the session: its scroll position and form fields. */
export async function pageSessionState() {
  const value = (id) => document.getElementById(id)?.value ?? null;
  return { scrollY: Math.round(window.scrollY), q: value("q"), comment: value("comment") };
}

/** What Places holds, counted by Firefox's own read-only connection. */
export async function placesCounts() {
  const { PlacesUtils } = ChromeUtils.importESModule("resource://gre/modules/PlacesUtils.sys.mjs");
  const db = await PlacesUtils.promiseDBConnection();
  const [row] = await db.execute(`SELECT
      (SELECT count(*) FROM moz_places) AS places,
      (SELECT count(*) FROM moz_historyvisits) AS visits,
      (SELECT count(*) FROM moz_bookmarks WHERE type = 1) AS bookmarks,
      (SELECT count(*) FROM moz_origins) AS origins,
      (SELECT count(*) FROM moz_icons) AS icons,
      (SELECT count(*) FROM moz_pages_w_icons) AS iconPages,
      (SELECT count(*) FROM moz_places WHERE recalc_frecency = 1) AS outdatedFrecency`);
  return Object.fromEntries(["places", "visits", "bookmarks", "origins", "icons", "iconPages", "outdatedFrecency"].map((k) => [k, row.getResultByName(k)]));
}

/** The visits of one page as Places' history API finds it (by URL, through its url_hash index). */
export async function fetchPage(url) {
  const { PlacesUtils } = ChromeUtils.importESModule("resource://gre/modules/PlacesUtils.sys.mjs");
  const info = await PlacesUtils.history.fetch(url, { includeVisits: true });
  return info ? { guid: info.guid, title: info.title, visits: info.visits.length } : null;
}

/**
 * (Content context.) The marks the add-ons' content scripts left on this page: attribute name →
 * value, for every data-synthetic-* attribute of the root element.
 */
export async function pageMarks() {
  const root = document.documentElement;
  if (!root) return {}; // still loading
  return Object.fromEntries(root.getAttributeNames().filter((n) => n.startsWith("data-synthetic-")).map((n) => [n, root.getAttribute(n)]));
}
