// The preload plan (docs/PROTOCOL.md: `learn`, `plan_status`, `preload` with `plan`): learning a
// start's working set once per Firefox process start, and what the page and the popup say about
// the host's plan. Pure: storage and the host come in as parameters, words through `t(key, subs)`.
// No browser.*, no DOM.
import { HOST_DISCONNECTED, HOST_MISSING } from "../transport/host-client.js";
import { formatDateTime, formatMB, formatPercent, formatSeconds } from "../wording/format.js";
import { hostErrorText, hostNoteText, setAsideTexts, STATE_FILE_SET_ASIDE } from "../wording/host-notes.js";
import { plural } from "../wording/i18n.js";
import { watchedPreload } from "./residency.js";
import { hostCommands } from "../wording/commands.js";

/** storage.local key of the last `learn` the background sent: {startId, at, status, result, error, lastLearned}. */
export const LEARN_KEY = "plan.learn";

/** The host's code for a command it does not know: a host older than this add-on. */
export const UNKNOWN_COMMAND = "unknown_command";

/**
 * Asks the host to `learn` this start's working set, once per process start (`startId` is the
 * start's record id, as the recorder dedupes), telling it the start's sessionRestored (a trace of
 * this start keeps it: the launch prefetch leaves out what was first needed after it). Never
 * throws for the host's sake: a missing host, a host without `learn` (unknown_command) or a failed
 * learn is stored as such and returned.
 * Returns {status: "learned" | "unsupported" | "no-host" | "error" | "duplicate" | "no-start", entry}.
 */
export async function learnOnce({ startId, sessionRestoredMs = null, storage, requestHost, now = Date.now }) {
  if (!startId) {
    return { status: "no-start", entry: null };
  }
  const stored = (await storage.get(LEARN_KEY))?.[LEARN_KEY] ?? null;
  if (stored?.startId === startId) {
    return { status: "duplicate", entry: stored };
  }
  // Claimed before asking, so a background page restarted while the host learns does not ask twice.
  const claim = { startId, at: now(), status: "learning", result: null, error: null, lastLearned: stored?.lastLearned ?? null };
  await storage.set({ [LEARN_KEY]: claim });
  let entry;
  try {
    const params = isCount(sessionRestoredMs) ? { session_restored_ms: sessionRestoredMs } : {};
    const result = await requestHost("learn", params);
    const at = now();
    entry = { ...claim, at, status: "learned", result, lastLearned: { at, startId, result } };
  } catch (error) {
    const code = error?.code ?? "internal";
    const status = code === UNKNOWN_COMMAND ? "unsupported" : code === HOST_MISSING ? "no-host" : "error";
    entry = { ...claim, at: now(), status, error: { code, message: String(error?.message ?? error) } };
  }
  await storage.set({ [LEARN_KEY]: entry });
  return { status: entry.status, entry };
}

const isCount = (n) => typeof n === "number" && Number.isFinite(n) && n >= 0;

/**
 * The `preload` parameters that read the uncached files of a plan view: `files`, and
 * `files_b64` only when a name is not UTF-8 (its display text would name no file); a button a
 * person watches, so not idle (watchedPreload).
 */
export function uncachedPreloadParams(view) {
  const paths = view?.uncached?.paths ?? [];
  if (paths.length === 0) {
    return null;
  }
  const b64 = view.uncached.pathsB64 ?? [];
  return watchedPreload(b64.some((b) => b !== null) ? { files: paths, files_b64: b64 } : { files: paths });
}

/** The `state_file_set_aside` notes of a reply ([] for none, or an older host). */
export function setAsideNotes(reply) {
  return Array.isArray(reply?.note_codes) ? reply.note_codes.filter((n) => n?.code === STATE_FILE_SET_ASIDE) : [];
}

