// Fakes of the host's replies made from real ones: the files in tests/fixtures/host/ were
// recorded from the built binary by scripts/record-host-replies.mjs (how, and the state of the
// cache they saw, is in each file's `recorded`). Tests take them from here, never write their own
// shapes of a reply: a fake written from what the code expects agrees with the code's mistakes
// (issue 19). The consistency e2e checks that the live host still replies in these shapes.
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
