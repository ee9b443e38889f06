import { test } from "node:test";
import assert from "node:assert/strict";
import { cleanMilestones, hasMilestones, milestoneRows } from "../../../../extension/lib/models/milestones.js";

test("rows are ordered by time, relative to process, with gaps from the previous row", () => {
  const { origin, rows } = milestoneRows({
    sessionRestored: 5000,
    process: 1000,
    main: 1500,
    firstPaint2: 3000,
  });
  assert.equal(origin, "process");
  assert.deepEqual(
    rows.map((r) => [r.name, r.sinceOrigin, r.gap]),
    [
      ["process", 0, null],
      ["main", 500, 500],
      ["firstPaint2", 2000, 1500],
      ["sessionRestored", 4000, 2000],
    ],
  );
  assert.equal(rows[3].ms, 5000);
});

test("every key present is shown, including ones no list knows", () => {
  const { rows } = milestoneRows({ process: 10, somethingNew: 20 });
  assert.deepEqual(
    rows.map((r) => r.name),
    ["process", "somethingNew"],
  );
});

test("missing or invalid milestones stay missing, never 0", () => {
  const raw = { process: 100, main: Number.NaN, start: null, a: 0, b: -5, c: "12", d: Infinity, e: 150 };
  assert.deepEqual(cleanMilestones(raw), { process: 100, e: 150 });
  const { rows } = milestoneRows(raw);
  assert.deepEqual(
    rows.map((r) => r.name),
    ["process", "e"],
  );
  assert.ok(rows.every((r) => r.sinceOrigin >= 0));
});

test("without process, times are relative to the earliest milestone", () => {
  const { origin, rows } = milestoneRows({ main: 300, start: 200 });
  assert.equal(origin, "start");
  assert.deepEqual(
    rows.map((r) => r.sinceOrigin),
    [0, 100],
  );
});

test("a milestone before process gets a negative offset instead of moving the origin", () => {
  const { origin, rows } = milestoneRows({ process: 100, early: 90 });
  assert.equal(origin, "process");
  assert.deepEqual(
    rows.map((r) => [r.name, r.sinceOrigin]),
    [
      ["early", -10],
      ["process", 0],
    ],
  );
});

test("equal times are ordered by name so the table is stable", () => {
  const { rows } = milestoneRows({ process: 1, b: 5, a: 5 });
  assert.deepEqual(
    rows.map((r) => r.name),
    ["process", "a", "b"],
  );
});

test("no milestones: no origin, no rows", () => {
  assert.deepEqual(milestoneRows({}), { origin: null, rows: [] });
  assert.deepEqual(milestoneRows(undefined), { origin: null, rows: [] });
});

test("hasMilestones checks presence of valid values only", () => {
  assert.equal(hasMilestones({ main: 1, sessionRestored: 2 }, ["main", "sessionRestored"]), true);
  assert.equal(hasMilestones({ main: 1, sessionRestored: Number.NaN }, ["main", "sessionRestored"]), false);
});
