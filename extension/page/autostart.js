// The login-time preload on and off from the page (issue 23): the same code as the CLI's
// `autostart enable|disable` (native-host/src/learn/autostart.rs) through the host's `autostart`
// command. Its state and last run are the plan section's lines (page/plan.js), which this
// module asks to refresh after a change.
import { t } from "../lib/wording/i18n.js";
import { hostErrorText } from "../lib/wording/host-notes.js";
import { PLAN_EVENT } from "./preload-verdict.js";
import { refreshPlan } from "./plan.js";
import { relay } from "./relay.js";
import { $, el } from "./dom.js";

const state = { enabled: null, busy: false };

function update() {
  const button = $("autostart-toggle");
  button.hidden = state.enabled === null;
  button.disabled = state.busy;
  button.textContent = t(state.enabled ? "autostartTurnOff" : "autostartTurnOn");
  button.dataset.enabled = String(state.enabled);
}

async function toggle() {
  if (state.busy || state.enabled === null) {
    return;
  }
  state.busy = true;
  update();
  const result = $("autostart-result");
  try {
    const status = await relay.request("autostart", { enable: !state.enabled });
    state.enabled = Boolean(status?.enabled);
    result.textContent = t(state.enabled ? "autostartTurnedOn" : "autostartTurnedOff");
    result.className = "detail";
  } catch (error) {
    result.textContent = t("autostartFailed", [hostErrorText(error, t)]);
    result.className = "res-error";
  } finally {
    result.hidden = false;
    state.busy = false;
    update();
  }
  await refreshPlan();
}

export function initAutostart() {
  const actions = document.querySelector("#plan .res-actions");
  if (!actions) {
    return;
  }
  actions.append(el("button", { attrs: { type: "button", id: "autostart-toggle", "data-testid": "autostart-toggle", hidden: "" } }));
  actions.after(el("p", { attrs: { id: "autostart-result", "data-testid": "autostart-result", "aria-live": "polite", hidden: "" } }));
  $("autostart-toggle").addEventListener("click", toggle);
  // The plan's view carries the autostart status (plan_status); an error view has none.
  document.addEventListener(PLAN_EVENT, (event) => {
    const enabled = event.detail?.autostart?.enabled;
    state.enabled = typeof enabled === "boolean" ? enabled : null;
    update();
  });
}
