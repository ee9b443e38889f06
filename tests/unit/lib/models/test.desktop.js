import { test } from "node:test";
import assert from "node:assert/strict";
import { desktopErrorView, desktopLines, desktopView, planIsStale } from "../../../../extension/lib/models/desktop.js";
import { HostError, HOST_MISSING } from "../../../../extension/lib/transport/host-client.js";
import { englishMessage } from "../../fakes.js";
import { recordedReply } from "../../host-replies.js";

const t = englishMessage;
const when = (ms) => `T${ms}`;

// The host's real `desktop` replies (tests/fixtures/host/desktop-*.json, recorded as root on a
// copy of Firefox's install folder by scripts/record-host-replies.mjs): off with one traced and
// learned cold start; on after one launch through the entry; the same after an update (another
// BuildID); and with no desktop entry for this Firefox anywhere.
const OFF = recordedReply("desktop-off").reply;
const ON = recordedReply("desktop-on").reply;
const STALE = recordedReply("desktop-stale").reply;
const NO_ENTRY = recordedReply("desktop-no-system-entry").reply;

const lines = (status) => desktopLines(desktopView(status), t, { when, locale: "en-US" });
const byId = (ls) => Object.fromEntries(ls.map((l) => [l.id, l.text]));

test("off, with the traced plan a launch would read", () => {
  const view = desktopView(OFF);
  assert.equal(view.state, "off");
  assert.equal(planIsStale(view), false);
  const got = byId(lines(OFF));
  assert.equal(got.state, `Off: the desktop launches Firefox through its own entry, ${OFF.system_entry}.`);
  assert.match(got.plan, /^A launch reads the traced plan of build 20261117185949 \(from 1 traced start\) beside Firefox/);
  assert.equal(got.last, undefined);
});

test("on, with the last launch's prefetch: read first on this 8 MiB-readahead disk", () => {
  assert.equal(desktopView(ON).state, "on");
  const got = byId(lines(ON));
  assert.ok(got.state.startsWith(`On: ${ON.entry} launches Firefox through the prefetch (a copy of ${ON.system_entry}`), got.state);
  // Recorded: 210,484,174 bytes read, 8,192 cached, 1,085 ms, strategy first, read_ahead_kb 8192.
  assert.match(got.last, /^Last launch \(T1795908528215\): read 210\.5 MB before starting Firefox, found 8 kB cached already, in 1\.1s\. This disk reads 8\.4 MB around every page/);
  // A record of an older host says nothing of the strategy: read beside the start.
  const older = { ...ON, last: { ...ON.last, strategy: undefined, read_ahead_kb: undefined } };
  assert.equal(byId(lines(older)).last, "Last launch (T1795908528215): read 210.5 MB beside the start, found 8 kB cached already, in 1.1s.");
  // The entry names another host binary or Firefox than now.
  const outdated = { ...ON, outdated: true };
  assert.equal(desktopView(outdated).state, "outdated");
  assert.match(byId(lines(outdated)).outdated, /moved since it was written/);
});

