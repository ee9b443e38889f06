// Where a start's time went beyond the disk: each add-on's startup and background page load, and
// session restore, from Firefox's own Glean metrics (the experiment's getStartCosts, full flavour).
// Pure: the raw reading comes in as data, so the unit tests pass recorded real readings.
//
// Glean keeps every sample since its last "metrics" ping, across restarts (checked on ESR 153.8:
// the second start of a profile reads count 2, sum of both; docs/design/start-costs.md). So this
// start's figure is the one new sample since the previous start's reading:
//   - count 1: the only sample since the last ping: this start's (source "glean");
//   - count one more than the previous reading's, the sum grown, and exactly one histogram bucket
//     grown by one with the sum's growth inside that bucket: the difference (source
//     "glean-delta");
//   - anything else is missing, with why: no sample, no new sample, several new samples (one of
//     them from an earlier start or a restart of the add-on), the add-on still starting, a read
//     error. Never a guess, never 0.
// A record keeps them under `costs` (additive: readers that do not know the field ignore it).

export const COSTS_READING_KEY = "startCosts.lastReading";

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** Where a figure came from (the page words each). */
export const SOURCES = {
  glean: "glean", // the only sample Glean holds
  gleanDelta: "glean-delta", // the growth since the previous start's reading
  // Firefox's startup timeline: sessionRestored (getStartupInfo) less when SessionStore began
  // restoring (Glean's sessionRestore.startupTimeline, this start's)
  timeline: "startup-timeline",
  // the experiment's own watch of SessionStore's SSTabRestored events (when each restored
  // window's selected tab finished restoring, its page loaded), this start's by construction
  tabEvents: "session-store-events",
};

/** Why a figure is missing (the page words each). */
export const MISSING = {
  noSample: "no-sample", // Glean holds no sample for it (e.g. no background page, no session file)
  noNewSample: "no-new-sample", // nothing new since the previous reading
  severalSamples: "several-samples", // more than one new sample: which is this start's is unknown
  stillStarting: "still-starting", // the add-on had not finished starting when read
  readError: "read-error", // Glean threw
  noMilestone: "no-milestone", // no sessionRestored at or after the moment SessionStore began restoring
  noRestoredTab: "no-restored-tab", // no window's selected tab was restored, or one was still loading after the wait
};

/** Why a whole record has no costs. */
export const UNAVAILABLE = {
  noExperimentApi: "no-experiment-api", // basic flavour: Glean is readable only by privileged code
  readFailed: "read-failed", // the experiment API threw
  addonStartedLater: "addon-started-later", // installed/enabled mid-run: the start's samples are older
  gleanOff: "glean-off", // Firefox's telemetry upload is off: Glean records nothing
};

/**
 * Whether Glean records in the Firefox the reading came from: telemetry upload on, or FOG's test
 * mode (port < 0: record and drop the pings, what automation sets). Unknown (an older experiment)
 * counts as recording: the figures then say "no sample" themselves.
 */
export function gleanRecords(reading) {
  const state = reading?.gleanRecording;
  if (!isObject(state)) {
    return true;
  }
  return state.uploadEnabled === true || (typeof state.testPort === "number" && state.testPort < 0);
}

const STARTED = "Startup: Complete";
const NS_PER_MS = 1e6;

/** The session restore metrics, the record's name for each and its unit. */
export const SESSION_RESTORE_FIELDS = [
  { metric: "fileSizeBytes", field: "fileSizeBytes", unit: "bytes" },
  { metric: "readFile", field: "readFileMs", unit: "ns" },
  { metric: "startupInitSession", field: "initMs", unit: "ns" },
  { metric: "startupOnloadInitialWindow", field: "onloadInitialWindowMs", unit: "ns" },
  { metric: "restoreWindow", field: "restoreWindowMs", unit: "ns" },
  { metric: "numberOfTabsRestored", field: "tabsRestored", unit: "count" },
  { metric: "numberOfEagerTabsRestored", field: "eagerTabsRestored", unit: "count" },
  { metric: "autoRestoreDurationUntilEagerTabsRestored", field: "untilEagerTabsRestoredMs", unit: "ns" },
  // a quantity: when SessionStore began restoring the windows, in ms since the process began
  { metric: "restoringAt", field: "restoringAtMs", unit: "ms" },
];