/** A `plan_status` reply as what the UI shows; missing values stay null. */
export function planView(status) {
  const autostart = status?.autostart ?? {};
  const lastRun = autostart.last_run ?? null;
  const listed = Array.isArray(status?.uncached_files) ? status.uncached_files.filter((file) => typeof file?.path === "string") : null;
  // Only files the plan reads (the learned starts used them) make the next start read from disk:
  // a file no start touched (a 14 kB `vulkantest` probe) raises no alarm. `planned` is null when
  // nothing is learned (no judgement: every file counts) and absent from older hosts.
  const uncached = listed && listed.filter((file) => file.planned !== false);
  const plannedBytes = isCount(status?.planned_bytes) ? status.planned_bytes : null;
  const installBytes = isCount(status?.install_bytes) ? status.install_bytes : null;
  // The plan names system libraries too: only its install part is a share of the install folder.
  // A host older than the split sends only the total (both parts null then).
  const split = isCount(status?.planned_install_bytes) && isCount(status?.planned_system_bytes);
  const plannedInstallBytes = split ? status.planned_install_bytes : null;
  return {
    state: status?.learned ? "learned" : "none",
    // working-set.json was damaged and set aside by this very request: said once (host notes)
    setAside: setAsideNotes(status),
    learned: Boolean(status?.learned),
    starts: isCount(status?.starts) ? status.starts : 0,
    plannedBytes,
    plannedFiles: isCount(status?.planned_files) ? status.planned_files : null,
    installBytes,
    plannedInstallBytes,
    plannedSystemBytes: split ? status.planned_system_bytes : null,
    plannedFraction: plannedInstallBytes !== null && installBytes ? plannedInstallBytes / installBytes : null,
    changedFiles: Array.isArray(status?.changed_files) ? status.changed_files : [],
    // A Firefox update since the plan was learned (hosts before it: false, builds null).
    stale: status?.stale === true,
    buildId: typeof status?.build_id === "string" ? status.build_id : null,
    learnedBuildId: typeof status?.learned_build_id === "string" ? status.learned_build_id : null,
    // null: residency is hidden from this user, so which files are uncached is not known
    uncached: uncached && {
      count: uncached.length,
      paths: uncached.map((file) => file.path),
      // The exact bytes of names that are not UTF-8 (docs/PROTOCOL.md, "Paths that are not
      // UTF-8"); null for the others. `paths` then holds only their display text.
      pathsB64: uncached.map((file) => (typeof file.path_b64 === "string" ? file.path_b64 : null)),
      bytes: uncached.reduce((sum, file) => sum + (isCount(file.size) ? file.size : 0), 0),
      // uncached files no learned start read: not needed to start, so not in the alarm
      unused: listed.length - uncached.length,
    },
    autostart: {
      enabled: Boolean(autostart.enabled),
      kind: autostart.kind ?? null,
      lastRun: lastRun
        ? {
            at: isCount(lastRun.at_ms) ? lastRun.at_ms : null,
            bytes: isCount(lastRun.bytes) ? lastRun.bytes : null,
            elapsedMs: isCount(lastRun.elapsed_ms) ? lastRun.elapsed_ms : null,
            planned: Boolean(lastRun.planned),
          }
        : null,
    },
    // the host's code (lib/wording/host-notes.js words it); its English `note` is for older add-ons
    noteCode: typeof autostart.note_code === "string" && autostart.note_code ? autostart.note_code : null,
    // The kernel reclaims idle page cache by itself (DAMON pageout): a login preload does not stay.
    damonPageout: autostart.damon_pageout === true,
  };
}

/**
 * Why there is no plan_status: {state, key} with state "missing" (no host), "old" (a host
 * without `plan_status`: `hostVersion` names it), "stopped" or "error".
 */
