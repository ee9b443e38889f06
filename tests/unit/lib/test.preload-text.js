import { test } from "node:test";
import assert from "node:assert/strict";
import { preloadDoneText } from "../../../extension/lib/preload-text.js";

// Words as "key[subs]" so the test sees which message and figures were chosen.
const t = (key, subs = []) => `${key}[${subs.join("|")}]`;
const result = { bytes: 308_400_000, files: 40, elapsed_ms: 9800, mb_per_s: 31.5, method: "read" };

test("page and popup word a preload with the same figures; the popup without the method", () => {
  assert.equal(preloadDoneText(result, t, {}), "residencyPreloadDone[308.4 MB|40|9,800 ms|31.5 MB/s|read]");
  assert.equal(preloadDoneText(result, t, { short: true }), "popupPreloadDone[308.4 MB|40|9,800 ms|31.5 MB/s]");
});

test("a planned preload says what the plan named; failed files are counted", () => {
  const planned = { ...result, planned: true, bytes_planned: 217_400_000, bytes_install: 308_400_000, order: "disk", errors: [{}, {}] };
  assert.equal(
    preloadDoneText(planned, t, { short: true }),
    "popupPreloadDone[308.4 MB|40|9,800 ms|31.5 MB/s] planPreloadDonePlanned[217.4 MB|308.4 MB|disk] residencyPreloadErrors[2]",
  );
  assert.match(preloadDoneText(null, t), /^residencyPreloadDone\[—\|—\|—\|—\|—\]$/);
});