const isFiniteNumber = (v) => typeof v === "number" && Number.isFinite(v);

/** Glean's timing-distribution bucket above `lower` (base 2, 8 buckets per doubling). */
function bucketUpper(lower) {
  return Math.max(lower + 1, Math.ceil(lower * 2 ** (1 / 8)) + 1);
}

/** Whether `after` is `before` plus exactly one sample of `delta` (by the histogram's buckets). */
function oneSampleAdded(before, after, delta) {
  const keys = new Set([...Object.keys(before.values ?? {}), ...Object.keys(after.values ?? {})]);
  let grown = null;
  for (const key of keys) {
    const diff = (after.values?.[key] ?? 0) - (before.values?.[key] ?? 0);
    if (diff === 0) {
      continue;
    }
    if (diff !== 1 || grown !== null) {
      return false;
    }
    grown = Number(key);
  }
  if (grown === null) {
    return keys.size === 0; // a distribution without buckets (a quantity): the count decides
  }
  return delta >= grown && delta < bucketUpper(grown);
}

/**
 * This start's figure of one metric, from the reading now and the previous start's reading of
 * the same metric (or null): {value, source} in the metric's own unit, or {missing}.
 */
export function sampleSince(now, before = null) {
  if (now == null) {
    return { missing: MISSING.noSample };
  }
  if (!isObject(now) || "error" in now || !Number.isInteger(now.count) || !isFiniteNumber(now.sum)) {
    return { missing: MISSING.readError };
  }
  const sameAsBefore = isObject(before) && before.count === now.count && before.sum === now.sum;
  if (sameAsBefore) {
    return { missing: MISSING.noNewSample };
  }
  if (now.count === 1) {
    return { value: now.sum, source: SOURCES.glean };
  }
  if (isObject(before) && Number.isInteger(before.count) && isFiniteNumber(before.sum)) {
    const delta = now.sum - before.sum;
    if (now.count === before.count + 1 && delta >= 0 && oneSampleAdded(before, now, delta)) {
      return { value: delta, source: SOURCES.gleanDelta };
    }
  }
  return { missing: MISSING.severalSamples };
}

/** A metric reading's identity (count and sum), or null where it holds no sample. */
function readingKey(value) {
  return isObject(value) && Number.isInteger(value.count) && value.count > 0 && isFiniteNumber(value.sum) ? `${value.count}:${value.sum}` : null;
}

/**
 * Per metric, the readings two or more add-ons share: Glean keeps at most 16 labels of a labeled
 * metric apart between two "metrics" pings and pools every later label's samples under
 * `__other__`, which testGetValue() then returns for each of those add-ons. Seen on the large
 * preset (ten add-ons, the benchmark's two, Firefox's own): about:startup's and the costly add-on's
 * startup read the same {count, sum}, growing by two samples per start. Such a reading is no one
 * add-on's (a start of only one of them would grow it by one sample and give it to both).
 * Two add-ons' own readings agreeing to the nanosecond is not a case met.
 */
function pooledReadings(addons) {
  const pooled = {};
  for (const metric of ["startup", "backgroundPageLoad"]) {
    const seen = new Set();
    pooled[metric] = new Set();
    for (const addon of addons) {
      const key = readingKey(addon?.[metric]);
      if (key !== null && seen.has(key)) {
        pooled[metric].add(key);
      }
      seen.add(key);
    }
  }
  return pooled;
}

/** `figure` with its value converted from `unit` to the record's (ns → ms, 0.1 ms steps). */
function inRecordUnit(figure, unit) {
  if (!("value" in figure) || unit !== "ns") {
    return figure;
  }
  return { ...figure, value: Math.round((figure.value / NS_PER_MS) * 10) / 10 };
}

