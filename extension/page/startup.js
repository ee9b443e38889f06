// The about:startup page: thin DOM code over the pure modules in ../lib/.
import browser from "../lib/transport/browser.js";
import { localize, t, tn } from "../lib/wording/i18n.js";
import { milestoneRows } from "../lib/models/milestones.js";
import { HOST_DISCONNECTED, HOST_MISSING, HOST_NAME } from "../lib/transport/host-client.js";
import { hostErrorText } from "../lib/wording/host-notes.js";
import { relay } from "./relay.js";
import { initResidency } from "./residency.js";
import { initPlan } from "./plan.js";
import { initDesktop } from "./desktop.js";
import { detectMode, FULL, startupApi } from "../lib/models/mode.js";
import { formatBytes, formatClock, formatCount, formatGap, formatMs, formatTime } from "../lib/wording/format.js";
import { drawTimeline } from "./timeline.js";
import { coldnessMark, historyState, initHistory, onHistoryChange } from "./history.js";
import { answerSentences, thisStartAnswer } from "../lib/models/verdict.js";
import { $, el } from "./dom.js";
import { initCompare } from "./compare.js";
import { HOST_TRACE_EVENT, hostSummary, initTrace } from "./trace.js";
import { profileSentence } from "../lib/wording/profile-text.js";
import { initRestart } from "./restart.js";
import { initAutostart } from "./autostart.js";
import { initPreloadVerdict } from "./preload-verdict.js";
import { firefoxFoundText, installKindText } from "../lib/models/install-kind.js";
import { showPastSessions } from "./past-sessions.js";
import { showWithoutApi } from "./no-api.js";
import { initCosts } from "./costs.js";



function setText(id, value) {
  $(id).textContent = value ?? "—";
}

function cell(tag, text, className) {
  const element = document.createElement(tag);
  element.textContent = text;
  if (className) {
    element.className = className;
  }
  return element;
}

function showMode(mode) {
  const section = $("mode");
  section.dataset.mode = mode;
  setText("mode-name", t(mode === FULL ? "modeFull" : "modeBasic"));
  setText("mode-explanation", t(mode === FULL ? "modeFullExplanation" : "modeBasicExplanation"));
}

async function showMilestones() {
  const api = startupApi(browser);
  const mode = detectMode(api);
  showMode(mode);
  const status = $("milestones-status");
  const table = $("milestones");
  if (mode !== FULL) {
    status.dataset.state = "unavailable";
    status.textContent = t("milestonesUnavailable");
    table.hidden = true;
    return;
  }
  let raw;
  try {
    raw = await api.getStartupInfo();
  } catch (error) {
    status.dataset.state = "error";
    status.textContent = t("milestonesError", [String(error?.message ?? error)]);
    table.hidden = true;
    return;
  }
  const { origin, rows } = milestoneRows(raw);
  fillMilestones(table, rows);
  setText("col-since", t("colSince", [origin ?? "process"]));
  table.hidden = rows.length === 0;
  status.dataset.state = rows.length === 0 ? "empty" : "ready";
  status.textContent = rows.length === 0 ? t("milestonesEmpty") : tn("milestonesCount", rows.length);
  drawTimeline(rows, origin);
}

/** Fills the milestone table's body with `rows` (milestoneRows' or pingMilestones' shape). */
function fillMilestones(table, rows) {
  const body = table.tBodies[0];
  body.replaceChildren(
    ...rows.map((row) => {
      const tr = document.createElement("tr");
      tr.dataset.milestone = row.name;
      tr.dataset.sinceOrigin = String(row.sinceOrigin);
      tr.dataset.ms = String(row.ms);
      tr.append(
        cell("th", row.name),
        cell("td", formatMs(row.sinceOrigin), "num"),
        cell("td", formatGap(row.gap), "num"),
        cell("td", formatClock(row.ms), "num"),
      );
      tr.firstChild.scope = "row";
      return tr;
    }),
  );
}

function showHostState(state, message) {
  $("host").dataset.state = state;
  $("host-status").textContent = message;
}

function showHostGone({ kind, message }, { answered }) {
  if (answered) {
    showHostState("ended", t("hostEndedAfterHello", [message]));
    return;
  }
  const state = kind === "missing" ? "missing" : "ended";
  const key = state === "missing" ? "hostMissing" : "hostEnded";
  showHostState(state, t(key));
  setText("host-missing-explanation", t(`${key}Explanation`, [HOST_NAME]));
  setText("host-error-detail", t("hostErrorDetail", [message]));
  $("host-missing").hidden = false;
  $("host-details").hidden = true;
}

function showHello(hello) {
  setText("host-version", hello.host_version);
  setText("protocol-version", String(hello.protocol_version ?? "—"));
  setText("kernel", hello.kernel);
  setText("residency-access", t(hello.mincore_exact === "all" ? "residencyAll" : "residencyOwned"));
  setText("install-kind", installKindText(hello.install_kind, hello, t));
  // How the host found this Firefox: shown only when not as its parent (a Snap or Flatpak).
  const found = firefoxFoundText(hello.firefox_found, t);
  setText("firefox-found", found);
  $("firefox-found-row").hidden = !found;
  $("host-details").hidden = false;
  $("host-missing").hidden = true;
  showHostState("connected", t("hostConnected", [hello.host_version ?? "?"]));
}

