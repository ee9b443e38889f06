// The one formatter module of the page and the popup (numbers, bytes, times, dates), all through
// Intl, units included (no " ms" or " %" glued on in English): pure functions; `null`/`undefined`
// means "not known".

const UNKNOWN = "—";

const known = (n) => typeof n === "number" && Number.isFinite(n);

/** A plain number with at most `fractionDigits` decimals ("1,234.5"), for cells whose unit is in the heading. */
export function formatNumber(n, locale = undefined, { fractionDigits = 0 } = {}) {
  if (!known(n)) {
    return UNKNOWN;
  }
  return new Intl.NumberFormat(locale, { maximumFractionDigits: fractionDigits }).format(n);
}

/** Milliseconds with the locale's unit ("1,234 ms"). */
export function formatMs(ms, locale = undefined, { fractionDigits = 0 } = {}) {
  if (!known(ms)) {
    return UNKNOWN;
  }
  return new Intl.NumberFormat(locale, { style: "unit", unit: "millisecond", maximumFractionDigits: fractionDigits }).format(ms);
}

/** Seconds with one decimal through Intl ("8.4s" in English), from ms. */
export function formatSeconds(ms, locale = undefined) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) {
    return UNKNOWN;
  }
  return new Intl.NumberFormat(locale, { style: "unit", unit: "second", unitDisplay: "narrow", minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(ms / 1000);
}

/**
 * A long span in the largest whole unit that fits, rounded ("10 min", "45 sec", "3 hr" in
 * English) through Intl: how long after a start something happened.
 */
export function formatDuration(ms, locale = undefined) {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
    return UNKNOWN;
  }
  const [unit, size] = ms >= 2 * 3_600_000 ? ["hour", 3_600_000] : ms >= 120_000 ? ["minute", 60_000] : ["second", 1000];
  return new Intl.NumberFormat(locale, { style: "unit", unit, maximumFractionDigits: 0 }).format(Math.round(ms / size));
}

export function formatGap(ms, locale = undefined) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) {
    return UNKNOWN;
  }
  return `+${formatMs(ms, locale)}`;
}

const MB = 1_000_000;
const KB = 1_000;

/**
 * The one byte format of the page, the popup and their texts: decimal megabytes with one digit
 * through Intl ("292.6 MB"); below 0.1 MB, where that would read "0.0 MB" for the small
 * files, whole kilobytes ("4 kB"); 0 is "0.0 MB". `unitOf`: use the unit `unitOf` would get, so
 * the two figures of "0 kB cached of 14 kB" share one unit (not "0.0 MB cached of 14 kB").
 * Rounded half up on the integer bytes, as the host's CLI rounds (native-host/src/cli/render.rs
 * `megabytes`): both print the same figure for the same bytes.
 */
export function formatBytes(bytes, locale = undefined, { unitOf = bytes } = {}) {
  if (typeof bytes !== "number" || !Number.isFinite(bytes) || bytes < 0) {
    return UNKNOWN;
  }
  const reference = typeof unitOf === "number" && Number.isFinite(unitOf) && unitOf >= 0 ? unitOf : bytes;
  if (reference > 0 && reference < MB / 10) {
    const kB = Math.round(bytes / KB);
    return new Intl.NumberFormat(locale, { style: "unit", unit: "kilobyte", maximumFractionDigits: 0 }).format(
      bytes > 0 ? Math.max(1, kB) : 0,
    );
  }
  const tenths = Math.floor((bytes + MB / 20) / (MB / 10));
  return new Intl.NumberFormat(locale, { style: "unit", unit: "megabyte", minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(
    tenths / 10,
  );
}

/** The same as formatBytes (the residency texts' name for it). */
export const formatMB = formatBytes;

/**
 * A fraction as the locale's percentage ("95%" in English, "95 %" in French), with
 * `fractionDigits` decimals; values that would round to 0 or to 100 without being so show as
 * "<1%" and ">99%" (by the last digit shown), so a few pages never read as nothing or as all.
 */
export function formatPercent(fraction, locale = undefined, { fractionDigits = 0 } = {}) {
  if (!known(fraction)) {
    return UNKNOWN;
  }
  const format = new Intl.NumberFormat(locale, { style: "percent", minimumFractionDigits: fractionDigits, maximumFractionDigits: fractionDigits });
  const step = 10 ** -(2 + fractionDigits);
  if (fraction > 0 && fraction < step) {
    return `<${format.format(step)}`;
  }
  if (fraction < 1 && fraction > 1 - step) {
    return `>${format.format(1 - step)}`;
  }
  return format.format(fraction);
}

/**
 * `part` of `whole` as a whole percentage, the one rule of the page, the popup and the host's
 * CLI (native-host/src/cli/render.rs `share`): rounded half up on the integers (so both print
 * the same figure; a float's 0.145 can round either way), never "0%" for something nor "100%"
 * for less than all ("<1%", ">99%"). Unknown when either is unknown or `whole` is 0.
 */
export function formatShare(part, whole, locale = undefined) {
  if (!known(part) || !known(whole) || whole <= 0 || part < 0) {
    return UNKNOWN;
  }
  const capped = Math.min(part, whole);
  const format = new Intl.NumberFormat(locale, { style: "percent", maximumFractionDigits: 0 });
  if (capped > 0 && capped * 100 < whole) {
    return `<${format.format(0.01)}`;
  }
  if (capped < whole && capped * 100 > whole * 99) {
    return `>${format.format(0.99)}`;
  }
  return format.format(Math.floor((capped * 200 + whole) / (whole * 2)) / 100);
}

/** Megabytes per second with the locale's unit ("31.5 MB/s"). */
export function formatRate(mbPerS, locale = undefined) {
  if (!known(mbPerS)) {
    return UNKNOWN;
  }
  return new Intl.NumberFormat(locale, { style: "unit", unit: "megabyte-per-second", maximumFractionDigits: 1 }).format(mbPerS);
}

/**
 * The one date-and-time format: the locale's short date and its time with seconds, always on a
 * 24-hour clock like formatClock ("11/23/26, 08:04:05"), so page and popup never mix
 * "12:20:51 AM" with "00:20:51".
 */
export function formatDateTime(msSinceEpoch, locale = undefined) {
  if (typeof msSinceEpoch !== "number" || !Number.isFinite(msSinceEpoch)) {
    return UNKNOWN;
  }
  return new Intl.DateTimeFormat(locale, { dateStyle: "short", timeStyle: "medium", hourCycle: "h23" }).format(new Date(msSinceEpoch));
}

/** Time of day with seconds on the 24-hour clock ("08:04:05"). */
export function formatTime(msSinceEpoch, locale = undefined) {
  if (typeof msSinceEpoch !== "number" || !Number.isFinite(msSinceEpoch)) {
    return UNKNOWN;
  }
  return new Intl.DateTimeFormat(locale, { timeStyle: "medium", hourCycle: "h23" }).format(new Date(msSinceEpoch));
}

export function formatCount(n, locale = undefined) {
  if (typeof n !== "number" || !Number.isFinite(n)) {
    return UNKNOWN;
  }
  return new Intl.NumberFormat(locale).format(n);
}

/** Wall-clock time of day with milliseconds, e.g. "23:41:07.123". */
export function formatClock(msSinceEpoch, locale = undefined) {
  if (typeof msSinceEpoch !== "number" || !Number.isFinite(msSinceEpoch)) {
    return UNKNOWN;
  }
  return new Intl.DateTimeFormat(locale, {
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    fractionalSecondDigits: 3,
    hour12: false,
  }).format(new Date(msSinceEpoch));
}