/**
 * This start's costs from the experiment's reading `now` and the previous start's `before`
 * (both getStartCosts replies; `before` may be null). `processStart` (epoch ms) dates the reading;
 * `selfId` is about:startup's own add-on id.
 */
export function costsFromReading(now, before = null, { processStart = null, selfId = null, sessionRestoredMs = null } = {}) {
  if (!gleanRecords(now)) {
    return { unavailable: UNAVAILABLE.gleanOff };
  }
  const previous = new Map((before?.addons ?? []).map((addon) => [addon.id, addon]));
  const pooled = pooledReadings(now?.addons ?? []);
  const addons = (now?.addons ?? []).map((addon) => {
    const old = previous.get(addon.id) ?? null;
    const figure = (metric) =>
      typeof addon.state === "string" && addon.state !== STARTED
        ? { missing: MISSING.stillStarting }
        : pooled[metric].has(readingKey(addon[metric]))
          ? { missing: MISSING.severalSamples }
          : inRecordUnit(sampleSince(addon[metric], old?.[metric] ?? null), "ns");
    return {
      id: addon.id,
      name: addon.name ?? null,
      version: addon.version ?? null,
      type: addon.type ?? null,
      builtIn: addon.builtIn === true,
      // about:startup itself: shown, never advised against (it is what measures the rest)
      ...(addon.id === selfId ? { self: true } : {}),
      startupMs: figure("startup"),
      backgroundPageLoadMs: figure("backgroundPageLoad"),
      // only from an experiment that reads it (absent from older readings)
      ...(typeof addon.blockingWebRequest === "boolean" ? { blockingWebRequest: addon.blockingWebRequest } : {}),
    };
  });
  const sessionRestore = {};
  for (const { metric, field, unit } of SESSION_RESTORE_FIELDS) {
    sessionRestore[field] = inRecordUnit(
      sampleSince(now?.sessionRestore?.[metric] ?? null, before?.sessionRestore?.[metric] ?? null),
      unit,
    );
  }
  sessionRestore.restoringMs = restoringFigure(sessionRestore.restoringAtMs, sessionRestoredMs);
  // Only from an experiment that watches the tabs (absent from older readings: no field).
  if (now && "selectedTabsRestoredAt" in now) {
    sessionRestore.selectedTabsRestoredAtMs = selectedTabsFigure(now.selectedTabsRestoredAt, processStart);
  }
  const prefs = now?.sessionRestorePrefs ?? {};
  return {
    reader: now?.source ?? null,
    readAt: isFiniteNumber(now?.readAt) && isFiniteNumber(processStart) ? now.readAt - processStart : null,
    addons,
    sessionRestore,
    settings: {
      restoresSession: Number.isInteger(prefs.startupPage) ? prefs.startupPage === 3 : null,
      restoreOnDemand: typeof prefs.restoreOnDemand === "boolean" ? prefs.restoreOnDemand : null,
    },
  };
}

/**
 * Session restore's own part of the path to sessionRestored: from when SessionStore began
 * restoring the windows (`restoringAt`, this start's) to sessionRestored, which Firefox records
 * once the last window is restored (SessionStore.sys.mjs, _sendRestoreCompletedNotifications).
 * Its windows, their tabs and the extra windows it opens all lie inside it. A start with no
 * restoring moment (nothing restored, or only an older start's value) has none: missing.
 */
function restoringFigure(restoringAt, sessionRestoredMs) {
  if (!("value" in restoringAt)) {
    return restoringAt;
  }
  if (!isFiniteNumber(sessionRestoredMs) || sessionRestoredMs < restoringAt.value) {
    return { missing: MISSING.noMilestone };
  }
  return { value: Math.round((sessionRestoredMs - restoringAt.value) * 10) / 10, source: SOURCES.timeline };
}

