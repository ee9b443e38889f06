// The realistic profile as data: what a preset and a seed put in it (history, bookmarks,
// favicons, cookies, permissions, the restored session, the add-ons), before any of it is
// written. make.mjs hands this to Firefox, which writes it through its own code. Pure: the same
// seed, preset, `now` and pages folder give the same model.
import { EXTENSION_KINDS, FIREFOX_LIMITS, PRESETS } from "./presets.mjs";
import { stream, WORDS, zipfWeights } from "./random.mjs";

const DAY_MS = 86_400_000;

/** Places' visit transitions (nsINavHistoryService.TRANSITION_*), with the assumed share of each. */
export const TRANSITIONS = { LINK: 1, TYPED: 2, BOOKMARK: 3, RELOAD: 9 };
const TRANSITION_SHARES = [
  [TRANSITIONS.TYPED, 0.1],
  [TRANSITIONS.BOOKMARK, 0.03],
  [TRANSITIONS.RELOAD, 0.03],
];

const TLDS = ["example", "test"];
const COOKIE_NAMES = ["_ga", "_gid", "session", "sid", "csrftoken", "consent", "prefs", "lang", "theme", "cart", "visitor", "auth", "tz", "ab_test"];
const PERMISSIONS = [
  ["desktop-notification", "allow"],
  ["desktop-notification", "deny"],
  ["geo", "allow"],
  ["camera", "allow"],
  ["microphone", "allow"],
  ["autoplay-media", "allow"],
  ["cookie", "allow"],
  ["popup", "allow"],
  ["persistent-storage", "allow"],
];
const SAME_SITE = ["NONE", "LAX", "STRICT"];

/** Whole-profile check of a preset's numbers against each other and Firefox's caps; throws. */
export function checkPreset(name, p) {
  const problems = [];
  if (p.visits < p.places) problems.push(`visits (${p.visits}) below places (${p.places}): every page in history has a visit`);
  if (p.places < p.sites) problems.push(`places (${p.places}) below sites (${p.sites})`);
  if (p.places > FIREFOX_LIMITS.historyPages) problems.push(`places (${p.places}) over Firefox's history cap (${FIREFOX_LIMITS.historyPages}): expiration would remove them`);
  if (p.cookies > FIREFOX_LIMITS.cookies) problems.push(`cookies (${p.cookies}) over network.cookie.maxNumber (${FIREFOX_LIMITS.cookies})`);
  if (p.cookies > p.sites * FIREFOX_LIMITS.cookiesPerHost) problems.push(`cookies (${p.cookies}) do not fit ${p.sites} sites at ${FIREFOX_LIMITS.cookiesPerHost} per host`);
  if (p.closedTabs > FIREFOX_LIMITS.closedTabsPerWindow) problems.push(`closedTabs (${p.closedTabs}) over browser.sessionstore.max_tabs_undo`);
  if (p.tabs < p.windows || p.pinned >= p.tabs) problems.push("every window needs a tab, and not every tab can be pinned");
  if (p.bookmarks > p.places) problems.push("more bookmarks than pages");
  if (p.extensions > EXTENSION_KINDS.length) problems.push(`extensions (${p.extensions}) over the ${EXTENSION_KINDS.length} kinds there are`);
  if (problems.length) {
    throw new Error(`preset ${name}: ${problems.join("; ")}`);
  }
}

function slug(text) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
}

function titleCase(text) {
  return text.replace(/\b[a-z]/g, (c) => c.toUpperCase());
}

/** Sites: hosts with a scheme, a name and whether they have a favicon. Rank 0 is the most visited. */
function makeSites(seed, p) {
  const r = stream(seed, "sites");
  return Array.from({ length: p.sites }, (_, i) => {
    const name = `${slug(r.words(r.int(1, 2)))}-${i}`;
    const host = `${r.chance(0.4) ? "www." : ""}${name}.${r.pick(TLDS)}`;
    return { host, prefix: r.chance(0.95) ? "https://" : "http://", title: titleCase(name.replace(/-\d+$/, "").replace(/-/g, " ")), icon: r.chance(p.iconShare) };
  });
}

/**
 * History: `places` pages spread over the sites by a Zipf law, each with at least one visit,
 * the remaining visits drawn by the pages' own Zipf popularity (people revisit a few pages
 * often), dated over `historyDays` before `now`, denser recently.
 */
