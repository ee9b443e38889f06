// The desktop launch through the prefetch (docs/PROTOCOL.md: `desktop`): whether the user's copy
// of Firefox's desktop entry is in place, why it cannot be, which plan a launch would prefetch
// (stale after a Firefox update) and what the last launch's prefetch did. Pure: the host's
// reply comes in, lines of words go out through `t(key, subs)`. No browser.*, no DOM.
import { HOST_DISCONNECTED, HOST_MISSING } from "../transport/host-client.js";
import { formatDateTime, formatMB, formatNumber, formatSeconds, formatShare } from "../wording/format.js";
import { hostErrorText, hostNoteText } from "../wording/host-notes.js";
import { setAsideNotes } from "./plan.js";
import { plural } from "../wording/i18n.js";
import { hostCommands } from "../wording/commands.js";
import { RECORD_ARGS } from "./trace.js";
import { partName } from "../wording/profile-text.js";

/** The host's code for a command it does not know: a host older than this add-on. */
export const UNKNOWN_COMMAND = "unknown_command";

const isCount = (n) => typeof n === "number" && Number.isFinite(n) && n >= 0;
const text = (v) => (typeof v === "string" && v ? v : null);

/** Why `enable` cannot write the entry, by the host's problem code (an unknown code: its English). */
const PROBLEM_KEYS = {
  host_replaceable: "desktopProblemHostReplaceable",
  no_system_entry: "desktopProblemNoSystemEntry",
  foreign_entry: "desktopProblemForeignEntry",
  unreadable_entry: "desktopProblemUnreadable",
};

/** A `desktop` reply as what the page shows; missing values stay null. */
export function desktopView(status) {
  const prefetch = status?.prefetch ?? {};
  const last = status?.last ?? null;
  const problem = status?.problem && typeof status.problem.code === "string" ? { code: status.problem.code, message: String(status.problem.message ?? "") } : null;
  return {
    state: status?.enabled ? (status.outdated ? "outdated" : "on") : problem ? "unavailable" : "off",
    // last-prefetch.json was damaged and set aside by this request: said once (host notes)
    setAside: setAsideNotes(status),
    enabled: status?.enabled === true,
    entry: text(status?.entry),
    // The host binary the entry runs is gone (the package removed): launches fail.
    hostGone: status?.entry_host_missing === true ? text(status?.entry_host) ?? "—" : null,
    systemEntry: text(status?.system_entry),
    problem,
    plan: {
      source: ["trace", "learned"].includes(prefetch.source) ? prefetch.source : null,
      traces: isCount(prefetch.traces) ? prefetch.traces : 0,
      buildId: text(prefetch.build_id),
      fallback: text(prefetch.fallback?.code),
      tracedBuild: text(prefetch.fallback?.traced_build),
      learnedStale: prefetch.learned_stale === true,
    },
    last: last
      ? {
          at: isCount(last.at_ms) ? last.at_ms : null,
          failed: text(last.failed),
          source: ["trace", "learned"].includes(last.plan?.source) ? last.plan.source : null,
          bytesRead: isCount(last.bytes_read) ? last.bytes_read : null,
          bytesCached: isCount(last.bytes_cached) ? last.bytes_cached : null,
          elapsedMs: isCount(last.elapsed_ms) ? last.elapsed_ms : null,
          ended: text(last.ended),
          // Read before Firefox started (a disk with a large readahead window), else beside it.
          first: last.strategy === "first",
          readAheadKb: isCount(last.read_ahead_kb) ? last.read_ahead_kb : null,
          profile: profileView(last),
        }
      : null,
    // What packing would save (learn/packing.rs): null when the host has no traced plan of this
    // build; undefined from a host older than the field.
    packing: status && "packing" in status ? packingView(status.packing) : undefined,
    packed: packedView(status?.packed),
  };
}

/**
 * `desktop`'s `packing`: this machine's traced start, its bytes of the install's files and what
 * a compressed image holds of them (missing stays null: never 0).
 */
function packingView(p) {
  if (!p || typeof p !== "object") {
    return null;
  }
  const count = (v) => (isCount(v) ? v : null);
  return {
    basis: p.basis === "image" ? "image" : "estimate",
    compressor: text(p.compressor),
    blockSize: count(p.block_size),
    plain: count(p.bytes_plain),
    blocks: count(p.bytes_blocks),
    compressed: count(p.bytes_compressed),
    unmapped: count(p.bytes_unmapped) ?? 0,
    outside: count(p.bytes_outside) ?? 0,
    leftOff: text(p.left_off),
  };
}

