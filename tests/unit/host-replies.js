// Fakes of the host's replies made from real ones: the files in tests/fixtures/host/ were
// recorded from the built binary by scripts/record-host-replies.mjs (how, and the state of the
// cache they saw, is in each file's `recorded`). Tests take them from here, never write their own
// shapes of a reply: a fake written from what the code expects agrees with the code's mistakes
// (issue 19). The e2e tests check that the live host still replies in these shapes (shapeDiff):
// tests/e2e/test.consistency.js and test.desktop.js.
import { readFileSync } from "node:fs";

const cache = new Map();

/** A recorded fixture: {recorded, reply}; a copy, so a test may change it. */
export function recordedReply(name) {
  if (!cache.has(name)) {
    cache.set(name, JSON.parse(readFileSync(new URL(`../fixtures/host/${name}.json`, import.meta.url), "utf8")));
  }
  return structuredClone(cache.get(name));
}

/**
 * A recorded `residency` as the extension receives it: `files` (the `file` events' data, in
 * order) and `summary` (the final reply's data). "exact" was recorded as root, "hidden" as nobody
 * on the same root-owned files.
 */
export function recordedResidency(kind) {
  const { reply } = recordedReply(`residency-${kind}`);
  return { files: reply.files, summary: reply.summary, install: reply.install };
}

/** A recorded `hello` reply's data: "root" or "user" (nobody). */
export function recordedHello(kind) {
  return recordedReply(`hello-${kind}`).reply.data;
}

const kindOf = (v) => (v === null || v === undefined ? "null" : Array.isArray(v) ? "array" : typeof v);

/**
 * The items of an array as one: objects merged key by key (the first non-null value of each key,
 * so a key some items leave out still counts), anything else the first non-null item.
 */
function merged(items) {
  if (!items.every((item) => kindOf(item) === "object" || kindOf(item) === "null")) {
    return items.find((item) => kindOf(item) !== "null") ?? null;
  }
  const out = {};
  for (const item of items) {
    for (const [key, value] of Object.entries(item ?? {})) {
      if (kindOf(out[key]) === "null") {
        out[key] = value;
      }
    }
  }
  return out;
}

/**
 * Where a live reply's shape differs from a recorded one: keys only one of them has, and values
 * of another JSON type, at every depth (an array by all its items merged). A missing key and `null`
 * are the same (the host leaves out what it has not: serde's skip_serializing_if), and `null`
 * matches any type (a field may be null in one state and not in another). Returns sorted lines
 * such as "files[].mapped.pages: string live, number recorded"; [] when they agree.
 */
export function shapeDiff(live, recorded, at = "") {
  const [a, b] = [kindOf(live), kindOf(recorded)];
  if (a === "null" || b === "null") {
    return [];
  }
  if (a !== b) {
    return [`${at || "(the reply)"}: ${a} live, ${b} recorded`];
  }
  if (a === "array") {
    return live.length > 0 && recorded.length > 0 ? shapeDiff(merged(live), merged(recorded), `${at}[]`) : [];
  }
  if (a !== "object") {
    return [];
  }
  const out = [];
  for (const key of new Set([...Object.keys(live), ...Object.keys(recorded)])) {
    const where = at ? `${at}.${key}` : key;
    const [l, r] = [kindOf(live[key]), kindOf(recorded[key])];
    if (l !== "null" && !(key in recorded)) {
      out.push(`${where}: live only`);
    } else if (r !== "null" && !(key in live)) {
      out.push(`${where}: recorded only`);
    } else {
      out.push(...shapeDiff(live[key], recorded[key], where));
    }
  }
  return out.sort();
}