function makeHistory(seed, p, sites, now) {
  const r = stream(seed, "history");
  const siteWeights = zipfWeights(sites.length);
  const pages = Array.from({ length: p.places }, (_, i) => {
    // The first page of each site is its home page, so every site is in history.
    const site = i < sites.length ? i : r.weighted(siteWeights);
    const s = sites[site];
    const home = i < sites.length;
    const words = r.words(r.int(2, 6));
    return {
      site,
      url: home ? `${s.prefix}${s.host}/` : `${s.prefix}${s.host}/${slug(r.words(r.int(1, 3)))}/${slug(words)}-${i}`,
      title: home ? s.title : `${titleCase(words)} - ${s.title}`,
      guid: r.guid(),
      visits: 1,
    };
  });
  const pageWeights = zipfWeights(pages.length, 0.9);
  for (let extra = p.visits - p.places; extra > 0; extra--) {
    pages[r.weighted(pageWeights)].visits += 1;
  }
  const spanMs = p.historyDays * DAY_MS;
  for (const page of pages) {
    const visits = [];
    for (let v = 0; v < page.visits; v++) {
      let transition = TRANSITIONS.LINK;
      const x = r.float();
      let acc = 0;
      for (const [t, share] of TRANSITION_SHARES) {
        acc += share;
        if (x < acc) {
          transition = t;
          break;
        }
      }
      // u^1.5 puts more visits in the recent past; whole seconds, as people click.
      const age = Math.floor((spanMs * r.float() ** 1.5) / 1000) * 1000;
      visits.push({ date: now - age - 1000, transition });
    }
    visits.sort((a, b) => a.date - b.date);
    page.visits = visits;
  }
  return pages;
}

/** Bookmarks of popular pages: some on the toolbar, the rest in folders of the menu and unfiled. */
function makeBookmarks(seed, p, history, now) {
  const r = stream(seed, "bookmarks");
  const chosen = new Set();
  const weights = zipfWeights(history.length, 0.7);
  while (chosen.size < p.bookmarks) {
    chosen.add(r.weighted(weights));
  }
  const spanMs = p.historyDays * DAY_MS;
  const items = [...chosen].map((index) => ({
    kind: "bookmark",
    guid: r.guid(),
    url: history[index].url,
    title: history[index].title,
    dateAdded: now - Math.floor((spanMs * r.float()) / 1000) * 1000 - 1000,
  }));
  const folders = Array.from({ length: p.bookmarkFolders }, () => ({
    kind: "folder",
    guid: r.guid(),
    title: titleCase(r.words(r.int(1, 2))),
    dateAdded: now - Math.floor((spanMs * r.float()) / 1000) * 1000 - 1000,
    children: [],
  }));
  const toolbar = [];
  const menu = [];
  const unfiled = [];
  items.forEach((item, i) => {
    if (i < Math.min(15, items.length)) toolbar.push(item);
    else if (folders.length && r.chance(0.8)) r.pick(folders).children.push(item);
    else unfiled.push(item);
  });
  folders.forEach((folder, i) => (i % 4 === 0 ? toolbar : menu).push(folder));
  return { toolbar, menu, unfiled, count: items.length, folders: folders.length };
}

/** Favicons: one per site that has one (at /favicon.ico), linked to a share of that site's pages. */
/**
 * The share of sites whose pages declare their icon (`<link rel="icon" href="/static/…png">`);
 * the others serve only /favicon.ico at the root (assumed). Firefox stores the two differently
 * (ESR 153, checked): a declared icon is linked to every page that showed it
 * (moz_pages_w_icons, moz_icons_to_pages); a root /favicon.ico is one icon row for the whole
 * origin (moz_icons.root = 1) and no page is linked to it.
 */
export const DECLARED_ICON_SHARE = 0.5;

function makeIcons(seed, p, sites, history) {
  const r = stream(seed, "icons");
  const bySite = new Map();
  for (const page of history) {
    const site = sites[page.site];
    if (!site.icon) continue;
    if (!bySite.has(page.site)) {
      const declared = r.chance(DECLARED_ICON_SHARE);
      const url = `${site.prefix}${site.host}/${declared ? "static/favicon-32x32.png" : "favicon.ico"}`;
      bySite.set(page.site, { site: page.site, url, root: !declared, color: r.int(0, 0xffffff), pages: [page.url] });
    } else if (r.chance(p.iconPageShare)) {
      bySite.get(page.site).pages.push(page.url);
    }
  }
  return [...bySite.values()];
}

