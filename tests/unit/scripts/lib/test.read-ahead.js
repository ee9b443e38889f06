import { test } from "node:test";
import assert from "node:assert/strict";

import { parseReadAheadKb, readAheadFile, readAheadKb, setReadAheadKb } from "../../../../scripts/lib/read-ahead.mjs";
import { fakeSysfs } from "../../fakes.js";

const FILE = "/sys/dev/block/254:0/queue/read_ahead_kb";

// Reading the window back gives it with the newline sysfs adds.
const sysfs = (files, options) => fakeSysfs(files, { readBack: (content) => `${content}\n`, ...options });

test("readAheadFile names the whole disk's queue file and refuses anything else", () => {
  assert.equal(readAheadFile("254:0"), FILE);
  assert.throws(() => readAheadFile("../../etc"), /not a disk/);
});

test("readAheadKb reads the window, null when the file is missing or garbage", () => {
  assert.equal(readAheadKb("254:0", { fsApi: sysfs({ [FILE]: "8192\n" }) }), 8192);
  assert.equal(readAheadKb("254:0", { fsApi: sysfs({}) }), null);
  assert.equal(readAheadKb("254:0", { fsApi: sysfs({ [FILE]: "lots\n" }) }), null);
});

test("parseReadAheadKb takes whole KiB and refuses the rest", () => {
  assert.equal(parseReadAheadKb("128"), 128);
  assert.equal(parseReadAheadKb("0"), 0);
  assert.throws(() => parseReadAheadKb("128k"), /whole number of KiB/);
  assert.throws(() => parseReadAheadKb("-1"), /whole number/);
  assert.throws(() => parseReadAheadKb(String(2 ** 21)), /whole number/);
});

test("setReadAheadKb sets the window, and restore (also registered for exit) puts the old one back once", () => {
  const fsApi = sysfs({ [FILE]: "8192\n" });
  const exitHooks = [];
  const set = setReadAheadKb("254:0", 128, { fsApi, onExit: (fn) => exitHooks.push(fn) });
  assert.deepEqual([set.before, set.after], [8192, 128]);
  assert.equal(exitHooks.length, 1);
  exitHooks[0]();
  set.restore();
  assert.deepEqual(fsApi.writes, [
    [FILE, "128"],
    [FILE, "8192"],
  ]);
});

test("setReadAheadKb says what is wrong when it cannot read or write the window", () => {
  assert.throws(() => setReadAheadKb("254:0", 128, { fsApi: sysfs({}), onExit: () => {} }), /cannot be read/);
  assert.throws(
    () => setReadAheadKb("254:0", 128, { fsApi: sysfs({ [FILE]: "8192\n" }, { writable: false }), onExit: () => {} }),
    /needs root/,
  );
});
