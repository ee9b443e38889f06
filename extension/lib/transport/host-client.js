// Client for the about_startup native host (docs/PROTOCOL.md) over one native port: frames
// requests, routes each event and reply to its request by id, and fails every pending request
// when the port goes. One client is one port; lib/transport/host-connection.js opens a new one after the
// host went away. The port comes from an injected `connect()` so tests can pass a fake.

export const HOST_NAME = "about_startup";

/** Error codes of the extension's own (not the host's): Firefox found no host, or the host went away. */
export const HOST_MISSING = "host_missing";
export const HOST_DISCONNECTED = "host_disconnected";

/** A final `status: "error"` reply from the host, or the port going away. */
export class HostError extends Error {
  constructor({ code, message, params = {} }) {
    super(message);
    this.name = "HostError";
    this.code = code;
    this.params = params;
  }
}

/**
 * Why the port went away, from Firefox's `port.error`:
 * - "missing": Firefox found no usable host manifest for this name: none installed, or (as seen
 *   on ESR 153, which reports both the same way) one whose allowed_extensions lacks our id,
 * - "ended": the host was found but exited or broke the stream.
 */
export function classifyDisconnect(error) {
  const message = error?.message ?? "";
  return /no such native application/i.test(message) ? "missing" : "ended";
}

export class HostClient {
  #connect;
  #port = null;
  #nextId;
  #pending = new Map();
  #disconnectListeners = new Set();
  #disconnect = null;

  /** `nextId()` numbers the requests (1, 2, … unless the owner keeps a longer-lived count). */
  constructor(connect, { nextId = null } = {}) {
    this.#connect = connect;
    let n = 1;
    this.#nextId = nextId ?? (() => n++);
  }

  /** Opens the port (once). Safe to call again. connect() throwing counts as the port going away. */
  start() {
    if (this.#port || this.#disconnect) {
      return;
    }
    let port;
    try {
      port = this.#connect();
    } catch (error) {
      this.#onDisconnect(error); // e.g. "No such native application": host_missing, not an exception
      return;
    }
    this.#port = port;
    port.onMessage.addListener((message) => this.#onMessage(message));
    port.onDisconnect.addListener((p) => this.#onDisconnect(p?.error ?? port.error ?? null));
  }

  /** Null while connected (or not started); {kind, message} once the port is gone. */
  get disconnected() {
    return this.#disconnect;
  }

  /**
   * Sends `{id, command, ...params}`. Returns {id, promise}: the promise resolves with the reply's
   * `data`, or rejects with a HostError (the host's error, or code host_missing /
   * host_disconnected when the port goes away first). `onEvent(event, data)` gets this request's
   * events.
   */
  send(command, params = {}, { onEvent = null } = {}) {
    this.start();
    if (this.#disconnect) {
      return { id: null, promise: Promise.reject(this.#disconnectError()) };
    }
    const id = this.#nextId();
    const promise = new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, onEvent });
      try {
        this.#port.postMessage({ ...params, id, command });
      } catch (error) {
        this.#pending.delete(id);
        reject(new HostError({ code: HOST_DISCONNECTED, message: String(error?.message ?? error), params: { kind: "ended" } }));
      }
    });
    return { id, promise };
  }

  /** How many requests wait for their final reply. */
  get pendingCount() {
    return this.#pending.size;
  }

  /** Whether request `id` still waits for its final reply. */
  isPending(id) {
    return this.#pending.has(id);
  }

  /** Listener for the port going away: ({kind, message}). Returns an unsubscribe function. */
  onDisconnect(listener) {
    this.#disconnectListeners.add(listener);
    return () => this.#disconnectListeners.delete(listener);
  }

  /** Closes the port; pending requests reject. */
  close() {
    if (this.#port && !this.#disconnect) {
      this.#port.disconnect();
      this.#onDisconnect({ message: "closed by the extension" });
    }
  }

  #onMessage(message) {
    const entry = this.#pending.get(message?.id);
    if (message?.status === "event") {
      entry?.onEvent?.(message.event, message.data);
      return;
    }
    if (!entry) {
      return; // a reply to no request of ours (e.g. id null for a malformed request)
    }
    this.#pending.delete(message.id);
    if (message.status === "ok") {
      entry.resolve(message.data);
    } else {
      entry.reject(
        new HostError({
          code: message.code ?? "unknown",
          message: message.message ?? "the host replied with an error",
          params: message.params ?? {},
        }),
      );
    }
  }

  #onDisconnect(error) {
    if (this.#disconnect) {
      return;
    }
    const message = error?.message ?? "the host closed the connection";
    this.#disconnect = { kind: classifyDisconnect(error), message };
    const failure = this.#disconnectError();
    for (const entry of this.#pending.values()) {
      entry.reject(failure);
    }
    this.#pending.clear();
    for (const listener of this.#disconnectListeners) {
      listener(this.#disconnect);
    }
  }

  #disconnectError() {
    return new HostError({
      code: this.#disconnect.kind === "missing" ? HOST_MISSING : HOST_DISCONNECTED,
      message: this.#disconnect.message,
      params: { kind: this.#disconnect.kind },
    });
  }
}
