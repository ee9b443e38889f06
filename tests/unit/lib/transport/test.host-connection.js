import { test } from "node:test";
import assert from "node:assert/strict";
import { HostConnection } from "../../../../extension/lib/transport/host-connection.js";
import { fakeHostConnection } from "../../fakes.js";

const connection = () => fakeHostConnection(HostConnection);

test("connects lazily, on the first request, and uses one port for many requests", async () => {
  const { conn, ports, ask } = connection();
  assert.equal(ports.length, 0);
  assert.equal(conn.status.state, "idle");
  const hello = ask("hello");
  const firefox = ask("firefox");
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
  const { conn, ports, ask } = connection();
  const statuses = [];
  conn.onStatus((s) => statuses.push(s.state));
  const preload = ask("preload", { files: null });
  const residency = ask("residency");
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
  const hello = ask("hello");
  assert.equal(ports.length, 2, "a fresh port for the next action");
  assert.deepEqual(ports[1].posted, [{ id: 3, command: "hello" }], "ids go on across ports: an id names one request for good");
  ports[1].reply({ id: 3, status: "ok", data: {} });
  await hello;
  assert.deepEqual(statuses, ["connecting", "disconnected", "connecting", "connected"]);
});

test("a missing host: host_missing, status missing; a later request tries again", async () => {
  const { conn, ports, ask } = connection();
  const hello = ask("hello");
  ports[0].drop({ message: "No such native application about_startup" });
  await assert.rejects(hello, { code: "host_missing" });
  assert.deepEqual(conn.status, { state: "missing", message: "No such native application about_startup" });
  ask("hello").catch(() => {});
  assert.equal(ports.length, 2);
});

test("connectNative throwing counts as a missing host, not an exception", async () => {
  const conn = new HostConnection(() => {
    throw new Error("No such native application about_startup");
  });
  await assert.rejects(conn.send("hello").promise, { code: "host_missing" });
  assert.equal(conn.status.state, "missing");
});

test("events are routed to their own request by id", async () => {
  const { ports, ask } = connection();
  const a = [];
  const b = [];
  const first = ask("residency", {}, { onEvent: (event, data) => a.push([event, data.n]) });
  const second = ask("preload", {}, { onEvent: (event, data) => b.push([event, data.n]) });
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
  const { id, promise } = conn.send("preload");
  const cancelled = conn.cancel(id);
  assert.deepEqual(ports[0].posted[1], { id: 2, command: "cancel", target: id });
  ports[0].reply({ id: 2, status: "ok", data: { target: id } });
  ports[0].reply({ id, status: "error", code: "cancelled", message: "preload 1 was cancelled", params: {} });
  assert.deepEqual(await cancelled, { target: 1 });
  await assert.rejects(promise, { code: "cancelled" });
  assert.equal(conn.status.state, "connected", "a host error is still an answer");
});

test("cancel after the host went away does not reach a new host", async () => {
  const { conn, ports } = connection();
  const { id, promise } = conn.send("preload");
  ports[0].drop(null);
  await assert.rejects(promise);
  await assert.rejects(conn.cancel(id), { code: "unknown_request" });
  assert.equal(ports.length, 1);
});

test("close() ends the port; status idle; the next request reconnects", async () => {
  const { conn, ports, ask } = connection();
  ask("hello").catch(() => {});
  conn.close();
  assert.equal(ports[0].disconnected, true);
  assert.equal(conn.status.state, "idle");
  ask("hello").catch(() => {});
  assert.equal(ports.length, 2);
});

test("cancel of a request that already ended is refused without asking the host", async () => {
  const { conn, ports } = connection();
  const { id, promise } = conn.send("preload");
  ports[0].reply({ id, status: "ok", data: {} });
  await promise;
  await assert.rejects(conn.cancel(id), { code: "unknown_request" });
  assert.equal(ports[0].posted.length, 1);
});
