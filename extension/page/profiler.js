// "Open in the Firefox Profiler" for a trace the host stores (issue 21): the host writes the
// profile (the trace merged into Firefox's own startup profile where one was recorded with it,
// else the trace alone: `trace_profile`), the page fetches it in pages under the 1 MiB frame
// limit (`trace_profile_fetch`), saves it as a download, and hands it to profiler.firefox.com
// through the Profiler's `from-post-message` entry (firefox-devtools/profiler
// docs-developer/loading-in-profiles.md: post `is-ready` until the Profiler answers it, then
// `inject-profile`). Offline, or when the Profiler does not answer, it says how to load the saved
// file. The window and the host are parameters, so the unit test drives both with fakes.
import { t } from "../lib/wording/i18n.js";
import { hostErrorText } from "../lib/wording/host-notes.js";
import { formatBytes } from "../lib/wording/format.js";
import { el } from "./dom.js";

export const PROFILER_ORIGIN = "https://profiler.firefox.com";
/** How long the Profiler gets to say it is ready before the page calls it unreachable. */
export const READY_TIMEOUT_MS = 20000;

/** The stored profile's JSON text, fetched page by page. */
export async function fetchProfile(request, id) {
  const parts = [];
  let offset = 0;
  for (;;) {
    const chunk = await request("trace_profile_fetch", { trace: id, offset });
    parts.push(chunk.data);
    if (chunk.next_offset === null || chunk.next_offset === undefined) {
      return parts.join("");
    }
    offset = chunk.next_offset;
  }
}

/**
 * Posts `profile` to a Profiler window opened with `open(url)`: `is-ready` every 100 ms until
 * the Profiler answers from its own origin, then `inject-profile`. Resolves "injected",
 * "blocked" (no window) or "timeout".
 */
export function injectProfile(profile, { open, listen, timeoutMs = READY_TIMEOUT_MS, every = 100 }) {
  const target = open(`${PROFILER_ORIGIN}/from-post-message/`);
  if (!target) {
    return Promise.resolve("blocked");
  }
  return new Promise((resolve) => {
    let done = false;
    const finish = (result) => {
      if (!done) {
        done = true;
        clearInterval(timer);
        clearTimeout(giveUp);
        stop();
        resolve(result);
      }
    };
    const stop = listen((event) => {
      if (event.origin === PROFILER_ORIGIN && event.source === target && event.data?.name === "is-ready") {
        target.postMessage({ name: "inject-profile", profile }, PROFILER_ORIGIN);
        finish("injected");
      }
    });
    const timer = setInterval(() => {
      try {
        target.postMessage({ name: "is-ready" }, PROFILER_ORIGIN);
      } catch {
        // the window is still on its way to the Profiler's origin
      }
    }, every);
    const giveUp = setTimeout(() => finish("timeout"), timeoutMs);
  });
}

/** Saves `text` as `filename` through a link (a download, no `downloads` permission). */
function save(text, filename) {
  const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
  const link = el("a", { attrs: { href: url, download: filename, hidden: "" } });
  document.body.append(link);
  try {
    link.click();
  } finally {
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }
}

/**
 * The button and its status line, for the trace of stored id `id`. `recordCommand()`: the
 * command that records a trace here (page/relay.js traceRecordCommand), named when the saved
 * profile holds the trace alone.
 */
export function profilerControls(id, { request, recordCommand = async () => null, win = window, online = () => navigator.onLine } = {}) {
  const status = el("p", { className: "detail", attrs: { "data-testid": "profiler-status", role: "status" } });
  const button = el("button", { text: t("profilerOpen"), attrs: { type: "button", "data-testid": "profiler-open" } });
  const say = (key, subs = [], state = "") => {
    status.textContent = t(key, subs);
    status.dataset.state = state;
  };
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      say("profilerPreparing", [], "working");
      const info = await request("trace_profile", { trace: id });
      const text = await fetchProfile(request, id);
      const filename = `about-startup-${id}.profile.json`;
      save(text, filename);
      status.dataset.filename = filename;
      status.dataset.kind = info.summary.kind;
      const record = info.summary.kind === "merged" ? null : await recordCommand().catch(() => null);
      const what = info.summary.kind === "merged" ? t("profilerKindMerged") : record ? t("profilerKindTrace", [`${record} --firefox-profile`]) : t("profilerKindTraceOnly");
      const saved = [filename, formatBytes(info.bytes), what];
      if (!online()) {
        say("profilerOffline", saved, "offline");
        return;
      }
      const result = await injectProfile(JSON.parse(text), {
        open: (url) => win.open(url, "_blank"),
        listen: (handler) => {
          win.addEventListener("message", handler);
          return () => win.removeEventListener("message", handler);
        },
      });
      say(result === "injected" ? "profilerOpened" : result === "blocked" ? "profilerBlocked" : "profilerNoAnswer", saved, result);
    } catch (error) {
      say("profilerFailed", [hostErrorText(error, t)], "error");
    } finally {
      button.disabled = false;
    }
  });
  return el("div", { attrs: { "data-testid": "profiler" } }, el("p", {}, button), status);
}
