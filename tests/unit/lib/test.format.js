import { test } from "node:test";
import assert from "node:assert/strict";
import { formatBytes, formatClock, formatCount, formatDateTime, formatGap, formatMB, formatMs, formatSeconds, formatTime } from "../../../extension/lib/format.js";

test("milliseconds and gaps", () => {
  assert.equal(formatMs(1234.4, "en-US"), "1,234 ms");
  assert.equal(formatMs(0, "en-US"), "0 ms");
  assert.equal(formatGap(15, "en-US"), "+15 ms");
});

test("unknown values show a dash, never 0", () => {
  for (const value of [null, undefined, Number.NaN, Infinity, "5"]) {
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
