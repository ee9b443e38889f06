// Statistics over start records: grouping by Firefox version + build ID and coldness, and per milestone the
// count, mean, sample standard deviation and a 95% confidence interval of the mean with
// Student's t (n − 1 degrees of freedom). Pure.
import { CLASSES, coldnessOf } from "./coldness.js";
import { formatMs, formatNumber } from "../wording/format.js";

// Two-sided 95% critical values t(0.975, df) for df = 1 … 30.
const T_975 = [
  12.706204736, 4.30265273, 3.182446305, 2.776445105, 2.570581836, 2.446911851, 2.364624252, 2.306004135,
  2.262157163, 2.228138852, 2.20098516, 2.17881283, 2.160368656, 2.144786688, 2.131449546, 2.119905299,
  2.109815578, 2.10092204, 2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.06865761, 2.063898562,
  2.059538553, 2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456,
];
const Z_975 = 1.959963984540054;

/**
 * t(0.975, df): the table up to 30, then the Cornish–Fisher expansion around the normal
 * quantile (error below 1e-5 from df 30 on).
 */
export function tCritical95(df) {
  if (!Number.isInteger(df) || df < 1) {
    return null;
  }
  if (df <= T_975.length) {
    return T_975[df - 1];
  }
  const z = Z_975;
  const z3 = z ** 3;
  const z5 = z ** 5;
  const z7 = z ** 7;
  return (
    z +
    (z3 + z) / (4 * df) +
    (5 * z5 + 16 * z3 + 3 * z) / (96 * df ** 2) +
    (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df ** 3)
  );
}

/**
 * {n, mean, sd, ci: {low, high, half} | null}. `sd` and `ci` are null for n = 1 (one value
 * says nothing about the spread); everything is null for n = 0.
 */
export function summarize(values) {
  const xs = values.filter((v) => typeof v === "number" && Number.isFinite(v));
  const n = xs.length;
  if (n === 0) {
    return { n, mean: null, sd: null, ci: null };
  }
  const mean = xs.reduce((sum, x) => sum + x, 0) / n;
  if (n === 1) {
    return { n, mean, sd: null, ci: null };
  }
  const variance = xs.reduce((sum, x) => sum + (x - mean) ** 2, 0) / (n - 1);
  const sd = Math.sqrt(variance);
  const half = (tCritical95(n - 1) * sd) / Math.sqrt(n);
  return { n, mean, sd, ci: { low: mean - half, high: mean + half, half } };
}

/**
 * Every milestone name present in any record, ordered by typical time: the median of its
 * values over the records that have it (ties by name).
 */
export function milestoneOrder(records) {
  const values = new Map();
  for (const record of records) {
    for (const [name, ms] of Object.entries(record.milestones ?? {})) {
      if (typeof ms === "number" && Number.isFinite(ms)) {
        if (!values.has(name)) {
          values.set(name, []);
        }
        values.get(name).push(ms);
      }
    }
  }
  const median = (xs) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  };
  return [...values.entries()]
    .map(([name, xs]) => [name, median(xs)])
    .sort(([a, x], [b, y]) => x - y || (a < b ? -1 : a > b ? 1 : 0))
    .map(([name]) => name);
}

/** The grouping key of a record: Firefox version and build ID (either may be unknown). */
export function groupKey(record) {
  return `${record.firefox?.version ?? "?"}\u0000${record.firefox?.buildId ?? "?"}`;
}

/**
 * Groups records by version + build ID **and** coldness class (lib/models/coldness.js): a mean over
 * cold and hot starts together means nothing. Each group: {key, version, buildId, coldness,
 * records (in start order), stats: {milestone: summarize(...)}, latest, hasCurrent}. Builds come
 * newest first (by their latest start), and within a build the classes in CLASSES order (cold,
 * warm, hot, unknown). `currentId` marks the group holding the current start.
 */
export function groupRecords(records, { currentId = null, milestones = milestoneOrder(records) } = {}) {
  const builds = new Map();
  for (const record of records) {
    const key = groupKey(record);
    if (!builds.has(key)) {
      builds.set(key, { key, version: record.firefox?.version ?? null, buildId: record.firefox?.buildId ?? null, records: [] });
    }
    builds.get(key).records.push(record);
  }
  const ordered = [...builds.values()]
    .map((build) => ({ ...build, latest: Math.max(...build.records.map((r) => r.processStart)) }))
    .sort((a, b) => b.latest - a.latest);
  const groups = [];
  for (const build of ordered) {
    for (const coldness of CLASSES) {
      const sorted = build.records.filter((r) => coldnessOf(r) === coldness).sort((a, b) => a.processStart - b.processStart);
      if (sorted.length === 0) {
        continue;
      }
      const stats = {};
      for (const name of milestones) {
        stats[name] = summarize(sorted.map((r) => r.milestones?.[name]));
      }
      groups.push({
        key: `${build.key}\u0000${coldness}`,
        version: build.version,
        buildId: build.buildId,
        coldness,
        records: sorted,
        stats,
        latest: sorted.at(-1).processStart,
        hasCurrent: sorted.some((r) => r.id === currentId),
      });
    }
  }
  return groups;
}

