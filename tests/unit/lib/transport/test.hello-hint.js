import { test } from "node:test";
import assert from "node:assert/strict";
import { helloHint, withHelloHint } from "../../../../extension/lib/transport/hello-hint.js";

test("the hint is the browser's version and build ID, or nothing", () => {
  assert.deepEqual(helloHint({ name: "Firefox", version: "153.7.0", buildID: "20261103151912" }), {
    version: "153.7.0",
    build_id: "20261103151912",
  });
  assert.equal(helloHint({}), null);
  assert.equal(helloHint(null), null);
});

test("hello carries the hint; other commands and an explicit browser are left alone", () => {
  const sent = [];
  const connection = {
    send(command, params, options) {
      sent.push([command, params, options]);
      return { id: sent.length, promise: Promise.resolve({}) };
    },
  };
  let hint = null;
  withHelloHint(connection, () => hint);
  connection.send("hello");
  hint = { version: "153.7.0", build_id: "2026" };
  connection.send("hello", {}, { onEvent: null });
  connection.send("residency", { files: null });
  connection.send("hello", { browser: { version: "1" } });
  assert.deepEqual(
    sent.map(([c, p]) => [c, p]),
    [
      ["hello", {}],
      ["hello", { browser: { version: "153.7.0", build_id: "2026" } }],
      ["residency", { files: null }],
      ["hello", { browser: { version: "1" } }],
    ],
  );
  assert.deepEqual(sent[1][2], { onEvent: null });
});
