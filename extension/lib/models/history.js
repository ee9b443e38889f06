// The startup history kept in storage.local: one versioned document under HISTORY_KEY,
//   {version: 2, records: [record, …] (oldest first), trimmed: N, recovered: [notice, …]}
// bounded to MAX_RECORDS (the oldest go, and `trimmed` counts them so the page can say so),
// migrated from older versions when loaded, and never lost: a value this code cannot read is
// moved aside to a backup key before a fresh history starts, and a notice says where it went.
// Pure: `storage` is passed in ({get(keys), set(items)} like browser.storage.local).
import { withColdness } from "./coldness.js";
import { recordProblems, sameStart } from "./record.js";

export const HISTORY_KEY = "history";
export const HISTORY_VERSION = 2;
export const MAX_RECORDS = 1000;
export const BACKUP_PREFIX = "history.corrupt.";
/** storage.session key (cleared with every browser start) naming this process start's record id. */
export const CURRENT_START_KEY = "history.currentStart";

/** Why a stored value was moved aside (the page words each one). */
export const RECOVERY = {
  corrupt: "corrupt", // not a history document at all (garbage, another add-on's data)
  futureVersion: "future-version", // written by a newer version of the add-on
  badRecords: "bad-records", // a history whose records are partly unreadable; the good ones are kept
};

export function emptyHistory() {
  return { version: HISTORY_VERSION, records: [], trimmed: 0, recovered: [] };
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const byStart = (a, b) => a.processStart - b.processStart || a.recordedAt - b.recordedAt;

/**
 * Migrations, from the version they read to the next one. Version 0 (never released, kept so the
 * path is exercised) stored a bare array of records. Version 2 gives each record its `coldness`
 * (lib/models/coldness.js); a stored record has no plan size with it, so it is classified against what
 * it names or the fallback size, and says so in `coldness.needFrom`.
 */
const MIGRATIONS = {
  0: (records) => ({ version: 1, records, trimmed: 0, recovered: [] }),
  1: (doc) => ({
    ...doc,
    version: 2,
    records: Array.isArray(doc.records) ? doc.records.map((r) => (isObject(r) ? withColdness(r) : r)) : doc.records,
  }),
};

/** The version of a stored value: 0 for a bare array, `version` for a document, else null. */
function storedVersion(value) {
  if (Array.isArray(value)) {
    return 0;
  }
  if (isObject(value) && Number.isInteger(value.version) && value.version >= 0) {
    return value.version;
  }
  return null;
}

/**
 * Reads a stored value into a current-version document. Returns
 * {history, migratedFrom (a version or null), problem (null or {reason, detail})}; when
 * `problem` is set the caller must keep the original value somewhere before saving `history`.
 */
export function readHistory(value) {
  if (value === undefined || value === null) {
    return { history: emptyHistory(), migratedFrom: null, problem: null };
  }
  let version = storedVersion(value);
  if (version === null) {
    return { history: emptyHistory(), migratedFrom: null, problem: { reason: RECOVERY.corrupt, detail: describe(value) } };
  }
  if (version > HISTORY_VERSION) {
    return {
      history: emptyHistory(),
      migratedFrom: null,
      problem: { reason: RECOVERY.futureVersion, detail: `version ${version}` },
    };
  }
  const migratedFrom = version < HISTORY_VERSION ? version : null;
  let doc = value;
  while (version < HISTORY_VERSION) {
    doc = MIGRATIONS[version](doc);
    version = doc.version;
  }
  if (!Array.isArray(doc.records)) {
    return { history: emptyHistory(), migratedFrom, problem: { reason: RECOVERY.corrupt, detail: "records is not a list" } };
  }
  const records = [];
  const problems = [];
  for (const [index, record] of doc.records.entries()) {
    const found = recordProblems(record, `records[${index}]`);
    if (found.length === 0) {
      records.push(record);
    } else {
      problems.push(found[0]);
    }
  }
  const history = {
    version: HISTORY_VERSION,
    records: records.sort(byStart),
    trimmed: Number.isInteger(doc.trimmed) && doc.trimmed >= 0 ? doc.trimmed : 0,
    recovered: Array.isArray(doc.recovered) ? doc.recovered.filter(isObject) : [],
  };
  const problem =
    problems.length > 0
      ? { reason: RECOVERY.badRecords, detail: `${problems.length} unreadable: ${problems.slice(0, 3).join("; ")}` }
      : null;
  return { history, migratedFrom, problem };
}

function describe(value) {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
  return `${typeof value}: ${text.length > 80 ? `${text.slice(0, 80)}…` : text}`;
}

/**
 * Loads the history from `storage`, migrating and saving it back when it was older, and moving
 * an unreadable value aside to `history.corrupt.<now>` (with a notice in `recovered`) before a
 * fresh or cleaned history is saved. Never throws for what it finds in storage.
 * Returns {history, migratedFrom, backupKey}.
 */
export async function loadHistory(storage, { now = Date.now } = {}) {
  const stored = await storage.get(HISTORY_KEY);
  const { history, migratedFrom, problem } = readHistory(stored?.[HISTORY_KEY]);
  let backupKey = null;
  if (problem) {
    const at = now();
    backupKey = `${BACKUP_PREFIX}${at}`;
    history.recovered.push({ reason: problem.reason, backupKey, at, detail: problem.detail });
    // The backup first: if saving the fresh history fails, the original is already safe.
    await storage.set({ [backupKey]: stored[HISTORY_KEY] });
  }
  if (problem || migratedFrom !== null) {
    await storage.set({ [HISTORY_KEY]: history });
  }
  return { history, migratedFrom, backupKey };
}

/**
 * Returns a new history with `record` added (unless the same start is already there), in start
 * order, trimmed to `max` records: the oldest go and `trimmed` counts them.
 * {history, added: boolean, dropped: number}
 */
export function withRecord(history, record, { max = MAX_RECORDS } = {}) {
  if (history.records.some((r) => sameStart(r, record))) {
    return { history, added: false, dropped: 0 };
  }
  const records = [...history.records, record].sort(byStart);
  const dropped = Math.max(0, records.length - max);
  return {
    history: { ...history, records: records.slice(dropped), trimmed: history.trimmed + dropped },
    added: true,
    dropped,
  };
}

/** Loads, adds `record` and saves. Returns {history, added, dropped, backupKey}. */
export async function addRecord(storage, record, { max = MAX_RECORDS, now = Date.now } = {}) {
  const loaded = await loadHistory(storage, { now });
  const result = withRecord(loaded.history, record, { max });
  if (result.added) {
    await storage.set({ [HISTORY_KEY]: result.history });
  }
  return { ...result, backupKey: loaded.backupKey };
}

/** Forgets the recovery notices (the backups themselves stay in storage). */
export async function dismissRecovered(storage, { now = Date.now } = {}) {
  const { history } = await loadHistory(storage, { now });
  const cleared = { ...history, recovered: [] };
  await storage.set({ [HISTORY_KEY]: cleared });
  return cleared;
}
