import { test } from "node:test";
import assert from "node:assert/strict";
import { endedByText, ENDED_BY_KEYS, HOST_NOTE_KEYS, hostNoteText, NO_TRACE_REASON_KEYS, traceNoteTexts } from "../../../extension/lib/host-notes.js";
import { englishMessage } from "../fakes.js";

const t = englishMessage;

// The codes of native-host/src/note.rs: the add-on must have words for every one of them.
const RUST = new URL("../../../native-host/src/note.rs", import.meta.url);

test("every note code and no-trace reason the host defines has a message here", async () => {
  const { readFileSync } = await import("node:fs");
  const source = readFileSync(RUST, "utf8");
  const consts = [...source.matchAll(/pub const (\w+): &str = "(\w+)";/g)].map((m) => [m[1], m[2]]);
  const codes = consts.filter(([name]) => !name.startsWith("NO_TRACE_")).map(([, code]) => code);
  const reasons = consts.filter(([name]) => name.startsWith("NO_TRACE_")).map(([, code]) => code);
  assert.ok(codes.length >= 12 && reasons.length >= 5, `found ${codes.length} codes, ${reasons.length} reasons`);
  assert.deepEqual(codes.filter((c) => !HOST_NOTE_KEYS[c]), [], "codes without a message key");
  assert.deepEqual(reasons.filter((c) => !NO_TRACE_REASON_KEYS[c]), [], "reasons without a message key");
  for (const key of [...Object.values(HOST_NOTE_KEYS), ...Object.values(NO_TRACE_REASON_KEYS), ...Object.values(ENDED_BY_KEYS)]) {
    assert.ok(t(key), key);
  }
});

test("notes are worded from their code and params; an unknown code is named, not guessed", () => {
  assert.equal(hostNoteText("hidden_not_owner", t), "the kernel reports page-cache state only for files you own or can write (Linux ≥ 5.2)");
  assert.equal(hostNoteText({ code: "lost_events", params: { count: 1024 } }, t), "1,024 trace events were lost (the kernel's buffer overflowed): bytes read are undercounted.");
  assert.equal(
    hostNoteText({ code: "no_exact_trace", params: { reason: "not_root", detail: "tracing needs root: …" } }, t),
    "No exact trace (tracing needs root): only the Firefox processes' bytes read and major faults were sampled from /proc.",
  );
  assert.match(hostNoteText({ code: "no_exact_trace", params: { reason: "later" } }, t), /\(reason later\)/);
  assert.equal(hostNoteText({ code: "cold_evicted", params: { files: 168, pages: 75301 } }, t), "Cold start: 168 files of the install folder were evicted first (75,301 pages dropped where measurable).");
  assert.match(hostNoteText({ code: "attached_late", params: { ms: 1200 } }, t), /^The recording began 1,200 ms after/);
  assert.equal(hostNoteText({ code: "from_the_future" }, t), "A note from the host that this add-on does not know (code from_the_future); a newer add-on words it.");
});

test("a trace's notes and ending: from codes; an older host's English is not shown", () => {
  const trace = { ended_by: "quiet", ended_by_code: "quiet", notes: ["1 trace events were lost …"], note_codes: [{ code: "lost_events", params: { count: 1 } }] };
  assert.deepEqual(traceNoteTexts(trace, t), ["1 trace event was lost (the kernel's buffer overflowed): bytes read are undercounted."]);
  assert.equal(endedByText(trace, t), "nothing was read for 3 s");
  const old = { ended_by: "session restored (the extension recorded the start)", notes: ["attached 3 ms after …", "x"] };
  assert.deepEqual(traceNoteTexts(old, t), ["This trace comes from an older host: its 2 notes are in English, in the export only."]);
  assert.equal(endedByText(old, t), "not said (a trace of an older host)");
  assert.deepEqual(traceNoteTexts({ notes: [] }, t), []);
});
