import { test } from "node:test";
import assert from "node:assert/strict";
import {
  endedByText,
  ENDED_BY_KEYS,
  FILE_ERROR_KEYS,
  fileErrorText,
  fileProblem,
  HOST_ERROR_KEYS,
  hostErrorText,
  HOST_NOTE_KEYS,
  hostNoteText,
  NO_TRACE_REASON_KEYS,
  OS_ERROR_KEYS,
  PAGE_USE_REASON_KEYS,
  setAsideTexts,
  traceNoteTexts,
} from "../../../../extension/lib/wording/host-notes.js";
import { englishMessage } from "../../fakes.js";

const t = englishMessage;

// The codes of native-host/src/note.rs: the add-on must have words for every one of them.
const RUST = new URL("../../../../native-host/src/note.rs", import.meta.url);

test("every note code and no-trace reason the host defines has a message here", async () => {
  const { readFileSync } = await import("node:fs");
  const source = readFileSync(RUST, "utf8");
  const consts = [...source.matchAll(/pub const (\w+): &str = "(\w+)";/g)].map((m) => [m[1], m[2]]);
  const codes = consts.filter(([name]) => !name.startsWith("NO_TRACE_") && !name.startsWith("PAGE_USE_")).map(([, code]) => code);
  const pageUse = consts.filter(([name]) => name.startsWith("PAGE_USE_") && name !== "PAGE_USE_UNKNOWN").map(([, code]) => code);
  assert.deepEqual(pageUse.filter((c) => !PAGE_USE_REASON_KEYS[c]), [], "page-use reasons without a message key");
  assert.ok(pageUse.length >= 2, `found ${pageUse.length} page-use reasons`);
  const reasons = consts.filter(([name]) => name.startsWith("NO_TRACE_")).map(([, code]) => code);
  assert.ok(codes.length >= 12 && reasons.length >= 5, `found ${codes.length} codes, ${reasons.length} reasons`);
  assert.deepEqual(codes.filter((c) => !HOST_NOTE_KEYS[c]), [], "codes without a message key");
  assert.deepEqual(reasons.filter((c) => !NO_TRACE_REASON_KEYS[c]), [], "reasons without a message key");
  for (const key of [
    ...Object.values(HOST_NOTE_KEYS),
    ...Object.values(NO_TRACE_REASON_KEYS),
    ...Object.values(ENDED_BY_KEYS),
    ...Object.values(PAGE_USE_REASON_KEYS),
    ...Object.values(FILE_ERROR_KEYS),
    ...Object.values(OS_ERROR_KEYS),
    ...Object.values(HOST_ERROR_KEYS),
  ]) {
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

test("a cold start that was not: what stayed, and who holds it (issue 30 #6)", () => {
  // As the host wrote it (launch --cold --json on this machine, a copy of sleep from the install
  // folder running beside it: tests/launch_edges.rs's case).
  const held = { code: "cold_held", params: { bytes: 40960, files: [{ path: "/tmp/edges-ff/ff/firefox-helper", bytes: 40960 }], hidden_files: 0, processes: [{ pid: 16657, exe: "/tmp/edges-ff/ff/firefox-helper" }] } };
  const text = hostNoteText(held, t);
  assert.match(text, /^Not a cold start: after the evict, 41 kB of Firefox's files stayed cached \(\/tmp\/edges-ff\/ff\/firefox-helper \(41 kB\)\), held by processes that map them: \/tmp\/edges-ff\/ff\/firefox-helper \(pid 16657\)\./);
  // Hidden from this user, and no process of theirs: said, not 0.
  const hidden = hostNoteText({ code: "cold_held", params: { bytes: null, files: [], hidden_files: 3, processes: [] } }, t);
  assert.match(hidden, /a part \(how much, the kernel hides from you\)/);
  assert.match(hidden, /none of yours/);
  const gone = hostNoteText({ code: "start_not_restored", params: { profile: "/home/me/p" } }, t);
  assert.match(gone, /never reached sessionRestored .* \/home\/me\/p /);
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

// The per-file error codes of native-host/src/pagecache/problem.rs (serde snake_case of the enum).
const PROBLEM_RS = new URL("../../../../native-host/src/pagecache/problem.rs", import.meta.url);

test("every per-file error code the host defines has a message here", async () => {
  const { readFileSync } = await import("node:fs");
  const source = readFileSync(PROBLEM_RS, "utf8");
  const body = source.slice(source.indexOf("pub enum FileErrorCode {"), source.indexOf("}", source.indexOf("pub enum FileErrorCode {")));
  const codes = [...body.matchAll(/^\s+(\w+),$/gm)].map((m) => m[1].replace(/(?<!^)([A-Z])/g, "_$1").toLowerCase());
  assert.ok(codes.length >= 8, `found ${codes.length} codes`);
  assert.deepEqual(codes.filter((c) => !FILE_ERROR_KEYS[c]), [], "codes without a message key");
});

test("a file's problem is worded from its code, its errno worded where known", () => {
  const en = englishMessage;
  const denied = fileProblem({ error: "cannot open: Permission denied (os error 13)", error_code: "open_failed", error_params: { os_error: 13, detail: "Permission denied (os error 13)" } });
  assert.equal(fileErrorText(denied, en), "cannot open it (permission denied)");
  const eio = fileProblem({ error: "Input/output error (os error 5)", error_code: "read_failed", error_params: { os_error: 5, detail: "Input/output error (os error 5)" } });
  assert.equal(fileErrorText(eio, en), "reading it failed (a read error of the disk)");
  // an errno without words: the system's English is the detail
  const loop = fileProblem({ error_code: "mincore_failed", error_params: { os_error: 12, detail: "Cannot allocate memory (os error 12)" } });
  assert.equal(fileErrorText(loop, en), "its cached pages could not be counted (Cannot allocate memory (os error 12))");
  assert.equal(fileErrorText(fileProblem({ error: "vanished (Firefox updated?)", error_code: "vanished" }), en), "the file is gone (Firefox updated?)");
  assert.match(fileErrorText(fileProblem({ error: "refused: …", error_code: "escaped" }), en), /^refused: its path leaves its folder/);
  // an older host (English only) or a newer code: the host's English, said to be the host's
  assert.equal(fileErrorText(fileProblem({ error: "cannot open: x" }), en), "cannot open: x (the host's words)");
  assert.equal(fileErrorText(fileProblem({ error: "soon", error_code: "from_the_future" }), en), "soon (the host's words)");
  assert.equal(fileErrorText(fileProblem({}), en), "the host did not say what went wrong");
  assert.equal(fileErrorText(null, en), "the host did not say what went wrong");
});

test("page_use_unknown is worded from its reason; an older host's English detail is kept", () => {
  const en = englishMessage;
  assert.equal(
    hostNoteText({ code: "page_use_unknown", params: { reason: "kpageflags", os_error: 13, detail: "/proc/kpageflags (Permission denied (os error 13))" } }, en),
    "Which of the pages read were then used is unknown: /proc/kpageflags could not be read (permission denied).",
  );
  assert.equal(
    hostNoteText({ code: "page_use_unknown", params: { reason: "no_pfn", detail: "the trace events carry no page frame (pfn)" } }, en),
    "Which of the pages read were then used is unknown: the trace events carry no page frame number.",
  );
  assert.equal(
    hostNoteText({ code: "page_use_unknown", params: { detail: "the trace events carry no page frame (pfn)" } }, en),
    "Which of the pages read were then used is unknown: the trace events carry no page frame (pfn).",
  );
});

test("a request's error is worded from its code and params where they say it all, else the host's message", () => {
  const en = englishMessage;
  assert.equal(
    hostErrorText({ code: "busy", message: "16 long requests are running already …", params: { limit: 16 } }, en),
    "the host is already running 16 long requests; try again when one has finished",
  );
  assert.equal(
    hostErrorText({ code: "too_many_files", message: "…", params: { count: 5000, limit: 4096 } }, en),
    "the request names 5,000 files or folders, more than the 4,096 the host takes at once",
  );
  assert.equal(
    hostErrorText({ code: "outside_install_dir", message: "…", params: { path: "/etc/passwd", install_dir: "/usr/lib/firefox" } }, en),
    "/etc/passwd is outside Firefox's install folder /usr/lib/firefox",
  );
  assert.equal(hostErrorText({ code: "no_such_trace", message: "…", params: {} }, en), "the host has no trace — (never recorded, or dropped as the oldest)");
  // free-text reasons, the add-on's own errors and codes it does not know keep the message
  assert.equal(hostErrorText({ code: "io_error", message: "cannot open /: EACCES", params: { detail: "x" } }, en), "cannot open /: EACCES");
  assert.equal(hostErrorText({ code: "host_disconnected", message: "Native application tried to send a message" }, en), "Native application tried to send a message");
  assert.equal(hostErrorText({ code: "from_the_future", message: "later" }, en), "later");
});

test("every error code of the host is worded here or deliberately left to its message", async () => {
  const { readFileSync } = await import("node:fs");
  const source = readFileSync(new URL("../../../../native-host/src/error.rs", import.meta.url), "utf8");
  const start = source.indexOf("pub enum ErrorCode {");
  const codes = [...source.slice(start, source.indexOf("}", start)).matchAll(/^\s+(\w+),$/gm)].map((m) => m[1].replace(/(?<!^)([A-Z])/g, "_$1").toLowerCase());
  // the protocol's own errors (a bug of one side), cancellation (the page says it itself), and
  // free-text reasons from the system or the Firefox lookup; desktop_refused is worded from its
  // `reason` by the one page that asks (lib/models/desktop.js, tests/unit/lib/models/test.desktop.js)
  const MESSAGE = ["bad_utf8", "bad_json", "bad_request", "unknown_command", "frame_too_large", "truncated_frame", "firefox_not_found", "cancelled", "io_error", "reply_too_large", "not_benchmarking", "profile_not_found", "desktop_refused"];
  assert.ok(codes.length >= 18, `found ${codes.length} codes`);
  assert.deepEqual(codes.filter((c) => !HOST_ERROR_KEYS[c] && !MESSAGE.includes(c)), [], "a new code: word it or add it to MESSAGE");
});

test("a damaged relaunch.json set aside: worded from the recorded relaunch_status reply; one that could not be moved says so", async () => {
  const { recordedReply } = await import("../../host-replies.js");
  const { reply } = recordedReply("relaunch-status-set-aside");
  assert.equal(reply.data.last, null, "nothing is read from the damaged record");
  const [text, ...rest] = setAsideTexts(reply.data, t);
  assert.deepEqual(rest, []);
  const { moved_to: moved, folder } = reply.data.note_codes[0].params;
  assert.ok(text.startsWith("relaunch.json in the host's state folder was damaged") && text.includes(moved) && text.includes(folder), text);
  // Where the rename failed the host sends `error` instead of `moved_to`.
  const params = { file: "relaunch.json", folder, error: "Permission denied (os error 13)" };
  assert.match(hostNoteText({ code: "state_file_set_aside", params }, t), /could not be set aside \(Permission denied \(os error 13\)\): move it away yourself/);
  assert.deepEqual(setAsideTexts({}, t), []);
});
