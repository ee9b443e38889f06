// The host's notes (docs/PROTOCOL.md, "Notes") worded from _locales: the host sends a code and
// named params, never text for the page (its English fields are for the CLI and older add-ons).
// Pure: words through `t(key, subs)`.
import { formatBytes, formatCount, formatMs } from "./format.js";
import { plural } from "./i18n.js";

/** Message of each note code the add-on knows. */
export const HOST_NOTE_KEYS = {
  hidden_not_owner: "hostNoteHiddenNotOwner",
  evicted_hidden: "hostNoteEvictedHidden",
  pages_stayed: "hostNotePagesStayed",
  damon_pageout: "hostNoteDamonPageout",
  no_exact_trace: "hostNoteNoExactTrace",
  install_changed: "hostNoteInstallChanged",
  unresolved_files: "hostNoteUnresolvedFiles",
  lost_events: "hostNoteLostEvents",
  cold_evicted: "hostNoteColdEvicted",
  started_as_root: "hostNoteStartedAsRoot",
  start_incomplete: "hostNoteStartIncomplete",
  attached_late: "hostNoteAttachedLate",
  page_use_unknown: "hostNotePageUseUnknown",
  archive_unreadable: "hostNoteArchiveUnreadable",
  firefox_profile_missing: "hostNoteFirefoxProfileMissing",
  state_file_set_aside: "hostNoteStateFileSetAside",
  cold_held: "hostNoteColdHeld",
  start_not_restored: "hostNoteStartNotRestored",
};

/** A damaged state file the host set aside (docs/PROTOCOL.md, "Notes"): the code of its note. */
export const STATE_FILE_SET_ASIDE = "state_file_set_aside";

/** Why Firefox's own startup profile is missing (firefox_profile_missing's `reason`). */
export const FIREFOX_PROFILE_REASON_KEYS = {
  gone: "firefoxProfileReasonGone",
  not_written: "firefoxProfileReasonNotWritten",
  truncated: "firefoxProfileReasonTruncated",
  refused: "firefoxProfileReasonRefused",
  io: "firefoxProfileReasonIo",
  clock: "firefoxProfileReasonClock",
};

/** Why a trace is not exact (no_exact_trace's `reason`). */
export const NO_TRACE_REASON_KEYS = {
  not_asked: "traceReasonNotAsked",
  not_root: "traceReasonNotRoot",
  no_tracefs: "traceReasonNoTracefs",
  instance_taken: "traceReasonInstanceTaken",
  io: "traceReasonIo",
};

/** Why page use is unknown (page_use_unknown's `reason`). */
export const PAGE_USE_REASON_KEYS = {
  no_pfn: "pageUseReasonNoPfn",
  kpageflags: "pageUseReasonKpageflags",
};

/** What went wrong with one file (`error_code`, docs/PROTOCOL.md "Per-file error codes"). */
export const FILE_ERROR_KEYS = {
  vanished: "fileErrorVanished",
  changed: "fileErrorChanged",
  escaped: "fileErrorEscaped",
  not_regular: "fileErrorNotRegular",
  open_failed: "fileErrorOpenFailed",
  read_failed: "fileErrorReadFailed",
  mincore_failed: "fileErrorMincoreFailed",
  fadvise_failed: "fileErrorFadviseFailed",
  // the add-on's own: the host called a file exact but sent no resident page count
  no_resident_count: "fileErrorNoResidentCount",
};

/** The codes whose message names the failed system call's reason (`os_error`, `detail`). */
const OS_ERROR_CODES = new Set(["open_failed", "read_failed", "mincore_failed", "fadvise_failed"]);

/** The errnos worded here (EPERM, EIO, EACCES); any other shows the system's English. */
export const OS_ERROR_KEYS = {
  1: "osErrorPermission",
  5: "osErrorIo",
  13: "osErrorPermission",
};