export function planErrorView(error, { hostVersion = null } = {}) {
  const code = error?.code ?? "internal";
  if (code === HOST_MISSING) {
    return { state: "missing", key: "planHostMissing", subs: [] };
  }
  if (code === UNKNOWN_COMMAND) {
    return hostVersion
      ? { state: "old", key: "planHostOld", subs: [hostVersion] }
      : { state: "old", key: "planHostOldUnknown", subs: [] };
  }
  if (code === HOST_DISCONNECTED) {
    return { state: "stopped", key: "planHostStopped", subs: [String(error?.message ?? "")] };
  }
  return { state: "error", key: "planFailed", subs: [String(error?.message ?? error)] };
}

/** "12 Nov, 07:31" style time of a past run; `format` is injected so tests pin the locale. */
const defaultWhen = (ms) => formatDateTime(ms);

/**
 * The page's lines for a planView: [{id, text}], in order. `t(key, subs)` words them, `when(ms)`
 * formats a time.
 */
export function planLines(view, t, { when = defaultWhen, locale = undefined, commands = hostCommands(null) } = {}) {
  const tn = plural(t);
  // A damaged working-set.json comes first: it is why nothing is learned.
  const lines = (view.setAside ?? []).map((note) => ({ id: "set-aside", text: hostNoteText(note, t) }));
  if (view.learned) {
    lines.push({
      id: "learned",
      text:
        view.plannedInstallBytes === null
          ? tn("planLearnedTotal", view.starts, [String(view.starts), formatMB(view.plannedBytes, locale), formatMB(view.installBytes, locale)])
          : tn("planLearned", view.starts, [
              String(view.starts),
              formatMB(view.plannedInstallBytes, locale),
              formatPercent(view.plannedFraction, locale),
              formatMB(view.installBytes, locale),
              formatMB(view.plannedSystemBytes, locale),
            ]),
    });
    // Why the plan is more than the running Firefox maps (the residency section's figure).
    lines.push({ id: "why", text: t("planWhyMore") });
    if (view.stale) {
      lines.push({ id: "stale", text: t("planStale", [view.learnedBuildId ?? "—", view.buildId ?? "—"]) });
    }
    if (view.changedFiles.length > 0) {
      lines.push({ id: "changed", text: tn("planChanged", view.changedFiles.length) });
    }
  } else {
    lines.push({ id: "none", text: t("planNone") });
  }
  const { autostart } = view;
  lines.push({
    id: "autostart",
    text: autostart.enabled ? t("planAutostartOn", [autostart.kind ?? "—"]) : t("planAutostartOff", [commands.run("autostart enable")]),
  });
  if (autostart.lastRun) {
    lines.push({ id: "last-run", text: lastRunText(autostart.lastRun, t, { when, locale }) });
  } else if (autostart.enabled) {
    lines.push({ id: "last-run", text: t("planNeverRan") });
  }
  if (view.damonPageout) {
    // Worded here rather than through the host's note code, which says the same.
    lines.push({ id: "damon", text: t("planDamon") });
  } else if (view.noteCode) {
    lines.push({ id: "note", text: t("planNote", [hostNoteText(view.noteCode, t)]) });
  }
  return lines;
}

function lastRunText(run, t, { when, locale }) {
  const at = run.at === null ? "—" : when(run.at);
  const seconds = formatSeconds(run.elapsedMs, locale);
  return t(run.planned ? "planLastRunPlanned" : "planLastRunFull", [at, formatMB(run.bytes, locale), seconds]);
}

/** The uncached-files line, or null when every install file has pages cached (or nobody can tell). */
export function uncachedText(view, t) {
  if (!view.uncached || view.uncached.count === 0) {
    return null;
  }
  const tn = plural(t);
  return view.learned ? tn("planUncached", view.uncached.count) : tn("planUncachedAny", view.uncached.count);
}

/** How `learn` says it used the page cache (its `sources.resident_use`), worded. */
export const RESIDENT_USE_KEYS = {
  used: "planLearnCacheUsed",
  warm: "planLearnCacheWarm",
  hidden: "planLearnCacheHidden",
};

/**
 * What the last `learn` of the background found (storage entry from learnOnce), as one line or
 * null: when, from how many files Firefox really mapped, and whether the page cache was used and
 * if not why, in the words of what happened (a warm start as root is "the start read little",
 * not "0 with exact residency"). Its size is the plan's line's: this line gives none of its own.
 */
