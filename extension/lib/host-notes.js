// The host's notes (docs/PROTOCOL.md, "Notes") worded from _locales: the host sends a code and
// named params, never text for the page (its English fields are for the CLI and older add-ons).
// Pure: words through `t(key, subs)`.
import { formatCount, formatMs } from "./format.js";
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
};

/** Why a trace is not exact (no_exact_trace's `reason`). */
export const NO_TRACE_REASON_KEYS = {
  not_asked: "traceReasonNotAsked",
  not_root: "traceReasonNotRoot",
  no_tracefs: "traceReasonNoTracefs",
  instance_taken: "traceReasonInstanceTaken",
  io: "traceReasonIo",
};

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
  page_use_unknown: (p) => [String(p.detail ?? "—")],
  no_exact_trace: (p, t) => [NO_TRACE_REASON_KEYS[p.reason] ? t(NO_TRACE_REASON_KEYS[p.reason]) : t("traceReasonUnknown", [String(p.reason ?? "—")])],
};

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
  const key = HOST_NOTE_KEYS[code];
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
