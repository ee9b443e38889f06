import { test } from "node:test";
import assert from "node:assert/strict";
import { HostConnection } from "../../../../extension/lib/transport/host-connection.js";
import { HostRelay, RelayClient } from "../../../../extension/lib/transport/host-relay.js";
import { fakeHostConnection, fakePort } from "../../fakes.js";

const tick = () => new Promise((resolve) => setImmediate(resolve));

const connection = () => fakeHostConnection(HostConnection);

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

test("relay: a request without an onEvent listener gets its reply but no events across the port", async () => {
  const { host, ui } = relaySetup();
  const popup = ui();
  popup.client.start();
  const { bgEnd } = popup.pairs.at(-1);
  const sent = [];
  const post = bgEnd.postMessage;
  bgEnd.postMessage = (m) => {
    if (m.rid !== undefined) {
      sent.push(m.type); // what answers a request (not the host status broadcasts)
    }
    post(m);
  };
  const totals = popup.client.request("residency", { files: null, summary_only: true });
  await tick();
  const native = host.last();
  assert.deepEqual(native.posted, [{ id: 1, command: "residency", files: null, summary_only: true }]);
  // An older host ignores summary_only and streams the page maps anyway: the relay keeps them.
  native.reply({ id: 1, status: "event", event: "file", data: { path: "/ff/libxul.so", resident_ranges: [[0, 9]] } });
  native.reply({ id: 1, status: "ok", data: { groups: { install: { files: 1 } } } });
  assert.deepEqual(await totals, { groups: { install: { files: 1 } } });
  assert.deepEqual(sent, ["started", "reply"]);
  // The same port still gets the events of a request that listens for them.
  const events = [];
  const full = popup.client.request("residency", {}, { onEvent: (event) => events.push(event) });
  await tick();
  native.reply({ id: 2, status: "event", event: "file", data: { path: "/ff/omni.ja" } });
  native.reply({ id: 2, status: "ok", data: {} });
  await full;
  assert.deepEqual(events, ["file"]);
  assert.deepEqual(sent.slice(2), ["started", "event", "reply"]);
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
  const seen = [];
  page.client.onOperation((op, ops) => seen.push([op.state, op.progress?.bytes_done ?? null, ops.length]));
  page.client.start();
  await tick();
  assert.deepEqual(seen, [["running", 50, 1]], "the new UI is told of the running preload and its progress");
  native.reply({ id: 1, status: "event", event: "progress", data: { bytes_done: 100, bytes_total: 100 } });
  native.reply({ id: 1, status: "ok", data: { files: 3, bytes: 100 } });
  await tick();
  assert.deepEqual(seen.slice(1), [
    ["running", 100, 1],
    ["ok", 100, 1],
  ]);
});

test("relay: a UI opened after the preload finished sees its result", async () => {
  const { host, ui } = relaySetup();
  const first = ui();
  const preload = first.client.request("preload");
  await tick();
  host.last().reply({ id: 1, status: "ok", data: { bytes: 7 } });
  await preload;
  const second = ui();
  const told = [];
  second.client.onOperation((op) => told.push(op));
  const hostHeard = [];
  second.client.onHost(() => hostHeard.push(told.length));
  second.client.start();
  await tick();
  assert.equal(told.length, 1);
  assert.equal(told[0].state, "ok");
  assert.deepEqual(told[0].result, { bytes: 7 });
  assert.deepEqual(hostHeard, [1], "operations from the welcome come before the host status");
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
  host.last().reply({ id: 2, status: "ok", data: { ok: 1 } });
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

test("relay: the last finished operation of each command is kept, older ones are not reported", async () => {
  const { host, ui } = relaySetup();
  const page = ui();
  for (const [id, command] of [
    [1, "preload"],
    [2, "evict"],
    [3, "preload"],
  ]) {
    const done = page.client.request(command);
    await tick();
    host.last().reply({ id, status: "ok", data: { n: id } });
    await done;
  }
  const late = ui();
  const told = [];
  late.client.onOperation((op) => told.push([op.command, op.id]));
  late.client.start();
  await tick();
  assert.deepEqual(told, [
    ["preload", 3],
    ["evict", 2],
  ]);
});
