// Every visible string comes from _locales: this scans all of extension/ for the message keys it
// asks for (t("key"), lookup tables `…_KEYS = {…: "key"}`, data-i18n="key", __MSG_key__) and
// checks that each has an English message with a description. A count message, tn("key", n), needs
// both its forms: `key` (other) and `keyOne`. Keys built at run time from a template
// (t(`${key}Explanation`)) are listed in DYNAMIC below by hand. The other way round, a message that
// no string literal of extension/ names is unused, and fails too.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

const ROOT = new URL("../../extension/", import.meta.url).pathname;
const messages = JSON.parse(fs.readFileSync(path.join(ROOT, "_locales/en/messages.json"), "utf8"));

/** Keys made from a template in page/startup.js (showHostGone). */
const DYNAMIC = ["hostMissingExplanation", "hostEndedExplanation"];

function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      return entry.name === "_locales" ? [] : files(full);
    }
    return /\.(m?js|html|json)$/.test(entry.name) ? [full] : [];
  });
}

/** The keys a source text asks for. */
export function keysIn(source) {
  const keys = new Set();
  // t("key", …), t(cond ? "a" : "b", …): the string literals of the first argument
  for (const match of source.matchAll(/\bt\(([^,()]*)[,)]/g)) {
    // (not the literals a condition compares with: mode === "full" ? "a" : "b")
    for (const literal of match[1].matchAll(/(?<![=!]==\s*)["'](\w+)["']/g)) {
      keys.add(literal[1]);
    }
  }
  // tn("key", count, …): the count message's other form and its One form
  for (const match of source.matchAll(/\btn\(\s*["'](\w+)["']/g)) {
    keys.add(match[1]);
    keys.add(`${match[1]}One`);
  }
  for (const match of source.matchAll(/_KEYS = \{([^}]*)\}/g)) {
    for (const literal of match[1].matchAll(/:\s*"(\w+)"/g)) {
      keys.add(literal[1]);
    }
  }
  for (const match of source.matchAll(/data-i18n="(\w+)"/g)) {
    keys.add(match[1]);
  }
  for (const match of source.matchAll(/__MSG_(\w+)__/g)) {
    keys.add(match[1]);
  }
  return keys;
}

test("keysIn finds calls, ternaries, plurals, lookup tables, data-i18n and __MSG_", () => {
  const found = keysIn(`t("a"); t(x ? "b" : "c", [1]); t(mode === "full" ? "g" : "h"); tn("i", n, [String(n)]); const NOTE_KEYS = { [X]: "d" }; <p data-i18n="e"> "__MSG_f__" t(variable)`);
  assert.deepEqual([...found].sort(), ["a", "b", "c", "d", "e", "f", "g", "h", "i", "iOne"]);
});

test("every message key used anywhere in extension/ exists in English, with a description", () => {
  const used = new Map();
  for (const file of files(ROOT)) {
    for (const key of keysIn(fs.readFileSync(file, "utf8"))) {
      used.set(key, path.relative(ROOT, file));
    }
  }
  for (const key of DYNAMIC) {
    used.set(key, "page/startup.js (template)");
  }
  assert.ok(used.size > 150, `found ${used.size} keys: the scan works`);
  const missing = [...used].filter(([key]) => !messages[key]?.message).map(([key, file]) => `${key} (${file})`);
  assert.deepEqual(missing, [], "keys without a message");
  const undescribed = Object.keys(messages).filter((key) => !messages[key].description);
  assert.deepEqual(undescribed, [], "messages without a description");
});

/**
 * The message keys a source text may ask for, generously: what keysIn finds plus every string
 * literal (keys handed around in arrays and tables: needWords, NOTE_KEYS, column lists), except
 * element ids ($("refresh"), getElementById), which share names with keys. HTML: keysIn only.
 */
export function literalKeysIn(source, html = false) {
  const keys = keysIn(source);
  if (!html) {
    const code = source.replace(/(?<![\w$])(?:\$|getElementById|querySelector(?:All)?)\(\s*["'`][^"'`]*["'`]\s*\)/g, "");
    for (const match of code.matchAll(/["'`](\w+)["'`]/g)) {
      keys.add(match[1]);
    }
  }
  return keys;
}

test("literalKeysIn counts literals anywhere but not element ids", () => {
  const found = literalKeysIn(`const parts = [[n, "aOne", "a"]]; $("b").hidden = true; document.getElementById("c"); t("d")`);
  assert.deepEqual([...found].sort(), ["a", "aOne", "d"]);
  assert.deepEqual([...literalKeysIn(`<p id="x" data-i18n="y">`, true)], ["y"]);
});

test("no message is unused: every key is asked for somewhere in extension/", () => {
  const asked = new Set(DYNAMIC);
  for (const file of files(ROOT)) {
    for (const key of literalKeysIn(fs.readFileSync(file, "utf8"), file.endsWith(".html"))) {
      asked.add(key);
    }
  }
  // a count message's One form goes with its other form (tn() over a key from a table)
  const unused = Object.keys(messages).filter((key) => !asked.has(key) && !(key.endsWith("One") && asked.has(key.slice(0, -3))));
  assert.deepEqual(unused, [], "messages nothing asks for: delete them (or list a template-built key in DYNAMIC)");
});

test("named placeholders: every $NAME$ in a message is declared", () => {
  for (const [key, { message, placeholders = {} }] of Object.entries(messages)) {
    for (const match of message.matchAll(/\$(\w+)\$/g)) {
      assert.ok(match[1].toLowerCase() in placeholders, `${key}: $${match[1]}$ has no placeholder`);
    }
  }
});

test("every message with substitutions names them: no positional $1 in a message, each placeholder used, with content and example", () => {
  const positional = Object.entries(messages)
    .filter(([, { message }]) => /\$\d/.test(message))
    .map(([key]) => key);
  assert.deepEqual(positional, [], "messages that use $1… directly instead of a named placeholder");
  for (const [key, { message, placeholders = {} }] of Object.entries(messages)) {
    const used = new Set([...message.matchAll(/\$(\w+)\$/g)].map((m) => m[1].toLowerCase()));
    for (const [name, placeholder] of Object.entries(placeholders)) {
      assert.ok(used.has(name), `${key}: placeholder ${name} is declared but not used`);
      assert.match(placeholder.content ?? "", /^\$\d$/, `${key}: placeholder ${name} needs content "$1"…"$9"`);
      assert.ok(placeholder.example, `${key}: placeholder ${name} needs an example`);
    }
  }
});

test("no message hedges a count with \"(s)\": counts are worded through tn()", () => {
  const hedged = Object.entries(messages)
    .filter(([, { message }]) => /\(s\)/.test(message))
    .map(([key]) => key);
  assert.deepEqual(hedged, [], "messages with \"(s)\": give them a One form and word them through tn()");
});

test("every message has a description that is more than its key", () => {
  for (const [key, { description }] of Object.entries(messages)) {
    assert.ok(typeof description === "string" && description.trim().length > 10, `${key}: description`);
  }
});
