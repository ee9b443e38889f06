// How cold a recorded start was: what the Firefox process tree read from storage up to
// sessionRestored (`io.treeReadBytes`), against the size of what that build's start needs (the
// learned plan's planned bytes, else the install folder, else FALLBACK_NEED_BYTES).
// docs/design/coldness.md gives the thresholds and why. Two facts of how a start came about
// outrank its reads (issue 39): a start the launch prefetch read for is `prefetched` (its reads
// are the prefetch's as much as Firefox's), a start that followed a preload is `preloaded` (what
// it did not read, the preload read before it), and a start recorded by an add-on that started
// later (installed or enabled during the run) is `late` (what was read by then is not the
// start's). Pure: no browser.*, no DOM.

export const CLASSES = ["cold", "warm", "hot", "prefetched", "preloaded", "late", "unknown"];
export const COLDNESS = { cold: "cold", warm: "warm", hot: "hot", prefetched: "prefetched", preloaded: "preloaded", late: "late", unknown: "unknown" };

/** The _locales message key of each class's word (cold, warm, hot, prefetched, preloaded, recorded late, unknown). */
export const CLASS_KEYS = {
  cold: "coldnessCold",
  warm: "coldnessWarm",
  hot: "coldnessHot",
  prefetched: "coldnessPrefetched",
  preloaded: "coldnessPreloaded",
  late: "coldnessLate",
  unknown: "coldnessUnknown",
};

/**
 * Whether a group of one class may be summed up by a mean (± CI): not `unknown`, which holds
 * starts without I/O figures, cold and hot mixed, so its mean would be the bimodal mean the
 * classes exist to avoid; nor `late`, for the same reason (what they read by the time they were
 * recorded says nothing of their start). Such a group shows its count only.
 */
export const hasMean = (coldness) => coldness !== COLDNESS.unknown && coldness !== COLDNESS.late;

/** Where the size a start needs came from. */
export const NEED_FROM = ["plan", "install", "fallback"];

/** Version of the rule below; stored with each class so a later rule can reclassify. */
export const RULE = 1;

/** A start that read less than this share of what it needs is hot. */
export const HOT_BELOW = 0.05;
/** A start that read at least this share of what it needs is cold; between the two, warm. */
export const COLD_FROM = 0.5;
/**
 * The size a start needs when neither a plan nor the install folder's size is known: 256 MiB.
 * On the bench machine a cold start of Firefox ESR 140 reads 271-280 MB of a 308 MB install
 * (335.6 MB planned, system libraries included); libxul alone is ~150 MB.
 */
export const FALLBACK_NEED_BYTES = 256 * 1024 * 1024;

const isCount = (v) => Number.isInteger(v) && v >= 0;

/**
 * The size this build's start needs: {bytes, from}. `plannedBytes` (a learned plan; 0 means
 * nothing learned) wins over `installBytes` (the whole install folder), else the fallback.
 */
export function needOf({ plannedBytes = null, installBytes = null } = {}) {
  if (isCount(plannedBytes) && plannedBytes > 0) {
    return { bytes: plannedBytes, from: "plan" };
  }
  if (isCount(installBytes) && installBytes > 0) {
    return { bytes: installBytes, from: "install" };
  }
  return { bytes: FALLBACK_NEED_BYTES, from: "fallback" };
}

/**
 * Classifies a record's `io` against `need` ({bytes, from}, see needOf). Returns the record's
 * `coldness` object: {class, treeReadBytes, treeMajorFaults, readBytes, needBytes, needFrom, rule}.
 * - treeReadBytes known: its share of need.bytes decides (below HOT_BELOW hot, from COLD_FROM cold).
 * - only the parent's readBytes known: a lower bound of the tree's, so it can say `cold` (the
 *   parent alone read at least COLD_FROM) but never `hot` or `warm`: otherwise `unknown`.
 * - no figures (no host, an old record): `unknown`, never guessed.
 * Major faults are kept as figures but do not decide: Firefox reads ahead whole libraries, so a
 * cold start here takes ~90 major faults for 280 MB and the count says little about the bytes.
 */
export function classify(io, need = needOf()) {
  const pick = (field) => (io && isCount(io[field]) ? io[field] : null);
  const treeReadBytes = pick("treeReadBytes");
  const readBytes = pick("readBytes");
  const figures = {
    treeReadBytes,
    treeMajorFaults: pick("treeMajorFaults"),
    readBytes,
    needBytes: need.bytes,
    needFrom: need.from,
    rule: RULE,
  };
  let kind = COLDNESS.unknown;
  if (treeReadBytes !== null) {
    const share = treeReadBytes / need.bytes;
    kind = share < HOT_BELOW ? COLDNESS.hot : share >= COLD_FROM ? COLDNESS.cold : COLDNESS.warm;
  } else if (readBytes !== null && readBytes / need.bytes >= COLD_FROM) {
    kind = COLDNESS.cold;
  }
  return { class: kind, ...figures };
}

/**
 * A start's class (the record's `coldness`): classify's, unless how the start came about says
 * more. `late`: the add-on started after Firefox (installed or enabled during the run), so its
 * figures are from then, not from the start. `prefetched`: the launch prefetch read for this
 * start (the host's `firefox` reply names it), so what it read is not a cold start's however
 * much it was. `preloaded`: the start followed a preload (the host's `firefox` reply names it:
 * the last preload of this install and build, in this boot, ended before the process began,
 * claimed by no earlier start), so how little it read is the preload's doing. In that order:
 * late, then prefetched, then preloaded. The figures stay as classify gives them.
 */
