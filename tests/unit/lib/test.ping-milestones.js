import { test } from "node:test";
import assert from "node:assert/strict";
import { pingMilestones } from "../../../extension/lib/ping-milestones.js";

test("the newest ping with milestones gives rows ordered by time; other measurements are left out", () => {
  const reply = {
    pings: [
      { created: "2026-11-23T09:10:00.000Z", simple_measurements: { totalTime: 3, activeTicks: 0 } },
      { created: "2026-11-23T09:05:14.159Z", simple_measurements: { sessionRestored: 809, main: 53, totalTime: 10, uptime: 1 } },
      { created: "2026-11-23T09:05:04.302Z", simple_measurements: { main: 49, sessionRestored: 1760 } },
    ],
  };
  const { ping, rows } = pingMilestones(reply);
  assert.equal(ping.created, "2026-11-23T09:05:14.159Z");
  assert.deepEqual(rows, [
    { name: "main", ms: null, sinceOrigin: 53, gap: null },
    { name: "sessionRestored", ms: null, sinceOrigin: 809, gap: 756 },
  ]);
});

test("no ping, no milestones, bad values: null", () => {
  assert.equal(pingMilestones(null), null);
  assert.equal(pingMilestones({ pings: [] }), null);
  assert.equal(pingMilestones({ pings: [{ simple_measurements: { main: "52", sessionRestored: -1 } }] }), null);
});
