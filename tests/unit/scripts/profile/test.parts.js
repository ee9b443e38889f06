import { test } from "node:test";
import assert from "node:assert/strict";
import { partOf, partsTable } from "../../../../scripts/profile/parts.mjs";

const extensions = [{ id: "dark-mode@synthetic.profile.test", uuid: "0f0e", kind: "dark-mode" }];

test("a profile's files by the part they belong to (names as Firefox ESR 153 writes them)", () => {
  const cases = [
    ["sessionstore.jsonlz4", "session"],
    ["sessionstore-backups/recovery.jsonlz4", "session"],
    ["places.sqlite-wal", "places"],
    ["favicons.sqlite", "favicons"],
    ["cookies.sqlite", "cookies"],
    ["permissions.sqlite", "permissions"],
    ["startupCache/scriptCache.bin", "startup cache"],
    ["prefs.js", "prefs"],
    ["addonStartup.json.lz4", "add-on registry"],
    ["extensions/dark-mode@synthetic.profile.test.xpi", "add-on dark-mode"],
    ["extensions/other@example.xpi", "add-ons, other"],
    ["storage/default/moz-extension+++0f0e^userContextId=4294967295/idb/3647222921wleabcEoxlt-eengsairo.sqlite", "add-on storage dark-mode"],
    ["storage/permanent/chrome/idb/3870112724rsegmnoittet-es.sqlite", "site storage"],
    ["cert9.db", "other"],
  ];
  for (const [file, part] of cases) assert.equal(partOf(file, extensions), part, file);
});

test("the parts table: one line a part, MB with one decimal, and a total", () => {
  const text = partsTable({ total: 3_500_000, files: 3, parts: [{ part: "places", bytes: 3_000_000, files: 2 }, { part: "prefs", bytes: 500_000, files: 1 }] });
  assert.deepEqual(text.split("\n").map((l) => l.trim().split(/\s+/)), [
    ["places", "3.0", "MB", "2", "files"],
    ["prefs", "0.5", "MB", "1", "files"],
    ["total", "3.5", "MB", "3", "files"],
  ]);
});