export function learnText(entry, t, { when = defaultWhen } = {}) {
  if (!entry) {
    return null;
  }
  const tn = plural(t);
  const learned = entry.lastLearned;
  const sources = learned?.result?.sources ?? {};
  let learnedLine = null;
  if (learned) {
    const files = sources.mapped_files ?? sources.mapped;
    const cache = RESIDENT_USE_KEYS[sources.resident_use]
      ? tn(RESIDENT_USE_KEYS[sources.resident_use], sources.resident ?? 0)
      : t("planLearnCacheOld", [String(sources.resident ?? 0)]);
    learnedLine = tn("planLearnLast", files, [when(learned.at), String(files ?? "—"), cache]);
  }
  if (entry.status === "learned" || entry.status === "learning") {
    // The learn that set a damaged working-set.json aside says so as long as it is the last one.
    const setAside = entry.status === "learned" ? setAsideTexts(entry.result, t) : [];
    return setAside.length > 0 ? [...setAside, learnedLine].filter(Boolean).join(" ") : learnedLine;
  }
  if (entry.status === "unsupported") {
    return t("planLearnUnsupported");
  }
  if (entry.status === "no-host") {
    return learnedLine;
  }
  const failed = t("planLearnFailed", [entry.error ? hostErrorText(entry.error, t) : "—"]);
  return learnedLine ? `${failed} ${learnedLine}` : failed;
}

/**
 * The `preload` request that reads the learned plan, as the page's "Preload planned pages" and the
 * popup's "Preload the plan" both send it (docs/PROTOCOL.md, `preload` with `plan`): at full speed,
 * since a person clicked it and watches it (watchedPreload); only the login preload is idle.
 */
export const PLAN_PRELOAD = watchedPreload({ files: null, plan: true });

/**
 * The popup's plan lines, from a plan_status reply or the error that came instead:
 * {state, text, autostart, learned}. `text` says what the plan reads (or that none is learned,
 * and what that leaves: the full preload, which costs more than it saves before a launch);
 * `autostart` the login preload and its last run, or null; `learned` whether "Preload the plan"
 * can run.
 */
export function popupPlanText({ status = null, error = null }, t, { when = defaultWhen, locale = undefined } = {}) {
  if (error) {
    const none = { autostart: null, learned: false };
    if (error.code === HOST_MISSING) {
      return { state: "missing", text: t("popupPlanNoHost"), ...none };
    }
    if (error.code === UNKNOWN_COMMAND) {
      return { state: "old", text: t("popupPlanHostOld"), ...none };
    }
    return { state: "error", text: t("popupPlanError", [hostErrorText(error, t)]), ...none };
  }
  const view = planView(status);
  if (!view.learned) {
    return { state: "none", text: t("popupPlanNone"), autostart: null, learned: false };
  }
  const tn = plural(t);
  const text =
    view.plannedInstallBytes === null
      ? tn("popupPlanLearnedTotal", view.starts, [formatMB(view.plannedBytes, locale), String(view.starts)])
      : tn("popupPlanLearned", view.starts, [
          formatMB(view.plannedInstallBytes, locale),
          formatPercent(view.plannedFraction, locale),
          formatMB(view.installBytes, locale),
          formatMB(view.plannedSystemBytes, locale),
          String(view.starts),
        ]);
  const run = view.autostart.lastRun;
  const last = run ? t("popupPlanLastRun", [run.at === null ? "—" : when(run.at), formatMB(run.bytes, locale)]) : t("popupPlanNeverRan");
  return {
    state: view.autostart.enabled ? "on" : "off",
    text: view.stale ? `${text} ${t("popupPlanStale")}` : text,
    autostart: t(view.autostart.enabled ? "popupPlanOn" : "popupPlanOff", [last]),
    learned: true,
  };
}
