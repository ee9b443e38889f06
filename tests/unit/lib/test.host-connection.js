import { test } from "node:test";
import assert from "node:assert/strict";
import { HostConnection, HostRelay, RelayClient } from "../../../extension/lib/host-connection.js";
import { fakePort } from "../fakes.js";

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A HostConnection over fake native ports; `ports` lists every port it opened. */
function connection() {
  const ports = [];
  const conn = new HostConnection(() => {
    const port = fakePort(`native-${ports.length + 1}`);
    ports.push(port);
    return port;
  });
  return { conn, ports, last: () => ports.at(-1) };
}

test("connects lazily, on the first request, and uses one port for many requests", async () => {
  const { conn, ports } = connection();
  assert.equal(ports.length, 0);
  assert.equal(conn.status.state, "idle");
  const hello = conn.request("hello");
  const firefox = conn.request("firefox");
  assert.equal(ports.length, 1);
  assert.equal(conn.status.state, "connecting");
  assert.deepEqual(ports[0].posted, [
    { id: 1, command: "hello" },
    { id: 2, command: "firefox" },
  ]);
  ports[0].reply({ id: 2, status: "ok", data: { pid: 1 } });
  ports[0].reply({ id: 1, status: "ok", data: { host_version: "0.1.0" } });
  assert.deepEqual(await hello, { host_version: "0.1.0" });
  assert.deepEqual(await firefox, { pid: 1 });
  assert.equal(conn.status.state, "connected");
});

test("a crash rejects every pending request with host_disconnected; the next request reconnects", async () => {
  const { conn, ports } = connection();
  const statuses = [];
  conn.onStatus((s) => statuses.push(s.state));
  const preload = conn.request("preload", { files: null });
  const residency = conn.request("residency");
  ports[0].drop(null);
  for (const pending of [preload, residency]) {
    await assert.rejects(pending, (error) => {
      assert.equal(error.code, "host_disconnected");
      assert.equal(error.message, "the host closed the connection");
      return true;
    });
  }
  assert.equal(conn.status.state, "disconnected");
  assert.equal(conn.busy, false);
  const hello = conn.request("hello");
  assert.equal(ports.length, 2, "a fresh port for the next action");
  assert.deepEqual(ports[1].posted, [{ id: 1, command: "hello" }]);
  ports[1].reply({ id: 1, status: "ok", data: {} });
  await hello;
  assert.deepEqual(statuses, ["connecting", "disconnected", "connecting", "connected"]);
});

test("a missing host: host_missing, status missing; a later request tries again", async () => {
  const { conn, ports } = connection();
  const hello = conn.request("hello");
  ports[0].drop({ message: "No such native application about_startup" });
  await assert.rejects(hello, { code: "host_missing" });
  assert.deepEqual(conn.status, { state: "missing", message: "No such native application about_startup" });
  conn.request("hello").catch(() => {});
  assert.equal(ports.length, 2);
});

test("connectNative throwing counts as a missing host, not an exception", async () => {
  const conn = new HostConnection(() => {
    throw new Error("No such native application about_startup");
  });
  await assert.rejects(conn.request("hello"), { code: "host_missing" });
  assert.equal(conn.status.state, "missing");
});

test("events are routed to their own request by id", async () => {
  const { conn, ports } = connection();
  const a = [];
  const b = [];
  const first = conn.request("residency", {}, { onEvent: (event, data) => a.push([event, data.n]) });
  const second = conn.request("preload", {}, { onEvent: (event, data) => b.push([event, data.n]) });
  ports[0].reply({ id: 2, status: "event", event: "progress", data: { n: 1 } });
  ports[0].reply({ id: 1, status: "event", event: "file", data: { n: 2 } });
  ports[0].reply({ id: 2, status: "event", event: "progress", data: { n: 3 } });
  ports[0].reply({ id: 1, status: "ok", data: {} });
  ports[0].reply({ id: 2, status: "ok", data: {} });
  await Promise.all([first, second]);
  assert.deepEqual(a, [["file", 2]]);
  assert.deepEqual(b, [
    ["progress", 1],
    ["progress", 3],
  ]);
});

test("cancel sends the host's cancel with the request's id; the request ends cancelled", async () => {
  const { conn, ports } = connection();
  const { id, promise, cancel } = conn.send("preload");
  const cancelled = cancel();
  assert.deepEqual(ports[0].posted[1], { id: 2, command: "cancel", target: id });
  ports[0].reply({ id: 2, status: "ok", data: { target: id } });
  ports[0].reply({ id, status: "error", code: "cancelled", message: "preload 1 was cancelled", params: {} });
  assert.deepEqual(await cancelled, { target: 1 });
  await assert.rejects(promise, { code: "cancelled" });
  assert.equal(conn.status.state, "connected", "a host error is still an answer");
});