function showFirefox(firefox) {
  setText("firefox-version", firefox.version);
  setText("firefox-build-id", firefox.build_id);
  setText("firefox-exe", firefox.exe);
  setText("firefox-pid", firefox.pid == null ? null : String(firefox.pid));
  // Figures that keep growing while Firefox runs: each says when it was read, so it is not
  // taken for the start's own (the answer line's and the history's, read when it was recorded).
  const at = formatTime(Date.now());
  const soFar = (bytes) => (typeof bytes === "number" ? t("readSoFarAt", [formatBytes(bytes), at]) : formatBytes(bytes));
  setText("firefox-read-bytes", soFar(firefox.io?.read_bytes));
  setText("firefox-major-faults", formatCount(firefox.io?.major_faults));
  setText("firefox-tree-read-bytes", soFar(firefox.io?.tree_read_bytes));
  $("firefox-tree-read-bytes").dataset.bytes = String(firefox.io?.tree_read_bytes ?? "");
  $("firefox-details").dataset.state = "ready";
  $("firefox-error").hidden = true;
}

function showFirefoxError(error) {
  const element = $("firefox-error");
  element.textContent = t("firefoxError", [String(error?.message ?? error)]);
  element.dataset.code = error?.code ?? "";
  element.hidden = false;
  $("firefox-details").dataset.state = "error";
}

// The host is reached through the background (page/relay.js), which keeps one native port for
// every page and the popup and starts the host again on the next request after it went away.
const host = { answered: false };

async function helloHost() {
  try {
    const hello = await relay.request("hello");
    host.answered = true;
    showHello(hello);
    return true;
  } catch (error) {
    if (error.code !== HOST_MISSING && error.code !== HOST_DISCONNECTED) {
      showHostState("error", t("hostErrorDetail", [hostErrorText(error, t)]));
    }
    return false;
  }
}

async function connectHost() {
  showHostState("connecting", t("hostConnecting"));
  relay.onHost(({ state, message }) => {
    if (state === "missing" || state === "disconnected") {
      const kind = state === "missing" ? "missing" : "ended";
      showHostGone({ kind, message: message ?? t("hostClosedConnection") }, { answered: host.answered });
    } else if (state === "connected" && $("host").dataset.state !== "connected" && host.answered) {
      helloHost(); // another action (e.g. the residency panel's Refresh) started the host again
    }
  });
  if (await helloHost()) {
    await refreshFirefox();
  }
}

async function refreshFirefox() {
  if (relay.host.state !== "connected" && !(await helloHost())) {
    return;
  }
  try {
    showFirefox(await relay.request("firefox"));
  } catch (error) {
    showFirefoxError(error);
  }
}

async function showBrowserVersion() {
  const info = await browser.runtime.getBrowserInfo();
  setText("browser-version", info.version);
}

/**
 * The answer line at the top: this start's time (to sessionRestored, or in basic mode to this
 * add-on's start, said as such), its class, what it read, and this build's cold and hot means
 * to the same milestone (lib/models/verdict.js). Built from text nodes, never from markup.
 */
function showAnswer() {
  const element = $("answer");
  const { records, currentId } = historyState();
  const answer = thisStartAnswer(records, currentId);
  if (!answer) {
    element.dataset.state = "pending";
    element.textContent = t("answerPending");
    return;
  }
  element.dataset.state = "ready";
  element.dataset.coldness = answer.coldness;
  element.dataset.milestone = answer.milestone;
  element.dataset.ms = String(answer.ms ?? "");
  element.dataset.readBytes = String(answer.readBytes ?? "");
  const { time, kind, means } = answerSentences(answer, t);
  const bold = ({ key, figures }) =>
    fill(
      t(key, figures.map((_, i) => `@@${i + 1}@@`)),
      figures.map((text) => el("span", { text, className: "figure" })),
    );
  element.replaceChildren(coldnessMark(answer.coldness), " ", ...bold(time), " ", ...bold(kind), " ", t(means.key, means.figures), ...profileAnswer());
}

/**
 * The answer line's sentence on the user's profile (issue 31), from the host's summary of this
 * start's trace: what share of its reads and of its waiting was the profile's, and its largest
 * parts with what to do about each; nothing without a trace of this start.
 */
function profileAnswer() {
  const profile = hostSummary()?.profile;
  const text = profileSentence(profile, t);
  if (text === null) {
    return [];
  }
  const span = el("span", { text, attrs: { "data-testid": "answer-profile" } });
  span.dataset.profileBytes = String(profile.bytes.profile);
  span.dataset.totalBytes = String(profile.bytes.total);
  return [" ", span];
}

/** A translated text whose @@1@@, @@2@@, … markers are replaced by `nodes[0]`, `nodes[1]`, …. */
function fill(text, nodes) {
  return text.split(/@@(\d)@@/).map((part, i) => (i % 2 === 1 ? (nodes[Number(part) - 1] ?? "") : part));
}

async function main() {
  if (!browser?.runtime) {
    await showWithoutApi();
    document.body.dataset.ready = "true";
    return;
  }
  localize(document);
  $("refresh").addEventListener("click", () => {
    showMilestones();
    refreshFirefox();
    showPastSessions();
  });
  initPreloadVerdict();
  initAutostart();
  initCompare();
  initCosts();
  onHistoryChange(showAnswer);
  document.addEventListener(HOST_TRACE_EVENT, showAnswer);
  await Promise.all([showMilestones(), showBrowserVersion(), connectHost(), initResidency(), initPlan(), initDesktop(), initHistory(), initTrace(), initRestart({ traceStored: initTrace }), showPastSessions()]);
  document.body.dataset.ready = "true";
}

main();
