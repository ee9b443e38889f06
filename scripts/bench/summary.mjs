// Tables of a benchmark: mean ± 95% confidence interval per milestone and scenario, the
// difference of each scenario against a baseline (cold), and the table of `compare` with Welch's
// t-test. The statistics are extension/lib/models/stats.js's (the one implementation). Pure.
import { milestoneOrder, summarize, welchTest } from "../../extension/lib/models/stats.js";

const MB = 1e6;

/** The bench fields of a record (scenario, preloadMs), or {} for an extension's record. */
const benchOf = (record) => record.bench ?? {};

/**
 * What the tables show, in order: every milestone present (by typical time), then the preload,
 * the preload plus the start (the honest comparison with cold), and the Firefox process's reads.
 */
export function metrics(records) {
  const list = milestoneOrder(records).map((name) => ({
    key: name,
    label: name,
    unit: "ms",
    value: (r) => r.milestones?.[name],
  }));
  const hasPreload = records.some((r) => typeof benchOf(r).preloadMs === "number");
  if (hasPreload) {
    list.push({ key: "preload", label: "preload (host)", unit: "ms", value: (r) => benchOf(r).preloadMs });
    if (records.some((r) => typeof benchOf(r).preloadBytes === "number")) {
      list.push({ key: "preloadBytes", label: "preload read", unit: "MB", value: (r) => nullable(benchOf(r).preloadBytes, MB) });
    }
    list.push({
      key: "preloadPlusSessionRestored",
      label: "preload + sessionRestored",
      unit: "ms",
      value: (r) =>
        typeof r.milestones?.sessionRestored === "number" ? (benchOf(r).preloadMs ?? 0) + r.milestones.sessionRestored : undefined,
    });
  }
  if (records.some((r) => typeof benchOf(r).workloadMs === "number")) {
    // The login scenarios: the "user at login" workload, and the preload running behind it.
    list.push({ key: "workload", label: "login workload", unit: "ms", value: (r) => benchOf(r).workloadMs });
    list.push({ key: "loginPreload", label: "login preload (background)", unit: "ms", value: (r) => benchOf(r).loginPreloadMs ?? undefined });
  }
  if (records.some((r) => typeof benchOf(r).prefetch?.bytesRead === "number")) {
    // launch-prefetch: the prefetcher beside the start (not in Firefox's tree, so not in its reads).
    list.push({ key: "prefetch", label: "prefetch beside the start (host)", unit: "ms", value: (r) => benchOf(r).prefetch?.ms ?? undefined });
    list.push({ key: "prefetchBytes", label: "prefetch read", unit: "MB", value: (r) => nullable(benchOf(r).prefetch?.bytesRead, MB) });
    list.push({ key: "prefetchCached", label: "prefetch found cached", unit: "MB", value: (r) => nullable(benchOf(r).prefetch?.bytesCached, MB) });
  }
  if (records.some((r) => benchOf(r).stillCachedBytes > 0)) {
    list.push({ key: "stillCached", label: "still cached after evict", unit: "MB", value: (r) => nullable(benchOf(r).stillCachedBytes, MB) });
  }
  if (records.some((r) => typeof benchOf(r).profileEvicted?.bytes === "number")) {
    // cold-profile: the user's own files evicted too, and what of them stayed cached.
    list.push({ key: "profileEvicted", label: "user's files evicted", unit: "MB", value: (r) => nullable(benchOf(r).profileEvicted?.bytes, MB) });
    list.push({ key: "profileStillCached", label: "user's files still cached after evict", unit: "MB", value: (r) => nullable(benchOf(r).profileEvicted?.stillCachedBytes, MB) });
  }
  list.push({ key: "readBytes", label: "read from storage (parent)", unit: "MB", value: (r) => nullable(r.io?.readBytes, MB) });
  list.push({ key: "majorFaults", label: "major faults (parent)", unit: "", value: (r) => nullable(r.io?.majorFaults, 1) });
  return list;
}

function nullable(v, scale) {
  return typeof v === "number" ? v / scale : undefined;
}

/** Records grouped by their bench scenario ("all" for records without one), in first-seen order. */
export function byScenario(records) {
  const groups = new Map();
  for (const r of records) {
    const key = benchOf(r).scenario ?? "all";
    if (!groups.has(key)) {
      groups.set(key, []);
    }
    groups.get(key).push(r);
  }
  return groups;
}

/**
 * The profile a record's start ran on: a benchmark's --profile-preset with its seed ("small,
 * seed 1"), "fresh", or, for an extension's own record, the user's own. Bench runs from before
 * --profile-preset carry no profile: every launch of theirs started on a fresh one.
 */
