import { test } from "node:test";
import assert from "node:assert/strict";
import { translator } from "../../../../extension/lib/wording/i18n.js";
import { partAdvice, partName, profileSentence } from "../../../../extension/lib/wording/profile-text.js";
import { englishMessage } from "../../fakes.js";

// The English messages, as Firefox words them.
const t = translator(englishMessage);

// A profile share as the host's trace_summary gives it (native-host/src/trace/summary/profile.rs).
const profile = {
  state: "ready",
  bytes: { profile: 12_400_000, total: 124_000_000 },
  reads: { profile: 120, total: 1800 },
  sync_reads: { profile: 90, total: 1000 },
  block_ms: null,
  parts: [
    { part: { kind: "extension", id: "pm@x.test", name: "Password Manager" }, label: "add-on Password Manager (pm@x.test)", bytes: 12_000_000, reads: 40, sync_reads: 30, files: 2 },
    { part: { kind: "session" }, label: "session store", bytes: 400_000, reads: 3, sync_reads: 3, files: 1 },
    { part: { kind: "cookies" }, label: "cookies", bytes: 4096, reads: 1, sync_reads: 1, files: 1 },
  ],
  session: { windows: 2, tabs: 35, pinned: 2, restore_on_demand: false, restore_pinned_on_demand: false, restores_at_start: true },
};

test("the answer line's sentence: the profile's share of the reads and of the waiting, and its two largest parts", () => {
  const text = profileSentence(profile, t);
  assert.match(text, /10%/, "12.4 of 124 MB");
  assert.match(text, /9%/, "90 of 1,000 reads waited for");
  assert.match(text, /Password Manager \(pm@x\.test\)/);
  assert.match(text, /12\.0 MB/);
  assert.match(text, /35 tabs/);
  assert.match(text, /browser\.sessionstore\.restore_on_demand/);
  assert.doesNotMatch(text, /cookies/i, "two parts only");
});

test("no sentence where the trace cannot tell", () => {
  assert.equal(profileSentence({ ...profile, state: "not_found" }, t), null);
  assert.equal(profileSentence({ ...profile, state: "no_per_file_trace" }, t), null);
  assert.equal(profileSentence({ ...profile, bytes: { profile: 0, total: 0 } }, t), null);
  assert.equal(profileSentence(undefined, t), null);
});

test("each part is named and advised; an unknown kind is 'other', never blank", () => {
  assert.equal(partName({ kind: "extension", id: "a@b" }, t).includes("a@b"), true);
  assert.ok(partName({ kind: "places" }, t).length > 0);
  assert.equal(partName({ kind: "future_kind" }, t), partName({ kind: "other" }, t));
  const eager = partAdvice({ part: { kind: "session" } }, { tabs: 1, restore_on_demand: false }, t);
  const lazy = partAdvice({ part: { kind: "session" } }, { tabs: 1, restore_on_demand: true }, t);
  assert.notEqual(eager, lazy);
  assert.match(eager, /\b1 tab\b/);
  assert.ok(partAdvice({ part: { kind: "session" } }, null, t).length > 0);
});