/** `desktop`'s `packed`: the user's packed image of this install, or null. */
function packedView(p) {
  if (!p || typeof p !== "object") {
    return null;
  }
  return {
    compressor: text(p.compressor),
    bytesImage: isCount(p.bytes_image) ? p.bytes_image : null,
    bytesInstall: isCount(p.bytes_install) ? p.bytes_install : null,
    current: p.current === true,
    notUsed: text(p.not_used),
  };
}

/** The lines on packing: the packed image, if any, and what this machine's traced start needs. */
function packingLines(view, t, locale) {
  const lines = [];
  const { packed, packing } = view;
  if (packed) {
    const subs = [formatMB(packed.bytesImage, locale), packed.compressor ?? "—", formatMB(packed.bytesInstall, locale)];
    lines.push({ id: "packed", text: packed.current ? t("desktopPacked", subs) : t("desktopPackedNotUsed", [...subs, packed.notUsed ?? "—"]) });
  }
  if (packing === null) {
    lines.push({ id: "packing", text: t("desktopPackingNone") });
  } else if (packing) {
    const needed = packing.plain === null ? null : packing.plain + packing.unmapped;
    const all = needed === null ? null : needed + packing.outside;
    const head = [formatMB(packing.plain, locale), formatShare(needed, all, locale), formatMB(packing.outside, locale)];
    if (packing.compressed === null) {
      lines.push({ id: "packing", text: t("desktopPackingHidden", head) });
    } else {
      const ratio = packing.plain > 0 ? `${formatNumber(packing.compressed / packing.plain, locale, { fractionDigits: 2 })}x` : "—";
      const kib = packing.blockSize === null ? "—" : String(packing.blockSize / 1024);
      const key = packing.basis === "image" ? "desktopPackingImage" : "desktopPackingEstimate";
      lines.push({ id: "packing", text: t(key, [...head, packing.compressor ?? "—", kib, formatMB(packing.compressed, locale), ratio]) });
    }
  }
  return lines;
}

/**
 * The user's profile in the last launch's plan (learn/plan/profile.rs): what it planned and read
 * of it, the files skipped because Firefox wrote or replaced them since the trace (by part), or
 * why it was left out; null where the record says nothing of a profile (the learned plan, an
 * older host).
 */
function profileView(last) {
  const p = last?.profile;
  if (!p || typeof p !== "object") {
    return null;
  }
  const changed = Array.isArray(p.changed) ? p.changed.filter((c) => c && isCount(c.files)) : [];
  return {
    bytes: isCount(p.bytes) ? p.bytes : null,
    files: isCount(p.files) ? p.files : null,
    bytesRead: isCount(last.bytes_read_profile) ? last.bytes_read_profile : null,
    changedFiles: changed.reduce((sum, c) => sum + c.files, 0),
    changed: changed.map((c) => ({ part: c.part ?? null, files: c.files })),
    leftOut: text(p.left_out?.code),
  };
}

/** Why the profile was left out of a launch's plan, by the host's code. */
const LEFT_OUT_KEYS = {
  other_profile: "desktopProfileOtherProfile",
  unknown_profile: "desktopProfileUnknownProfile",
  not_owned: "desktopProfileNotOwned",
  gone: "desktopProfileGone",
};

/** The line on the profile's part of the last launch's prefetch, or null. */
function profileLine(profile, t, locale) {
  if (!profile) {
    return null;
  }
  if (profile.leftOut) {
    return t(LEFT_OUT_KEYS[profile.leftOut] ?? "desktopProfileLeftOutOther", [profile.leftOut]);
  }
  const tn = plural(t);
  const held = tn("desktopProfilePlanned", profile.files ?? 0, [formatMB(profile.bytes, locale), String(profile.files ?? "—"), formatMB(profile.bytesRead, locale)]);
  if (profile.changedFiles === 0) {
    return held;
  }
  const parts = profile.changed.map((c) => `${partName(c.part, t)} (${c.files})`).join(", ");
  return `${held} ${tn("desktopProfileChanged", profile.changedFiles, [String(profile.changedFiles), parts])}`;
}

/** Whether a launch's plan is stale: the traces, or the learned plan, are of another Firefox build. */
export function planIsStale(view) {
  return view.plan.fallback === "other_build" || view.plan.learnedStale;
}

/**
 * The page's lines for a desktopView: [{id, text}], in order: the state, the plan a launch
 * reads (the stale line when Firefox was updated since it was traced), the last launch.
 * `recordCommand`: the command that records a trace here, as the host says it (page/relay.js).
 */