function makeCookies(seed, p, sites, now) {
  const r = stream(seed, "cookies");
  const weights = zipfWeights(sites.length);
  const perHost = new Map();
  const cookies = [];
  while (cookies.length < p.cookies) {
    const site = r.weighted(weights);
    const n = perHost.get(site) ?? 0;
    if (n >= FIREFOX_LIMITS.cookiesPerHost) continue;
    perHost.set(site, n + 1);
    const s = sites[site];
    const secure = s.prefix === "https://";
    cookies.push({
      host: r.chance(0.5) ? `.${s.host.replace(/^www\./, "")}` : s.host,
      path: "/",
      name: `${r.pick(COOKIE_NAMES)}_${n}`,
      value: r.token(r.int(8, 120)),
      secure,
      httpOnly: r.chance(0.3),
      expiry: now + r.int(1, 400) * DAY_MS,
      // Firefox refuses SameSite=None without Secure.
      sameSite: secure ? r.pick(SAME_SITE) : r.pick(SAME_SITE.slice(1)),
      scheme: secure ? "HTTPS" : "HTTP",
    });
  }
  return cookies;
}

function makePermissions(seed, p, sites) {
  const r = stream(seed, "permissions");
  const seen = new Set();
  const permissions = [];
  while (permissions.length < p.permissions) {
    const s = sites[r.int(0, sites.length - 1)];
    const [type, action] = r.pick(PERMISSIONS);
    const origin = `${s.prefix}${s.host}`;
    if (seen.has(`${origin} ${type}`)) continue;
    seen.add(`${origin} ${type}`);
    permissions.push({ origin, type, action });
  }
  return permissions;
}

/**
 * What a session keeps of a tab beyond its pages, as a day of use leaves it (shares assumed;
 * docs/design/realistic-profile.md): back history of up to 8 pages and, for some tabs, forward
 * pages too (the user went back); a scroll position on most pages; a typed search and sometimes
 * a draft in the page's form; sessionStorage of the page's origin. The caps are Firefox's.
 */
export const SESSION_SHARES = { forward: 0.15, scrolled: 0.7, form: 0.3, draft: 0.35, storage: 0.45, maxEntries: 8 };

/** sessionStorage of one tab: seeded keys and values, their bytes within Firefox's cap per origin. */
function tabStorage(r) {
  const storage = {};
  let bytes = 0;
  for (let i = r.int(1, 8); i > 0; i--) {
    const key = `${r.pick(["state", "cache", "draft", "scroll", "ab", "nav", "feed", "filters"])}:${r.token(6)}`;
    const value = r.chance(0.5) ? JSON.stringify({ v: r.int(1, 9), at: r.int(1e9, 2e9), items: r.words(r.int(5, 60)).split(" ") }) : r.token(r.int(16, 400));
    if (bytes + key.length + value.length > FIREFOX_LIMITS.sessionStorageBytes) break;
    storage[key] = value;
    bytes += key.length + value.length;
  }
  return storage;
}

/**
 * The restored session: `tabs` spread over `windows` (the first window the largest), `pinned`
 * pinned tabs in the first window, and `closedTabs` recently closed tabs per window. Each tab has
 * one to SESSION_SHARES.maxEntries pages of history with the current one usually last (forward
 * pages where the user went back), and each history entry what Firefox keeps of it (its own IDs,
 * the page it came from, a scroll position); a tab may add form data, a scroll position and
 * sessionStorage. Every page is a local file in `pagesDir` (no network): `pages` lists them for
 * make.mjs to write, each with the form its form data fills.
 */
