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
  const planned = { ...result, planned: true, bytes_planned: 335_600_000, bytes_planned_system: 65_500_000, bytes_install: 308_400_000, order: "disk", errors: [{}, {}] };
  assert.equal(
    preloadDoneText(planned, t, { short: true }),
    "popupPreloadDone[308.4 MB|40|9,800 ms|31.5 MB/s] planPreloadDonePlanned[270.1 MB|88%|308.4 MB|65.5 MB|disk] residencyPreloadErrors[2]",
  );
  // a host older than the split: the total, said as install and system together
  const old = { ...planned, bytes_planned_system: undefined, errors: [] };
  assert.equal(preloadDoneText(old, t, { short: true }), "popupPreloadDone[308.4 MB|40|9,800 ms|31.5 MB/s] planPreloadDonePlannedTotal[335.6 MB|disk]");
  assert.match(preloadDoneText(null, t), /^residencyPreloadDone\[—\|—\|—\|—\|—\]$/);
});

test("one file and one failure take the One forms (tn)", () => {
  const one = { ...result, files: 1, errors: [{}] };
  assert.equal(preloadDoneText(one, t, { short: true }), "popupPreloadDoneOne[308.4 MB|1|9,800 ms|31.5 MB/s] residencyPreloadErrorsOne[1]");
  assert.match(preloadDoneText(one, t), /^residencyPreloadDoneOne\[/);
});
