// The page's and the popup's one port to the background, which owns the native host connection
// (lib/transport/host-relay.js). Opened on first use; reopened by the next request if the background
// was suspended or reloaded.
import browser from "../lib/transport/browser.js";
import { RELAY_PORT_NAME, RelayClient } from "../lib/transport/host-relay.js";
import { hostCommands } from "../lib/wording/commands.js";
import { RECORD_ARGS } from "../lib/models/trace.js";

export const relay = new RelayClient(() => browser.runtime.connect({ name: RELAY_PORT_NAME }));

let hello = null;

/**
 * The host's `hello`, asked once per page and kept once it came (a failure is not kept: the next
 * call asks again, after the host was installed or restarted). For what does not change while
 * the page is open: the commands that run the host (lib/wording/commands.js).
 */
export function hostHello() {
  hello ??= relay.request("hello").catch((error) => {
    hello = null;
    throw error;
  });
  return hello;
}

/**
 * The command that records a trace of a cold start, as the host says it runs here for this
 * user: `trace_list`'s `record_command` (asked unless `listing`, a trace_list reply, is given);
 * from an older host, its `hello` root command and RECORD_ARGS. Never the bare name where it
 * would not run (issue 30, item 3).
 */
export async function traceRecordCommand(listing = null) {
  const list = listing ?? (await relay.request("trace_list").catch(() => null));
  if (typeof list?.record_command === "string" && list.record_command) {
    return list.record_command;
  }
  return hostCommands(await hostHello().catch(() => null)).runAsRoot(RECORD_ARGS);
}
