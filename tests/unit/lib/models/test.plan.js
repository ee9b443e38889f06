import { test } from "node:test";
import assert from "node:assert/strict";
import {
  LEARN_KEY,
  learnOnce,
  learnText,
  planErrorView,
  planLines,
  planView,
  PLAN_PRELOAD,
  popupPlanText,
  uncachedPreloadParams,
  uncachedText,
} from "../../../../extension/lib/models/plan.js";
import { HostError } from "../../../../extension/lib/transport/host-client.js";
import { englishMessage, fakeStorage } from "../../fakes.js";
import { recordedReply } from "../../host-replies.js";
import { hostCommands } from "../../../../extension/lib/wording/commands.js";
import { WHOLE_PRELOAD } from "../../../../extension/lib/models/residency.js";

/** Words like browser.i18n.getMessage, from the real English strings (so a missing key fails). */
const t = englishMessage;
const when = (ms) => `T${ms}`;

// Real `learn` replies (tests/fixtures/host/): as root after a cold start (the cache was used),
// and as nobody after a warm one (it was not).
const LEARNED = recordedReply("learn-exact").reply;
const LEARNED_WARM = recordedReply("learn-hidden").reply;

test("learnOnce: asks the host once per start and stores what it learned", async () => {
  const storage = fakeStorage();
  const asked = [];
  const sent = [];
  const requestHost = async (command, params) => {
    asked.push(command);
    sent.push(params);
    return LEARNED;
  };
  let clock = 1000;
  const now = () => clock++;
  const first = await learnOnce({ startId: "full-1", sessionRestoredMs: 4977, storage, requestHost, now });
  assert.equal(first.status, "learned");
  assert.deepEqual(asked, ["learn"]);
  assert.deepEqual(sent[0], { session_restored_ms: 4977 }, "the start's sessionRestored goes with it");
  assert.equal(storage.writes[0][LEARN_KEY].status, "learning", "claimed before the host answers");
  const stored = storage.data[LEARN_KEY];
  assert.equal(stored.startId, "full-1");
  assert.deepEqual(stored.result, LEARNED);
  assert.deepEqual(stored.lastLearned.result, LEARNED);

  // a background page restarted during the same process start: no second learn
  const again = await learnOnce({ startId: "full-1", storage, requestHost, now });
  assert.equal(again.status, "duplicate");
  assert.deepEqual(asked, ["learn"]);

  // the next process start learns again
  // a start without sessionRestored (basic mode) sends none, never a 0 or null
  const next = await learnOnce({ startId: "full-2", sessionRestoredMs: null, storage, requestHost, now });
  assert.equal(next.status, "learned");
  assert.deepEqual(asked, ["learn", "learn"]);
  assert.deepEqual(sent[1], {});
});

test("learnOnce: an old host (unknown_command), a missing host or a failure is kept quietly, and the last learned plan stays", async () => {
  const storage = fakeStorage({ [LEARN_KEY]: { startId: "full-1", status: "learned", lastLearned: { at: 5, startId: "full-1", result: LEARNED } } });
  const old = await learnOnce({
    startId: "full-2",
    storage,
    requestHost: async () => {
      throw new HostError({ code: "unknown_command", message: "unknown command learn", params: { command: "learn" } });
    },
  });
  assert.equal(old.status, "unsupported");
  assert.equal(storage.data[LEARN_KEY].lastLearned.result.files, LEARNED.files, "the earlier learn is still shown");

  const missing = await learnOnce({
    startId: "full-3",
    storage,
    requestHost: async () => {
      throw new HostError({ code: "host_missing", message: "No such native application about_startup" });
    },
  });
  assert.equal(missing.status, "no-host");

  const failed = await learnOnce({
    startId: "full-4",
    storage,
    requestHost: () => Promise.reject(new HostError({ code: "firefox_not_found", message: "no parent Firefox" })),
  });
  assert.equal(failed.status, "error");
  assert.deepEqual(storage.data[LEARN_KEY].error, { code: "firefox_not_found", message: "no parent Firefox" });
  const { mapped_files: mapped, resident } = LEARNED.sources;
  assert.equal(
    learnText(storage.data[LEARN_KEY], t, { when }),
    `Learning this start failed: no parent Firefox. Last learned T5 from the pages Firefox had mapped in ${mapped} files; and, for ${resident} files, what this cold start brought into the page cache.`,
  );
});

