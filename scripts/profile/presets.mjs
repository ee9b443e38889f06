// What each realistic profile preset holds, and what it models. The sources behind each number
// are in docs/design/realistic-profile.md; a number without one there is assumed. Pure data.

/**
 * The add-ons a preset installs, in the order presets take them (small takes the first three).
 * Sizes are the unpacked files; `storageBytes` is what the add-on keeps in storage.local (written
 * by the add-on itself on its first start, read back in full at every start, as add-ons that load
 * their state do). `contentBytes` 0: no content script. Modelled on popular kinds of add-on;
 * the sizes are assumed, in the range such add-ons ship.
 */
export const EXTENSION_KINDS = [
  { kind: "content-blocker", name: "Synthetic Content Blocker", manifest: 2, backgroundBytes: 1_800_000, contentBytes: 120_000, assetBytes: 3_000_000, storageBytes: 12_000_000 },
  { kind: "password-manager", name: "Synthetic Password Manager", manifest: 3, backgroundBytes: 4_000_000, contentBytes: 400_000, assetBytes: 6_000_000, storageBytes: 2_000_000 },
  { kind: "dark-mode", name: "Synthetic Dark Mode", manifest: 2, backgroundBytes: 400_000, contentBytes: 200_000, assetBytes: 300_000, storageBytes: 50_000 },
  { kind: "tracker-blocker", name: "Synthetic Tracker Blocker", manifest: 2, backgroundBytes: 700_000, contentBytes: 60_000, assetBytes: 1_500_000, storageBytes: 5_000_000 },
  { kind: "user-scripts", name: "Synthetic User Scripts", manifest: 2, backgroundBytes: 1_200_000, contentBytes: 150_000, assetBytes: 1_200_000, storageBytes: 1_500_000 },
  { kind: "writing-assistant", name: "Synthetic Writing Assistant", manifest: 3, backgroundBytes: 2_500_000, contentBytes: 1_200_000, assetBytes: 4_000_000, storageBytes: 300_000 },
  { kind: "tab-manager", name: "Synthetic Tab Manager", manifest: 2, backgroundBytes: 300_000, contentBytes: 0, assetBytes: 300_000, storageBytes: 3_000_000 },
  { kind: "video-downloader", name: "Synthetic Video Downloader", manifest: 2, backgroundBytes: 900_000, contentBytes: 80_000, assetBytes: 2_500_000, storageBytes: 100_000 },
  { kind: "segment-skipper", name: "Synthetic Segment Skipper", manifest: 3, backgroundBytes: 300_000, contentBytes: 250_000, assetBytes: 500_000, storageBytes: 200_000 },
  { kind: "cookie-cleaner", name: "Synthetic Cookie Cleaner", manifest: 2, backgroundBytes: 250_000, contentBytes: 0, assetBytes: 300_000, storageBytes: 100_000 },
];

/**
 * The presets. Counts, not bytes: the bytes are what Firefox makes of them, measured after
 * making (make.mjs prints them, docs/design/realistic-profile.md lists them).
 * - places/visits: pages in history and visits to them, over `historyDays` before `now`
 * - sites: distinct hosts (visits spread over them by a Zipf law)
 * - bookmarks: bookmarks of history pages, in `bookmarkFolders` folders
 * - iconShare: share of sites with a favicon; iconPageShare: share of pages linked to theirs
 * - windows/tabs/pinned: the restored session (tabs spread over the windows); closedTabs per window
 * - cookies/permissions: stored cookies and site permissions
 * - extensions: how many of EXTENSION_KINDS, from the first
 */
export const PRESETS = {
  small: {
    models: "a light user: two months of history, one window of a dozen tabs, three add-ons",
    historyDays: 60,
    sites: 150,
    places: 3_000,
    visits: 10_000,
    bookmarks: 60,
    bookmarkFolders: 4,
    iconShare: 0.9,
    iconPageShare: 0.3,
    windows: 1,
    tabs: 12,
    pinned: 0,
    closedTabs: 5,
    cookies: 300,
    permissions: 10,
    extensions: 3,
  },
  medium: {
    models: "an everyday user: a year of history, two windows of 35 tabs with two pinned, six add-ons",
    historyDays: 365,
    sites: 800,
    places: 25_000,
    visits: 100_000,
    bookmarks: 600,
    bookmarkFolders: 20,
    iconShare: 0.9,
    iconPageShare: 0.3,
    windows: 2,
    tabs: 35,
    pinned: 2,
    closedTabs: 25,
    cookies: 1_500,
    permissions: 40,
    extensions: 6,
  },
  large: {
    models: "a heavy user at Firefox's own limits: three years of history near the history cap, three windows of 90 tabs, ten add-ons, cookies at the cookie cap",
    historyDays: 3 * 365,
    sites: 3_000,
    places: 100_000,
    visits: 400_000,
    bookmarks: 3_000,
    bookmarkFolders: 60,
    iconShare: 0.9,
    iconPageShare: 0.3,
    windows: 3,
    tabs: 90,
    pinned: 3,
    closedTabs: 25,
    cookies: 3_000,
    permissions: 150,
    extensions: 10,
  },
};

export const PRESET_NAMES = Object.keys(PRESETS);

/** Firefox's own caps the presets stay within (firefox.js / all.js / PlacesExpiration of ESR 153). */
export const FIREFOX_LIMITS = {
  /** browser.sessionstore.max_tabs_undo */
  closedTabsPerWindow: 25,
  /** browser.sessionstore.max_serialize_back: back entries a saved tab keeps (forward: all) */
  serializeBack: 10,
  /** browser.sessionstore.dom_storage_limit (ESR 153: 2048): sessionStorage bytes kept per origin */
  sessionStorageBytes: 2048,
  /** network.cookie.maxNumber, network.cookie.maxPerHost */
  cookies: 3000,
  cookiesPerHost: 180,
  /** PlacesExpiration.sys.mjs: DATABASE_MAX_SIZE / URIENTRY_AVG_SIZE (75 MiB / 700 B) */
  historyPages: Math.ceil(78643200 / 700),
};
