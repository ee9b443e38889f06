// "Restart cold and trace" from the page, as an ordinary user, for real: the Debian package
// installed (the root-owned host the polkit action names, the system manifest), a system D-Bus
// and polkitd started by the test (no systemd here), and pkexec deciding. With a polkit rule that
// lets the test user through without a password the restarted start is traced by root and stored
// in the user's state folder, owned by the user, while Firefox runs as the user; without the rule
// pkexec refuses (no agent can ask for a password), Firefox is restarted cold all the same, and
// the page says why and shows the command.
//
// Needs root (dpkg, the bus, polkitd, tracefs), pkexec, polkitd and dbus-daemon (.ci/run
// installs them), and a machine where the package is not installed: otherwise skipped with the
// reason printed.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { buildExtension } from "../../scripts/build.mjs";
import { buildPackage, PACKAGE } from "../../scripts/package.mjs";
import { startFirefox, waitFor } from "./harness.js";
import { stopPackagedHosts } from "./package-cleanup.js";
import { attachToRestarted, readRestart, restartScreenshot, waitForRecord, waitForRestoredPage } from "./restart-helpers.js";

const USER = 65534;
const POLKITD = "/usr/lib/polkit-1/polkitd";
const BUS_SOCKET = "/run/dbus/system_bus_socket";
const RULE = "/etc/polkit-1/rules.d/49-about-startup-e2e.rules";
const ACTION_ID = "dev.startup-lab.about-startup.trace";
const PREFS = { "xpinstall.signatures.required": false };

const has = (cmd, args = ["--version"]) => spawnSync(cmd, args).status === 0;
const isInstalled = () => /install ok installed/.test(spawnSync("dpkg-query", ["-W", "-f=${Status}", PACKAGE], { encoding: "utf8" }).stdout ?? "");
const skip =
  process.getuid?.() !== 0
    ? "needs root: it installs the package, starts a system bus and polkitd, and traces"
    : !fs.existsSync("/usr/bin/pkexec") || !fs.existsSync(POLKITD) || !has("dbus-daemon")
      ? "needs pkexec, polkitd and dbus-daemon (apt-get install pkexec polkitd dbus-daemon)"
      : !has("dpkg-deb")
        ? "dpkg-deb is missing (not a Debian-based system)"
        : isInstalled()
          ? `${PACKAGE} is installed on this machine already; the test would remove it`
          : false;
if (skip) {
  console.warn(`SKIPPED test.restart-trace.js: ${skip}`);
}

