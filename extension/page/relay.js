// The page's and the popup's one port to the background, which owns the native host connection
// (lib/transport/host-relay.js). Opened on first use; reopened by the next request if the background
// was suspended or reloaded.
import browser from "../lib/transport/browser.js";
import { RELAY_PORT_NAME, RelayClient } from "../lib/transport/host-relay.js";

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