function makeSession(seed, p, pagesDir) {
  const r = stream(seed, "session");
  const pages = [];
  let nextId = 1;
  const page = () => {
    const n = pages.length;
    const title = titleCase(r.words(r.int(2, 7)));
    const file = `page-${String(n).padStart(4, "0")}-${slug(title).slice(0, 40)}.html`;
    const paragraphs = r.int(8, 60);
    pages.push({ file, title, paragraphs });
    return { url: `file://${pagesDir}/${file}`, title, paragraphs };
  };
  const tab = (pinned) => {
    const docshellUUID = `{${r.uuid()}}`;
    const shown = Array.from({ length: r.int(1, SESSION_SHARES.maxEntries) }, page);
    const entries = shown.map((e, i) => ({
      url: e.url,
      title: e.title,
      // The page it was opened from (a link in the one before), as Firefox's referrer info keeps it.
      referrer: i > 0 ? shown[i - 1].url : null,
      ID: nextId++,
      docshellUUID,
      docIdentifier: nextId++,
      navigationKey: `{${r.uuid()}}`,
      navigationId: `{${r.uuid()}}`,
      // Where the user left each page: ~80 px a paragraph at the pages' 16 px / 1.5 lines.
      scroll: r.chance(SESSION_SHARES.scrolled) ? `0,${r.int(1, e.paragraphs * 80)}` : null,
    }));
    const index = entries.length > 1 && r.chance(SESSION_SHARES.forward) ? r.int(1, entries.length - 1) : entries.length;
    const current = entries[index - 1];
    const form = r.chance(SESSION_SHARES.form)
      ? { url: current.url, id: { q: r.words(r.int(1, 6)), ...(r.chance(SESSION_SHARES.draft) ? { comment: `${r.words(r.int(20, 250))}.` } : {}) } }
      : null;
    const storage = r.chance(SESSION_SHARES.storage) ? tabStorage(r) : null;
    return { entries, index, pinned, scroll: current.scroll, form, storage };
  };
  const windows = [];
  let left = p.tabs;
  for (let w = 0; w < p.windows; w++) {
    const share = w === p.windows - 1 ? left : Math.max(1, Math.round(left * (w === 0 ? 0.6 : 0.5)));
    left -= share;
    const tabs = Array.from({ length: share }, (_, i) => tab(w === 0 && i < p.pinned));
    const closedTabs = Array.from({ length: p.closedTabs }, () => tab(false));
    // 1-based, as sessionstore.jsonlz4 has it; a user is rarely on the first tab.
    windows.push({ tabs, selected: r.int(1, tabs.length), closedTabs });
  }
  return { windows, pages };
}

function makeExtensions(seed, p) {
  const r = stream(seed, "extensions");
  return EXTENSION_KINDS.slice(0, p.extensions).map((kind) => ({
    ...kind,
    id: `${kind.kind}@synthetic.profile.test`,
    uuid: r.uuid(),
    seed: r.int(1, 2 ** 31 - 1),
  }));
}

/**
 * The model of preset `presetName` from `seed` (an integer), with history ending at `now` (ms)
 * and the session's local pages in `pagesDir` (absolute). Throws on an unknown preset.
 */
export function buildModel({ seed, presetName, now, pagesDir, presets = PRESETS }) {
  const p = presets[presetName];
  if (!p) {
    throw new Error(`unknown preset ${JSON.stringify(presetName)}; the presets are ${Object.keys(presets).join(", ")}`);
  }
  checkPreset(presetName, p);
  const sites = makeSites(seed, p);
  const history = makeHistory(seed, p, sites, now);
  const session = makeSession(seed, p, pagesDir);
  // The open tabs were visited too: their current pages are in history, visited recently.
  const r = stream(seed, "session-history");
  for (const w of session.windows) {
    for (const t of w.tabs) {
      const current = t.entries[t.index - 1];
      history.push({ site: null, url: current.url, title: current.title, guid: r.guid(), visits: [{ date: now - r.int(1, 7 * 24 * 3600) * 1000, transition: TRANSITIONS.LINK }] });
    }
  }
  return {
    preset: presetName,
    seed,
    now,
    sites,
    history,
    bookmarks: makeBookmarks(seed, p, history.slice(0, p.places), now),
    icons: makeIcons(seed, p, sites, history.slice(0, p.places)),
    cookies: makeCookies(seed, p, sites, now),
    permissions: makePermissions(seed, p, sites),
    session,
    extensions: makeExtensions(seed, p),
  };
}

/** The counts of a model, as profile.json and the summary report them. Pure. */
export function modelCounts(model) {
  let visits = 0;
  for (const page of model.history) visits += page.visits.length;
  const tabs = model.session.windows.reduce((n, w) => n + w.tabs.length, 0);
  return {
    sites: model.sites.length,
    places: model.history.length,
    visits,
    bookmarks: model.bookmarks.count,
    bookmarkFolders: model.bookmarks.folders,
    icons: model.icons.length,
    // The pages Firefox links to an icon: those of declared icons (a root icon links none).
    iconPages: model.icons.reduce((n, i) => n + (i.root ? 0 : i.pages.length), 0),
    cookies: model.cookies.length,
    permissions: model.permissions.length,
    windows: model.session.windows.length,
    tabs,
    pinned: model.session.windows.reduce((n, w) => n + w.tabs.filter((t) => t.pinned).length, 0),
    closedTabs: model.session.windows.reduce((n, w) => n + w.closedTabs.length, 0),
    localPages: model.session.pages.length,
    extensions: model.extensions.length,
  };
}

export { WORDS };
