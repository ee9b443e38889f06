import { test } from "node:test";
import assert from "node:assert/strict";
import { attributionOf, importedAttribution } from "../../../../extension/lib/models/attribution.js";
import { aboveBaseline } from "../../../../extension/lib/models/above-baseline.js";
import { COSTLY_ADDON_ID } from "../../../../extension/lib/models/ab-saving.js";
import { costlyAddonCosts } from "../../costs-export.js";

const BUILD = "20261117185949";
const COSTS = costlyAddonCosts(COSTLY_ADDON_ID);
const bench = (scenario, sessionRestored, { profile = "medium", buildId = BUILD } = {}) => ({
  firefox: { buildId },
  milestones: { sessionRestored },
  bench: { scenario, run: 1, profile },
  costs: COSTS,
});
// Four runs per arm around a mean, spread ±10 ms: hot 1,600; add-ons off 1,200; add-ons and
// session restore off 1,100; the empty profile 500.
const arm = (scenario, mean, options) => [-10, -5, 5, 10].map((d) => bench(scenario, mean + d, options));
const RUN = [
  ...arm("hot", 1600),
  ...arm("hot-addons-off", 1200),
  ...arm("hot-addons-and-restore-off", 1100),
  ...arm("hot-empty-profile", 500, { profile: "fresh" }),
  ...arm("hot-without-costly-addon", 1450),
  ...arm("hot-session-restore-off", 1500),
];

test("attribution: each step is what taking that cause away saved after the one before, and they name the whole excess", () => {
  const a = attributionOf(RUN);
  assert.equal(a.excess.ms, 1100);
  assert.deepEqual(
    a.steps.map((s) => [s.causes.join("+"), s.from, s.to, Math.round(s.saving.ms), s.saving.significant]),
    [
      ["addons", "hot", "hot-addons-off", 400, true],
      ["session-restore", "hot-addons-off", "hot-addons-and-restore-off", 100, true],
      ["profile-data", "hot-addons-and-restore-off", "hot-empty-profile", 600, true],
    ],
  );
  assert.equal(a.attributedMs, 1100);
  assert.equal(a.share, 1);
  assert.equal(a.n, 4);
  // The single-cause arms beside the chain, each against hot, never added into it.
  assert.deepEqual(
    a.alone.map((x) => [x.cause, Math.round(x.saving.ms)]),
    [
      ["costly-addon", 150],
      ["session-restore-alone", 100],
    ],
  );
});

test("attribution: a step not told apart from noise is listed and not counted", () => {
  // Session restore with the add-ons off saves 50 ms on average, but its CI holds 0.
  const noisy = [...arm("hot", 1600), ...arm("hot-addons-off", 1200), ...[1100, 1250, 1060, 1190].map((v) => bench("hot-addons-and-restore-off", v)), ...arm("hot-empty-profile", 500, { profile: "fresh" })];
  const a = attributionOf(noisy);
  const sr = a.steps.find((s) => s.causes.includes("session-restore"));
  assert.equal(sr.saving.significant, false);
  assert.ok(sr.saving.low < 0 && sr.saving.high > 0);
  const counted = a.steps.filter((s) => s.saving.significant).reduce((sum, s) => sum + s.saving.ms, 0);
  assert.equal(a.attributedMs, counted);
  assert.equal(a.attributedMs, 400 + 650);
  assert.equal(a.share, 1050 / 1100);
});

test("attribution: an arm left out of the run joins its causes to the next step; none without hot and the empty profile", () => {
  const a = attributionOf(RUN.filter((r) => r.bench.scenario !== "hot-addons-and-restore-off"));
  assert.deepEqual(
    a.steps.map((s) => s.causes),
    [["addons"], ["session-restore", "profile-data"]],
  );
  assert.equal(attributionOf(RUN.filter((r) => r.bench.scenario !== "hot-empty-profile")), null);
  assert.equal(attributionOf(RUN.filter((r) => r.bench.scenario !== "hot")), null);
  // One run of an arm is no measure.
  assert.equal(attributionOf([...arm("hot", 1600), bench("hot-empty-profile", 500, { profile: "fresh" })]), null);
  // Another build's run says nothing of this one.
  assert.equal(attributionOf(RUN, { buildId: "other" }), null);
});

test("the page's share: from the newest import with a chain of this build, with its name and preset", () => {
  const imports = [
    { name: "ab-medium.json", records: RUN },
    { name: "later-cold.json", records: [bench("cold", 9000), bench("cold", 9100)] },
  ];
  const found = importedAttribution(imports, BUILD);
  assert.equal(found.from, "ab-medium.json");
  assert.equal(found.preset, "medium");
  assert.equal(importedAttribution(imports, "other"), null);

  const start = { firefox: { buildId: BUILD }, milestones: { sessionRestored: 1700 }, costs: COSTS };
  const result = aboveBaseline(start, imports);
  // The baseline is the same run's empty-profile arm (median of 490, 495, 505, 510).
  assert.deepEqual(result.baseline, { ms: 500, n: 4, from: "ab-medium.json" });
  assert.equal(result.aboveMs, 1200);
  assert.equal(result.measuredShare, 1);
  assert.equal(result.measuredMs, 1100);
  assert.equal(result.attribution.from, "ab-medium.json");
});
