// "Restart cold" (issue 23): the host waits for this Firefox to quit, evicts its files and starts
// it again the same way (native-host/src/relaunch/); the full flavour quits Firefox itself and
// asks session restore to bring the tabs back once, the basic flavour asks the user to quit and
// the host opens this page again. The last restart's record, read on every load, says how it
// went (also when it failed with no page open). Thin DOM code over lib/models/restart.js.
import browser from "../lib/transport/browser.js";
import { t } from "../lib/wording/i18n.js";
import { formatBytes, formatMs } from "../lib/wording/format.js";
import { hostErrorText, setAsideTexts } from "../lib/wording/host-notes.js";
import { HOST_MISSING } from "../lib/transport/host-client.js";
import { lastRestartLines, NO_HOST, OFFER, OLD_HOST, quitWay, restartOffer, TEMPORARY, temporaryCommands, traceOffer } from "../lib/models/restart.js";
import { startupApi } from "../lib/models/mode.js";
import { hostCommands, shellWord } from "../lib/wording/commands.js";
import { relay, traceRecordCommand } from "./relay.js";
import { $, el } from "./dom.js";

const UNKNOWN_COMMAND = "unknown_command";
const state = { offer: null, current: null, busy: false, trace: null, host: null, commands: hostCommands(null), installDir: null, recordCommand: null };

function section() {
  return $("restart");
}

function when(ms) {
  return new Date(ms).toLocaleString();
}

function build() {
  const s = section();
  s.replaceChildren(
    el("h2", { text: t("restartHeading"), attrs: { id: "restart-heading" } }),
    el("p", { text: t("restartIntro"), className: "detail" }),
    el("p", { text: t("restartTraceIntro"), className: "detail" }),
    el(
      "div",
      { className: "res-actions", attrs: { role: "group", "aria-labelledby": "restart-heading" } },
      el("button", { text: t("restartCold"), attrs: { type: "button", id: "restart-cold", "data-testid": "restart-cold" } }),
      el("button", { text: t("restartColdTrace"), attrs: { type: "button", id: "restart-trace", "data-testid": "restart-trace" } }),
    ),
    el("p", { attrs: { id: "restart-offer", "data-testid": "restart-offer", "aria-live": "polite" } }),
    el("div", { attrs: { id: "restart-temporary", "data-testid": "restart-temporary", hidden: "" } }),
    el("div", { attrs: { id: "restart-trace-offer", "data-testid": "restart-trace-offer", hidden: "" } }),
    el("div", { attrs: { id: "restart-last", "data-testid": "restart-last" } }),
    el("div", { attrs: { id: "restart-notes", "data-testid": "restart-notes" } }),
  );
  $("restart-cold").addEventListener("click", () => restart({ cold: true, trace: false }));
  $("restart-trace").addEventListener("click", () => restart({ cold: true, trace: true }));
}

function showOffer(offer, detail = null) {
  state.offer = offer;
  section().dataset.offer = offer;
  const text = {
    [OFFER]: null,
    // Without a host the commands could not run: say why none is shown.
    [TEMPORARY]: state.host === "connected" ? t("restartTemporary") : `${t("restartTemporary")} ${t("restartNoHost")}`,
    [NO_HOST]: t("restartNoHost"),
    [OLD_HOST]: t("restartOldHost", [detail ?? "?"]),
  }[offer];
  $("restart-offer").textContent = text ?? "";
  $("restart-offer").hidden = text === null;
  showTemporary(offer === TEMPORARY && state.host === "connected");
  // A temporary install must not be offered a button that would lose it.
  $("restart-cold").hidden = offer === TEMPORARY;
  $("restart-cold").disabled = offer !== OFFER || state.busy;
  const trace = state.trace;
  $("restart-trace").hidden = offer === TEMPORARY || !trace?.can;
  $("restart-trace").disabled = offer !== OFFER || state.busy;
  // Why the traced restart is not offered (or may not get its dialog), with the command.
  const why = offer === OFFER && trace ? (trace.key ?? trace.agentKey) : null;
  $("restart-trace-offer").hidden = why === null;
  $("restart-trace-offer").dataset.reason = why ?? "";
  $("restart-trace-offer").replaceChildren(
    ...(why === null ? [] : [el("p", { text: t(why), className: "detail" }), el("pre", {}, el("code", { text: trace.command, attrs: { "data-testid": "restart-trace-command" } }))]),
  );
}

/** A temporary install: the commands that restart it cold from a terminal, in the order to run them. */
function showTemporary(shown) {
  const box = $("restart-temporary");
  box.hidden = !shown;
  if (!shown) {
    box.replaceChildren();
    return;
  }
  const commands = temporaryCommands({ commands: state.commands, pid: state.current, installDir: state.installDir && shellWord(state.installDir) });
  const code = (text, id) => el("pre", {}, el("code", { text, attrs: { "data-testid": `restart-temporary-${id}` } }));
  box.replaceChildren(
    el("p", { text: t("restartTemporaryRelaunch"), className: "detail" }),
    code(commands.relaunch, "relaunch"),
    el("p", { text: t("restartTemporaryNpm"), className: "detail" }),
    code(commands.evict, "evict"),
  );
}

