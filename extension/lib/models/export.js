// The about-startup export format (docs/export-format.md, schema in
// docs/schema/about-startup-export.schema.json): building a document, naming its file, and
// checking one read back from a file before anything of it is used. Pure.
import { withColdness } from "./coldness.js";
import { recordProblems } from "./record.js";
import { traceProblems } from "./trace.js";
import { omniEntriesProblems } from "./entries-by-build.js";

export const FORMAT = "about-startup-export";
export const FORMAT_VERSION = 1;
export const SOURCES = ["extension", "bench"];

/** Why an import was refused (the page words each one). */
export const IMPORT_ERRORS = {
  notJson: "not-json", // the file is not JSON at all
  foreign: "foreign", // JSON, but not an about-startup export
  futureVersion: "future-version", // an export from a newer version of the format
  invalid: "invalid", // an about-startup export of this version with wrong or missing fields
};

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isCount = (v) => Number.isInteger(v) && v >= 0;
const isStringOrNull = (v) => v === null || typeof v === "string";

const RESIDENCY_TOTALS = [
  "files",
  "size",
  "pages",
  "resident_pages",
  "exact_files",
  "hidden_files",
  "error_files",
  "exact_pages",
  "mapped_pages",
];

/**
 * The latest residency summary as exported: the per-group totals of the host's `residency`
 * reply (docs/PROTOCOL.md), or null when there is none.
 */
export function residencySummary(reply, measuredAt = null) {
  if (!isObject(reply?.groups)) {
    return null;
  }
  const groups = {};
  for (const [name, totals] of Object.entries(reply.groups)) {
    if (!isObject(totals)) {
      continue;
    }
    groups[name] = {};
    for (const field of RESIDENCY_TOTALS) {
      if (field in totals) {
        groups[name][field] = isCount(totals[field]) ? totals[field] : null;
      }
    }
  }
  return {
    measuredAt: typeof measuredAt === "number" ? measuredAt : null,
    installDir: typeof reply.install_dir === "string" ? reply.install_dir : null,
    pageSize: isCount(reply.page_size) ? reply.page_size : null,
    groups,
  };
}

/**
 * The export document. `current` is this start's record (or null when it is not recorded yet);
 * `environment` is {firefoxVersion, buildId, os, kernel, mode}.
 */
export function buildExport({
  current = null,
  history = [],
  trimmed = 0,
  environment = {},
  residency = null,
  trace = null,
  omniEntries = null,
  source = "extension",
  exportedAt = Date.now(),
}) {
  const doc = {
    format: FORMAT,
    version: FORMAT_VERSION,
    exportedAt,
    source,
    environment: {
      firefoxVersion: environment.firefoxVersion ?? null,
      buildId: environment.buildId ?? null,
      os: environment.os ?? null,
      kernel: environment.kernel ?? null,
      mode: environment.mode ?? null,
    },
    current,
    history,
    trimmed,
    residency,
  };
  // Optional and versioned on its own (trace.version; docs/export-format.md "Startup I/O trace").
  if (trace !== null) {
    doc.trace = trace;
  }
  // Optional, versioned on its own: the omni.ja entries read the most per build
  // (lib/models/entries-by-build.js; docs/export-format.md "omni.ja entries per build").
  if (omniEntries !== null) {
    doc.omniEntries = omniEntries;
  }
  return doc;
}

/** about-startup-YYYY-MM-DD-HHMM.json in local time. */
export function exportFileName(date = new Date()) {
  const pad = (n) => String(n).padStart(2, "0");
  const day = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  return `about-startup-${day}-${pad(date.getHours())}${pad(date.getMinutes())}.json`;
}

function residencyProblems(residency) {
  if (residency === null) {
    return [];
  }
  if (!isObject(residency)) {
    return ["residency: must be an object or null"];
  }
  const problems = [];
  if (!isObject(residency.groups)) {
    problems.push("residency.groups: must be an object {group: totals}");
  } else {
    for (const [name, totals] of Object.entries(residency.groups)) {
      if (!isObject(totals)) {
        problems.push(`residency.groups.${name}: must be an object`);
        continue;
      }
      for (const field of RESIDENCY_TOTALS) {
        if (field in totals && totals[field] !== null && !isCount(totals[field])) {
          problems.push(`residency.groups.${name}.${field}: must be a whole number ≥ 0 or null`);
        }
      }
    }
  }
  for (const field of ["measuredAt", "pageSize"]) {
    if (field in residency && residency[field] !== null && typeof residency[field] !== "number") {
      problems.push(`residency.${field}: must be a number or null`);
    }
  }
  if ("installDir" in residency && !isStringOrNull(residency.installDir)) {
    problems.push("residency.installDir: must be a string or null");
  }
  return problems;
}

/** The field a problem names: every problem reads "field: what is wrong" (the English part). */
export function problemField(problem) {
  const text = String(problem);
  const colon = text.indexOf(": ");
  return colon > 0 ? text.slice(0, colon) : text;
}

