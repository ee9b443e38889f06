import { test } from "node:test";
import assert from "node:assert/strict";
import { recordedHello, recordedReply, shapeDiff } from "./host-replies.js";

test("shapeDiff: a reply agrees with itself and with other values of the same shape", () => {
  const reply = recordedReply("residency-exact").reply;
  assert.deepEqual(shapeDiff(reply, reply), []);
  assert.deepEqual(shapeDiff({ ...reply, summary: { ...reply.summary, elapsed_ms: 1 } }, reply), []);
  // The same reply kind as another user: the hidden files carry their reason, the rest is alike.
  const hidden = recordedReply("residency-hidden").reply;
  assert.deepEqual(shapeDiff(hidden, reply), ["files[].hidden_code: live only", "files[].hidden_reason: live only"]);
});

test("shapeDiff: names a key gone, a key added and a changed type, at any depth", () => {
  const hello = recordedHello("root");
  const { kernel, ...withoutKernel } = hello;
  assert.ok(kernel);
  assert.deepEqual(shapeDiff(withoutKernel, hello), ["kernel: recorded only"]);
  assert.deepEqual(shapeDiff({ ...hello, extra: 1 }, hello), ["extra: live only"]);
  assert.deepEqual(shapeDiff({ ...hello, cli: { ...hello.cli, on_path: "no" } }, hello), ["cli.on_path: string live, boolean recorded"]);
  const plan = recordedReply("plan-status-exact").reply;
  const renamed = { ...plan, uncached_files: plan.uncached_files.map(({ size, ...f }) => ({ ...f, bytes: size })) };
  assert.deepEqual(shapeDiff(renamed, plan), ["uncached_files[].bytes: live only", "uncached_files[].size: recorded only"]);
});

test("shapeDiff: null, or a key left out, matches any value (a field absent in one state)", () => {
  const plan = recordedReply("plan-status-exact").reply;
  assert.deepEqual(shapeDiff({ ...plan, uncached_files: null }, plan), []);
  // An array's items merged: a key only some items carry (a file Firefox has not mapped) counts.
  const residency = recordedReply("residency-exact").reply;
  const [first, ...rest] = residency.files;
  const unmapped = structuredClone(first);
  delete unmapped.mapped;
  assert.deepEqual(shapeDiff({ ...residency, files: [unmapped, ...rest] }, residency), []);
  assert.deepEqual(
    shapeDiff({ ...residency, files: residency.files.map(({ mapped, ...f }) => ({ ...f, mapped: mapped && { ...mapped, pages: String(mapped.pages) } })) }, residency),
    ["files[].mapped.pages: string live, number recorded"],
  );
  const autostart = structuredClone(plan.autostart);
  delete autostart.note_code;
  assert.deepEqual(shapeDiff({ ...plan, autostart: { ...autostart, note: null } }, plan), ["autostart.note_code: recorded only"]);
  assert.deepEqual(shapeDiff({ ...plan, autostart: { ...autostart, note: null } }, { ...plan, autostart: { ...plan.autostart, note_code: null } }), []);
});
