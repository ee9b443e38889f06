import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { lastRestartLines, NO_HOST, OFFER, OLD_HOST, quitWay, restartOffer, TEMPORARY, temporaryCommands, traceOffer } from "../../../../extension/lib/models/restart.js";
import { hostCommands, shellWord } from "../../../../extension/lib/wording/commands.js";
import { englishMessage } from "../../fakes.js";
import { recordedReply } from "../../host-replies.js";

const fixture = (name) => JSON.parse(readFileSync(new URL(`../../../fixtures/${name}`, import.meta.url), "utf8"));
const started = fixture("relaunch-status-started.json");
const didNotQuit = fixture("relaunch-status-did-not-quit.json");
const evictPartlyFailed = fixture("relaunch-status-evict-partly-failed.json");
const launchFailed = fixture("relaunch-status-launch-failed.json");
const words = (lines) => lines.map((l) => englishMessage(l.key, l.subs));

test("restartOffer: a temporary install is never offered a restart, whatever the host", () => {
  assert.equal(restartOffer({ installType: "development", host: "connected" }), TEMPORARY);
  assert.equal(restartOffer({ installType: "normal", host: "connected" }), OFFER);
  assert.equal(restartOffer({ installType: "normal", host: "missing" }), NO_HOST);
  assert.equal(restartOffer({ installType: "normal", host: "connected", knowsRelaunch: false }), OLD_HOST);
  assert.equal(quitWay(true), "self");
  assert.equal(quitWay(false), "user");
});

test("lastRestartLines: the restart that made this start, what was evicted and what stayed", () => {
  const lines = lastRestartLines(started, { current: started.new_pid, formatBytes: (b) => `${b} B`, formatMs: (ms) => `${ms} ms`, when: () => "then" });
  assert.deepEqual(
    lines.map((l) => l.id),
    ["this", "waited", "evicted", "stayed", "stayed", "unmapped"],
  );
  const text = words(lines);
  assert.equal(text[0], "This start is the cold restart you asked for at then.");
  assert.equal(text[1], "Firefox took 816 ms to quit.");
  assert.match(text[2], /^Files of the install folder evicted: 2; dropped from the cache: 0 B/);
  assert.match(text[3], /^Still cached after the evict: \/tmp\/.*application\.ini \(4096 B\)/);
});

test("lastRestartLines: an earlier restart is not this start", () => {
  const lines = lastRestartLines(started, { current: 1 });
  assert.equal(lines[0].id, "earlier");
  assert.deepEqual(lines[0].subs.slice(1), [String(started.new_pid)]);
});

test("lastRestartLines: a Firefox that did not quit is a failure worded with its seconds and pids", () => {
  const lines = lastRestartLines(didNotQuit, { current: 5 });
  assert.deepEqual(lines.map((l) => l.id), ["failed", "error"]);
  assert.equal(words(lines)[1], `Firefox was still running after 1 s (processes ${didNotQuit.old_pid}): nothing was evicted or started.`);
  assert.deepEqual(lastRestartLines(null), []);
  assert.equal(lastRestartLines({ ...didNotQuit, error: { code: "new_code", message: "m", params: {} } })[1].key, "restartErrorOther");
});

test("lastRestartLines: an evict that partly failed names the files, and Firefox still started", () => {
  const lines = lastRestartLines(evictPartlyFailed, { current: evictPartlyFailed.new_pid, when: () => "then" });
  assert.deepEqual(lines.map((l) => l.id), ["this", "waited", "evicted", "hidden", "unmapped", "evict-failed"]);
  const text = words(lines);
  assert.equal(text[0], "This start is the cold restart you asked for at then.");
  assert.equal(text[2], "Files of the install folder evicted: 3.");
  assert.equal(text[5], `Files that could not be evicted: 1 (${evictPartlyFailed.evicted.failed_files[0]}).`);
});

test("lastRestartLines: a launch that failed says so with the host's reason, after what was evicted", () => {
  // The page that reads this is the next one the user opens: not a start of this restart.
  const lines = lastRestartLines(launchFailed, { current: 1 });
  assert.equal(lines[0].id, "failed");
  assert.equal(lines.at(-1).id, "error");
  assert.ok(lines.some((l) => l.id === "evict-failed"));
  assert.equal(
    words(lines).at(-1),
    `Firefox could not be started again: ${launchFailed.error.params.detail}`,
  );
  assert.match(words(lines).at(-1), /exited at once \(exit status: 1\); is another Firefox using the profile\?/);
});