/** Message of each refusal (IMPORT_ERRORS). */
export const IMPORT_ERROR_KEYS = {
  [IMPORT_ERRORS.notJson]: "importNotJson",
  [IMPORT_ERRORS.foreign]: "importForeign",
  [IMPORT_ERRORS.futureVersion]: "importFutureVersion",
  [IMPORT_ERRORS.invalid]: "importInvalidFields",
};

/**
 * Why a file was not imported, worded through `t(key, subs)`: for an invalid export the fields
 * with problems (the first `max`, then how many more), not the English "must be …" of each one,
 * which is for the console (the page logs `problems`); for a newer format the two versions. A
 * file that is not JSON shows the JSON parser's own message as a detail: it is all there is.
 */
export function importErrorText(name, result, t, max = 3) {
  const problems = Array.isArray(result?.problems) ? result.problems : [];
  switch (result?.code) {
    case IMPORT_ERRORS.notJson:
      return t("importNotJson", [name, problems[0] ?? "—"]);
    case IMPORT_ERRORS.futureVersion:
      return t("importFutureVersion", [name, t("importFutureVersionDetail", [String(result.version ?? "—"), String(FORMAT_VERSION)])]);
    case IMPORT_ERRORS.invalid: {
      const fields = [...new Set(problems.map(problemField))];
      const shown = new Intl.ListFormat(undefined, { style: "short", type: "unit" }).format(fields.slice(0, max));
      return fields.length > max
        ? t("importInvalidFieldsMore", [name, shown, String(fields.length - max)])
        : t("importInvalidFields", [name, shown]);
    }
    default:
      return t("importForeign", [name]);
  }
}

/**
 * Checks a parsed document. Returns {ok: true} or {ok: false, code (IMPORT_ERRORS), problems}.
 * Kept in step with the JSON Schema (a unit test runs both over the same documents).
 */
export function checkExport(doc) {
  const fail = (code, problems) => ({ ok: false, code, problems });
  if (!isObject(doc) || doc.format !== FORMAT) {
    return fail(IMPORT_ERRORS.foreign, [`format: expected "${FORMAT}"`]);
  }
  if (!Number.isInteger(doc.version) || doc.version < 1) {
    return fail(IMPORT_ERRORS.invalid, ["version: must be a whole number ≥ 1"]);
  }
  if (doc.version > FORMAT_VERSION) {
    return { ...fail(IMPORT_ERRORS.futureVersion, [`version ${doc.version}: this add-on reads version ${FORMAT_VERSION}`]), version: doc.version };
  }
  const problems = [];
  if (typeof doc.exportedAt !== "number" || !Number.isFinite(doc.exportedAt)) {
    problems.push("exportedAt: must be a number (ms since the epoch)");
  }
  if (!SOURCES.includes(doc.source)) {
    problems.push(`source: must be one of ${SOURCES.join(", ")}`);
  }
  if (!isObject(doc.environment)) {
    problems.push("environment: must be an object");
  } else {
    for (const field of ["firefoxVersion", "buildId", "os", "kernel"]) {
      if (!isStringOrNull(doc.environment[field] ?? null)) {
        problems.push(`environment.${field}: must be a string or null`);
      }
    }
    const mode = doc.environment.mode ?? null;
    if (mode !== null && mode !== "full" && mode !== "basic") {
      problems.push("environment.mode: must be full, basic or null");
    }
  }
  if (doc.current !== null && doc.current !== undefined) {
    problems.push(...recordProblems(doc.current, "current"));
  } else if (doc.current === undefined) {
    problems.push("current: missing (null when there is none)");
  }
  if (!Array.isArray(doc.history)) {
    problems.push("history: must be a list of records");
  } else {
    doc.history.forEach((record, i) => problems.push(...recordProblems(record, `history[${i}]`)));
  }
  if ("trimmed" in doc && !isCount(doc.trimmed)) {
    problems.push("trimmed: must be a whole number ≥ 0");
  }
  if ("residency" in doc) {
    problems.push(...residencyProblems(doc.residency));
  }
  if ("trace" in doc && doc.trace !== null) {
    problems.push(...traceProblems(doc.trace));
  }
  if ("omniEntries" in doc && doc.omniEntries !== null) {
    problems.push(...omniEntriesProblems(doc.omniEntries));
  }
  return problems.length === 0 ? { ok: true } : fail(IMPORT_ERRORS.invalid, problems);
}

/** Parses and checks a file's text. Returns {ok: true, doc} or {ok: false, code, problems}. */
export function parseExport(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    return { ok: false, code: IMPORT_ERRORS.notJson, problems: [String(error?.message ?? error)] };
  }
  const checked = checkExport(doc);
  return checked.ok ? { ok: true, doc } : checked;
}

/**
 * The records of an export, current included once, each with its `coldness`: records of older
 * exports (before coldness was stored) are classified here from their own figures, against the
 * size a bench record names or the fallback (lib/models/coldness.js).
 */
export function exportRecords(doc) {
  const records = [...doc.history];
  if (doc.current && !records.some((r) => r.id === doc.current.id)) {
    records.push(doc.current);
  }
  return records.map((r) => withColdness(r));
}