export function classifyStart(io, need = needOf(), { prefetched = false, preloaded = false, late = false } = {}) {
  const coldness = classify(io, need);
  if (late) {
    return { ...coldness, class: COLDNESS.late };
  }
  if (prefetched) {
    return { ...coldness, class: COLDNESS.prefetched };
  }
  if (preloaded) {
    return { ...coldness, class: COLDNESS.preloaded };
  }
  return coldness;
}

/** The need a bench record names (`bench.bytesPlanned`, `bench.bytesInstall`), else the fallback. */
export function benchNeed(record) {
  return needOf({ plannedBytes: record?.bench?.bytesPlanned ?? null, installBytes: record?.bench?.bytesInstall ?? null });
}

/**
 * `record` with its `coldness` (classified against `need` when given, else what the record itself
 * names, else the fallback). A record already classified keeps its class unless `force`.
 */
export function withColdness(record, need = null, { force = false } = {}) {
  if (!force && CLASSES.includes(record?.coldness?.class)) {
    return record;
  }
  return { ...record, coldness: classify(record.io, need ?? benchNeed(record)) };
}

/** A record's class: the stored one, else classified now (fallback need); never throws. */
export function coldnessOf(record) {
  const stored = record?.coldness?.class;
  if (CLASSES.includes(stored)) {
    return stored;
  }
  return classify(record?.io ?? null, benchNeed(record)).class;
}

/** Problems with a record's `coldness` (absent is fine), as "path: what" strings. */
export function coldnessProblems(coldness, path = "record.coldness") {
  if (coldness === undefined) {
    return [];
  }
  if (coldness === null || typeof coldness !== "object" || Array.isArray(coldness)) {
    return [`${path}: must be an object`];
  }
  const problems = [];
  if (!CLASSES.includes(coldness.class)) {
    problems.push(`${path}.class: must be one of ${CLASSES.join(", ")}`);
  }
  for (const field of ["treeReadBytes", "treeMajorFaults", "readBytes", "needBytes"]) {
    const value = coldness[field];
    if (value !== undefined && value !== null && !isCount(value)) {
      problems.push(`${path}.${field}: must be a whole number ≥ 0 or null`);
    }
  }
  if (coldness.needFrom !== undefined && coldness.needFrom !== null && !NEED_FROM.includes(coldness.needFrom)) {
    problems.push(`${path}.needFrom: must be one of ${NEED_FROM.join(", ")} or null`);
  }
  if (coldness.rule !== undefined && !(Number.isInteger(coldness.rule) && coldness.rule >= 1)) {
    problems.push(`${path}.rule: must be a whole number ≥ 1`);
  }
  return problems;
}

/**
 * Which classes two sets of records can be compared in: {common, onlyA, onlyB}, each a list in
 * CLASSES order. `unknown` and `late` are never common: two of them need not be alike.
 */
export function likeWithLike(aRecords, bRecords) {
  const present = (records) => new Set(records.map(coldnessOf));
  const a = present(aRecords);
  const b = present(bRecords);
  return {
    common: CLASSES.filter((c) => hasMean(c) && a.has(c) && b.has(c)),
    onlyA: CLASSES.filter((c) => a.has(c) && (!b.has(c) || !hasMean(c))),
    onlyB: CLASSES.filter((c) => b.has(c) && (!a.has(c) || !hasMean(c))),
  };
}

/** The _locales message of each like-with-like note (likeWithLikeNote). */
export const LIKE_NOTE_KEYS = {
  importEmpty: "compareImportEmpty",
  nothingHere: "compareNothingHere",
  nothingAlike: "compareNothingAlike",
  unmatchedImport: "compareUnmatchedImport",
  unmatchedHere: "compareUnmatchedHere",
};

/**
 * What to say when an import (`bRecords`) is set beside this machine's starts (`aRecords`), by
 * likeWithLike: {note (a LIKE_NOTE_KEYS name), onlyA, onlyB}, or null when every class of each
 * side has its like on the other. Both directions: classes only the import has (with this
 * machine's unmatched ones, if any), classes only this machine has, nothing in common, and
 * either side empty.
 */
export function likeWithLikeNote(aRecords, bRecords) {
  const { common, onlyA, onlyB } = likeWithLike(aRecords, bRecords);
  let note = null;
  if (bRecords.length === 0) {
    note = "importEmpty";
  } else if (aRecords.length === 0) {
    note = "nothingHere";
  } else if (common.length === 0) {
    note = "nothingAlike";
  } else if (onlyB.length > 0) {
    note = "unmatchedImport";
  } else if (onlyA.length > 0) {
    note = "unmatchedHere";
  }
  return note === null ? null : { note, onlyA, onlyB };
}

/**
 * What a start read from storage, all its processes, up to when it was recorded: the one figure
 * the answer line and the history's Read column show for it (null when not known; the parent's
 * own count alone is a different fact and is not shown in its place).
 */
export function readBytesOf(record) {
  const known = (n) => (typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : null);
  return known(record?.coldness?.treeReadBytes) ?? known(record?.io?.treeReadBytes);
}
