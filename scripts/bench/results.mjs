// A benchmark's runs as an about-startup export (docs/export-format.md) with "source": "bench",
// and reading exports back for `compare`. Each record is the extension's own record of that
// start plus a `bench` object ({scenario, run, preloadMs, quit, …}: docs/export-format.md and its
// JSON Schema); the document carries a top-level `bench` object describing the run. Version 1
// readers ignore both. Pure.
import { coldnessOf, likeWithLike } from "../../extension/lib/models/coldness.js";
import { buildExport, checkExport, exportRecords, parseExport } from "../../extension/lib/models/export.js";
import { byScenario, profilesOf } from "./summary.mjs";

/** The record of one counted launch, with its bench fields. */
export function benchRecord(record, { scenario, run, preloadMs = null, quit, slowDisk = null, readAheadKb = null, preloadBytes = null, bytesPlanned = null, bytesInstall = null, ...more }) {
  // The preload's figures only where a preload ran; readAheadKb always (null = unknown); the
  // login scenarios' own figures (workloadMs, …) as they come.
  const extra = Object.fromEntries(Object.entries({ preloadBytes, bytesPlanned, bytesInstall }).filter(([, v]) => v !== null));
  const own = Object.fromEntries(Object.entries(more).filter(([, v]) => v !== undefined));
  return { ...record, bench: { scenario, run, preloadMs, quit, slowDisk, readAheadKb, ...extra, ...own } };
}

/**
 * The export document of a run. `records`: counted launches (benchRecord), `meta`: the run's
 * description (command, firefox, scenarios, runs, slowDisk, startedAt, finishedAt, …).
 * Throws if the result would not pass the page's own import check.
 */
export function benchExport(records, meta, { exportedAt = Date.now(), kernel = null } = {}) {
  const first = records[0];
  const doc = {
    ...buildExport({
      current: null,
      history: records,
      source: "bench",
      exportedAt,
      environment: {
        firefoxVersion: first?.firefox?.version ?? null,
        buildId: first?.firefox?.buildId ?? null,
        os: first?.os ?? null,
        kernel: first?.kernel ?? kernel,
        mode: first?.mode ?? null,
      },
    }),
    bench: meta,
  };
  const checked = checkExport(doc);
  if (!checked.ok) {
    throw new Error(`the bench export would not import: ${checked.problems.join("; ")}`);
  }
  return doc;
}

/** One scenario's own export (the page's Import groups records by build, not by scenario). */
export function scenarioExport(doc, scenario) {
  return {
    ...doc,
    history: doc.history.filter((r) => r.bench?.scenario === scenario),
    bench: { ...doc.bench, scenarios: [scenario] },
  };
}

/**
 * For compare: the records of a file's text, grouped by scenario ("all" for an extension's
 * export). Throws with the import check's words when the file is not a usable export.
 */
export function readRuns(text, name = "file") {
  const parsed = parseExport(text);
  if (!parsed.ok) {
    throw new Error(`${name} is not an about-startup export (${parsed.code}): ${parsed.problems.slice(0, 3).join("; ")}`);
  }
  return byScenario(exportRecords(parsed.doc));
}

/**
 * Which groups to compare: with a #scenario on both sides, those two; on one side, that one
 * against the same scenario or the only group of the other; without, every scenario both files
 * have (or their only groups). Returns [{label, a, b}] or throws with what is there.
 */