test("a Firefox update makes the traced plan stale: the page says so and what the launch reads instead", () => {
  const view = desktopView(STALE);
  assert.equal(planIsStale(view), true);
  const got = byId(lines(STALE));
  assert.match(got.stale, /traced on Firefox build 20261117185949, and this is build 20261201120000 \(Firefox was updated\)/);
  // Recorded by today's host: nothing of the new build learned yet, so the old traces' files by name.
  assert.equal(
    got.plan,
    "A launch reads the files of that plan by name (1 traced start of build 20261117185949) beside Firefox, each by its traced parts cut to its size now: an update changes the files, not much of what a start needs of them.",
  );
  assert.match(got.stale, /The next start of this build renews what a launch reads, .*; until then:$/);
  // An older host's answer in the same state: the learned plan of the older build.
  const learnedOld = { ...STALE, prefetch: { ...STALE.prefetch, source: "learned", traces: 0 } };
  assert.match(byId(lines(learnedOld)).plan, /^A launch reads what still applies of the learned plan, in disk order: it was learned on an older build/);
  // the command to record a trace of this build is the host's, by the path that runs it here
  const record = "sudo /home/me/about-startup/native-host/target/release/about-startup-host launch --cold --trace";
  const named = byId(desktopLines(view, englishMessage, { recordCommand: record }));
  assert.ok(named.stale.includes(`: ${record})`), named.stale);
  // Once a start of this build is learned: the learned plan, and the command for a trace.
  const relearned = byId(desktopLines(desktopView({ ...STALE, prefetch: { ...STALE.prefetch, source: "learned", traces: 0, learned_stale: false } }), englishMessage, { recordCommand: record }));
  assert.ok(relearned.plan.includes(`record one with ${record})`), relearned.plan);
  // The stale line no longer says that only a traced cold start renews the plan (the plan
  // precedence fix: a start the background learns renews what a launch reads): renewed, said.
  assert.equal(
    relearned.stale,
    "The traced plan is stale: it was traced on Firefox build 20261117185949, and this is build 20261201120000 (Firefox was updated). A start of this build, learned by this add-on, has renewed what a launch reads:",
  );
  // Issue 39 #11: the host of today reads the old traces' files by name after an update (the
  // recording's state, answered by that host): the page says whose plan and how, after the
  // stale line, and that the next traced start renews it.
  const byName = { ...STALE, prefetch: { ...STALE.prefetch, source: "trace", traces: 2 } };
  const renewed = byId(desktopLines(desktopView(byName), englishMessage, { recordCommand: record }));
  assert.match(
    renewed.stale,
    /The next start of this build renews what a launch reads, as this add-on learns it once the start is over \(a traced cold start renews the traced plan itself: sudo .* launch --cold --trace\); until then:$/,
  );
  assert.doesNotMatch(renewed.stale, /next traced cold start of this build renews it/);
  assert.equal(
    renewed.plan,
    "A launch reads the files of that plan by name (2 traced starts of build 20261117185949) beside Firefox, each by its traced parts cut to its size now: an update changes the files, not much of what a start needs of them.",
  );
  // Nothing learned either: nothing to read until a start of this build is learned.
  const nothing = { ...STALE, prefetch: { ...STALE.prefetch, source: null } };
  assert.equal(planIsStale(desktopView(nothing)), true);
  assert.match(byId(lines(nothing)).plan, /older build of Firefox/);
});

