// What the page says of the user's profile in a traced start (issue 31): each part's name, what a
// person can do about it, and the sentence of the answer line. Words the host's figures
// (`trace_summary`'s `profile`, native-host/src/trace/summary/profile.rs); computes none. Pure:
// words through `t(key, subs)`.
import { formatBytes, formatShare } from "./format.js";
import { plural } from "./i18n.js";

/** The message of each part's name (an add-on's is its name and id). */
const PART_KEYS = {
  session: "profilePartSession",
  places: "profilePartPlaces",
  favicons: "profilePartFavicons",
  startup_cache: "profilePartStartupCache",
  storage: "profilePartStorage",
  cookies: "profilePartCookies",
  prefs: "profilePartPrefs",
  other: "profilePartOther",
};

/** What a person can do about each part (the session's and an add-on's are worded below). */
const ADVICE_KEYS = {
  places: "profileAdvicePlaces",
  favicons: "profileAdviceFavicons",
  startup_cache: "profileAdviceStartupCache",
  storage: "profileAdviceStorage",
  cookies: "profileAdviceCookies",
  prefs: "profileAdvicePrefs",
  other: "profileAdviceOther",
};

/** A part as a person reads it: "the session store", "add-on Dark Reader (addon@darkreader.org)". */
export function partName(part, t) {
  if (part?.kind === "extension") {
    return part.name ? t("profilePartExtension", [part.name, part.id]) : t("profilePartExtensionNoName", [part.id]);
  }
  return t(PART_KEYS[part?.kind] ?? PART_KEYS.other);
}

/**
 * What a person can do about `row` (a part's row: {part, bytes, …}); `session`: the profile's
 * counted session ({tabs, restore_on_demand, …}) or null.
 */
export function partAdvice(row, session, t) {
  const tn = plural(t);
  const kind = row?.part?.kind;
  if (kind === "extension") {
    return t("profileAdviceExtension");
  }
  if (kind === "session") {
    if (!session) {
      return t("profileAdviceSession");
    }
    return tn(session.restore_on_demand ? "profileAdviceSessionOnDemand" : "profileAdviceSessionEager", session.tabs, [String(session.tabs)]);
  }
  return t(ADVICE_KEYS[kind] ?? ADVICE_KEYS.other);
}

/** How many of the largest parts the answer line names. */
export const ANSWER_PARTS = 2;

/**
 * The answer line's sentence on the profile: its share of this start's reads and of the reads a
 * thread waited for, and its largest parts with what to do about each; null where the trace
 * cannot tell (no per-file trace, no profile known) or the start read nothing.
 */
export function profileSentence(profile, t) {
  if (profile?.state !== "ready" || !(profile.bytes?.total > 0)) {
    return null;
  }
  const share = t("answerProfile", [
    formatShare(profile.bytes.profile, profile.bytes.total),
    formatBytes(profile.bytes.profile),
    formatShare(profile.sync_reads.profile, profile.sync_reads.total),
  ]);
  const largest = (profile.parts ?? []).slice(0, ANSWER_PARTS).filter((row) => row.bytes > 0);
  if (largest.length === 0) {
    return share;
  }
  const parts = largest.map((row) => t("answerProfilePart", [partName(row.part, t), formatBytes(row.bytes), partAdvice(row, profile.session, t)]));
  return `${share} ${t("answerProfileLargest", [parts.join(t("answerProfileJoin"))])}`;
}
