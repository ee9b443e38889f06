// Number formatting for the page: pure functions; `null`/`undefined` means "not known".

const UNKNOWN = "—";

export function formatMs(ms, locale = undefined) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) {
    return UNKNOWN;
  }
  return `${new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(ms)} ms`;
}

/** Seconds with one decimal through Intl ("8.4 s"), from ms. */
export function formatSeconds(ms, locale = undefined) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) {
    return UNKNOWN;
  }
  return new Intl.NumberFormat(locale, { style: "unit", unit: "second", unitDisplay: "short", minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(ms / 1000);
}

export function formatGap(ms, locale = undefined) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) {
    return UNKNOWN;
  }
  return `+${formatMs(ms, locale)}`;
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

export function formatBytes(bytes, locale = undefined) {
  if (typeof bytes !== "number" || !Number.isFinite(bytes) || bytes < 0) {
    return UNKNOWN;
  }
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 ? 0 : 1;
  const number = new Intl.NumberFormat(locale, {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(value);
  return `${number} ${UNITS[unit]}`;
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
