// Every string the history and export/compare sections ask for exists in English.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";

const read = (rel) => fs.readFileSync(new URL(`../../../${rel}`, import.meta.url), "utf8");
const messages = JSON.parse(read("extension/_locales/en/messages.json"));

test("page/history.js and page/compare.js: every t(\"key\") and mapped key has a message", () => {
  const keys = new Set();
  for (const file of ["extension/page/history.js", "extension/page/compare.js"]) {
    const source = read(file);
    for (const match of source.matchAll(/\bt\("(\w+)"/g)) keys.add(match[1]);
    // keys chosen through a lookup table: [CODE]: "key"
    for (const match of source.matchAll(/\]: "((?:history|import|export|compare)\w+)"/g)) keys.add(match[1]);
  }
  assert.ok(keys.size > 30, `found ${keys.size} keys`);
  for (const key of keys) {
    assert.ok(messages[key]?.message, `messages.json lacks ${key}`);
  }
});