describe("Restart cold and trace: pkexec with a polkit rule traces as root for the user; refused without it", { skip }, () => {
  const stage = { tmp: null, bus: null, polkitd: null, ownBus: false, profile: null, ff: null, attached: [] };

  before(async () => {
    stage.tmp = await fsp.mkdtemp(path.join(os.tmpdir(), "about-startup-trace-e2e-"));
    const xpis = await buildExtension({ distDir: path.join(stage.tmp, "dist") });
    const deb = await buildPackage({ xpis: { full: xpis.full.xpi, basic: xpis.basic.xpi }, distDir: stage.tmp });
    assert.equal(spawnSync("dpkg", ["-i", deb], { stdio: "ignore" }).status, 0, "dpkg -i");
    if (!fs.existsSync(BUS_SOCKET)) {
      fs.mkdirSync("/run/dbus", { recursive: true });
      stage.bus = spawn("dbus-daemon", ["--system", "--nofork", "--nopidfile"], { stdio: "ignore" });
      stage.ownBus = true;
      await waitFor(() => fs.existsSync(BUS_SOCKET), { timeout: 10000, message: "the system bus" });
    }
    stage.polkitd = spawn(POLKITD, ["--no-debug"], { stdio: "ignore" });
    await sleep(1500);
    stage.profile = await fsp.mkdtemp(path.join(os.tmpdir(), "about-startup-trace-profile-"));
  });

  after(async () => {
    for (const a of stage.attached) {
      await a.driver.quit().catch(() => {});
      await a.stop();
    }
    await stage.ff?.stop();
    // Root's side of a traced restart (through pkexec, root's environment) is not the harness's.
    const left = await stopPackagedHosts();
    if (left.length > 0) {
      console.warn(`test.restart-trace.js: ended the packaged host's processes left running: ${JSON.stringify(left)}`);
    }
    fs.rmSync(RULE, { force: true });
    stage.polkitd?.kill("SIGTERM");
    if (stage.ownBus) {
      stage.bus?.kill("SIGTERM");
      await sleep(200);
      fs.rmSync(BUS_SOCKET, { force: true });
    }
    spawnSync("dpkg", ["--purge", PACKAGE], { stdio: "ignore" });
    for (const dir of [stage.tmp, stage.profile].filter(Boolean)) {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });

  it("with the rule: the start is traced, the trace stored for the user as the user, Firefox runs as the user", { timeout: 240000 }, async () => {
    fs.writeFileSync(
      RULE,
      `polkit.addRule(function (action, subject) {\n  if (action.id == "${ACTION_ID}" && subject.user == "nobody") { return polkit.Result.YES; }\n});\n`,
    );
    await sleep(1500); // polkitd reloads rules on change
    // The packaged host through the system manifest (no per-user install), as the package gives
    // it to every user. XDG_STATE_HOME names the throwaway home's state folder for root too: root
    // finds it in the environment of the user's own processes, as it would a real user's.
    stage.ff = await startFirefox({ profileDir: stage.profile, temporary: false, prefs: PREFS, user: USER, installHost: false, env: { XDG_STATE_HOME: "$HOME/.local/state" } });
    const ff = stage.ff;
    await ff.openExtensionPage("page/startup.html");
    const before = await waitFor(async () => {
      const p = await readRestart(ff.driver);
      return p.state === "ready" && p.current?.io ? p : null;
    }, { timeout: 60000, message: "the page with this start recorded" });
    assert.equal(before.traceButtonShown, true, JSON.stringify(before));
    assert.equal(before.traceOffer, "restartTraceNoAgent", "no desktop session here: the page warns and shows the command");
    assert.equal(before.traceCommand, "sudo about-startup-host launch --cold --trace");
    await restartScreenshot(ff.driver, "restart-trace-before");

    const startedAt = Date.now();
    await ff.driver.findElement({ css: "[data-testid=restart-trace]" }).click();
    const status = await waitForRecord(ff.home, startedAt, { timeout: 180000 });
    const restartMs = Date.now() - startedAt;
    assert.equal(status.stage, "started", JSON.stringify(status));
    assert.equal(status.trace, true);
    assert.equal(status.error, null, JSON.stringify(status.error));
    assert.ok(status.trace_id, "a stored trace");
    assert.ok(status.evicted.files > 10);
    assert.equal(fs.statSync(`/proc/${status.new_pid}`).uid, USER, "Firefox runs as the user, not root");
    const traces = path.join(ff.home, ".local", "state", "about-startup", "traces");
    const stored = fs.readdirSync(traces).filter((f) => f.startsWith(status.trace_id));
    assert.ok(stored.length > 0, `${status.trace_id} in ${fs.readdirSync(traces)}`);
    for (const f of stored) {
      assert.equal(fs.statSync(path.join(traces, f)).uid, USER, `${f} belongs to the user`);
    }
    assert.ok(!fs.existsSync(path.join(ff.home, ".local", "state", "about-startup", "relaunch-request.json")), "the request is used once");

    const attached = await attachToRestarted(stage.profile, startedAt);
    stage.attached.push(attached);
    const page = await waitForRestoredPage(attached.driver, (p) => p.lastThisStart && p.traceState === "ready", "the restored page with this start's trace");
    assert.ok(page.lines.some((l) => l.line === "this" && /traced cold restart/.test(l.text)), JSON.stringify(page.lines));
    await restartScreenshot(attached.driver, "restart-trace-after");
    console.log(`restart cold and trace: click to record ${restartMs} ms (quit ${status.waited_ms} ms)`);
  });

  it("without the rule: pkexec refuses, Firefox is restarted cold untraced, and the page says why with the command", { timeout: 240000 }, async () => {
    fs.rmSync(RULE, { force: true });
    await sleep(1500);
    const driver = stage.attached.at(-1).driver;
    const startedAt = Date.now();
    await driver.findElement({ css: "[data-testid=restart-trace]" }).click();
    const status = await waitForRecord(stage.ff.home, startedAt, { timeout: 180000 });
    assert.equal(status.stage, "started", "Firefox comes back all the same");
    assert.equal(status.trace, true);
    assert.equal(status.trace_id, undefined);
    assert.equal(status.error?.code, "trace_failed", JSON.stringify(status.error));
    assert.ok(["no_agent", "not_authorized"].includes(status.error.params.reason), status.error.params.reason);
    assert.ok(status.evicted.files > 10, "cold all the same");
    assert.equal(fs.statSync(`/proc/${status.new_pid}`).uid, USER);

    const attached = await attachToRestarted(stage.profile, startedAt);
    stage.attached.push(attached);
    const page = await waitForRestoredPage(attached.driver, (p) => p.lastThisStart && p.lines.some((l) => l.line === "error"), "the restored page saying why there is no trace");
    const error = page.lines.find((l) => l.line === "error");
    assert.match(error.text, /The trace was not recorded/);
    assert.ok(page.lines.some((l) => l.line === "this" && /the cold restart you asked for/.test(l.text)), "not called traced");
    assert.match(error.text, /sudo about-startup-host launch --cold --trace/);
    await restartScreenshot(attached.driver, "restart-trace-refused");
  });
});