/**
 * When the restored windows' selected tabs had all finished restoring (their pages loaded), in ms
 * since the process began: what the user of a restored session waits for, and what an add-on
 * holding page loads delays (not sessionRestored). Missing where none was restored or one was
 * still loading when the experiment stopped waiting.
 */
function selectedTabsFigure(at, processStart) {
  if (!isFiniteNumber(at) || !isFiniteNumber(processStart) || at < processStart) {
    return { missing: MISSING.noRestoredTab };
  }
  return { value: Math.round(at - processStart), source: SOURCES.tabEvents };
}

function figureProblems(figure, path) {
  if (!isObject(figure)) {
    return [`${path}: must be an object {value, source} or {missing}`];
  }
  if ("missing" in figure) {
    return Object.values(MISSING).includes(figure.missing) ? [] : [`${path}.missing: unknown reason`];
  }
  const problems = [];
  if (!isFiniteNumber(figure.value) || figure.value < 0) {
    problems.push(`${path}.value: must be a number ≥ 0`);
  }
  if (!Object.values(SOURCES).includes(figure.source)) {
    problems.push(`${path}.source: must be one of ${Object.values(SOURCES).join(", ")}`);
  }
  return problems;
}

/** The problems with a record's `costs` (absent is fine): "path: what" strings. */
export function costsProblems(costs, path = "record.costs") {
  if (costs === undefined) {
    return [];
  }
  if (!isObject(costs)) {
    return [`${path}: must be an object`];
  }
  if ("unavailable" in costs) {
    return Object.values(UNAVAILABLE).includes(costs.unavailable) ? [] : [`${path}.unavailable: unknown reason`];
  }
  const problems = [];
  if (!Array.isArray(costs.addons)) {
    problems.push(`${path}.addons: must be a list`);
  } else {
    costs.addons.forEach((addon, i) => {
      const at = `${path}.addons[${i}]`;
      if (!isObject(addon) || typeof addon.id !== "string" || addon.id === "") {
        problems.push(`${at}.id: must be a non-empty string`);
        return;
      }
      problems.push(...figureProblems(addon.startupMs, `${at}.startupMs`));
      problems.push(...figureProblems(addon.backgroundPageLoadMs, `${at}.backgroundPageLoadMs`));
    });
  }
  if (!isObject(costs.sessionRestore)) {
    problems.push(`${path}.sessionRestore: must be an object`);
  } else {
    for (const [field, figure] of Object.entries(costs.sessionRestore)) {
      problems.push(...figureProblems(figure, `${path}.sessionRestore.${field}`));
    }
  }
  return problems;
}

const valueOf = (figure) => (isObject(figure) && isFiniteNumber(figure.value) ? figure.value : null);

/**
 * This start's causes, largest first: [{kind: "addon"|"session-restore", id, name, version,
 * ms, measure (an add-on's: "startup", or "background-page-load" for one that holds page loads),
 * source, actionable, advice}]. Every ms is busy time (the spans overlap each other and the start),
 * never a saving: what removing it would save is measured by `npm run bench -- ab`, not here.
 */
