// The page's and the popup's one port to the background, which owns the native host connection
// (lib/transport/host-relay.js). Opened on first use; reopened by the next request if the background
// was suspended or reloaded.
import browser from "../lib/transport/browser.js";
import { RELAY_PORT_NAME, RelayClient } from "../lib/transport/host-relay.js";

export const relay = new RelayClient(() => browser.runtime.connect({ name: RELAY_PORT_NAME }));
