// One record per Firefox process start: its shape and its check. Pure; shared by the history
// (storage.local), the recorder and export/import. docs/export-format.md describes the fields and
// docs/schema/about-startup-export.schema.json says the same thing as a JSON Schema.
import { coldnessProblems } from "./coldness.js";
import { costsProblems } from "./start-costs.js";

export const MODES = ["full", "basic"];

/** Codes in a record's `notes`: facts about how it was measured (the page words them). */
export const NOTES = {
  // full mode: Firefox had not reported sessionRestored when the recorder gave up waiting
  noSessionRestored: "no-session-restored",
  // the native host was not reachable: no I/O figures (and in basic mode no process start)
  hostUnavailable: "host-unavailable",
  // basic mode: the add-on started after Firefox did (installed or enabled during this run),
  // so it observed no startup moment of its own
  addonStartedLater: "addon-started-later",
};

const isFiniteNumber = (v) => typeof v === "number" && Number.isFinite(v);
const isCount = (v) => Number.isInteger(v) && v >= 0;
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isStringOrNull = (v) => v === null || typeof v === "string";

const IO_FIELDS = ["readBytes", "majorFaults", "treeReadBytes", "treeMajorFaults"];

/**
 * The problems with `record` as a list of "path: what" strings; empty when it is a valid record.
 * Extra fields are allowed (version 1 readers ignore them), missing milestones are fine,
 * wrong types are not.
 */
export function recordProblems(record, path = "record") {
  if (!isObject(record)) {
    return [`${path}: not an object`];
  }
  const problems = [];
  const bad = (field, what) => problems.push(`${path}.${field}: ${what}`);
  if (typeof record.id !== "string" || record.id === "") {
    bad("id", "must be a non-empty string");
  }
  if (!isFiniteNumber(record.recordedAt)) {
    bad("recordedAt", "must be a number (ms since the epoch)");
  }
  if (!MODES.includes(record.mode)) {
    bad("mode", `must be one of ${MODES.join(", ")}`);
  }
  if (!isObject(record.firefox)) {
    bad("firefox", "must be an object {version, buildId}");
  } else {
    for (const field of ["version", "buildId"]) {
      if (!isStringOrNull(record.firefox[field])) {
        bad(`firefox.${field}`, "must be a string or null");
      }
    }
  }
  for (const field of ["os", "kernel"]) {
    if (field in record && !isStringOrNull(record[field])) {
      bad(field, "must be a string or null");
    }
  }
  if (!isFiniteNumber(record.processStart)) {
    bad("processStart", "must be a number (ms since the epoch)");
  }
  if (!isObject(record.milestones)) {
    bad("milestones", "must be an object {name: ms since process}");
  } else {
    for (const [name, value] of Object.entries(record.milestones)) {
      if (!isFiniteNumber(value)) {
        bad(`milestones.${name}`, "must be a number");
      }
    }
  }
  if (record.io !== null) {
    if (!isObject(record.io)) {
      bad("io", "must be an object or null");
    } else {
      for (const field of [...IO_FIELDS, "sampledAt"]) {
        const value = record.io[field];
        if (value !== undefined && value !== null && !(field === "sampledAt" ? isFiniteNumber(value) : isCount(value))) {
          bad(`io.${field}`, field === "sampledAt" ? "must be a number or null" : "must be a whole number ≥ 0 or null");
        }
      }
    }
  }
  if ("precision" in record) {
    if (!isObject(record.precision)) {
      bad("precision", "must be an object");
    } else {
      for (const [field, value] of Object.entries(record.precision)) {
        if (!isFiniteNumber(value) || value < 0) {
          bad(`precision.${field}`, "must be a number ≥ 0 (ms)");
        }
      }
    }
  }
  problems.push(...coldnessProblems(record.coldness, `${path}.coldness`));
  if ("prefetch" in record) {
    if (!isObject(record.prefetch) || !isCount(record.prefetch.bytesPlanned)) {
      bad("prefetch", "must be an object {at, strategy, bytesPlanned, bytesRead}");
    } else if (record.prefetch.bytesRead !== null && !isCount(record.prefetch.bytesRead)) {
      bad("prefetch.bytesRead", "must be a whole number ≥ 0 or null");
    } else if (record.prefetch.bytesCached != null && !isCount(record.prefetch.bytesCached)) {
      bad("prefetch.bytesCached", "must be a whole number ≥ 0 or null");
    }
  }
  problems.push(...costsProblems(record.costs, `${path}.costs`));
  if ("notes" in record && !(Array.isArray(record.notes) && record.notes.every((n) => typeof n === "string"))) {
    bad("notes", "must be a list of strings");
  }
  return problems;
}

/** The one record-id rule: the mode and the process start, whole ms since the epoch. */
export function recordId(mode, processStart) {
  return `${mode}-${Math.round(processStart)}`;
}

export function isRecord(record) {
  return recordProblems(record).length === 0;
}

/**
 * Whether two records describe the same process start: same id, or same mode and process
 * start times closer than the coarser precision of the two (a basic-mode start time from
 * /proc has a 10 ms tick).
 */
export function sameStart(a, b) {
  if (a.id === b.id) {
    return true;
  }
  if (a.mode !== b.mode) {
    return false;
  }
  const tolerance = Math.max(a.precision?.processStart ?? 0, b.precision?.processStart ?? 0);
  return Math.abs(a.processStart - b.processStart) <= tolerance;
}

/** The host's `/proc` I/O figures in the record's naming; null when there are none. */
export function ioFromHost(io, sampledAt = null) {
  if (!isObject(io)) {
    return null;
  }
  const pick = (v) => (isCount(v) ? v : null);
  return {
    readBytes: pick(io.read_bytes),
    majorFaults: pick(io.major_faults),
    treeReadBytes: pick(io.tree_read_bytes),
    treeMajorFaults: pick(io.tree_major_faults),
    sampledAt: isFiniteNumber(sampledAt) ? sampledAt : null,
  };
}

/**
 * The host's word on the preload this start followed (`firefox`'s `preloaded`) in the record's
 * naming: {at, bytes, planned}; null when it followed none.
 */
export function preloadFromHost(preloaded) {
  if (!isObject(preloaded) || !isFiniteNumber(preloaded.at_ms)) {
    return null;
  }
  return {
    at: preloaded.at_ms,
    bytes: isCount(preloaded.bytes) ? preloaded.bytes : null,
    planned: preloaded.planned === true,
  };
}

/**
 * The host's word on the launch prefetch that read for this start (`firefox`'s `prefetched`) in
 * the record's naming: {at, strategy, bytesPlanned, bytesRead, bytesCached}; null when there was
 * none. bytesCached (what it found cached, so did not read) is null from an older host.
 */
export function prefetchFromHost(prefetched) {
  if (!isObject(prefetched) || !isCount(prefetched.bytes_planned)) {
    return null;
  }
  return {
    at: isFiniteNumber(prefetched.at_ms) ? prefetched.at_ms : null,
    strategy: ["first", "beside"].includes(prefetched.strategy) ? prefetched.strategy : null,
    bytesPlanned: prefetched.bytes_planned,
    bytesRead: isCount(prefetched.bytes_read) ? prefetched.bytes_read : null,
    bytesCached: isCount(prefetched.bytes_cached) ? prefetched.bytes_cached : null,
  };
}
