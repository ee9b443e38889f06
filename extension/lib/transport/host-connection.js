// The background's one long-lived connection to the native host (docs/PROTOCOL.md for the host
// side). It connects lazily on the first request and again on the next request after the host
// went away (missing, crashed, exited), and keeps request ids unique for its whole life, across
// reconnects: a request id names one host request for good, so pages and the popup can use it
// as the id of a running operation (lib/transport/host-relay.js) without a second numbering.
//
// Firefox (ESR 153, parent/ext-backgroundPage.js) does not suspend an MV3 event page while it
// holds an open native-messaging port (`hasActiveNativeAppPorts`); HostRelay closes this port
// once nothing needs it, so the background may idle (the host exits on end of stdin).

import { HOST_DISCONNECTED, HOST_MISSING, HostClient, HostError } from "./host-client.js";

export class HostConnection {
  #connect;
  #client = null;
  #nextId = 1;
  #status = { state: "idle", message: null };
  #statusListeners = new Set();

  /** `connect()` returns a native port: () => browser.runtime.connectNative(HOST_NAME). */
  constructor(connect) {
    this.#connect = connect;
  }

  /**
   * {state, message}: "idle" (no port yet, or closed when not needed), "connecting" (port open, no
   * reply yet), "connected" (the host answered), "missing" (Firefox found no host), "disconnected"
   * (the host exited or crashed; the next request starts it again).
   */
  get status() {
    return { ...this.#status };
  }

  /** Whether any request waits for its final reply. */
  get busy() {
    return (this.#client?.pendingCount ?? 0) > 0;
  }

  /** Listener for status changes: ({state, message}). Returns an unsubscribe function. */
  onStatus(listener) {
    this.#statusListeners.add(listener);
    return () => this.#statusListeners.delete(listener);
  }

  /**
   * Sends a request (connecting first if needed). Returns {id, promise}: `id` is the host's request
   * id (null if the port could not open), the promise resolves with the reply's data or rejects
   * with a HostError: the host's own code, host_missing, or host_disconnected (every pending
   * request when the host goes).
   */
  send(command, params = {}, { onEvent = null } = {}) {
    const client = this.#liveClient();
    const { id, promise } = client.send(command, params, { onEvent });
    const answered = () => {
      if (this.#client === client && !client.disconnected) {
        this.#setStatus("connected");
      }
    };
    const settled = promise.then(
      (data) => {
        answered();
        return data;
      },
      (error) => {
        if (error?.code !== HOST_MISSING && error?.code !== HOST_DISCONNECTED) {
          answered(); // a host error is still an answer
        }
        throw error;
      },
    );
    return { id, promise: settled };
  }

  /** Asks the host to cancel request `id`; rejects with unknown_request if it is not running. */
  cancel(id) {
    const client = this.#client;
    if (!client || client.disconnected || !client.isPending(id)) {
      return Promise.reject(
        new HostError({ code: "unknown_request", message: `request ${id} is not running`, params: { target: id } }),
      );
    }
    return client.send("cancel", { target: id }).promise;
  }

  /** Closes the port (the host exits); pending requests reject. The next request reconnects. */
  close() {
    const client = this.#client;
    if (!client || client.disconnected) {
      return;
    }
    this.#client = null;
    client.close();
    this.#setStatus("idle");
  }

  #liveClient() {
    if (this.#client && !this.#client.disconnected) {
      return this.#client;
    }
    const client = new HostClient(this.#connect, { nextId: () => this.#nextId++ });
    this.#client = client;
    client.onDisconnect(({ kind, message }) => {
      if (this.#client === client) {
        this.#setStatus(kind === "missing" ? "missing" : "disconnected", message);
      }
    });
    this.#setStatus("connecting");
    client.start();
    return client;
  }

  #setStatus(state, message = null) {
    if (this.#status.state === state && this.#status.message === message) {
      return;
    }
    this.#status = { state, message };
    for (const listener of this.#statusListeners) {
      listener(this.status);
    }
  }
}