export function causesOf(costs) {
  if (!isObject(costs) || !Array.isArray(costs.addons)) {
    return [];
  }
  const causes = [];
  for (const addon of costs.addons) {
    // An add-on that may block requests holds the restored tabs' page loads until its background
    // page has loaded (Firefox primes its persistent blocking webRequest listener and starts the
    // background at the first request: ext-backgroundPage.js, ESR 153.8): that load is its
    // figure, where Glean has it. Any other add-on's is its startup.
    const holds = addon.blockingWebRequest === true && valueOf(addon.backgroundPageLoadMs) !== null;
    const figure = holds ? addon.backgroundPageLoadMs : addon.startupMs;
    const ms = valueOf(figure);
    if (ms === null) {
      continue;
    }
    causes.push({
      kind: "addon",
      id: addon.id,
      name: addon.name ?? addon.id,
      version: addon.version,
      ms,
      measure: holds ? "background-page-load" : "startup",
      source: figure.source,
      backgroundPageLoadMs: valueOf(addon.backgroundPageLoadMs),
      // Firefox's own built-in add-ons cannot be turned off from about:addons; about:startup is
      // what measures the rest.
      actionable: !addon.builtIn && !addon.self,
      advice: addon.builtIn || addon.self ? null : "disable-addon",
    });
  }
  const { ms: srMs, source: srSource } = sessionRestoreFigure(costs.sessionRestore ?? {});
  if (srMs !== null) {
    const onDemandOff = costs.settings?.restoreOnDemand === false;
    causes.push({
      kind: "session-restore",
      id: "session-restore",
      name: null,
      version: null,
      ms: srMs,
      source: srSource,
      fileSizeBytes: valueOf(costs.sessionRestore?.fileSizeBytes),
      actionable: onDemandOff || costs.settings?.restoresSession === true,
      advice: onDemandOff ? "restore-on-demand" : costs.settings?.restoresSession ? "restore-session-off" : null,
    });
  }
  return causes.sort((a, b) => b.ms - a.ms);
}

/**
 * Session restore's figure: where the record has it, its part of the path to sessionRestored
 * (initSession, then from when SessionStore began restoring to sessionRestored: the windows it
 * opens and the tabs it loads at once lie inside; source "session-restore-path"); else the sum of
 * reading the file and the longer of restoring the window and waiting for the eager tabs (the
 * wait for the eager tabs spans the window's restore, so never both; "glean-session-restore"),
 * which leaves out the extra windows and what they wait for.
 */
function sessionRestoreFigure(sr) {
  const [read, init, windowMs, eager, path] = ["readFileMs", "initMs", "restoreWindowMs", "untilEagerTabsRestoredMs", "restoringMs"].map((f) => valueOf(sr[f]));
  if (path !== null) {
    return { ms: Math.round(((init ?? 0) + path) * 10) / 10, source: "session-restore-path" };
  }
  const restoring = windowMs === null && eager === null ? null : Math.max(windowMs ?? 0, eager ?? 0);
  const ms = read === null && restoring === null ? null : Math.round(((read ?? 0) + (restoring ?? 0)) * 10) / 10;
  return { ms, source: "glean-session-restore" };
}

/** The largest cause the user can act on, or null. */
export function largestActionable(costs) {
  return causesOf(costs).find((cause) => cause.actionable) ?? null;
}

/**
 * Across the history: each add-on's startup figures grouped by version, in the order the
 * versions were first seen: [{id, name, versions: [{version, values, n, median}]}], and `changes`
 * where the median moved from one version to the next ([{id, name, from, to, beforeMs, afterMs}]).
 */
export function addonTrends(records) {
  const byId = new Map();
  for (const record of records ?? []) {
    for (const addon of record?.costs?.addons ?? []) {
      const ms = valueOf(addon.startupMs);
      if (ms === null) {
        continue;
      }
      const entry = byId.get(addon.id) ?? { id: addon.id, name: addon.name ?? addon.id, versions: new Map() };
      entry.name = addon.name ?? entry.name;
      const version = addon.version ?? "?";
      const bucket = entry.versions.get(version) ?? { version, values: [] };
      bucket.values.push(ms);
      entry.versions.set(version, bucket);
      byId.set(addon.id, entry);
    }
  }
  const trends = [...byId.values()].map((entry) => ({
    id: entry.id,
    name: entry.name,
    versions: [...entry.versions.values()].map((v) => ({ ...v, n: v.values.length, median: median(v.values) })),
  }));
  const changes = [];
  for (const trend of trends) {
    for (let i = 1; i < trend.versions.length; i++) {
      const [from, to] = [trend.versions[i - 1], trend.versions[i]];
      changes.push({ id: trend.id, name: trend.name, from: from.version, to: to.version, beforeMs: from.median, afterMs: to.median });
    }
  }
  return { trends, changes };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
