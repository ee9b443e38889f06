import { test } from "node:test";
import assert from "node:assert/strict";
import {
  formatBytes,
  formatClock,
  formatCount,
  formatDateTime,
  formatGap,
  formatMB,
  formatMs,
  formatNumber,
  formatPercent,
  formatRate,
  formatSeconds,
  formatTime,
} from "../../../../extension/lib/wording/format.js";

test("milliseconds and gaps", () => {
  assert.equal(formatMs(1234.4, "en-US"), "1,234 ms");
  assert.equal(formatMs(0, "en-US"), "0 ms");
  assert.equal(formatGap(15, "en-US"), "+15 ms");
});

test("units through Intl, not English glued on: ms, percent, MB/s follow the locale", () => {
  assert.equal(formatMs(12.25, "en-US", { fractionDigits: 1 }), "12.3 ms");
  assert.equal(formatPercent(0.951, "en-US"), "95%");
  assert.equal(formatPercent(1.2034, "en-US", { fractionDigits: 1 }), "120.3%", "a ratio over one is no share: shown as it is");
  assert.equal(formatRate(31.52, "en-US"), "31.5 MB/s");
  assert.equal(formatNumber(1234.56, "en-US", { fractionDigits: 1 }), "1,234.6");
  assert.equal(formatNumber(1234.56, "en-US"), "1,235");
  // German puts a space before the percent sign and uses a decimal comma; French words the unit
  assert.equal(formatPercent(0.951, "de").replace(/\s/u, " "), "95 %");
  assert.equal(formatRate(31.52, "de"), "31,5 MB/s");
  assert.match(formatRate(31.52, "fr"), /^31,5\sMo\/s$/u);
  assert.match(formatMs(1234, "fr"), /^1\s234\sms$/u);
});

test("percentages never round a few to nothing or almost all to all, at any precision", () => {
  assert.equal(formatPercent(0, "en-US"), "0%");
  assert.equal(formatPercent(1, "en-US"), "100%");
  assert.equal(formatPercent(0.001, "en-US"), "<1%");
  assert.equal(formatPercent(0.999, "en-US"), ">99%");
  assert.equal(formatPercent(0.0001, "en-US", { fractionDigits: 1 }), "<0.1%");
  assert.equal(formatPercent(0.999, "en-US", { fractionDigits: 1 }), "99.9%");
  assert.equal(formatPercent(0.9999, "en-US", { fractionDigits: 1 }), ">99.9%");
});

test("unknown values show a dash, never 0", () => {
  for (const value of [null, undefined, Number.NaN, Infinity, "5"]) {
    assert.equal(formatNumber(value), "—");
    assert.equal(formatPercent(value), "—");
    assert.equal(formatRate(value), "—");
    assert.equal(formatMs(value), "—");
    assert.equal(formatGap(value), "—");
    assert.equal(formatBytes(value), "—");
    assert.equal(formatCount(value), "—");
    assert.equal(formatClock(value), "—");
  }
});

test("bytes use binary units", () => {
  // one byte format everywhere: decimal MB, whole kB below 0.1 MB (no KiB beside MB)
  assert.equal(formatBytes(512, "en-US"), "1 kB");
  assert.equal(formatBytes(1536, "en-US"), "2 kB");
  assert.equal(formatBytes(0, "en-US"), "0.0 MB");
  assert.equal(formatBytes(301989888, "en-US"), "302.0 MB");
  assert.equal(formatMB, formatBytes);
  assert.equal(formatBytes(-1, "en-US"), "—");
});

test("counts and clock", () => {
  assert.equal(formatCount(5120, "en-US"), "5,120");
  assert.match(formatClock(Date.UTC(2026, 0, 1, 12, 34, 56, 789), "en-US"), /^\d\d:34:56\.789$/);
});

test("one clock: dates and times on the 24-hour clock whatever the locale's habit", () => {
  const at = new Date(2026, 0, 1, 0, 20, 51).getTime();
  assert.match(formatDateTime(at, "en-US"), /00:20:51$/);
  assert.doesNotMatch(formatDateTime(at, "en-US"), /AM|PM/);
  assert.equal(formatTime(at, "en-US"), "00:20:51");
  assert.equal(formatDateTime(null), "—");
  assert.equal(formatSeconds(8400, "en-US"), "8.4s");
  assert.equal(formatSeconds(undefined), "—");
});