test("learnText says whether the page cache was used, and if not why, as it happened", () => {
  const entry = (result) => ({ status: "learned", lastLearned: { at: 5, result } });
  // A warm start (the recording as nobody followed the cold one): not "0 with exact residency".
  assert.equal(LEARNED_WARM.sources.resident_use, "warm");
  assert.match(learnText(entry(LEARNED_WARM), t, { when }), /mapped in \d+ files; the page cache was not used: this start read little from disk \(it was warm\)/);
  const hidden = { ...LEARNED_WARM, sources: { ...LEARNED_WARM.sources, resident_use: "hidden" } };
  assert.match(learnText(entry(hidden), t, { when }), /the kernel hides it from this user/);
  // The files Firefox really mapped, not every install file the start's record lists.
  assert.ok(LEARNED.sources.mapped_files < LEARNED.sources.mapped);
  assert.match(learnText(entry(LEARNED), t, { when }), new RegExp(`mapped in ${LEARNED.sources.mapped_files} files`));
  // An older host's reply (no resident_use, no mapped_files).
  const old = { ...LEARNED.sources };
  delete old.mapped_files;
  delete old.resident_use;
  assert.match(learnText(entry({ ...LEARNED, sources: old }), t, { when }), /older host/);
});

test("learnOnce: no start id, nothing asked", async () => {
  const storage = fakeStorage();
  const result = await learnOnce({ startId: null, storage, requestHost: () => assert.fail("asked") });
  assert.equal(result.status, "no-start");
  assert.equal(storage.writes.length, 0);
});

const STATUS = {
  learned: true,
  starts: 3,
  planned_bytes: 150_000_000,
  planned_files: 70,
  install_bytes: 300_000_000,
  planned_install_bytes: 120_000_000,
  planned_system_bytes: 30_000_000,
  changed_files: [],
  uncached_files: [
    { path: "/usr/lib/firefox-esr/libmozgtk.so", size: 20_000, planned: true },
    { path: "/usr/lib/firefox-esr/crashreporter", size: 1_000_000, planned: true },
    { path: "/usr/lib/firefox-esr/vulkantest", size: 13_976, planned: false },
  ],
  autostart: {
    enabled: true,
    kind: "systemd",
    last_run: { at_ms: 1_763_768_000_000, bytes: 150_000_000, elapsed_ms: 4200, planned: true },
    note: "a DAMON kdamond pages out page cache left idle for about a minute: …",
    note_code: "damon_pageout",
  },
};

