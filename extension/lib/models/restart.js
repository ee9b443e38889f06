// "Restart cold" (page/restart.js): whether the page may offer it, and what the last restart's
// record (the host's relaunch_status, native-host/src/relaunch/status.rs) says, as message keys
// and substitutions for the page to word. Pure: no browser, no DOM.

/** Why the page offers the restart, or why not. */
export const OFFER = "offer";
/** Installed for this session only (about:debugging, web-ext run): a restart would remove it. */
export const TEMPORARY = "temporary";
/** No host: nothing could start Firefox again. */
export const NO_HOST = "no-host";
/** A host older than the relaunch command. */
export const OLD_HOST = "old-host";

/**
 * What to offer. `installType` is management.getSelf()'s ("development" for a temporary
 * install); `host` is "connected", "missing", "ended"…; `knowsRelaunch` false when the host
 * answered relaunch_status with unknown_command.
 */
export function restartOffer({ installType, host, knowsRelaunch = true }) {
  if (installType === "development") {
    return TEMPORARY;
  }
  if (host !== "connected") {
    return NO_HOST;
  }
  return knowsRelaunch ? OFFER : OLD_HOST;
}

/**
 * Whether "Restart cold and trace" can run from the page (relaunch_status's trace_ready):
 * `{can, key, command, agentKey}`: `key` says why not, `agentKey` warns that no polkit agent
 * seems to run (the password dialog may not appear); `command` is what to run instead, in the
 * host's words: `recordCommand` (page/relay.js traceRecordCommand), else `ready.command`; never
 * a command made up here.
 */
export function traceOffer(ready, recordCommand = null) {
  // The trace_list's command names the host by the path that runs it here; relaunch_status's
  // is the bare name (native-host/src/relaunch/traced.rs COMMAND), which sudo does not find for
  // a host built from source (issue 30, item 3).
  const command = recordCommand ?? ready?.command ?? null;
  if (!ready) {
    return { can: false, key: "restartTraceUnknown", command, agentKey: null };
  }
  if (!ready.system_host) {
    return { can: false, key: "restartTraceNotInstalled", command, agentKey: null };
  }
  if (!ready.pkexec || !ready.action) {
    return { can: false, key: "restartTraceNoPkexec", command, agentKey: null };
  }
  return { can: true, key: null, command, agentKey: ready.agent ? null : "restartTraceNoAgent" };
}

/**
 * What a temporary install is told to run instead of the button, in the order it is to be run
 * (issue 30, item 3): `relaunch` waits for the running Firefox to quit, so it comes before the
 * quit; npm start's and web-ext's profile is deleted at the quit, so there the files are evicted
 * after it and npm start runs again. `commands`: hostCommands(hello); `pid`: hello's firefox_pid;
 * `installDir`: the `firefox` reply's, as one shell word. Null parts are left out.
 */
export function temporaryCommands({ commands, pid = null, installDir = null }) {
  return {
    relaunch: commands.run(`relaunch --cold${pid ? ` --pid ${pid}` : ""}`),
    evict: commands.run(`evict${installDir ? ` --firefox ${installDir}` : ""}`),
  };
}

/** How the quit happens: the full flavour quits Firefox itself; basic asks the user to. */
export function quitWay(hasQuitApi) {
  return hasQuitApi ? "self" : "user";
}

/**
 * The last restart as lines `{id, key, subs, command?}`; `current` is this Firefox's pid (hello's
 * firefox_pid) so the page can say "this start". `formatBytes(n)` and `formatMs(ms)` word
 * figures; `recordCommand` as traceOffer's. Returns [] without a record.
 */
