// Records this Firefox process start into the history, once. Pure: everything it uses comes in
// as a parameter, so background.js wires it and the unit tests pass fakes.
//   full mode:  Firefox's own milestones (experiment API), recorded once sessionRestored is
//               reported (polled with a bounded backoff; after `maxWait` what is there is kept)
//   basic mode: the process start from the host (/proc, 10 ms tick) plus the moments the add-on
//               itself observed (extensionBackground), as ms since that process start
// The host is optional: without it a full-mode record has no I/O figures, and basic mode has no
// process start to measure from, so nothing is recorded (status "no-process-start").
import { classifyStart, needOf } from "./coldness.js";
import { addRecord } from "./history.js";
import { ioFromHost, NOTES, prefetchFromHost, preloadFromHost, recordId } from "./record.js";
import { COSTS_READING_KEY, costsFromReading, UNAVAILABLE } from "./start-costs.js";

/**
 * How long after sessionRestored an add-on that started during the run may record the start
 * and still have its figures count as the start's: a minute. An add-on installed right after
 * Firefox started (a temporary install: web-ext run, the e2e harness, about:debugging) records
 * within seconds of the start being over, and what was read in those seconds is little beside
 * a start's; one installed later (the README's about:addons path, minutes after) is late.
 */
export const LATE_MS = 60_000;

/** Delays between polls for sessionRestored: doubling from 250 ms, at most 5 s. */
export function backoffDelays(maxWait, { first = 250, cap = 5000 } = {}) {
  const delays = [];
  let total = 0;
  let delay = first;
  while (total < maxWait) {
    const step = Math.min(delay, cap, maxWait - total);
    delays.push(step);
    total += step;
    delay *= 2;
  }
  return delays;
}

/**
 * Calls getStartupInfo until it reports `sessionRestored` or the delays run out.
 * Returns {milestones, complete}.
 */
export async function waitForSessionRestored(getStartupInfo, { sleep, maxWait = 60000 }) {
  let milestones = await getStartupInfo();
  for (const delay of backoffDelays(maxWait)) {
    if (typeof milestones?.sessionRestored === "number") {
      return { milestones, complete: true };
    }
    await sleep(delay);
    milestones = await getStartupInfo();
  }
  return { milestones: milestones ?? {}, complete: typeof milestones?.sessionRestored === "number" };
}

async function orNull(promise) {
  try {
    return (await promise) ?? null;
  } catch {
    return null;
  }
}

/** {name: epoch ms} → {processStart, milestones: {name: ms since process}} (`process` itself left out). */
export function sinceProcess(raw) {
  const entries = Object.entries(raw ?? {}).filter(([, ms]) => typeof ms === "number" && Number.isFinite(ms) && ms > 0);
  if (entries.length === 0) {
    return { processStart: null, milestones: {} };
  }
  const processStart = raw.process > 0 ? raw.process : Math.min(...entries.map(([, ms]) => ms));
  const milestones = {};
  for (const [name, ms] of entries) {
    if (name !== "process") {
      milestones[name] = ms - processStart;
    }
  }
  return { processStart, milestones };
}

/**
 * Builds this start's record (without storing it). Returns {record} or {record: null, reason}.
 * - getStartupInfo: the experiment API's function (full mode), or null (basic mode)
 * - requestHost(command): resolves with the host's `data` for "hello" / "firefox"; may reject
 * - getBrowserInfo / getPlatformInfo: browser.runtime's
 * - backgroundStartedAt: epoch ms the background page started (basic-mode figure)
 * - addonStartedLater(): true when the add-on was installed/enabled during this run of Firefox
 */
