import { test } from "node:test";
import assert from "node:assert/strict";
import { fakeStorage } from "../../fakes.js";
import {
  addRecord,
  BACKUP_PREFIX,
  dismissRecovered,
  HISTORY_KEY,
  loadHistory,
  readHistory,
  RECOVERY,
  withRecord,
} from "../../../../extension/lib/models/history.js";

function record(n, extra = {}) {
  return {
    id: `full-${1000 * n}`,
    recordedAt: 1000 * n + 500,
    mode: "full",
    firefox: { version: "153.0", buildId: "20260101" },
    processStart: 1000 * n,
    milestones: { main: 100 + n, sessionRestored: 900 + n },
    io: null,
    precision: { processStart: 1, milestones: 1 },
    ...extra,
  };
}

test("nothing stored: an empty current-version history, nothing written", async () => {
  const storage = fakeStorage();
  const { history, migratedFrom, backupKey } = await loadHistory(storage);
  assert.deepEqual(history, { version: 2, records: [], trimmed: 0, recovered: [] });
  assert.equal(migratedFrom, null);
  assert.equal(backupKey, null);
  assert.deepEqual(storage.data, {});
});

test("version 0 (a bare array of records) is migrated and saved as the current version", async () => {
  const storage = fakeStorage({ [HISTORY_KEY]: [record(2), record(1)] });
  const { history, migratedFrom } = await loadHistory(storage);
  assert.equal(migratedFrom, 0);
  assert.equal(history.version, 2);
  assert.deepEqual(
    history.records.map((r) => r.id),
    ["full-1000", "full-2000"],
  );
  assert.deepEqual(storage.data[HISTORY_KEY], history);
});

for (const [what, value, reason] of [
  ["a string", "garbage{", RECOVERY.corrupt],
  ["a number", 42, RECOVERY.corrupt],
  ["another add-on's object", { settings: true }, RECOVERY.corrupt],
  ["a document whose records is not a list", { version: 1, records: "x" }, RECOVERY.corrupt],
  ["a newer version", { version: 7, records: [] }, RECOVERY.futureVersion],
]) {
  test(`${what} is moved aside to a backup key and a fresh history starts with a notice`, async () => {
    const storage = fakeStorage({ [HISTORY_KEY]: value });
    const { history, backupKey } = await loadHistory(storage, { now: () => 1234 });
    assert.equal(backupKey, `${BACKUP_PREFIX}1234`);
    assert.deepEqual(storage.data[backupKey], value, "the original is kept as it was");
    assert.deepEqual(history.records, []);
    assert.equal(history.recovered.length, 1);
    assert.equal(history.recovered[0].reason, reason);
    assert.equal(history.recovered[0].backupKey, backupKey);
    assert.deepEqual(storage.data[HISTORY_KEY], history);
  });
}

test("unreadable records: the good ones stay, the original is backed up, the notice counts them", async () => {
  const bad = { ...record(3), milestones: { main: "slow" } };
  const storage = fakeStorage({ [HISTORY_KEY]: { version: 1, records: [record(1), bad, null], trimmed: 2 } });
  const { history, backupKey } = await loadHistory(storage, { now: () => 99 });
  assert.deepEqual(
    history.records.map((r) => r.id),
    ["full-1000"],
  );
  assert.equal(history.trimmed, 2);
  assert.equal(history.recovered[0].reason, RECOVERY.badRecords);
  assert.match(history.recovered[0].detail, /^2 unreadable/);
  assert.equal(storage.data[backupKey].records.length, 3);
});

test("withRecord: one record per start, in start order, bounded with a count of the trimmed", () => {
  let { history } = readHistory(undefined);
  for (const n of [3, 1, 2]) {
    ({ history } = withRecord(history, record(n), { max: 2 }));
  }
  assert.deepEqual(
    history.records.map((r) => r.id),
    ["full-2000", "full-3000"],
  );
  assert.equal(history.trimmed, 1);
  const again = withRecord(history, { ...record(3), recordedAt: 99999 });
  assert.equal(again.added, false, "same id: not added twice");
  const near = withRecord(history, { ...record(3, { mode: "basic", id: "basic-3005", processStart: 3005, precision: { processStart: 10 } }) });
  assert.equal(near.added, true, "another mode is another record");
  const { history: basic } = withRecord(readHistory(undefined).history, record(3, { mode: "basic", id: "basic-3000", precision: { processStart: 10 } }));
  assert.equal(
    withRecord(basic, record(3, { mode: "basic", id: "basic-3010", processStart: 3010, precision: { processStart: 10 } })).added,
    false,
    "a basic-mode start 10 ms off (one clock tick) is the same start",
  );
});

test("addRecord loads, adds and saves; a second call for the same start changes nothing", async () => {
  const storage = fakeStorage({ [HISTORY_KEY]: [record(1)] });
  const first = await addRecord(storage, record(2));
  assert.equal(first.added, true);
  assert.equal(storage.data[HISTORY_KEY].records.length, 2);
  const second = await addRecord(storage, record(2));
  assert.equal(second.added, false);
  assert.equal(storage.data[HISTORY_KEY].records.length, 2);
});

test("dismissRecovered clears the notices and keeps the backups", async () => {
  const storage = fakeStorage({ [HISTORY_KEY]: "garbage" });
  const { backupKey } = await loadHistory(storage, { now: () => 5 });
  const cleared = await dismissRecovered(storage, { now: () => 6 });
  assert.deepEqual(cleared.recovered, []);
  assert.equal(storage.data[backupKey], "garbage");
});

test("version 1 is migrated to 2: each record gets its coldness from its own figures", async () => {
  const io = (tree) => ({ readBytes: tree, majorFaults: 1, treeReadBytes: tree, treeMajorFaults: 2, sampledAt: 1 });
  const stored = {
    version: 1,
    records: [record(1, { io: io(280_440_832) }), record(2, { io: io(0) }), record(3, { io: null })],
    trimmed: 4,
    recovered: [],
  };
  const storage = fakeStorage({ [HISTORY_KEY]: stored });
  const { history, migratedFrom } = await loadHistory(storage);
  assert.equal(migratedFrom, 1);
  assert.equal(history.version, 2);
  assert.equal(history.trimmed, 4);
  assert.deepEqual(
    history.records.map((r) => r.coldness.class),
    ["cold", "hot", "unknown"],
  );
  assert.equal(history.records[0].coldness.treeReadBytes, 280_440_832);
  assert.equal(history.records[0].coldness.needFrom, "fallback");
  assert.deepEqual(storage.data[HISTORY_KEY], history, "the migrated history is saved");
  // loading again migrates nothing and keeps the classes
  const again = await loadHistory(storage);
  assert.equal(again.migratedFrom, null);
  assert.deepEqual(again.history, history);
});

test("a stored record with a malformed coldness is set aside like any bad record", async () => {
  const storage = fakeStorage({ [HISTORY_KEY]: { version: 2, records: [record(1), record(2, { coldness: { class: "tepid" } })] } });
  const { history } = await loadHistory(storage, { now: () => 9 });
  assert.deepEqual(
    history.records.map((r) => r.id),
    ["full-1000"],
  );
  assert.equal(history.recovered[0].reason, RECOVERY.badRecords);
});
