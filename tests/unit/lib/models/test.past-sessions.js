import { test } from "node:test";
import assert from "node:assert/strict";
import { MAIN_MILESTONES, pastSessionsView } from "../../../../extension/lib/models/past-sessions.js";
import { HostError } from "../../../../extension/lib/transport/host-client.js";

// The host's `telemetry` reply for a profile with two archived sessions (shape of docs/PROTOCOL.md).
const ARCHIVE = {
  profile: "/home/ada/.mozilla/firefox/x.default",
  archive_found: true,
  main_pings: 3,
  skipped: [],
  skipped_count: 0,
  sessions: [
    {
      ping_id: "b",
      created: "2026-11-23T09:05:14.159Z",
      reason: "shutdown",
      written: "session_end",
      version: "153.7.0esr",
      build_id: "20261103151912",
      milestones: { main: 53, sessionRestored: 809, delayedStartupFinished: 1200, AMI_startup_begin: 300 },
      file: "datareporting/archived/2026-11/2.b.main.jsonlz4",
    },
    {
      ping_id: "a",
      created: "2026-11-22T18:00:00.000Z",
      milestones: { main: 49, firstPaint: 700, sessionRestored: 1760 },
      file: "datareporting/archived/2026-11/1.a.main.jsonlz4",
    },
  ],
};

test("each session gets every main column; a milestone the ping lacks is null, never 0", () => {
  const view = pastSessionsView({ archive: ARCHIVE });
  assert.equal(view.state, "ready");
  assert.equal(view.key, "pastSessionsReady");
  assert.deepEqual(view.params, ["2", "/home/ada/.mozilla/firefox/x.default/datareporting/archived"]);
  assert.deepEqual(Object.keys(view.rows[0].milestones), MAIN_MILESTONES);
  assert.deepEqual(view.rows[0].milestones, { main: 53, firstPaint: null, firstPaint2: null, sessionRestored: 809 });
  assert.deepEqual(view.rows[1].milestones, { main: 49, firstPaint: 700, firstPaint2: null, sessionRestored: 1760 });
  assert.equal(view.rows[0].created, Date.parse("2026-11-23T09:05:14.159Z"));
  assert.equal(view.rows[1].version, null);
});

test("a ping written mid-session is labelled so, from the host's one definition, never 'session ended' (issue 39 #6)", () => {
  const mid = { ...ARCHIVE.sessions[0], ping_id: "m", reason: "environment-change", written: "mid_session" };
  const view = pastSessionsView({ archive: { ...ARCHIVE, sessions: [mid, ...ARCHIVE.sessions] } });
  assert.deepEqual(
    view.rows.map((r) => [r.id, r.written, r.writtenKey, r.reason]),
    [
      ["m", "mid_session", "pastSessionsWrittenMidSession", "environment-change"],
      ["b", "session_end", "pastSessionsWrittenSessionEnd", "shutdown"],
      // a host older than `written`, or a code it does not know: unknown, not guessed
      ["a", "unknown", "pastSessionsWrittenUnknown", null],
    ],
  );
});

test("other milestones are kept, in time order", () => {
  const [row] = pastSessionsView({ archive: ARCHIVE }).rows;
  assert.deepEqual(row.others, [
    ["AMI_startup_begin", 300],
    ["delayedStartupFinished", 1200],
  ]);
});

test("no archive, an empty archive, a missing or old host and host errors each get their own words", () => {
  assert.equal(pastSessionsView({ archive: { ...ARCHIVE, archive_found: false, sessions: [] } }).state, "no-archive");
  const empty = pastSessionsView({ archive: { ...ARCHIVE, sessions: [], main_pings: 2 } });
  assert.equal(empty.state, "empty");
  assert.deepEqual(empty.params, ["/home/ada/.mozilla/firefox/x.default/datareporting/archived", "2"]);
  const missing = new HostError({ code: "host_missing", message: "No such native application" });
  assert.equal(pastSessionsView({ error: missing }).state, "missing-host");
  const old = new HostError({ code: "unknown_command", message: "unknown command telemetry" });
  assert.equal(pastSessionsView({ error: old }).key, "pastSessionsOldHost");
  const other = pastSessionsView({ error: new HostError({ code: "profile_not_found", message: "no profile lock" }) });
  assert.deepEqual([other.state, other.key, other.params], ["error", "pastSessionsError", ["no profile lock"]]);
});
