// How much of a start's time above Firefox's own baseline the page can name (issue 40, item 1):
// the baseline is what an empty profile of the same build takes to sessionRestored, measured by
// the benchmark (`hot` starts on a fresh profile: an imported benchmark export of this build);
// above it are the user's add-ons, session restore, the disk and what no figure names. Pure.
//
// The causes' figures are busy times: they overlap each other and the start, so they are never
// summed into a share. What can be summed is what the A/B benchmark measured taking a cause away
// saved (lib/models/ab-saving.js): `measuredShare` is their sum over the time above the baseline,
// the part of it the page attributes to named causes as measured savings.
import { EMPTY_PROFILE_ARM, measuredSaving } from "./ab-saving.js";
import { importedAttribution } from "./attribution.js";
import { causesOf, median } from "./start-costs.js";

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isNumber = (v) => typeof v === "number" && Number.isFinite(v);

/**
 * The empty-profile baseline of `record`'s build, from imported exports ([{name, records}],
 * newest last): the median sessionRestored of the newest import's `hot` starts on a fresh
 * profile (bench.profile "fresh", or absent in runs before presets), or of its A/B run's
 * empty-profile arm (EMPTY_PROFILE_ARM), of the same build ID:
 * {ms, n, from}; null where no import has one.
 */
export function baselineOf(record, imports) {
  const buildId = record?.firefox?.buildId ?? null;
  if (!buildId) {
    return null;
  }
  for (const item of [...(imports ?? [])].reverse()) {
    const values = (item.records ?? [])
      .filter((r) => ((r.bench?.scenario === "hot" && (r.bench.profile ?? "fresh") === "fresh") || r.bench?.scenario === EMPTY_PROFILE_ARM) && r.firefox?.buildId === buildId)
      .map((r) => r.milestones?.sessionRestored)
      .filter(isNumber);
    if (values.length > 0) {
      return { ms: median(values), n: values.length, from: item.name ?? null };
    }
  }
  return null;
}

/**
 * The disk as a cause: what the start read from disk (the record's `io`, the host's /proc
 * figures) and, where the host traced this start, the block requests' time (`blockMs`, the
 * trace summary's `profile.block_ms.total`: busy time of the disk, its requests overlap).
 * {readBytes, ms, source}; null where neither is known.
 */
export function diskOf(record, { blockMs = null } = {}) {
  const readBytes = isObject(record?.io) && Number.isInteger(record.io.treeReadBytes ?? record.io.readBytes) ? (record.io.treeReadBytes ?? record.io.readBytes) : null;
  const ms = isNumber(blockMs) ? blockMs : null;
  if (readBytes === null && ms === null) {
    return null;
  }
  return { readBytes, ms, source: ms !== null ? "trace-block-requests" : "proc-read-bytes" };
}

/**
 * This start against the baseline: {sessionRestored, baseline ({ms, n, from} or null), aboveMs
 * (null without a baseline), causes (causesOf, each with `saving` where an A/B run measured and
 * agreed, else null), disk (diskOf), attribution (an imported A/B run's chain of this build,
 * lib/models/attribution.js, or null), measuredMs and measuredShare: with an attribution, its
 * attributed ms and share of that run's hot starts above its empty profile (measured there, not
 * on this start); else the sum of the agreed single-cause savings (null without any) over this
 * start's aboveMs (at most 1; null where either is unknown)}.
 */
export function aboveBaseline(record, imports, { blockMs = null } = {}) {
  const sessionRestored = isNumber(record?.milestones?.sessionRestored) ? record.milestones.sessionRestored : null;
  const baseline = baselineOf(record, imports);
  const aboveMs = sessionRestored !== null && baseline !== null ? sessionRestored - baseline.ms : null;
  const causes = causesOf(record?.costs).map((cause) => ({ ...cause, saving: measuredSaving(cause, imports) }));
  const attribution = record?.firefox?.buildId ? importedAttribution(imports, record.firefox.buildId) : null;
  const disk = diskOf(record, { blockMs });
  if (attribution) {
    return { sessionRestored, baseline, aboveMs, causes, disk, attribution, measuredMs: attribution.attributedMs, measuredShare: attribution.share };
  }
  const savings = causes.filter((c) => c.saving !== null).map((c) => c.saving.ms);
  const measuredMs = savings.length > 0 ? savings.reduce((a, b) => a + b, 0) : null;
  const measuredShare = measuredMs !== null && aboveMs !== null && aboveMs > 0 ? Math.min(1, Math.max(0, measuredMs / aboveMs)) : null;
  return { sessionRestored, baseline, aboveMs, causes, disk, attribution: null, measuredMs, measuredShare };
}