export function lastRestartLines(last, { current = null, pageSize = 4096, formatBytes = String, formatMs = String, when = String, recordCommand = null } = {}) {
  if (!last || typeof last !== "object") {
    return [];
  }
  const lines = [];
  const thisStart = last.stage === "started" && last.new_pid != null && last.new_pid === current;
  // A traced restart whose trace was refused is a plain cold one; the error line says why.
  const traced = last.trace && last.error?.code !== "trace_failed";
  const kind = traced ? "traced" : last.cold ? "cold" : "plain";
  if (thisStart) {
    lines.push({ id: "this", key: THIS_START[kind], subs: [when(last.requested_at_ms)] });
  } else if (last.stage === "started") {
    lines.push({ id: "earlier", key: EARLIER[kind], subs: [when(last.requested_at_ms), String(last.new_pid ?? "?")] });
  } else if (last.stage === "failed") {
    lines.push({ id: "failed", key: "restartFailed", subs: [when(last.requested_at_ms)] });
  } else {
    lines.push({ id: "running", key: "restartRunning", subs: [when(last.requested_at_ms), last.stage] });
  }
  if (last.waited_ms != null) {
    lines.push({ id: "waited", key: "restartWaited", subs: [formatMs(last.waited_ms)] });
  }
  const ev = last.evicted;
  if (ev) {
    lines.push(
      ev.exact_files > 0
        ? { id: "evicted", key: "restartEvicted", subs: [String(ev.files), formatBytes(ev.pages_dropped * pageSize), String(ev.exact_files)] }
        : { id: "evicted", key: "restartEvictedCount", subs: [String(ev.files)] },
    );
    if (ev.hidden_files > 0) {
      lines.push({ id: "hidden", key: "restartEvictedHidden", subs: [String(ev.hidden_files)] });
    }
    for (const s of ev.stayed ?? []) {
      lines.push({ id: "stayed", key: "restartStayed", subs: [s.path, formatBytes(s.pages * pageSize)] });
    }
    for (const m of ev.mapped_by ?? []) {
      lines.push({ id: "mapped", key: "restartMappedBy", subs: [String(m.pid), m.exe || "?"] });
    }
    if (!(ev.mapped_by ?? []).length) {
      lines.push({ id: "unmapped", key: "restartNoMapper", subs: [] });
    }
    if (ev.failed > 0) {
      lines.push({ id: "evict-failed", key: "restartEvictFailedFiles", subs: [String(ev.failed), (ev.failed_files ?? []).join(", ")] });
    }
  }
  if (last.trace_id) {
    lines.push({ id: "trace", key: "restartTraceStored", subs: [last.trace_id] });
  }
  if (last.error) {
    // A refused trace names the command that traces instead: as traceOffer, the one that runs here.
    const command = last.error.params?.command ? (last.error.code === "trace_failed" ? (recordCommand ?? last.error.params.command) : last.error.params.command) : null;
    lines.push({ id: "error", key: errorKey(last.error.code, last.error.params), subs: errorSubs(last.error), command });
  }
  return lines;
}

const THIS_START = { traced: "restartTracedThisStart", cold: "restartColdThisStart", plain: "restartPlainThisStart" };
const EARLIER = { traced: "restartTracedEarlier", cold: "restartColdEarlier", plain: "restartPlainEarlier" };

const ERROR_KEYS = {
  firefox_did_not_quit: "restartErrorDidNotQuit",
  launch_failed: "restartErrorLaunch",
  capture_failed: "restartErrorCapture",
  evict_failed: "restartErrorEvict",
  trace_failed: "restartErrorTrace",
};

const TRACE_REASON_KEYS = {
  no_agent: "restartErrorTraceNoAgent",
  not_authorized: "restartErrorTraceNotAuthorized",
  dismissed: "restartErrorTraceDismissed",
  no_pkexec: "restartErrorTraceNoPkexec",
  not_installed: "restartErrorTraceNotInstalled",
  firefox_failed: "restartErrorTraceFirefoxFailed",
};

function errorKey(code, params) {
  if (code === "trace_failed") {
    return TRACE_REASON_KEYS[params?.reason] ?? ERROR_KEYS.trace_failed;
  }
  return ERROR_KEYS[code] ?? "restartErrorOther";
}

function errorSubs(error) {
  const p = error.params ?? {};
  switch (error.code) {
    case "firefox_did_not_quit":
      return [String(p.seconds ?? "?"), (p.pids ?? []).join(", ")];
    default:
      return [String(p.detail ?? error.message ?? error.code ?? "")];
  }
}