export function desktopLines(view, t, { when = (ms) => formatDateTime(ms), locale = undefined, recordCommand = hostCommands(null).runAsRoot(RECORD_ARGS) } = {}) {
  const tn = plural(t);
  const lines = [];
  if (view.state === "on" || view.state === "outdated") {
    lines.push({ id: "state", text: t("desktopOn", [view.entry ?? "—", view.systemEntry ?? "—"]) });
    if (view.hostGone) {
      lines.push({ id: "outdated", text: t("desktopHostGone", [view.hostGone]) });
    } else if (view.state === "outdated") {
      lines.push({ id: "outdated", text: t("desktopOutdated") });
    }
  } else if (view.problem) {
    const key = PROBLEM_KEYS[view.problem.code];
    lines.push({ id: "problem", text: key ? t(key, [view.entry ?? view.systemEntry ?? "—"]) : t("desktopProblemOther", [view.problem.message]) });
  } else {
    lines.push({ id: "state", text: t("desktopOff", [view.systemEntry ?? "—"]) });
  }
  const { plan } = view;
  if (plan.fallback === "other_build") {
    // The plan a launch reads renews itself from the next start the background learns (the
    // learned plan of this build comes before the old traces read by name); a traced cold
    // start renews the traced plan itself. Once a start is learned, the stale line says so.
    const renewed = plan.source === "learned" && !plan.learnedStale;
    lines.push({
      id: "stale",
      text: renewed
        ? t("desktopPlanStaleRenewed", [plan.tracedBuild ?? "—", plan.buildId ?? "—"])
        : t("desktopPlanStale", [plan.tracedBuild ?? "—", plan.buildId ?? "—", recordCommand]),
    });
  }
  if (plan.source === "trace" && plan.fallback === "other_build") {
    // Updated since traced: the old plan's files, read by name (issue 39 #11).
    lines.push({ id: "plan", text: tn("desktopPlanTracedByName", plan.traces, [String(plan.traces), plan.tracedBuild ?? "—"]) });
  } else if (plan.source === "trace") {
    lines.push({ id: "plan", text: tn("desktopPlanTraced", plan.traces, [String(plan.traces), plan.buildId ?? "—"]) });
  } else if (plan.source === "learned") {
    lines.push({ id: "plan", text: plan.learnedStale ? t("desktopPlanLearnedStale") : t("desktopPlanLearned", [recordCommand]) });
  } else {
    lines.push({ id: "plan", text: t(plan.learnedStale ? "desktopPlanNoneStale" : "desktopPlanNone") });
  }
  // A damaged record of the last launch is why none is shown.
  lines.push(...(view.setAside ?? []).map((note) => ({ id: "set-aside", text: hostNoteText(note, t) })));
  const { last } = view;
  if (last) {
    const at = last.at === null ? "—" : when(last.at);
    if (last.failed) {
      lines.push({ id: "last", text: t("desktopLastFailed", [at]) });
    } else if (last.source === null) {
      lines.push({ id: "last", text: t("desktopLastNone", [at]) });
    } else if (last.first) {
      const window = last.readAheadKb === null ? "—" : formatMB(last.readAheadKb * 1024, locale);
      lines.push({
        id: "last",
        text: t("desktopLastFirst", [at, formatMB(last.bytesRead, locale), formatMB(last.bytesCached, locale), formatSeconds(last.elapsedMs, locale), window]),
      });
    } else {
      lines.push({
        id: "last",
        text: t("desktopLast", [at, formatMB(last.bytesRead, locale), formatMB(last.bytesCached, locale), formatSeconds(last.elapsedMs, locale)]),
      });
    }
    const profile = last.failed || last.source === null ? null : profileLine(last.profile, t, locale);
    if (profile) {
      lines.push({ id: "last-profile", text: profile });
    }
  }
  lines.push(...packingLines(view, t, locale));
  return lines;
}

/**
 * Why a `desktop` request failed, in words: {state, text}. A refused `enable` is worded from its
 * reason (the status's problem code), the rest as the plan section words host errors.
 */
export function desktopErrorView(error, t) {
  const code = error?.code ?? "internal";
  if (code === HOST_MISSING) {
    return { state: "missing", text: t("desktopHostMissing") };
  }
  if (code === UNKNOWN_COMMAND) {
    return { state: "old", text: t("desktopHostOld") };
  }
  if (code === "desktop_refused") {
    const key = PROBLEM_KEYS[error?.params?.reason];
    return { state: "refused", text: key ? t(key, ["—"]) : t("desktopProblemOther", [String(error?.params?.detail ?? error?.message ?? "—")]) };
  }
  const detail = code === HOST_DISCONNECTED ? String(error?.message ?? "") : hostErrorText(error, t);
  return { state: "error", text: t("desktopFailed", [detail]) };
}