test("planView: a learned plan with autostart, its last run, the DAMON note and the uncached files", () => {
  const view = planView(STATUS);
  assert.equal(view.state, "learned");
  assert.equal(view.plannedFraction, 0.4, "the install part against the install folder, not the total");
  assert.deepEqual(view.uncached, { count: 2, paths: ["/usr/lib/firefox-esr/libmozgtk.so", "/usr/lib/firefox-esr/crashreporter"], pathsB64: [null, null], bytes: 1_020_000, unused: 1 });
  assert.deepEqual(uncachedPreloadParams(view), { files: ["/usr/lib/firefox-esr/libmozgtk.so", "/usr/lib/firefox-esr/crashreporter"], idle: false });
  assert.deepEqual(view.autostart, { enabled: true, kind: "systemd", lastRun: { at: 1_763_768_000_000, bytes: 150_000_000, elapsedMs: 4200, planned: true } });
  const lines = planLines(view, t, { when });
  assert.deepEqual(
    lines.map((line) => line.id),
    ["learned", "why", "autostart", "last-run", "note"],
  );
  assert.equal(lines[0].text, "A plan is learned from 3 starts: 120.0 MB of the install folder (40% of its 300.0 MB) + 30.0 MB of system libraries.");
  // why the plan is more than the running Firefox maps (the mapped figure above it on the page)
  assert.match(lines[1].text, /every page any of Firefox's processes mapped during the learned starts .* small gaps .* more than Firefox maps at any one moment/);
  assert.equal(lines[2].text, "Autostart is on (systemd): the planned preload runs at idle priority after login.");
  assert.equal(lines[3].text, "Last run T1763768000000: read 150.0 MB of planned pages in 4.2s.");
  assert.equal(lines[4].text, "Note: a DAMON kdamond pages out page cache left idle for about a minute: a preload at login is undone unless Firefox starts within a minute or so", "worded from _locales by its code");
  assert.equal(uncachedText(view, t), "2 files that Firefox's starts read are not cached: the next start will read them from disk.");
});

test("the uncached-files alarm is judged by the plan: files no start read raise none", () => {
  // Recorded as root right after a cold start: 7 install files have no cached page, and the
  // host says the plan reads none of them (crashreporter, vulkantest, …).
  const recorded = recordedReply("plan-status-exact").reply;
  assert.ok(recorded.uncached_files.length > 0 && recorded.uncached_files.every((f) => f.planned === false));
  const view = planView(recorded);
  assert.equal(view.uncached.count, 0);
  assert.equal(view.uncached.unused, recorded.uncached_files.length);
  assert.equal(uncachedText(view, t), null, "no alarm for files starts never read");
  assert.equal(uncachedPreloadParams(view), null);
  // Residency hidden (recorded as nobody): nobody can tell, so no claim either way.
  const hidden = planView(recordedReply("plan-status-hidden").reply);
  assert.equal(hidden.uncached, null);
  assert.equal(uncachedText(hidden, t), null);
  // Nothing learned (an older host sends no `planned` either): every uncached file counts, said so.
  const unjudged = planView({ ...recorded, learned: false, uncached_files: recorded.uncached_files.map((f) => ({ path: f.path, size: f.size })) });
  assert.match(uncachedText(unjudged, t), /^7 files of Firefox are not cached: a start that needs them/);
});

test("uncachedPreloadParams: a name that is not UTF-8 is sent back with its exact bytes, not its display text", () => {
  const view = planView({
    ...STATUS,
    uncached_files: [
      { path: "/ff/a.so", size: 1 },
      { path: "/ff/lib\uFFFD.so", path_b64: "L2ZmL2xpYv8uc28=", size: 2 },
    ],
  });
  assert.deepEqual(view.uncached.paths, ["/ff/a.so", "/ff/lib\uFFFD.so"]);
  assert.deepEqual(uncachedPreloadParams(view), {
    files: ["/ff/a.so", "/ff/lib\uFFFD.so"],
    files_b64: [null, "L2ZmL2xpYv8uc28="],
    idle: false,
  });
  assert.equal(uncachedPreloadParams(planView({ ...STATUS, uncached_files: [] })), null);
  assert.equal(uncachedPreloadParams(planView({ ...STATUS, uncached_files: null })), null);
});

test("planLines: a plan larger than the install folder (system libraries) is never a share over 100 %; an older host's total is said as a total", () => {
  const big = planView({ ...STATUS, planned_bytes: 335_600_000, install_bytes: 308_400_000, planned_install_bytes: 270_100_000, planned_system_bytes: 65_500_000 });
  assert.equal(planLines(big, t, { when })[0].text, "A plan is learned from 3 starts: 270.1 MB of the install folder (88% of its 308.4 MB) + 65.5 MB of system libraries.");
  const old = { ...STATUS, planned_bytes: 335_600_000, install_bytes: 308_400_000 };
  delete old.planned_install_bytes;
  delete old.planned_system_bytes;
  const oldView = planView(old);
  assert.equal(oldView.plannedFraction, null);
  assert.equal(
    planLines(oldView, t, { when })[0].text,
    "A plan is learned from 3 starts: 335.6 MB planned, install folder and system libraries together (the install folder holds 308.4 MB; a newer host tells the two apart).",
  );
});

test("planView: no plan yet, autostart off, residency hidden (uncached null), changed files", () => {
  const none = planView({ learned: false, starts: 0, planned_bytes: 0, install_bytes: 300_000_000, changed_files: [], uncached_files: null, autostart: { enabled: false, kind: null, last_run: null, note: null } });
  assert.equal(none.state, "none");
  assert.equal(none.uncached, null);
  assert.equal(uncachedText(none, t), null, "hidden residency: no claim either way");
  assert.deepEqual(
    planLines(none, t).map((line) => line.text),
    [
      "No plan learned yet: it is learned after the next start of Firefox (with the host installed).",
      "Autostart is off: turn it on with the page's button, or with about-startup-host autostart enable.",
    ],
  );
  // The command as the host says this user runs it (hello's cli, recorded as nobody).
  assert.equal(
    planLines(none, t, { commands: hostCommands(recordedReply("hello-user").reply.data) })[1].text,
    `Autostart is off: turn it on with the page's button, or with ${recordedReply("hello-user").reply.data.cli.command} autostart enable.`,
  );
  const changed = planView({ ...STATUS, changed_files: ["/usr/lib/firefox-esr/libxul.so"], uncached_files: [] });
  assert.equal(uncachedText(changed, t), null, "nothing uncached: no line");
  assert.ok(planLines(changed, t, { when }).some((line) => line.id === "changed" && /^1 file changed .*: it is read whole/.test(line.text)), "one file: the singular");
  const two = planView({ ...STATUS, starts: 1, changed_files: ["/a/libxul.so", "/a/omni.ja"], uncached_files: [] });
  const twoLines = planLines(two, t, { when });
  assert.ok(twoLines.some((line) => line.id === "changed" && /^2 files changed .*: they are read whole/.test(line.text)), "two files: the plural");
  assert.match(twoLines[0].text, /^A plan is learned from 1 start: /, "one start: the singular");
  // garbage in: nothing invented
  const empty = planView(null);
  assert.equal(empty.learned, false);
  assert.equal(empty.plannedBytes, null);
  assert.equal(empty.autostart.lastRun, null);
});

test("planView: a stale plan (Firefox updated) says for which build it was learned", () => {
  const stale = planView({ ...STATUS, stale: true, build_id: "20260202000000", learned_build_id: "20260101000000", changed_files: ["/usr/lib/firefox-esr/libxul.so"] });
  assert.equal(stale.stale, true);
  const lines = planLines(stale, t, { when });
  assert.deepEqual(lines.map((line) => line.id).slice(0, 4), ["learned", "why", "stale", "changed"]);
  assert.match(lines[2].text, /learned for Firefox build 20260101000000, and this is build 20260202000000/);
  // An older host (no stale field) or a current plan: no such line.
  assert.ok(!planLines(planView(STATUS), t, { when }).some((line) => line.id === "stale"));
  assert.ok(!planLines(planView({ ...STATUS, stale: false, build_id: "1", learned_build_id: "1" }), t, { when }).some((line) => line.id === "stale"));
});

test("planView: DAMON proactive reclaim is its own line, in the add-on's words, instead of the host's note", () => {
  const damon = planView({ ...STATUS, autostart: { ...STATUS.autostart, damon_pageout: true } });
  assert.equal(damon.damonPageout, true);
  const lines = planLines(damon, t, { when });
  assert.deepEqual(lines.map((line) => line.id), ["learned", "why", "autostart", "last-run", "damon"]);
  assert.match(lines[4].text, /DAMON proactive reclaim\): a preload at login is paged out again/);
  assert.equal(planView(STATUS).damonPageout, false, "a host without the field: no claim");
});

