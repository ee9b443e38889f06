import { test } from "node:test";
import assert from "node:assert/strict";
import { chosenGroups, frame, GROUPS, unframe } from "../../../scripts/record-host-replies.mjs";

test("--only names the groups to record, in recording order; a wrong name is an error", () => {
  assert.deepEqual(chosenGroups([]), GROUPS);
  assert.deepEqual(chosenGroups(["--only", "desktop,hello"]), ["hello", "desktop"]);
  assert.throws(() => chosenGroups(["--only", "desktop,prefetch"]), /--only takes some of residency,hello,desktop,set-aside,desktop-host-gone,profile-prefetch \(not prefetch\)/);
  assert.throws(() => chosenGroups(["--only"]), /--only takes some of/);
});

test("frames: a native-endian length, then UTF-8 JSON; read back in order", () => {
  const bytes = Buffer.concat([frame({ id: 1, command: "hello" }), frame({ id: 2, data: "é" })]);
  assert.equal(bytes.readUInt32LE(0), Buffer.byteLength('{"id":1,"command":"hello"}'));
  assert.deepEqual(unframe(bytes), [
    { id: 1, command: "hello" },
    { id: 2, data: "é" },
  ]);
});