test("cancel after the host went away does not reach a new host", async () => {
  const { conn, ports } = connection();
  const { promise, cancel } = conn.send("preload");
  ports[0].drop(null);
  await assert.rejects(promise);
  await assert.rejects(cancel(), { code: "unknown_request" });
  assert.equal(ports.length, 1);
});

test("close() ends the port; status idle; the next request reconnects", async () => {
  const { conn, ports } = connection();
  conn.request("hello").catch(() => {});
  conn.close();
  assert.equal(ports[0].disconnected, true);
  assert.equal(conn.status.state, "idle");
  conn.request("hello").catch(() => {});
  assert.equal(ports.length, 2);
});

// ---- relay -------------------------------------------------------------------------------

function relaySetup({ idleCloseMs = 1000 } = {}) {
  const host = connection();
  const timers = [];
  let now = 1000;
  const relay = new HostRelay(host.conn, {
    idleCloseMs,
    setTimer: (fn, ms) => {
      const timer = { fn, ms, cleared: false };
      timers.push(timer);
      return timer;
    },
    clearTimer: (timer) => {
      timer.cleared = true;
    },
    now: () => now++,
  });
  const uis = [];
  /** A RelayClient whose runtime.connect is wired to the relay through a pair of fake ports. */
  const ui = () => {
    const pairs = [];
    const client = new RelayClient(() => {
      const uiEnd = fakePort("ui");
      const bgEnd = fakePort("bg");
      // what the UI posts reaches the background end's listeners, and the other way round,
      // asynchronously as in Firefox
      uiEnd.postMessage = (m) => {
        if (uiEnd.disconnected) throw new Error("Attempt to postMessage on disconnected port");
        const copy = structuredClone(m);
        queueMicrotask(() => !bgEnd.disconnected && bgEnd.reply(copy));
      };
      bgEnd.postMessage = (m) => {
        if (bgEnd.disconnected) throw new Error("Attempt to postMessage on disconnected port");
        const copy = structuredClone(m);
        queueMicrotask(() => !uiEnd.disconnected && uiEnd.reply(copy));
      };
      const close = () => {
        uiEnd.disconnected = true;
        bgEnd.drop();
      };
      uiEnd.disconnect = close;
      pairs.push({ uiEnd, bgEnd, close });
      relay.attach(bgEnd);
      return uiEnd;
    });
    const entry = { client, pairs, close: () => pairs.at(-1).close() };
    uis.push(entry);
    return entry;
  };
  const pendingTimers = () => timers.filter((t) => !t.cleared && !t.fired);
  const fire = () => {
    for (const t of pendingTimers()) {
      t.fired = true;
      t.fn();
    }
  };
  return { host, relay, ui, pendingTimers, fire };
}

test("relay: a UI request reaches the host and its events and reply come back to that UI", async () => {
  const { host, ui } = relaySetup();
  const page = ui();
  const events = [];
  let opId = null;
  const residency = page.client.request(
    "residency",
    { mapped: true },
    { onEvent: (event, data) => events.push([event, data.path]), onStarted: (op) => (opId = op) },
  );
  await tick();
  const native = host.last();
  assert.deepEqual(native.posted, [{ id: 1, command: "residency", mapped: true }]);
  native.reply({ id: 1, status: "event", event: "file", data: { path: "/ff/libxul.so" } });
  native.reply({ id: 1, status: "ok", data: { page_size: 4096 } });
  assert.deepEqual(await residency, { page_size: 4096 });
  assert.deepEqual(events, [["file", "/ff/libxul.so"]]);
  assert.equal(typeof opId, "number");
});

test("relay: a preload outlives the popup that started it, and a UI opened later sees its progress", async () => {
  const { host, ui } = relaySetup();
  const popup = ui();
  const preload = popup.client.request("preload", { files: null });
  preload.catch(() => {});
  await tick();
  const native = host.last();
  native.reply({ id: 1, status: "event", event: "progress", data: { bytes_done: 10, bytes_total: 100 } });
  await tick();
  popup.close(); // the popup closes; the preload goes on
  native.reply({ id: 1, status: "event", event: "progress", data: { bytes_done: 50, bytes_total: 100 } });
  const page = ui();
  page.client.start();
  await tick();
  const running = page.client.operations;
  assert.equal(running.length, 1);
  assert.equal(running[0].command, "preload");
  assert.equal(running[0].state, "running");
  assert.equal(running[0].progress.bytes_done, 50);
  const seen = [];
  page.client.onOperation((op) => seen.push([op.state, op.progress?.bytes_done ?? null]));
  native.reply({ id: 1, status: "event", event: "progress", data: { bytes_done: 100, bytes_total: 100 } });
  native.reply({ id: 1, status: "ok", data: { files: 3, bytes: 100 } });
  await tick();
  assert.deepEqual(seen, [
    ["running", 100],
    ["ok", 100],
  ]);
  assert.deepEqual(page.client.operations.at(-1).result, { files: 3, bytes: 100 });
});

