// The restored session as Firefox's session store takes it (SessionStore.setBrowserState): the
// same shape sessionstore.jsonlz4 holds. make.mjs hands it to a running Firefox, whose clean
// quit then writes sessionstore.jsonlz4 itself. Pure.

/**
 * The key Firefox's session store files a local page's sessionStorage under: file: pages have an
 * opaque origin ("null") and share this one (checked on ESR 153: a file page's sessionStorage
 * came back from SessionStore.getTabState under this key).
 */
export const FILE_ORIGIN = "file://UNIVERSAL_FILE_URI_ORIGIN";

/**
 * One history entry as SessionHistory.sys.mjs (ESR 153) writes it for a page that was shown:
 * Firefox's own IDs, the triggering principal, where the user had scrolled. `referrer` (the
 * page's URL it was opened from) is not Firefox's field: in-firefox.mjs's setSession turns it
 * into a `referrerInfo` serialized by Firefox itself.
 */
function entryState(e, principal, current) {
  return {
    url: e.url,
    title: e.title,
    cacheKey: 0,
    ID: e.ID,
    docshellUUID: e.docshellUUID,
    ...(e.referrer ? { referrer: e.referrer } : {}),
    resultPrincipalURI: null,
    hasUserInteraction: true,
    triggeringPrincipal_base64: principal,
    docIdentifier: e.docIdentifier,
    transient: false,
    navigationKey: e.navigationKey,
    navigationId: e.navigationId,
    // The shown page's position is the tab's `scroll`; the others keep theirs in the entry.
    ...(!current && e.scroll ? { scroll: e.scroll } : {}),
  };
}

/**
 * One tab's state: its history and which entry is current (1-based, as Firefox keeps it), and
 * what the session keeps of the shown page: scroll position, form data, sessionStorage.
 */
function tabState(tab, principal) {
  return {
    entries: tab.entries.map((e, i) => entryState(e, principal, i === tab.index - 1)),
    index: tab.index,
    pinned: tab.pinned,
    hidden: false,
    attributes: {},
    ...(tab.scroll ? { scroll: { scroll: tab.scroll } } : {}),
    ...(tab.form ? { formdata: { url: tab.form.url, id: tab.form.id } } : {}),
    ...(tab.storage ? { storage: { [FILE_ORIGIN]: tab.storage } } : {}),
  };
}

/**
 * The browser state of model.session. `principal` is the serialized triggering principal every
 * entry carries (E10SUtils.SERIALIZED_SYSTEMPRINCIPAL in Firefox); `closedAt` (ms) dates the
 * closed tabs, a minute apart before it.
 */
export function browserState(session, { principal, closedAt }) {
  return {
    windows: session.windows.map((w) => ({
      // Pinned tabs come first in a window, as Firefox keeps them.
      tabs: [...w.tabs.filter((t) => t.pinned), ...w.tabs.filter((t) => !t.pinned)].map((t) => tabState(t, principal)),
      selected: w.selected,
      _closedTabs: w.closedTabs.map((t, i) => ({
        state: tabState(t, principal),
        title: t.entries[t.index - 1].title,
        pos: i,
        closedAt: closedAt - (i + 1) * 60_000,
        closedInGroup: false,
      })),
    })),
    selectedWindow: 1,
    _closedWindows: [],
  };
}

/** Every tab's current URL, window by window in the order Firefox shows them. Pure. */
export function restoredUrls(session) {
  return session.windows.map((w) => [...w.tabs.filter((t) => t.pinned), ...w.tabs.filter((t) => !t.pinned)].map((t) => t.entries[t.index - 1].url));
}
