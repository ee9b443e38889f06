// The page's and the popup's one port to the background, which owns the native host connection
// (lib/host-relay.js). Opened on first use; reopened by the next request if the background
// was suspended or reloaded.
import browser from "../lib/browser.js";
import { RELAY_PORT_NAME, RelayClient } from "../lib/host-relay.js";

export const relay = new RelayClient(() => browser.runtime.connect({ name: RELAY_PORT_NAME }));