export function profileLabel(record) {
  const bench = record?.bench;
  if (!bench) {
    return "a user's own";
  }
  const preset = bench.profile ?? "fresh";
  return typeof bench.profileSeed === "number" ? `${preset}, seed ${bench.profileSeed}` : preset;
}

/** Every profile `records` ran on, sorted and joined ("fresh; small, seed 1"). */
export function profilesOf(records) {
  return [...new Set(records.map(profileLabel))].sort().join("; ");
}


const number = (v, digits = 0) =>
  new Intl.NumberFormat("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(v);

const digitsFor = (unit) => (unit === "MB" ? 1 : 0);

/** "1,234 ± 56 ms"; one value: "1,234 ms"; none: "—". */
export function formatStat(stat, unit) {
  if (!stat || stat.n === 0) {
    return "—";
  }
  const d = digitsFor(unit);
  const tail = unit ? ` ${unit}` : "";
  if (!stat.ci) {
    return `${number(stat.mean, d)}${tail}`;
  }
  return `${number(stat.mean, d)} ± ${number(stat.ci.half, d)}${tail}`;
}

/** "−8,123 ms (−81.2%)", with "n.s." when Welch's test does not call it significant. */
export function formatDiff(test, unit, { markInsignificant = true } = {}) {
  if (!test) {
    return "—";
  }
  const d = digitsFor(unit);
  const sign = (v) => (v > 0 ? "+" : v < 0 ? "−" : "±");
  const tail = unit ? ` ${unit}` : "";
  const pct = test.relative === null ? "" : ` (${sign(test.relative)}${number(Math.abs(test.relative) * 100, 1)}%)`;
  const ns = markInsignificant && !test.significant ? ", n.s." : "";
  return `${sign(test.diff)}${number(Math.abs(test.diff), d)}${tail}${pct}${ns}`;
}

function markdownTable(header, rows) {
  const align = header.map((_, i) => (i === 0 ? "---" : "---:"));
  return [header, align, ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n");
}

/**
 * The benchmark's table: one row per metric, a "mean ± CI" column per scenario, then one column
 * per other scenario with its difference against `baseline` (Welch's t-test; "n.s." = not
 * significant at 5%). Without the baseline among the scenarios, no difference columns.
 */
export function runTable(records, { scenarios = [...byScenario(records).keys()], baseline = "cold" } = {}) {
  const groups = byScenario(records);
  const list = metrics(records);
  const others = groups.has(baseline) ? scenarios.filter((s) => s !== baseline && groups.has(s)) : [];
  const header = [
    "milestone (ms since process start)",
    ...scenarios.map((s) => `${s} (n = ${groups.get(s)?.length ?? 0})`),
    ...others.map((s) => `${s} vs ${baseline}`),
  ];
  const rows = [];
  for (const m of list) {
    const values = (s) => (groups.get(s) ?? []).map(m.value);
    const cells = scenarios.map((s) => formatStat(summarize(values(s)), m.unit));
    if (cells.every((c) => c === "—")) {
      continue;
    }
    // "preload + sessionRestored" is sessionRestored alone where nothing was preloaded, so its
    // difference is the honest comparison of preloading with a cold start.
    const diffs = others.map((s) => formatDiff(welchTest(values(baseline), values(s)), m.unit));
    rows.push([m.label, ...cells, ...diffs]);
  }
  return markdownTable(header, rows);
}

/**
 * `compare`'s table: A and B side by side, B − A, and Welch's two-sided p-value; "yes" when
 * p < 0.05.
 */
export function compareTable(aRecords, bRecords, { aLabel = "A", bLabel = "B" } = {}) {
  const list = metrics([...aRecords, ...bRecords]);
  const header = ["milestone", `${aLabel} (n = ${aRecords.length})`, `${bLabel} (n = ${bRecords.length})`, "B − A", "p (Welch)", "significant"];
  // Which profile each side started on comes first: unlike profiles make every row below unlike.
  const aProfile = profilesOf(aRecords);
  const bProfile = profilesOf(bRecords);
  const rows = [["profile", aProfile, bProfile, aProfile === bProfile ? "same" : "**differs**", "—", "—"]];
  for (const m of list) {
    const a = aRecords.map(m.value);
    const b = bRecords.map(m.value);
    const sa = summarize(a);
    const sb = summarize(b);
    if (sa.n === 0 && sb.n === 0) {
      continue;
    }
    const test = welchTest(a, b);
    rows.push([
      m.label,
      formatStat(sa, m.unit),
      formatStat(sb, m.unit),
      formatDiff(test, m.unit, { markInsignificant: false }),
      test ? (test.p < 0.001 ? "< 0.001" : number(test.p, 3)) : "—",
      test ? (test.significant ? "yes" : "no") : "—",
    ]);
  }
  return markdownTable(header, rows);
}