/** Why a system call failed: worded for a known errno, else the system's English as a detail. */
export function osErrorText(params, t) {
  const key = OS_ERROR_KEYS[params?.os_error];
  if (key) {
    return t(key);
  }
  return typeof params?.detail === "string" && params.detail ? params.detail : "—";
}

/**
 * A file's problem, worded: `problem` is {code, params, english} (from `error_code`,
 * `error_params` and `error`). A code this add-on does not know, or an older host that sent only
 * English, shows the host's English as a detail: it is all there is.
 */
export function fileErrorText(problem, t) {
  const code = problem?.code;
  const key = FILE_ERROR_KEYS[code];
  if (key) {
    return t(key, OS_ERROR_CODES.has(code) ? [osErrorText(problem.params, t)] : []);
  }
  if (typeof problem?.english === "string" && problem.english) {
    return t("fileErrorHostWords", [problem.english]);
  }
  return t("fileErrorUnknown");
}

/** A file entry's problem as fileErrorText takes it, from the host's fields. */
export function fileProblem(entry) {
  return {
    code: typeof entry?.error_code === "string" ? entry.error_code : null,
    params: entry?.error_params && typeof entry.error_params === "object" ? entry.error_params : {},
    english: typeof entry?.error === "string" ? entry.error : null,
  };
}

/**
 * A request's error (docs/PROTOCOL.md, "Error codes") worded from its code and params, for the
 * codes whose params say it all. The others keep the host's `message` as the detail: the
 * protocol's own errors (a bug of one side), `io_error` and `firefox_not_found` (the system's
 * or the lookup's reason in free text), a newer host's code, and the add-on's own errors
 * (`host_missing`, `host_disconnected`: Firefox's words).
 */
export const HOST_ERROR_KEYS = {
  busy: "hostErrorBusy",
  too_many_files: "hostErrorTooManyFiles",
  no_such_file: "hostErrorNoSuchFile",
  outside_install_dir: "hostErrorOutsideInstallDir",
  no_such_trace: "hostErrorNoSuchTrace",
  unknown_request: "hostErrorUnknownRequest",
};

const param = (v) => (typeof v === "number" ? formatCount(v) : typeof v === "string" && v ? v : "—");

const HOST_ERROR_SUBS = {
  busy: (p) => [param(p.limit)],
  too_many_files: (p) => [param(p.count), param(p.limit)],
  no_such_file: (p) => [param(p.path)],
  outside_install_dir: (p) => [param(p.path), param(p.install_dir)],
  no_such_trace: (p) => [param(p.trace)],
  unknown_request: (p) => [String(p.target ?? "—")],
};

/** A request's error in words (see HOST_ERROR_KEYS); `error` is a HostError or {code, message, params}. */
export function hostErrorText(error, t) {
  const key = HOST_ERROR_KEYS[error?.code];
  if (key) {
    const params = error.params && typeof error.params === "object" ? error.params : {};
    return t(key, HOST_ERROR_SUBS[error.code](params));
  }
  return String(error?.message ?? error ?? "—");
}

/** Why a trace's recording ended (`ended_by_code`). */
export const ENDED_BY_KEYS = {
  session_restored: "traceEndedSessionRestored",
  quiet: "traceEndedQuiet",
  seconds: "traceEndedSeconds",
  limit: "traceEndedLimit",
  interrupted: "traceEndedInterrupted",
  firefox_exited: "traceEndedFirefoxExited",
};

const count = (v) => (typeof v === "number" ? formatCount(v) : "—");