test("traceOffer: offered only with the packaged host, pkexec and the action; a missing agent is a warning with the command", () => {
  // relaunch_status's trace_ready as the host sent it on this machine (recorded: pkexec there,
  // no package, so no polkit action and no system host; no desktop session, so no agent) ...
  const recorded = recordedReply("relaunch-status-set-aside").reply.data.trace_ready;
  assert.deepEqual(traceOffer(recorded), { can: false, key: "restartTraceNotInstalled", command: recorded.command, agentKey: null });
  // ... and with the package installed: its action and its host where the package puts them
  // (scripts/package.mjs PACKAGED_HOST).
  const ready = { ...recorded, action: true, system_host: "/usr/lib/about-startup/about-startup-host" };
  assert.deepEqual(traceOffer(ready), { can: true, key: null, command: recorded.command, agentKey: "restartTraceNoAgent" });
  assert.equal(traceOffer({ ...ready, agent: true }).agentKey, null);
  assert.equal(traceOffer({ ...ready, pkexec: false }).key, "restartTraceNoPkexec");
  assert.equal(traceOffer(null).can, false);
});

test("lastRestartLines: a refused trace is worded by its reason and carries the command", () => {
  const refused = {
    ...started,
    trace: true,
    error: { code: "trace_failed", message: "m", params: { reason: "no_agent", detail: "pkexec exited with exit status: 127", command: "sudo about-startup-host launch --cold --trace" } },
  };
  const error = lastRestartLines(refused, { current: started.new_pid }).find((l) => l.id === "error");
  assert.equal(error.key, "restartErrorTraceNoAgent");
  assert.equal(error.command, "sudo about-startup-host launch --cold --trace");
  assert.match(englishMessage(error.key, error.subs), /no polkit authentication agent could ask for the password \(pkexec exited with exit status: 127\)/);
  assert.equal(lastRestartLines({ ...refused, error: { ...refused.error, params: { reason: "new" } } }, {}).at(-1).key, "restartErrorTrace");
  // Issue 39 #3: a Firefox that failed is said to have failed, not "restarted cold without it".
  const detail = "Firefox (pid 4242) exited with exit status 1 312 ms after it was started, before its start was over";
  const failed = lastRestartLines({ ...refused, error: { ...refused.error, params: { ...refused.error.params, reason: "firefox_failed", detail } } }, {}).find((l) => l.id === "error");
  assert.equal(failed.key, "restartErrorTraceFirefoxFailed");
  assert.match(englishMessage(failed.key, failed.subs), /^Firefox failed to start: Firefox \(pid 4242\) exited with exit status 1 .*nothing was stored and no plan learns from it/);
});

// A host built from source, as a user sees it (recorded: not on PATH, named by its path).
const HELLO_USER = recordedReply("hello-user").reply.data;
const RECORD = `${HELLO_USER.cli.root_command} launch --cold --trace`;

test("the traced command is the one that runs here (trace_list's), not relaunch_status's bare name", () => {
  const ready = { pkexec: false, action: false, system_host: null, agent: false, command: "sudo about-startup-host launch --cold --trace" };
  assert.equal(traceOffer(ready, RECORD).command, RECORD);
  assert.match(RECORD, /^sudo \/.+\/about-startup-host launch --cold --trace$/);
  // an older host without trace_list's command: the relaunch reply's, else none (never made up here)
  assert.equal(traceOffer(ready).command, ready.command);
  assert.equal(traceOffer(null).command, null);
  const refused = { ...started, trace: true, error: { code: "trace_failed", message: "m", params: { reason: "no_agent", detail: "d", command: ready.command } } };
  assert.equal(lastRestartLines(refused, { recordCommand: RECORD }).find((l) => l.id === "error").command, RECORD);
});

test("a temporary install: relaunch (before the quit) and evict (after it) by the host's path, for this Firefox", () => {
  const commands = temporaryCommands({ commands: hostCommands(HELLO_USER), pid: 4242, installDir: shellWord("/opt/fire fox") });
  assert.deepEqual(commands, {
    relaunch: `${HELLO_USER.cli.command} relaunch --cold --pid 4242`,
    evict: `${HELLO_USER.cli.command} evict --firefox '/opt/fire fox'`,
  });
  // without the pid or the folder the host finds them itself
  assert.deepEqual(temporaryCommands({ commands: hostCommands(null) }), { relaunch: "about-startup-host relaunch --cold", evict: "about-startup-host evict" });
  // the words put the relaunch before the quit, the evict after it
  assert.match(englishMessage("restartTemporaryRelaunch"), /run this while this Firefox runs, then quit Firefox/);
  assert.match(englishMessage("restartTemporaryNpm"), /quit Firefox first .*, run this, and npm start again/);
  assert.doesNotMatch(englishMessage("restartTemporary"), /about-startup-host/, "no command of its own");
});

test("shellWord quotes a path as the host does", () => {
  assert.equal(shellWord("/usr/lib/firefox-esr"), "/usr/lib/firefox-esr");
  assert.equal(shellWord("/my dir/x"), "'/my dir/x'");
  assert.equal(shellWord("/it's"), "'/it'\\''s'");
});
