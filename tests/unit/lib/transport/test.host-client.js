import { test } from "node:test";
import assert from "node:assert/strict";
import { classifyDisconnect, HostClient, HostError } from "../../../../extension/lib/transport/host-client.js";
import { fakePort } from "../../fakes.js";

function connected() {
  const port = fakePort();
  let connects = 0;
  const client = new HostClient(() => {
    connects += 1;
    return port;
  });
  // the promise of one request; client.send() also returns its id
  const ask = (...args) => client.send(...args).promise;
  return { port, client, ask, connects: () => connects };
}

test("requests carry increasing ids and resolve with their own reply's data, in any order", async () => {
  const { port, ask } = connected();
  const hello = ask("hello");
  const residency = ask("residency", { files: ["libxul.so"] });
  assert.deepEqual(port.posted, [
    { id: 1, command: "hello" },
    { id: 2, command: "residency", files: ["libxul.so"] },
  ]);
  port.reply({ id: 2, status: "ok", data: { page_size: 4096 } });
  port.reply({ id: 1, status: "ok", data: { host_version: "0.1.0" } });
  assert.deepEqual(await hello, { host_version: "0.1.0" });
  assert.deepEqual(await residency, { page_size: 4096 });
});

test("params cannot override the id or the command", async () => {
  const { port, ask } = connected();
  ask("hello", { id: 99, command: "evict" });
  assert.deepEqual(port.posted[0], { id: 1, command: "hello" });
});

test("one port for many requests", async () => {
  const { port, client, connects, ask } = connected();
  ask("hello");
  ask("firefox");
  client.start();
  assert.equal(connects(), 1);
  assert.equal(port.posted.length, 2);
});

test("an error reply rejects with a HostError carrying code, message and params", async () => {
  const { port, ask } = connected();
  const request = ask("evict", { files: ["/etc/passwd"] });
  port.reply({
    id: 1,
    status: "error",
    code: "outside_install_dir",
    message: "/etc/passwd is outside",
    params: { path: "/etc/passwd" },
  });
  await assert.rejects(request, (error) => {
    assert.ok(error instanceof HostError);
    assert.equal(error.code, "outside_install_dir");
    assert.equal(error.message, "/etc/passwd is outside");
    assert.deepEqual(error.params, { path: "/etc/passwd" });
    return true;
  });
});

test("events go to the request's onEvent, before the final reply", async () => {
  const { port, ask } = connected();
  const perRequest = [];
  const request = ask("preload", {}, { onEvent: (event, data) => perRequest.push([event, data.n]) });
  port.reply({ id: 1, status: "event", event: "progress", data: { n: 1 } });
  port.reply({ id: 1, status: "event", event: "progress", data: { n: 2 } });
  port.reply({ id: 1, status: "ok", data: { files: 3 } });
  assert.deepEqual(await request, { files: 3 });
  assert.deepEqual(perRequest, [
    ["progress", 1],
    ["progress", 2],
  ]);
});

test("replies to unknown ids (or id null) are ignored", async () => {
  const { port, ask } = connected();
  const request = ask("hello");
  port.reply({ id: null, status: "error", code: "bad_request", message: "no id" });
  port.reply({ id: 42, status: "ok", data: {} });
  port.reply({ id: 1, status: "ok", data: { ok: true } });
  assert.deepEqual(await request, { ok: true });
});

test("a missing host: pending requests reject, listeners hear kind missing, later requests reject", async () => {
  const { port, client, ask } = connected();
  const heard = [];
  client.onDisconnect((gone) => heard.push(gone));
  const request = ask("hello");
  port.drop({ message: "No such native application about_startup" });
  await assert.rejects(request, (error) => {
    assert.equal(error.code, "host_missing");
    assert.equal(error.params.kind, "missing");
    return true;
  });
  assert.deepEqual(heard, [{ kind: "missing", message: "No such native application about_startup" }]);
  assert.deepEqual(client.disconnected, heard[0]);
  await assert.rejects(ask("firefox"), { code: "host_missing" });
  assert.equal(port.posted.length, 1);
});

test("a host that exits without an error message counts as ended", async () => {
  const { port, client, ask } = connected();
  const request = ask("hello");
  port.drop(null);
  await assert.rejects(request, (error) => error.params.kind === "ended" && error.code === "host_disconnected");
  assert.equal(client.disconnected.message, "the host closed the connection");
});

test("postMessage throwing rejects that request", async () => {
  const { port, client, ask } = connected();
  client.start();
  port.disconnected = true;
  await assert.rejects(ask("hello"), { code: "host_disconnected" });
});

test("close() disconnects the port and rejects what is pending", async () => {
  const { port, client, ask } = connected();
  const request = ask("hello");
  client.close();
  assert.equal(port.disconnected, true);
  await assert.rejects(request, { code: "host_disconnected" });
});

test("classifyDisconnect reads Firefox's messages", () => {
  assert.equal(classifyDisconnect({ message: "No such native application about_startup" }), "missing");
  assert.equal(classifyDisconnect({ message: "An unexpected error occurred" }), "ended");
  assert.equal(classifyDisconnect(null), "ended");
});

test("connect() throwing is a missing host, not an exception", async () => {
  const client = new HostClient(() => {
    throw new Error("No such native application about_startup");
  });
  await assert.rejects(client.send("hello").promise, { code: "host_missing" });
  assert.equal(client.disconnected.kind, "missing");
});

test("ids come from the owner's nextId when given; isPending follows the final reply", async () => {
  const port = fakePort();
  let n = 41;
  const client = new HostClient(() => port, { nextId: () => n++ });
  const { id, promise } = client.send("hello");
  assert.equal(id, 41);
  assert.equal(client.isPending(41), true);
  port.reply({ id: 41, status: "ok", data: {} });
  await promise;
  assert.equal(client.isPending(41), false);
});