test("relay: a UI opened after the preload finished sees its result", async () => {
  const { host, ui } = relaySetup();
  const first = ui();
  const preload = first.client.request("preload");
  await tick();
  host.last().reply({ id: 1, status: "ok", data: { bytes: 7 } });
  await preload;
  const second = ui();
  second.client.start();
  await tick();
  assert.equal(second.client.operations.length, 1);
  assert.equal(second.client.operations[0].state, "ok");
  assert.deepEqual(second.client.operations[0].result, { bytes: 7 });
});

test("relay: any UI can cancel a running operation by its op id", async () => {
  const { host, ui } = relaySetup();
  const popup = ui();
  let op = null;
  const preload = popup.client.request("preload", {}, { onStarted: (id) => (op = id) });
  await tick();
  const page = ui();
  const cancelled = page.client.cancel(op);
  await tick();
  const native = host.last();
  assert.deepEqual(native.posted.at(-1), { id: 2, command: "cancel", target: 1 });
  native.reply({ id: 2, status: "ok", data: { target: 1 } });
  native.reply({ id: 1, status: "error", code: "cancelled", message: "preload 1 was cancelled", params: {} });
  assert.deepEqual(await cancelled, { target: 1 });
  await assert.rejects(preload, { code: "cancelled" });
  await assert.rejects(page.client.cancel(op), { code: "unknown_request" });
});

test("relay: a host crash mid-preload reaches the UI as host_disconnected; the next request reconnects", async () => {
  const { host, ui } = relaySetup();
  const page = ui();
  const hosts = [];
  page.client.onHost((h) => hosts.push(h.state));
  const preload = page.client.request("preload");
  await tick();
  host.last().drop(null);
  await assert.rejects(preload, (error) => error.code === "host_disconnected" && /closed the connection/.test(error.message));
  assert.equal(page.client.host.state, "disconnected");
  const refresh = page.client.request("residency");
  await tick();
  assert.equal(host.ports.length, 2);
  host.last().reply({ id: 1, status: "ok", data: { ok: 1 } });
  assert.deepEqual(await refresh, { ok: 1 });
  await tick();
  assert.equal(page.client.host.state, "connected");
  assert.deepEqual(hosts, ["idle", "connecting", "disconnected", "connecting", "connected"]);
});

test("relay: the host port closes when no UI is open and nothing runs, so the background may idle", async () => {
  const { host, ui, pendingTimers, fire } = relaySetup();
  const popup = ui();
  popup.client.request("preload").catch(() => {}); // the popup closes: its promise rejects
  await tick();
  popup.close();
  assert.equal(pendingTimers().length, 0, "a running preload keeps the port");
  host.last().reply({ id: 1, status: "ok", data: {} });
  await tick();
  assert.equal(pendingTimers().length, 1);
  fire();
  assert.equal(host.last().disconnected, true);
  assert.equal(host.conn.status.state, "idle");
});

test("relay: a UI connecting cancels the pending idle close", async () => {
  const { host, ui, pendingTimers } = relaySetup();
  const popup = ui();
  const hello = popup.client.request("hello");
  await tick();
  host.last().reply({ id: 1, status: "ok", data: {} });
  await hello;
  popup.close();
  assert.equal(pendingTimers().length, 1);
  ui().client.start();
  assert.equal(pendingTimers().length, 0);
});

test("relay client: pending requests reject when the background goes away; the next request reconnects", async () => {
  const { ui } = relaySetup();
  const page = ui();
  const pending = page.client.request("residency");
  page.pairs.at(-1).bgEnd.disconnected = true;
  page.pairs.at(-1).uiEnd.drop();
  await assert.rejects(pending, (error) => error.code === "host_disconnected" && error.params.kind === "relay");
  page.client.request("hello").catch(() => {});
  assert.equal(page.pairs.length, 2);
});

test("relay: background code can use the connection too, and its preload is broadcast", async () => {
  const { host, relay, ui } = relaySetup();
  const page = ui();
  page.client.start();
  await tick();
  const seen = [];
  page.client.onOperation((op) => seen.push(op.state));
  const result = relay.request("preload");
  host.last().reply({ id: 1, status: "ok", data: { bytes: 1 } });
  assert.deepEqual(await result, { bytes: 1 });
  await tick();
  assert.deepEqual(seen, ["running", "ok"]);
});
