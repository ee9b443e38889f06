import { test } from "node:test";
import assert from "node:assert/strict";
import { desktopErrorView, desktopLines, desktopView, planIsStale } from "../../../../extension/lib/models/desktop.js";
import { HostError, HOST_MISSING } from "../../../../extension/lib/transport/host-client.js";
import { englishMessage } from "../../fakes.js";

const t = englishMessage;
const when = (ms) => `T${ms}`;

// A `desktop` reply as the host sends it (docs/PROTOCOL.md; native-host/tests/desktop.rs).
const OFF = {
  enabled: false,
  outdated: false,
  entry: "/home/me/.local/share/applications/firefox-esr.desktop",
  system_entry: "/usr/share/applications/firefox-esr.desktop",
  firefox: "/usr/lib/firefox-esr/firefox-esr",
  host: "/home/me/.local/bin/about-startup-host",
  problem: null,
  prefetch: { source: "trace", build_id: "20261103151912", traces: 3, fallback: null, learned_stale: false },
  last: null,
};
const LAST = {
  at_ms: 5000,
  firefox_pid: 42,
  plan: { source: "trace", build_id: "20261103151912", traces: 3, fallback: null, learned_stale: false },
  bytes_planned: 131605877,
  plan_ms: 6,
  bytes_read: 121000000,
  bytes_cached: 10605877,
  batches: 6,
  batches_done: 6,
  elapsed_ms: 4100,
  ended: "done",
  files_exact: 0,
  files_probed: 22,
  errors: [],
};

const lines = (status) => desktopLines(desktopView(status), t, { when, locale: "en-US" });
const byId = (ls) => Object.fromEntries(ls.map((l) => [l.id, l.text]));

test("off, with the traced plan a launch would read", () => {
  const view = desktopView(OFF);
  assert.equal(view.state, "off");
  assert.equal(planIsStale(view), false);
  const got = byId(lines(OFF));
  assert.match(got.state, /^Off: the desktop launches Firefox through its own entry, \/usr\/share\/applications\/firefox-esr\.desktop\.$/);
  assert.match(got.plan, /traced plan of build 20261103151912 \(from 3 traced starts\)/);
  assert.equal(got.last, undefined);
});

test("on, with the last launch's prefetch", () => {
  const got = byId(lines({ ...OFF, enabled: true, last: LAST }));
  assert.match(got.state, /^On: \/home\/me\/\.local\/share\/applications\/firefox-esr\.desktop launches Firefox through the prefetch/);
  assert.match(got.last, /^Last launch \(T5000\): read 121\.0 MB beside the start, found 10\.6 MB cached already, in 4\.1s\.$/);
  // Read first, on a disk with an 8 MiB readahead window (the host's record says which and why).
  const first = byId(lines({ ...OFF, enabled: true, last: { ...LAST, strategy: "first", read_ahead_kb: 8192 } }));
  assert.match(first.last, /^Last launch \(T5000\): read 121\.0 MB before starting Firefox, found 10\.6 MB cached already, in 4\.1s\. This disk reads 8\.4 MB around every page/);
  assert.equal(desktopView({ ...OFF, enabled: true, outdated: true }).state, "outdated");
  assert.match(byId(lines({ ...OFF, enabled: true, outdated: true })).outdated, /moved since it was written/);
});

test("a Firefox update makes the traced plan stale: the page says so and what the launch reads instead", () => {
  const stale = { ...OFF, prefetch: { source: "learned", build_id: "20261201120000", traces: 0, fallback: { code: "other_build", traced_build: "20261103151912" }, learned_stale: false } };
  const view = desktopView(stale);
  assert.equal(planIsStale(view), true);
  const got = byId(lines(stale));
  assert.match(got.stale, /traced on Firefox build 20261103151912, and this is build 20261201120000 \(Firefox was updated\)/);
  assert.match(got.plan, /learned plan beside Firefox, in disk order/);
  // the command to record a trace of this build is the host's, by the path that runs it here
  const record = "sudo /home/me/about-startup/native-host/target/release/about-startup-host launch --cold --trace";
  const named = byId(desktopLines(view, englishMessage, { recordCommand: record }));
  assert.ok(named.stale.includes(`(${record})`), named.stale);
  assert.ok(named.plan.includes(`record one with ${record})`), named.plan);
  const nothing = { ...stale, prefetch: { ...stale.prefetch, source: null, learned_stale: true } };
  assert.equal(planIsStale(desktopView(nothing)), true);
  assert.match(byId(lines(nothing)).plan, /older build of Firefox/);
});

test("why it cannot be turned on, by the host's code; an unknown code keeps the host's words", () => {
  const replaceable = { ...OFF, problem: { code: "host_replaceable", message: "…" } };
  assert.equal(desktopView(replaceable).state, "unavailable");
  assert.match(byId(lines(replaceable)).problem, /another user could replace the host binary/);
  const foreign = byId(lines({ ...OFF, problem: { code: "foreign_entry", message: "…" } }));
  assert.match(foreign.problem, /firefox-esr\.desktop exists and was not written by about:startup/);
  assert.match(byId(lines({ ...OFF, problem: { code: "new_reason", message: "the host's words" } })).problem, /Not available: the host's words/);
});

test("errors: no host, an old host, a refused enable, anything else", () => {
  assert.equal(desktopErrorView(new HostError({ code: HOST_MISSING, message: "x" }), t).state, "missing");
  assert.equal(desktopErrorView(new HostError({ code: "unknown_command", message: "x" }), t).state, "old");
  const refused = desktopErrorView(new HostError({ code: "desktop_refused", message: "…", params: { reason: "no_system_entry", detail: "…" } }), t);
  assert.deepEqual(refused.state, "refused");
  assert.match(refused.text, /no desktop entry of the system starts this Firefox/);
  assert.match(desktopErrorView(new HostError({ code: "io_error", message: "disk on fire", params: { detail: "disk on fire" } }), t).text, /Could not ask the host: disk on fire/);
});
