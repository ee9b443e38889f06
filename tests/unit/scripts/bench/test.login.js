import { test } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { autostartCommand, installedAutostart, parseExec, prepareLogin } from "../../../../scripts/bench/login.mjs";

test("parseExec reads the host's own quoting: the binary in double quotes, plain words after", () => {
  assert.deepEqual(parseExec('"/opt/a b/about-startup-host" preload --plan --idle'), ["/opt/a b/about-startup-host", "preload", "--plan", "--idle"]);
  assert.deepEqual(parseExec('"/usr/bin/h"'), ["/usr/bin/h"]);
  for (const bad of ["/usr/bin/h preload", '"/usr/bin/h" preload; rm -rf ~', '"/a/$HOME/h" preload', '"/a/h" "quoted arg"']) {
    assert.throws(() => parseExec(bad), /cannot read the autostart command/, bad);
  }
});

test("autostartCommand takes ExecStart= of a unit and Exec= of a desktop entry", () => {
  const unit = '[Unit]\nDescription=x\n\n[Service]\nType=oneshot\nExecStart="/h" preload --plan --idle\nNice=19\n';
  const desktop = '[Desktop Entry]\nType=Application\nExec="/h" preload --plan --idle\nTerminal=false\n';
  assert.deepEqual(autostartCommand(unit), ["/h", "preload", "--plan", "--idle"]);
  assert.deepEqual(autostartCommand(desktop), ["/h", "preload", "--plan", "--idle"]);
  assert.throws(() => autostartCommand("[Desktop Entry]\nType=Application\n"), /no Exec= or ExecStart=/);
});

test("installedAutostart runs `autostart enable` without a session bus and reads back the file it wrote", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "login-test-"));
  try {
    const file = path.join(dir, "autostart", "about-startup-preload.desktop");
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, '[Desktop Entry]\nExec="/bin/h" preload --plan --idle\n');
    const calls = [];
    const exec = (cmd, args, options) => {
      calls.push({ cmd, args, env: options.env });
      return { status: 0, stdout: JSON.stringify({ kind: "xdg", file }), stderr: "" };
    };
    process.env.DBUS_SESSION_BUS_ADDRESS ??= "unix:path=/nonexistent";
    const got = installedAutostart({ hostBinary: "/bin/h", configHome: dir, stateHome: "/state", exec });
    assert.deepEqual(got, { file, argv: ["/bin/h", "preload", "--plan", "--idle"] });
    assert.deepEqual(calls[0].args, ["autostart", "enable", "--json"]);
    assert.equal(calls[0].env.XDG_CONFIG_HOME, dir);
    assert.equal(calls[0].env.XDG_STATE_HOME, "/state");
    assert.equal(calls[0].env.DBUS_SESSION_BUS_ADDRESS, undefined);
    const elsewhere = () => ({ status: 0, stdout: JSON.stringify({ file: "/home/me/.config/autostart/x.desktop" }), stderr: "" });
    assert.throws(() => installedAutostart({ hostBinary: "/bin/h", configHome: dir, stateHome: "/s", exec: elsewhere }), /outside the benchmark's/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** A fake spawn: each child exits with the code given for its command, when `finish(cmd)` is called. */
function fakeSpawn(codes) {
  const children = new Map();
  const spawned = [];
  const spawnImpl = (cmd, args, options) => {
    const child = new EventEmitter();
    child.stderr = new EventEmitter();
    spawned.push({ cmd, args, options });
    children.set(cmd, child);
    return child;
  };
  const finish = (cmd) => children.get(cmd).emit("exit", codes[cmd] ?? 0, null);
  return { spawnImpl, spawned, finish };
}

test("login: preload and workload start together inside the throttle; the launch waits out the delay; settle gives the preload's time", async () => {
  const { spawnImpl, spawned, finish } = fakeSpawn({});
  let t = 0;
  const sleeps = [];
  const wrap = (argv) => ["cg", ...argv];
  const pending = prepareLogin("login", {
    autostartArgv: ["/h", "preload", "--plan", "--idle"],
    files: ["/w/1", "/w/2"],
    delayMs: 30000,
    wrap,
    env: { XDG_STATE_HOME: "/s" },
    spawnImpl,
    now: () => t,
    sleep: async (ms) => sleeps.push(ms),
  });
  assert.deepEqual(
    spawned.map((s) => [s.cmd, ...s.args]),
    [
      ["cg", "/h", "preload", "--plan", "--idle"],
      ["cg", "cat", "/w/1", "/w/2"],
    ],
  );
  assert.equal(spawned[0].options.env.XDG_STATE_HOME, "/s");
  t = 6000;
  finish("cg"); // both children were spawned through "cg": the latest is the workload
  const prep = await pending;
  assert.equal(prep.workloadMs, 6000);
  assert.deepEqual(sleeps, [24000]);
  assert.equal(prep.loginPreloadDone, false, "the preload was still running at launch");
  assert.equal(prep.loginDelayMs, 30000);
});

test("login-no-preload runs the workload alone, and a failing workload or preload is an error", async () => {
  const { spawnImpl, spawned, finish } = fakeSpawn({});
  let t = 0;
  const pending = prepareLogin("login-no-preload", { autostartArgv: null, files: ["/w/1"], delayMs: 1000, spawnImpl, now: () => t, sleep: async () => {} });
  assert.deepEqual(spawned.map((s) => s.cmd), ["cat"]);
  t = 2500;
  finish("cat");
  const prep = await pending;
  assert.equal(prep.workloadMs, 2500);
  assert.equal(prep.loginPreloadDone, null);
  assert.equal(await prep.settle, null);

  const failing = fakeSpawn({ cat: 1 });
  const bad = prepareLogin("login-no-preload", { files: ["/w/1"], delayMs: 0, spawnImpl: failing.spawnImpl, sleep: async () => {} });
  failing.finish("cat");
  await assert.rejects(bad, /login workload .* failed \(1\)/);

  await assert.rejects(prepareLogin("lukewarm", { files: [], delayMs: 0, spawnImpl }), /not a login scenario/);
});

test("login: a preload that fails is reported when the benchmark settles it, with its stderr", async () => {
  const children = [];
  const spawnImpl = (cmd) => {
    const child = new EventEmitter();
    child.stderr = new EventEmitter();
    children.push({ cmd, child });
    return child;
  };
  let t = 0;
  const pending = prepareLogin("login", { autostartArgv: ["/h", "preload"], files: ["/w"], delayMs: 0, spawnImpl, now: () => t, sleep: async () => {} });
  const [preload, workload] = children;
  preload.child.stderr.emit("data", "about-startup-host: error: no plan\n");
  t = 100;
  preload.child.emit("exit", 1, null);
  workload.child.emit("exit", 0, null);
  const prep = await pending;
  assert.equal(prep.loginPreloadDone, true);
  await assert.rejects(prep.settle, /\/h preload failed \(1\): about-startup-host: error: no plan/);
});