/**
 * Points for the trend chart: one per record that has `milestone`, {x: processStart, y: ms,
 * id, current, coldness}, in start order.
 */
export function trendPoints(records, milestone = "sessionRestored", currentId = null) {
  return records
    .filter((r) => typeof r.milestones?.[milestone] === "number" && Number.isFinite(r.milestones[milestone]))
    .map((r) => ({ x: r.processStart, y: r.milestones[milestone], id: r.id, current: r.id === currentId, coldness: coldnessOf(r) }))
    .sort((a, b) => a.x - b.x);
}

/**
 * "1,234 ± 56 ms" (mean ± half the 95% interval); one value: "1,234 ms"; none: "—".
 * `unit: false` leaves the unit out ("1,234 ± 56"), for a table whose heading says ms.
 */
export function formatMeanCi(stat, locale = undefined, { unit = true } = {}) {
  if (!stat || stat.n === 0 || stat.mean === null) {
    return "—";
  }
  const withUnit = (ms) => (unit ? formatMs(ms, locale) : formatNumber(ms, locale));
  if (!stat.ci) {
    return withUnit(stat.mean);
  }
  return `${formatNumber(stat.mean, locale)} ± ${withUnit(stat.ci.half)}`;
}

// --- Welch's t-test ----------------------------------------------------------------------------

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 15 significant digits). */
export function lnGamma(x) {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) {
    // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
    return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lnGamma(1 - x);
  }
  const z = x - 1;
  let sum = c[0];
  for (let i = 1; i < c.length; i++) {
    sum += c[i] / (z + i);
  }
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** Continued fraction of the incomplete beta function (modified Lentz). */
function betaFraction(x, a, b) {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = Math.abs(d) < tiny ? tiny : d;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    d = Math.abs(d) < tiny ? tiny : d;
    c = 1 + aa / c;
    c = Math.abs(c) < tiny ? tiny : c;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    d = Math.abs(d) < tiny ? tiny : d;
    c = 1 + aa / c;
    c = Math.abs(c) < tiny ? tiny : c;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-15) {
      break;
    }
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b), 0 ≤ x ≤ 1, a, b > 0. */
export function incompleteBeta(x, a, b) {
  if (x <= 0) {
    return 0;
  }
  if (x >= 1) {
    return 1;
  }
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  // The fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise.
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(x, a, b)) / a : 1 - (front * betaFraction(1 - x, b, a)) / b;
}

/** Two-sided p-value of Student's t with `df` (any real > 0) degrees of freedom: P(|T| ≥ |t|). */
export function studentTwoSidedP(t, df) {
  if (!Number.isFinite(t)) {
    return 0;
  }
  return incompleteBeta(df / (df + t * t), df / 2, 0.5);
}

/**
 * Welch's unequal-variances t-test of `b` against `a` (two-sided), for comparing two sets of
 * starts whose spreads need not be equal. Returns null when either side has fewer than two
 * values; else {a, b (summaries), diff (mean b − mean a), relative (diff / mean a, or null),
 * se, t, df (Welch–Satterthwaite), p, ci (95% interval of diff, with t at ⌊df⌋: slightly wide),
 * significant (p < alpha)}.
 */
export function welchTest(aValues, bValues, { alpha = 0.05 } = {}) {
  const a = summarize(aValues);
  const b = summarize(bValues);
  if (a.n < 2 || b.n < 2) {
    return null;
  }
  const va = a.sd ** 2 / a.n;
  const vb = b.sd ** 2 / b.n;
  const diff = b.mean - a.mean;
  const se = Math.sqrt(va + vb);
  const relative = a.mean !== 0 ? diff / a.mean : null;
  if (se === 0) {
    // No spread on either side: the means are either the same or plainly different.
    const same = diff === 0;
    return {
      a,
      b,
      diff,
      relative,
      se,
      t: same ? 0 : Math.sign(diff) * Infinity,
      df: a.n + b.n - 2,
      p: same ? 1 : 0,
      ci: { low: diff, high: diff, half: 0 },
      significant: !same,
    };
  }
  const t = diff / se;
  const df = (va + vb) ** 2 / (va ** 2 / (a.n - 1) + vb ** 2 / (b.n - 1));
  const p = studentTwoSidedP(t, df);
  const half = tCritical95(Math.max(1, Math.floor(df))) * se;
  return { a, b, diff, relative, se, t, df, p, ci: { low: diff - half, high: diff + half, half }, significant: p < alpha };
}