export async function buildRecord({
  getStartupInfo = null,
  getStartCosts = null,
  previousCostsReading = null,
  selfId = null,
  requestHost = () => Promise.reject(new Error("no host")),
  getBrowserInfo = async () => ({}),
  getPlatformInfo = async () => ({}),
  backgroundStartedAt = null,
  addonStartedLater = () => false,
  now = Date.now,
  sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  maxWait = 60000,
} = {}) {
  const mode = typeof getStartupInfo === "function" ? "full" : "basic";
  const notes = [];
  let processStart = null;
  let milestones = {};
  let precision = {};

  const startedLater = Boolean(addonStartedLater());
  if (mode === "full") {
    const waited = await waitForSessionRestored(getStartupInfo, { sleep, maxWait });
    if (!waited.complete) {
      notes.push(NOTES.noSessionRestored);
    }
    ({ processStart, milestones } = sinceProcess(waited.milestones));
    precision = { processStart: 1, milestones: 1 };
  }

  // Asked after the wait, so the I/O figures cover the start up to sessionRestored.
  const hello = await orNull(requestHost("hello"));
  const firefox = hello ? await orNull(requestHost("firefox")) : null;
  if (!firefox) {
    notes.push(NOTES.hostUnavailable);
  }

  if (mode === "basic") {
    if (typeof firefox?.started_at_ms !== "number") {
      return { record: null, reason: "no-process-start" };
    }
    processStart = firefox.started_at_ms;
    const tick = typeof firefox.start_precision_ms === "number" ? firefox.start_precision_ms : 10;
    precision = { processStart: tick, milestones: tick };
    if (startedLater) {
      notes.push(NOTES.addonStartedLater);
    } else if (typeof backgroundStartedAt === "number" && backgroundStartedAt >= processStart) {
      milestones = { extensionBackground: Math.round(backgroundStartedAt - processStart) };
    }
  }

  if (processStart === null) {
    return { record: null, reason: "no-process-start" };
  }
  // The size this build's start needs, for its coldness: the learned plan, else the install folder.
  const plan = firefox ? await orNull(requestHost("plan_status")) : null;
  const browserInfo = (await orNull(getBrowserInfo())) ?? {};
  const platform = (await orNull(getPlatformInfo())) ?? {};
  const recordedAt = now();
  const { costs, costsReading, addonStart } = await readCosts({ mode, getStartCosts, previousCostsReading, processStart, selfId, startedLater, sessionRestoredMs: milestones.sessionRestored ?? null });
  // An add-on installed or enabled during this run of Firefox records its start late: in
  // basic mode always (it saw no moment of the start), in full mode when that was more than
  // LATE_MS after the start was over (issue 39 #5: 10 minutes, "A warm start" with no note).
  // Then what the processes read by now is not the start's: said, and classed `late`. Whether
  // the add-on started after Firefox is Firefox's own word where the experiment gives it
  // (addonStart.source "startupReason"), else the background's one-second guess ("onStartup").
  const late = addonStart.later && (mode === "basic" || recordedAt - processStart - (milestones.sessionRestored ?? 0) > LATE_MS);
  if (late && mode === "full") {
    notes.push(NOTES.addonStartedLater);
  }
  const io = ioFromHost(firefox?.io, recordedAt - processStart);
  const prefetch = prefetchFromHost(firefox?.prefetched);
  const preload = preloadFromHost(firefox?.preloaded);
  const record = {
    id: recordId(mode, processStart),
    recordedAt,
    mode,
    firefox: {
      version: browserInfo.version ?? firefox?.version ?? null,
      buildId: browserInfo.buildID ?? firefox?.build_id ?? null,
    },
    os: platform.os ?? null,
    kernel: hello?.kernel ?? null,
    processStart,
    milestones,
    io,
    coldness: classifyStart(io, needOf({ plannedBytes: plan?.planned_bytes ?? null, installBytes: plan?.install_bytes ?? null }), {
      prefetched: prefetch !== null,
      preloaded: preload !== null,
      late,
    }),
    precision,
    notes,
    costs,
    addonStart,
  };
  if (prefetch) {
    record.prefetch = prefetch;
  }
  if (preload) {
    record.preload = preload;
  }
  return { record, costsReading };
}

/**
 * Whether this add-on started after Firefox (installed or enabled during the run), and who says
 * so: Firefox's startup reason of this extension (`selfStartupReason` of the experiment's
 * reading: APP_STARTUP when it started with Firefox), else the background's guess (`startedLater`:
 * no runtime.onStartup within its one-second wait), which a sibling add-on busy in the shared
 * extension process can delay past that second (found with the benchmark's costly add-on).
 * {later, reason, source: "startupReason" | "onStartup"}.
 */
export function addonStartOf(reading, startedLater) {
  const reason = typeof reading?.selfStartupReason === "string" ? reading.selfStartupReason : null;
  return reason === null
    ? { later: Boolean(startedLater), reason: null, source: "onStartup" }
    : { later: reason !== "APP_STARTUP", reason, source: "startupReason" };
}

/**
 * This start's costs (lib/models/start-costs.js), the raw reading to keep for the next start,
 * and whether the add-on started after Firefox (addonStartOf). Basic mode, an add-on started
 * mid-run, or a failed read: costs {unavailable} with why.
 */
async function readCosts({ mode, getStartCosts, previousCostsReading, processStart, selfId, startedLater, sessionRestoredMs = null }) {
  if (mode !== "full" || typeof getStartCosts !== "function") {
    return { costs: { unavailable: UNAVAILABLE.noExperimentApi }, costsReading: null, addonStart: addonStartOf(null, startedLater) };
  }
  let reading;
  try {
    reading = await getStartCosts();
  } catch {
    return { costs: { unavailable: UNAVAILABLE.readFailed }, costsReading: null, addonStart: addonStartOf(null, startedLater) };
  }
  const addonStart = addonStartOf(reading, startedLater);
  if (addonStart.later) {
    // The start's samples were taken before this add-on ran: keep the reading as the next
    // start's baseline, but name no figure for this start.
    // Firefox's reason is kept (ADDON_INSTALL, ADDON_ENABLE, …): a benchmark arm whose starts
    // came out so says why (docs/design/start-costs.md).
    const reason = typeof reading?.selfStartupReason === "string" ? { startupReason: reading.selfStartupReason } : {};
    return { costs: { unavailable: UNAVAILABLE.addonStartedLater, ...reason }, costsReading: reading, addonStart };
  }
  return { costs: costsFromReading(reading, previousCostsReading, { processStart, selfId, sessionRestoredMs }), costsReading: reading, addonStart };
}

/**
 * Builds this start's record and adds it to the history in `storage` unless this start is
 * already there (a background page restarted by Firefox records nothing new).
 * Returns {status: "recorded" | "duplicate" | "no-process-start", record, history}.
 */
export async function recordThisStart({ storage, now = Date.now, ...options }) {
  // The previous start's raw cost reading: this start's figures are what Glean gained since.
  const stored = (await storage.get(COSTS_READING_KEY))?.[COSTS_READING_KEY] ?? null;
  const { record, reason, costsReading } = await buildRecord({ ...options, previousCostsReading: stored?.reading ?? null, now });
  if (!record) {
    return { status: reason, record: null, history: null };
  }
  const { history, added } = await addRecord(storage, record, { now });
  if (added && costsReading) {
    await storage.set({ [COSTS_READING_KEY]: { startId: record.id, reading: costsReading } });
  }
  return { status: added ? "recorded" : "duplicate", record, history };
}