export function pairs(aGroups, bGroups, aScenario = null, bScenario = null) {
  const pick = (groups, scenario, side) => {
    if (!groups.has(scenario)) {
      throw new Error(`${side} has no scenario ${scenario}; it has ${[...groups.keys()].join(", ")}`);
    }
    return groups.get(scenario);
  };
  const only = (groups) => (groups.size === 1 ? [...groups.keys()][0] : null);
  if (aScenario || bScenario) {
    const a = aScenario ?? (aGroups.has(bScenario) ? bScenario : only(aGroups));
    const b = bScenario ?? (bGroups.has(aScenario) ? aScenario : only(bGroups));
    if (!a || !b) {
      throw new Error("name the scenario on both sides, e.g. run.json#cold run.json#preload");
    }
    return [{ label: a === b ? a : `${a} → ${b}`, a: pick(aGroups, a, "A"), b: pick(bGroups, b, "B"), aName: a, bName: b }];
  }
  const common = [...aGroups.keys()].filter((k) => bGroups.has(k));
  if (common.length > 0) {
    return common.map((k) => ({ label: k, a: aGroups.get(k), b: bGroups.get(k), aName: k, bName: k }));
  }
  const a = only(aGroups);
  const b = only(bGroups);
  if (a && b) {
    return [{ label: `${a} → ${b}`, a: aGroups.get(a), b: bGroups.get(b), aName: a, bName: b }];
  }
  throw new Error(
    `no scenario in common (A: ${[...aGroups.keys()].join(", ")}; B: ${[...bGroups.keys()].join(", ")}); pick one with FILE#scenario`,
  );
}

const classCounts = (records) => {
  const counts = new Map();
  for (const r of records) {
    counts.set(coldnessOf(r), (counts.get(coldnessOf(r)) ?? 0) + 1);
  }
  return [...counts].map(([c, n]) => `${n} ${c}`).join(", ");
};

/**
 * Like with like (docs/design/coldness.md): one pair of `pairs` split by coldness class.
 * Returns {comparisons: [{label, a, b, aName, bName}], notes: [text]}.
 * - `explicit` (the user named both scenarios, e.g. run.json#cold run.json#preload): compared as
 *   asked, with a note when the two sides are not of the same classes (preloading is meant to
 *   turn a cold start into a hot one, so the difference includes that).
 * - otherwise one comparison per class both sides have; the classes only one side has, and
 *   `unknown` starts, are named in the notes as not compared.
 */
export function likePairs(pair, { explicit = false } = {}) {
  const { common, onlyA, onlyB } = likeWithLike(pair.a, pair.b);
  if (explicit) {
    const same = onlyA.length === 0 && onlyB.length === 0;
    const notes = same
      ? []
      : [`${pair.label}: not like with like (A: ${classCounts(pair.a)}; B: ${classCounts(pair.b)}): the difference includes how cold the starts were.`];
    return { comparisons: [pair], notes };
  }
  const comparisons = common.map((c) => ({
    ...pair,
    label: `${pair.label}, ${c} starts`,
    a: pair.a.filter((r) => coldnessOf(r) === c),
    b: pair.b.filter((r) => coldnessOf(r) === c),
  }));
  const notes = [];
  const side = (name, records, classes) =>
    classes.map((c) => `${records.filter((r) => coldnessOf(r) === c).length} ${c} starts of ${name}`).join(", ");
  if (onlyA.length > 0 || onlyB.length > 0) {
    const parts = [side("A", pair.a, onlyA), side("B", pair.b, onlyB)].filter(Boolean).join("; ");
    notes.push(
      common.length > 0
        ? `${pair.label}: not compared, nothing alike on the other side: ${parts}.`
        : `${pair.label}: cannot compare like with like (A: ${classCounts(pair.a)}; B: ${classCounts(pair.b)}); name both scenarios (FILE#scenario) to compare them anyway.`,
    );
  }
  return { comparisons, notes };
}

/**
 * For compare: when A and B ran on different profiles, the warning (a start on a realistic
 * profile also reads and restores the user's session, history and add-ons, so the difference is
 * not the scenario's alone); null when both ran on the same one.
 */
export function profileWarning(a, b, label) {
  const aProfiles = profilesOf(a);
  const bProfiles = profilesOf(b);
  if (aProfiles === bProfiles) {
    return null;
  }
  return `${label}: A ran on profile ${aProfiles}, B on profile ${bProfiles}: the difference includes what the profiles themselves cost (their session, history and add-ons), not only the scenario. Compare runs on the same --profile-preset and seed.`;
}
