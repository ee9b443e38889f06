// The restored session as Firefox's session store takes it (SessionStore.setBrowserState): the
// same shape sessionstore.jsonlz4 holds. make.mjs hands it to a running Firefox, whose clean
// quit then writes sessionstore.jsonlz4 itself. Pure.

/** One tab's state: its back history and which entry is current (1-based, as Firefox keeps it). */
function tabState(tab, principal) {
  return {
    entries: tab.entries.map((e) => ({ url: e.url, title: e.title, triggeringPrincipal_base64: principal })),
    index: tab.index,
    pinned: tab.pinned,
    hidden: false,
    attributes: {},
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