test("planErrorView: a missing host and an old host (named by its version) are told apart", () => {
  assert.equal(planErrorView(new HostError({ code: "host_missing", message: "x" })).state, "missing");
  const old = planErrorView(new HostError({ code: "unknown_command", message: "x" }), { hostVersion: "0.1.0" });
  assert.deepEqual(old, { state: "old", key: "planHostOld", subs: ["0.1.0"] });
  assert.match(t(old.key, old.subs), /version 0\.1\.0\) is older than this add-on/);
  assert.equal(planErrorView(new HostError({ code: "unknown_command", message: "x" })).key, "planHostOldUnknown");
  assert.equal(planErrorView(new HostError({ code: "host_disconnected", message: "gone" })).state, "stopped");
  assert.equal(planErrorView(new HostError({ code: "io_error", message: "disk" })).state, "error");
});

test("popupPlanText: what the plan reads and its login preload; the plan can be preloaded only when learned", () => {
  assert.deepEqual(popupPlanText({ status: STATUS }, t, { when }), {
    state: "on",
    text: "The plan: 120.0 MB of Firefox's files (40% of its 300.0 MB) + 30.0 MB of system libraries, learned from 3 starts: every page they used, and the small gaps between.",
    autostart: "Autostart preload: on. Last run T1763768000000, read 150.0 MB.",
    learned: true,
  });
  const off = { ...STATUS, autostart: { enabled: false, kind: null, last_run: null, note: null } };
  const offText = popupPlanText({ status: off }, t);
  assert.equal(offText.state, "off");
  assert.equal(offText.autostart, "Autostart preload: off. It has not run yet.");
  // A real reply (recorded as nobody after one start): its figures, one start.
  const recorded = popupPlanText({ status: recordedReply("plan-status-hidden").reply }, t);
  assert.match(recorded.text, /^The plan: 185\.7 MB of Firefox's files \(60% of its 308\.4 MB\) \+ 28\.1 MB of system libraries, learned from 1 start: every page it used/);
  // after a Firefox update
  assert.match(popupPlanText({ status: { ...STATUS, stale: true } }, t).text, /learned on an older build of Firefox/);
  // an older host without the install/system split: the total
  assert.match(popupPlanText({ status: { ...STATUS, planned_install_bytes: undefined, planned_system_bytes: undefined } }, t).text, /^The plan: 150\.0 MB of Firefox's files and system libraries together/);
});

test("popupPlanText: nothing learned says so, and what that leaves: only the full preload, which costs more than it saves", () => {
  const none = popupPlanText({ status: { learned: false } }, t);
  assert.deepEqual([none.state, none.learned, none.autostart], ["none", false, null]);
  assert.match(none.text, /^No plan learned yet: the host learns one from each start/);
  assert.match(none.text, /full preload, which reads all of Firefox's files: right before a launch it costs more than it saves/);
  for (const [code, state] of [
    ["unknown_command", "old"],
    ["host_missing", "missing"],
  ]) {
    const got = popupPlanText({ error: new HostError({ code, message: "x" }) }, t);
    assert.deepEqual([got.state, got.learned], [state, false]);
  }
});

test("popupPlanText words a coded host error from _locales, not the host's English message", () => {
  const busy = new HostError({ code: "busy", message: "English from the host", params: { limit: 4 } });
  assert.deepEqual(popupPlanText({ error: busy }, t), {
    state: "error",
    text: "Preload plan: the host is already running 4 long requests; try again when one has finished",
    autostart: null,
    learned: false,
  });
});

test("a damaged working-set.json: the plan says it was set aside, where, and that nothing learned is used (issue 30 #10)", () => {
  // Recorded: working-set.json cut short, set aside by this very plan_status.
  const { reply } = recordedReply("plan-status-set-aside");
  const view = planView(reply);
  assert.equal(view.learned, false, "what the damaged file held is not used");
  const moved = reply.note_codes[0].params.moved_to;
  assert.match(moved, /^working-set\.json\.corrupt\.\d+$/);
  const lines = planLines(view, t, { when });
  // First, before "nothing learned", which it explains.
  assert.equal(lines[0].id, "set-aside");
  assert.ok(lines[0].text.includes("working-set.json") && lines[0].text.includes(moved) && lines[0].text.includes("not deleted"), lines[0].text);
  assert.equal(lines[1].id, "none");
  // Every other recorded plan_status has none.
  assert.ok(!planLines(planView(recordedReply("plan-status-exact").reply), t, { when }).some((l) => l.id === "set-aside"));
  // The learn that set it aside says so in the learn line while it is the last one: its note is
  // the same note object (`note_codes` of learn and plan_status, docs/PROTOCOL.md "Notes").
  const result = { ...LEARNED, note_codes: reply.note_codes };
  const entry = { startId: "s", at: 5, status: "learned", result, lastLearned: { at: 5, startId: "s", result } };
  assert.ok(learnText(entry, t, { when }).startsWith(lines[0].text), learnText(entry, t, { when }));
  assert.ok(!learnText({ ...entry, result: LEARNED, lastLearned: { at: 5, startId: "s", result: LEARNED } }, t, { when }).includes("corrupt"));
});

test("a preload a person clicks reads at full speed: the page's and the popup's requests are not idle", () => {
  // An idle planned preload backs off while anyone else waits on I/O (docs/PROTOCOL.md): clicked
  // during a backup it never moved (issue 37). Only the login preload (`preload --plan --idle`) is idle.
  assert.deepEqual(PLAN_PRELOAD, { files: null, plan: true, idle: false });
  assert.deepEqual(WHOLE_PRELOAD, { files: null, idle: false });
  const view = planView(STATUS);
  assert.equal(uncachedPreloadParams(view).idle, false);
  assert.ok(Object.isFrozen(PLAN_PRELOAD) && Object.isFrozen(WHOLE_PRELOAD), "shared by the page and the popup: not changed by either");
});
