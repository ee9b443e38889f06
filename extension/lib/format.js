// The one formatter module of the page and the popup (numbers, bytes, times, dates), all through
// Intl: pure functions; `null`/`undefined` means "not known".

const UNKNOWN = "—";

export function formatMs(ms, locale = undefined) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) {
    return UNKNOWN;
  }
  return `${new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(ms)} ms`;
}

/** Seconds with one decimal through Intl ("8.4s" in English), from ms. */
export function formatSeconds(ms, locale = undefined) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) {
    return UNKNOWN;
  }
  return new Intl.NumberFormat(locale, { style: "unit", unit: "second", unitDisplay: "narrow", minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(ms / 1000);
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
 * files, whole kilobytes ("4 kB"); 0 is "0.0 MB".
 */
export function formatBytes(bytes, locale = undefined) {
  if (typeof bytes !== "number" || !Number.isFinite(bytes) || bytes < 0) {
    return UNKNOWN;
  }
  if (bytes > 0 && bytes < MB / 10) {
    return new Intl.NumberFormat(locale, { style: "unit", unit: "kilobyte", maximumFractionDigits: 0 }).format(
      Math.max(1, Math.round(bytes / KB)),
    );
  }
  return new Intl.NumberFormat(locale, { style: "unit", unit: "megabyte", minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(
    bytes / MB,
  );
}

/** The same as formatBytes (the residency texts' name for it). */
export const formatMB = formatBytes;

/** "95 %" for a fraction 0…1; values in (0, 1 %) show as "<1 %" so they never read as nothing. */
export function formatPercent(fraction, locale = undefined) {
  if (typeof fraction !== "number" || !Number.isFinite(fraction)) {
    return UNKNOWN;
  }
  if (fraction > 0 && fraction < 0.01) {
    return "<1 %";
  }
  if (fraction < 1 && fraction > 0.99) {
    return ">99 %";
  }
  return `${new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(fraction * 100)} %`;
}

export function formatRate(mbPerS, locale = undefined) {
  if (typeof mbPerS !== "number" || !Number.isFinite(mbPerS)) {
    return UNKNOWN;
  }
  return `${new Intl.NumberFormat(locale, { maximumFractionDigits: 1 }).format(mbPerS)} MB/s`;
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