test("why it cannot be turned on, by the host's code; an unknown code keeps the host's words", () => {
  // Recorded: no desktop entry runs this Firefox.
  assert.equal(desktopView(NO_ENTRY).state, "unavailable");
  assert.match(byId(lines(NO_ENTRY)).problem, /no desktop entry of the system starts this Firefox/);
  // The other codes, in the recorded problem's place.
  const as = (code, message = NO_ENTRY.problem.message) => ({ ...OFF, problem: { code, message } });
  assert.match(byId(lines(as("host_replaceable"))).problem, /another user could replace the host binary/);
  assert.match(byId(lines(as("foreign_entry"))).problem, /firefox-esr\.desktop exists and was not written by about:startup/);
  assert.match(byId(lines(as("new_reason", "the host's words"))).problem, /Not available: the host's words/);
});

test("errors: no host, an old host, a refused enable, anything else", () => {
  assert.equal(desktopErrorView(new HostError({ code: HOST_MISSING, message: "x" }), t).state, "missing");
  assert.equal(desktopErrorView(new HostError({ code: "unknown_command", message: "x" }), t).state, "old");
  const refused = desktopErrorView(new HostError({ code: "desktop_refused", message: "…", params: { reason: "no_system_entry", detail: "…" } }), t);
  assert.deepEqual(refused.state, "refused");
  assert.match(refused.text, /no desktop entry of the system starts this Firefox/);
  assert.match(desktopErrorView(new HostError({ code: "io_error", message: "disk on fire", params: { detail: "disk on fire" } }), t).text, /Could not ask the host: disk on fire/);
});

test("a damaged record of the last launch: said first of the launch lines, naming where it went (issue 30 #10)", () => {
  // Recorded: last-prefetch.json cut short, set aside by this very `desktop status`.
  const { reply } = recordedReply("desktop-set-aside");
  const view = desktopView(reply);
  assert.equal(view.last, null, "nothing is read from the damaged file");
  assert.equal(view.setAside.length, 1);
  const moved = reply.note_codes[0].params.moved_to;
  assert.match(moved, /^last-prefetch\.json\.corrupt\.\d+$/);
  const text = byId(lines(reply))["set-aside"];
  assert.ok(text.includes("last-prefetch.json") && text.includes(moved) && text.includes("not deleted"), text);
  // A reply without the note (every other recorded one) has no such line.
  assert.equal(byId(lines(OFF))["set-aside"], undefined);
});

test("the last launch's prefetch with the user's profile in its plan: held, read, skipped by part, or left out and why", () => {
  // Recorded (last-prefetch-profile.json): a launch of a profile traced cold, as root; the
  // prefetch held 5,877,864 bytes of 33 profile files and read all of it from disk.
  const recorded = recordedReply("last-prefetch-profile").reply;
  const withLast = (last) => byId(lines({ ...ON, last }));
  assert.equal(withLast(recorded)["last-profile"], "Of your profile its plan held 5.9 MB in 33 files, what the traced start read of it before its session was restored; 5.9 MB of it was read from disk.");
  // Files Firefox wrote since the trace, by part as the host names them (an add-on by its id).
  const changed = { ...recorded, profile: { ...recorded.profile, changed: [{ part: { kind: "session" }, files: 2 }, { part: { kind: "extension", id: "x@y" }, files: 1 }] } };
  assert.ok(withLast(changed)["last-profile"].endsWith(" 3 files Firefox wrote or replaced since the trace were not read: the session store (your tabs and windows) (2), add-on x@y (1). A new trace plans them again."), withLast(changed)["last-profile"]);
  // Left out: why, by the host's code; a code this add-on does not know keeps it.
  const out = (code) => withLast({ ...recorded, bytes_read_profile: 0, profile: { bytes: 0, files: 0, left_out: { code } } })["last-profile"];
  assert.match(out("other_profile"), /started another profile than the traced one/);
  assert.match(out("not_owned"), /belongs to another user/);
  assert.equal(out("from_the_future"), "Nothing of your profile was in its plan (from_the_future).");
  // An older host's record, or a launch that failed: no profile line.
  const older = { ...recorded };
  delete older.profile;
  assert.equal(withLast(older)["last-profile"], undefined);
  assert.equal(withLast({ ...recorded, failed: "no plan" })["last-profile"], undefined);
});

// `desktop`'s `packing` as the host printed it on this machine (about-startup-host desktop status
// --json after one traced cold start of Firefox ESR 153.8, build 20261117185949, 28 Nov 2026).
const PACKING = {
  basis: "estimate",
  compressor: "lz4",
  block_size: 131072,
  build_id: "20261117185949",
  traces: 1,
  files: 22,
  bytes_plain: 212040930,
  bytes_blocks: 232184570,
  bytes_compressed: 122035579,
  bytes_unmapped: 0,
  bytes_outside: 0,
};

test("what packing would save: the traced start's bytes plain and compressed, as the host counted them", () => {
  const got = byId(lines({ ...OFF, packing: PACKING, packed: null }));
  assert.equal(
    got.packing,
    "What packing would save here: this machine's traced start needs 212.0 MB of the install's files (100% of the bytes it needs; 0.0 MB elsewhere: system libraries, the profile). A squashfs image (lz4, 128 KiB blocks, estimated by compressing those blocks here) would hold them in 122.0 MB (0.58x the bytes), at most: zstd, the packer's default, needs less.",
  );
  assert.equal(got.packed, undefined);
  // Through a real image (a packed install), with bytes elsewhere and some not counted.
  const image = { ...PACKING, basis: "image", compressor: "zstd", bytes_blocks: null, bytes_compressed: 101_200_000, bytes_unmapped: 1_000_000, bytes_outside: 71_000_000 };
  assert.match(byId(lines({ ...OFF, packing: image })).packing, /needs 212\.0 MB of the install's files \(75% of the bytes it needs; 71\.0 MB elsewhere.*Its squashfs image \(zstd, 128 KiB blocks\) holds them in 101\.2 MB \(0\.48x the bytes\)\.$/);
  // A Snap's image nobody may read: the compressed figure is hidden, never 0.
  const hidden = { ...PACKING, basis: "image", compressor: "unknown", block_size: 0, bytes_blocks: null, bytes_compressed: null, left_off: "image_not_readable" };
  assert.match(byId(lines({ ...OFF, packing: hidden })).packing, /What its compressed image holds of them is hidden: you may not read the image\.$/);
  // No traced start of this build: said; an older host (no field): nothing said.
  assert.equal(byId(lines({ ...OFF, packing: null })).packing, "What packing would save here: unknown until a traced start of this Firefox build.");
  assert.equal(byId(lines(OFF)).packing, undefined);
});

test("a packed image: used, or not used and why (a Firefox update)", () => {
  const packed = { compressor: "zstd", block_size: 131072, bytes_image: 101_200_000, bytes_install: 308_000_000, current: true, not_used: null };
  assert.equal(byId(lines({ ...OFF, packed })).packed, "Packed: a 101.2 MB image (zstd) of the install's 308.0 MB; launches start Firefox from it (about-startup-host unpack removes it).");
  const why = "the packed image is of build 1, the install is now build 2 (an update): starting the plain install; `about-startup-host pack` renews the image";
  assert.equal(byId(lines({ ...OFF, packed: { ...packed, current: false, not_used: why } })).packed, `Packed: a 101.2 MB image (zstd) of the install's 308.0 MB, not used: ${why}.`);
});
