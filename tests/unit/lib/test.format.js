import { test } from "node:test";
import assert from "node:assert/strict";
import { formatBytes, formatClock, formatCount, formatGap, formatMs } from "../../../extension/lib/format.js";

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
  assert.equal(formatBytes(512, "en-US"), "512 B");
  assert.equal(formatBytes(1536, "en-US"), "1.5 KiB");
  assert.equal(formatBytes(301989888, "en-US"), "288.0 MiB");
  assert.equal(formatBytes(-1, "en-US"), "—");
});

test("counts and clock", () => {
  assert.equal(formatCount(5120, "en-US"), "5,120");
  assert.match(formatClock(Date.UTC(2026, 0, 1, 12, 34, 56, 789), "en-US"), /^\d\d:34:56\.789$/);
});