function say(key, subs = [], stateName = null) {
  $("restart-offer").textContent = t(key, subs);
  $("restart-offer").hidden = false;
  if (stateName) {
    section().dataset.state = stateName;
  }
}

function showLast(last) {
  const lines = lastRestartLines(last, { current: state.current, formatBytes, formatMs, when, recordCommand: state.recordCommand });
  section().dataset.last = last?.stage ?? "none";
  section().dataset.lastThisStart = String(lines.some((l) => l.id === "this"));
  $("restart-last").replaceChildren(
    ...lines.map((line) => {
      const p = el("p", { text: t(line.key, line.subs), className: line.id === "error" || line.id === "failed" ? "res-error" : line.id === "this" ? null : "detail" });
      p.dataset.line = line.id;
      if (line.command) {
        return el("div", { attrs: { "data-line": line.id } }, p, el("pre", {}, el("code", { text: line.command })));
      }
      return p;
    }),
  );
}

async function restart({ cold, trace }) {
  if (state.offer !== OFFER || state.busy) {
    return;
  }
  state.busy = true;
  $("restart-cold").disabled = true;
  $("restart-trace").disabled = true;
  const api = startupApi(browser);
  const way = quitWay(typeof api?.quitForRestart === "function");
  say("restartAsking", [], "asking");
  try {
    // The full flavour's about:startup tab comes back with the session; the basic flavour's page
    // is opened again by the host, as one more argument of the restarted Firefox.
    await relay.request("relaunch", { cold, trace, open: way === "user" ? location.href : null });
  } catch (error) {
    state.busy = false;
    say("restartRefused", [hostErrorText(error, t)], "error");
    $("restart-cold").disabled = false;
    $("restart-trace").disabled = false;
    return;
  }
  if (way === "user") {
    say("restartQuitNow", [], "waiting-for-quit");
    return;
  }
  say("restartQuitting", [], "quitting");
  const quitting = await api.quitForRestart().catch(() => false);
  if (!quitting) {
    say("restartQuitRefused", [], "quit-refused");
  }
}

/** Shows the last restart; one still under way (the page came up before the host's record said
 * "started"; a traced one says so once the trace is stored) is asked again every second for up
 * to a minute. */
async function followLast(traceStored) {
  for (let i = 0; i < 60; i++) {
    const reply = await relay.request("relaunch_status");
    state.trace = traceOffer(reply?.trace_ready ?? null, state.recordCommand);
    const last = reply?.last ?? null;
    showLast(last);
    // A damaged relaunch.json the host set aside (said once: kept while the page is open).
    $("restart-notes").append(...setAsideTexts(reply, t).map((text) => el("p", { text, className: "detail res-warning", attrs: { "data-line": "set-aside" } })));
    const underWay = last && ["waiting", "evicting", "tracing"].includes(last.stage);
    if (!underWay || Date.now() - last.updated_at_ms > 5 * 60 * 1000) {
      // The traced restart's trace is stored once root's recording ends, often after the trace
      // section looked for one: it is asked to look again.
      if (last?.trace_id && last.new_pid === state.current && document.getElementById("trace")?.dataset.state === "none") {
        await traceStored?.();
      }
      return;
    }
    if (state.offer !== null) {
      showOffer(state.offer);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** `traceStored`: called when this start's trace was stored after the page loaded. */
export async function initRestart({ traceStored = null } = {}) {
  if (!section()) {
    return;
  }
  build();
  section().dataset.state = "loading";
  const self = await browser.management?.getSelf?.().catch(() => null);
  const installType = self?.installType ?? null;
  let host = "connected";
  try {
    const hello = await relay.request("hello");
    state.current = hello?.firefox_pid ?? null;
    // The commands this section prints, as the host says it runs here (issue 30, item 3).
    state.commands = hostCommands(hello);
    state.installDir = (await relay.request("firefox").catch(() => null))?.install_dir ?? null;
    state.recordCommand = await traceRecordCommand();
  } catch (error) {
    host = error?.code === HOST_MISSING ? "missing" : "ended";
  }
  let knowsRelaunch = true;
  let version = null;
  if (host === "connected") {
    try {
      await followLast(traceStored);
    } catch (error) {
      if (error?.code === UNKNOWN_COMMAND) {
        knowsRelaunch = false;
        version = (await relay.request("hello").catch(() => null))?.host_version ?? null;
      }
    }
  }
  state.host = host;
  showOffer(restartOffer({ installType, host, knowsRelaunch }), version);
  section().dataset.state = "ready";
}