/** The substitutions of each code with params, from the note's params. */
const SUBS = {
  unresolved_files: (p) => [count(p.count)],
  lost_events: (p) => [count(p.count)],
  cold_evicted: (p) => [count(p.files), count(p.pages)],
  attached_late: (p) => [formatMs(p.ms)],
  page_use_unknown: (p, t) => [pageUseReason(p, t)],
  archive_unreadable: (p) => [String(p.path ?? "—")],
  state_file_set_aside: (p) => (p.moved_to ? [String(p.file ?? "—"), String(p.moved_to), String(p.folder ?? "—")] : [String(p.file ?? "—"), String(p.folder ?? "—"), String(p.error ?? "—")]),
  firefox_profile_missing: (p, t) => [FIREFOX_PROFILE_REASON_KEYS[p.reason] ? t(FIREFOX_PROFILE_REASON_KEYS[p.reason]) : String(p.detail ?? "—")],
  no_exact_trace: (p, t) => [NO_TRACE_REASON_KEYS[p.reason] ? t(NO_TRACE_REASON_KEYS[p.reason]) : t("traceReasonUnknown", [String(p.reason ?? "—")])],
  cold_held: (p, t) => [
    typeof p.bytes === "number" ? formatBytes(p.bytes) : t("coldHeldHidden"),
    (Array.isArray(p.files) ? p.files : []).map((f) => `${String(f?.path ?? "—")} (${typeof f?.bytes === "number" ? formatBytes(f.bytes) : "—"})`).join(", ") || "—",
    (Array.isArray(p.processes) ? p.processes : []).map((m) => `${String(m?.exe || "?")} (pid ${String(m?.pid ?? "?")})`).join(", ") || t("coldHeldNoProcess"),
  ],
  start_not_restored: (p) => [String(p.profile ?? "—")],
};

/** page_use_unknown's reason, worded; an older host's note has only the English `detail`. */
function pageUseReason(p, t) {
  const key = PAGE_USE_REASON_KEYS[p.reason];
  if (key) {
    return t(key, p.reason === "kpageflags" ? [osErrorText(p, t)] : []);
  }
  return String(p.detail ?? "—");
}

/** The count that picks the plural form of each counting code's message (tn). */
const COUNTS = {
  unresolved_files: (p) => p.count,
  lost_events: (p) => p.count,
  cold_evicted: (p) => p.files,
};

/**
 * One note, worded: `note` is a code string or {code, params}. A code this add-on does not know
 * (a newer host) is named as a code, never guessed at.
 */
export function hostNoteText(note, t) {
  const code = typeof note === "string" ? note : note?.code;
  const params = (typeof note === "object" && note?.params) || {};
  // A damaged state file that could not even be moved has a message of its own.
  const key = code === STATE_FILE_SET_ASIDE && !params.moved_to ? "hostNoteStateFileNotSetAside" : HOST_NOTE_KEYS[code];
  if (!key) {
    return t("hostNoteUnknown", [String(code ?? "—")]);
  }
  const subs = SUBS[code]?.(params, t) ?? [];
  return COUNTS[code] ? plural(t)(key, COUNTS[code](params), subs) : t(key, subs);
}

/** Why a trace ended, worded; an older host's trace without a code says only that. */
export function endedByText(trace, t) {
  const key = ENDED_BY_KEYS[trace?.ended_by_code];
  return key ? t(key) : t("traceEndedUnknown");
}

/**
 * A trace's notes, worded: from `note_codes`; a trace of an older host has only English
 * `notes`, which the page does not show: one line says how many there are.
 */
export function traceNoteTexts(trace, t) {
  if (Array.isArray(trace?.note_codes) && trace.note_codes.length > 0) {
    return trace.note_codes.map((note) => hostNoteText(note, t));
  }
  const english = Array.isArray(trace?.notes) ? trace.notes.length : 0;
  const tn = plural(t);
  return english > 0 ? [tn("traceNotesOldHost", english)] : [];
}

/**
 * The damaged state files a reply says it set aside (`note_codes` of `plan_status`, `learn`,
 * `relaunch_status`, `desktop`), worded; [] when none. Each is said once by the host (the file
 * is gone from its place after), so a section keeps what it was told.
 */
export function setAsideTexts(reply, t) {
  const notes = Array.isArray(reply?.note_codes) ? reply.note_codes : [];
  return notes.filter((n) => n?.code === STATE_FILE_SET_ASIDE).map((n) => hostNoteText(n, t));
}
