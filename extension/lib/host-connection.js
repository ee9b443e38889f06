// The one long-lived connection to the native host, and the relay that lets pages and the popup
// use it through the background (docs/PROTOCOL.md for the host side).
//
// - HostConnection (background): owns the runtime.connectNative port through a HostClient;
//   connects lazily on the first request and again on the next request after the host went away
//   (missing, crashed, exited).
// - HostRelay (background): serves runtime.connect ports from pages and the popup. Requests are
//   keyed by the UI's own ids; preload and evict are "operations" broadcast to every UI, so a
//   preload started from the popup keeps running when the popup closes and any UI opened later
//   sees its progress.
// - RelayClient (pages, popup): the UI end of that port, reconnecting on the next request if the
//   background went away.
// All three take their ports from injected functions, so node --test passes fakes.
//
// Firefox (ESR 153, parent/ext-backgroundPage.js) suspends an MV3 event page after
// extensions.background.idle.timeout (30 s) without events or API calls, *except* while the
// background holds an open native-messaging port (`hasActiveNativeAppPorts`). Messages on
// runtime.connect ports do not count as activity, and a suspended background drops them. So: the
// native port stays open while a UI is connected or a request runs, which keeps the background
// alive exactly then; once nothing needs it, the relay closes it after `idleCloseMs`, and Firefox
// may suspend the background (the host exits on end of stdin). A UI whose port was dropped
// reconnects on its next request; runtime.connect wakes the background again.

import { HOST_DISCONNECTED, HOST_MISSING, HostClient, HostError } from "./host-client.js";

export { HOST_DISCONNECTED, HOST_MISSING, HostError };

/** The runtime.connect port name pages and the popup use to reach the background. */
export const RELAY_PORT_NAME = "about-startup-host-relay";

/** Commands whose progress and result every UI sees (they change the page cache). */
export const OPERATIONS = new Set(["preload", "evict"]);

/** A port that is already gone, for when connectNative itself throws. */
function deadPort(error) {
  const disconnectListeners = [];
  const port = {
    error,
    onMessage: { addListener() {} },
    onDisconnect: {
      addListener(listener) {
        disconnectListeners.push(listener);
      },
    },
    postMessage() {},
    disconnect() {},
  };
  queueMicrotask(() => {
    for (const listener of disconnectListeners) {
      listener(port);
    }
  });
  return port;
}

export function errorToJSON(error) {
  return {
    code: error?.code ?? "internal",
    message: String(error?.message ?? error),
    params: error?.params ?? {},
  };
}

export class HostConnection {
  #connect;
  #Client;
  #client = null;
  #status = { state: "idle", message: null };
  #statusListeners = new Set();

  /** `connect()` returns a native port: () => browser.runtime.connectNative(HOST_NAME). */
  constructor(connect, { Client = HostClient } = {}) {
    this.#connect = connect;
    this.#Client = Client;
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

  onStatus(listener) {
    this.#statusListeners.add(listener);
    return () => this.#statusListeners.delete(listener);
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

  #ensureClient() {
    if (this.#client && !this.#client.disconnected) {
      return this.#client;
    }
    const connect = this.#connect;
    const client = new this.#Client(() => {
      try {
        return connect();
      } catch (error) {
        return deadPort(error);
      }
    });
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

  /**
   * Sends a request (connecting first if needed). Returns {id, promise, cancel}: `id` is the host's
   * request id, `cancel()` asks the host to cancel it. The promise rejects with a HostError: the
   * host's own code, host_missing, or host_disconnected (every pending request when the host goes).
   */
  send(command, params = {}, { onEvent = null } = {}) {
    const client = this.#ensureClient();
    const { id, promise } = client.send(command, params, { onEvent });
    const settled = promise.then(
      (data) => {
        this.#answered(client);
        return data;
      },
      (error) => {
        if (error?.code !== HOST_MISSING && error?.code !== HOST_DISCONNECTED) {
          this.#answered(client);
        }
        throw error;
      },
    );
    const cancel = () => {
      if (id === null || client.disconnected) {
        return Promise.reject(new HostError({ code: "unknown_request", message: "not running", params: { target: id } }));
      }
      return client.request("cancel", { target: id });
    };
    return { id, promise: settled, cancel };
  }

  request(command, params = {}, options = {}) {
    return this.send(command, params, options).promise;
  }

  #answered(client) {
    if (this.#client === client && !client.disconnected) {
      this.#setStatus("connected");
    }
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
}

/**
 * Background side of the UI ports. `connection` is a HostConnection (or anything with send(),
 * status, busy, onStatus(), close()).
 */
export class HostRelay {
  #connection;
  #ports = new Set();
  #ops = new Map();
  #latest = new Map();
  #nextOp = 1;
  #idleCloseMs;
  #setTimer;
  #clearTimer;
  #now;
  #idleTimer = null;

  // The timer defaults are wrapped: called as this.#setTimer(...) a bare setTimeout gets the relay
  // as `this`, and Firefox throws ("called on an object that does not implement interface Window").
  constructor(
    connection,
    {
      idleCloseMs = 10000,
      setTimer = (callback, ms) => setTimeout(callback, ms),
      clearTimer = (timer) => clearTimeout(timer),
      now = Date.now,
    } = {},
  ) {
    this.#connection = connection;
    this.#idleCloseMs = idleCloseMs;
    this.#setTimer = setTimer;
    this.#clearTimer = clearTimer;
    this.#now = now;
    connection.onStatus((host) => this.#broadcast({ type: "host", host }));
  }

  /** Operations running now, plus the last finished one of each command. */
  get operations() {
    const running = [...this.#ops.values()].filter((op) => op.state === "running");
    return [...running, ...this.#latest.values()].map((op) => this.#publicOp(op));
  }

  /** Serves one runtime.Port from runtime.onConnect. */
  attach(port) {
    this.#ports.add(port);
    this.#cancelIdle();
    port.onMessage.addListener((message) => this.#onMessage(port, message));
    port.onDisconnect.addListener(() => {
      this.#ports.delete(port);
      this.#scheduleIdle();
    });
    this.#post(port, { type: "welcome", host: this.#connection.status, ops: this.operations });
  }

  /** For background code: a request through the same connection, counted as an operation if long. */
  request(command, params = {}, options = {}) {
    return this.#start(null, command, params, options).promise;
  }

  #onMessage(port, message) {
    if (message?.type === "request") {
      this.#start(port, message.command, message.params ?? {}, { rid: message.rid });
    } else if (message?.type === "cancel") {
      const op = this.#ops.get(message.op);
      const reply = (ok, payload) => this.#post(port, { type: "reply", rid: message.rid, ok, ...payload });
      if (!op || op.state !== "running") {
        reply(false, { error: { code: "unknown_request", message: `operation ${message.op} is not running`, params: { target: message.op } } });
        return;
      }
      op.cancel().then(
        (data) => reply(true, { data }),
        (error) => reply(false, { error: errorToJSON(error) }),
      );
    }
  }

  #start(port, command, params, { rid = null, onEvent = null } = {}) {
    this.#cancelIdle();
    const broadcast = OPERATIONS.has(command);
    const op = {
      id: this.#nextOp++,
      command,
      params,
      state: "running",
      startedAt: this.#now(),
      endedAt: null,
      progress: null,
      result: null,
      error: null,
      cancel: null,
    };
    if (broadcast) {
      this.#ops.set(op.id, op);
    }
    const handle = this.#connection.send(command, params, {
      onEvent: (event, data) => {
        onEvent?.(event, data);
        if (port) {
          this.#post(port, { type: "event", rid, op: op.id, event, data });
        }
        if (broadcast && event === "progress") {
          op.progress = data;
          this.#broadcast({ type: "op", op: this.#publicOp(op) });
        }
      },
    });
    op.cancel = handle.cancel;
    if (port) {
      this.#post(port, { type: "started", rid, op: op.id });
    }
    if (broadcast) {
      this.#broadcast({ type: "op", op: this.#publicOp(op) });
    }
    const finish = (fields, reply) => {
      Object.assign(op, fields, { endedAt: this.#now() });
      if (port) {
        this.#post(port, { type: "reply", rid, op: op.id, ...reply });
      }
      if (broadcast) {
        this.#ops.delete(op.id);
        this.#latest.set(command, op);
        this.#broadcast({ type: "op", op: this.#publicOp(op) });
      }
      this.#scheduleIdle();
    };
    const promise = handle.promise.then(
      (data) => {
        finish({ state: "ok", result: data }, { ok: true, data });
        return data;
      },
      (error) => {
        const json = errorToJSON(error);
        finish({ state: "error", error: json }, { ok: false, error: json });
        throw error;
      },
    );
    promise.catch(() => {}); // the UI hears of it through its port; background callers await it
    return { op: op.id, promise };
  }

  #publicOp(op) {
    const rest = { ...op };
    delete rest.cancel;
    return structuredClone(rest);
  }

  #post(port, message) {
    try {
      port.postMessage(message);
    } catch {
      this.#ports.delete(port); // the popup closed: the operation goes on without it
    }
  }

  #broadcast(message) {
    for (const port of [...this.#ports]) {
      this.#post(port, message);
    }
  }

  #cancelIdle() {
    if (this.#idleTimer !== null) {
      this.#clearTimer(this.#idleTimer);
      this.#idleTimer = null;
    }
  }

  /** Nobody looks and nothing runs: close the host port so Firefox may suspend the background. */
  #scheduleIdle() {
    this.#cancelIdle();
    if (this.#ports.size > 0 || this.#connection.busy) {
      return;
    }
    this.#idleTimer = this.#setTimer(() => {
      this.#idleTimer = null;
      if (this.#ports.size === 0 && !this.#connection.busy) {
        this.#connection.close();
      }
    }, this.#idleCloseMs);
  }
}

/** UI side: `connect()` returns a runtime.Port to the background (runtime.connect({name})). */
export class RelayClient {
  #connect;
  #port = null;
  #nextRid = 1;
  #pending = new Map();
  #hostListeners = new Set();
  #opListeners = new Set();
  #host = { state: "idle", message: null };
  #ops = new Map();

  constructor(connect) {
    this.#connect = connect;
  }

  /** The host's status as the background last told it. */
  get host() {
    return { ...this.#host };
  }

  /** Known operations (running ones and the last finished one per command), newest last. */
  get operations() {
    return [...this.#ops.values()];
  }

  /** Opens the port to the background (again, if it went away). */
  start() {
    if (this.#port) {
      return;
    }
    const port = this.#connect();
    this.#port = port;
    port.onMessage.addListener((message) => this.#onMessage(message));
    port.onDisconnect.addListener(() => this.#onDisconnect(port));
  }

  /** Listener for the host's status: ({state, message}). Returns an unsubscribe function. */
  onHost(listener) {
    this.#hostListeners.add(listener);
    return () => this.#hostListeners.delete(listener);
  }

  /** Listener for preload/evict operations of any UI: (op). Returns an unsubscribe function. */
  onOperation(listener) {
    this.#opListeners.add(listener);
    return () => this.#opListeners.delete(listener);
  }

  /**
   * Sends a host request through the background. Resolves with the reply's data; rejects with a
   * HostError. `onEvent(event, data)` gets its events, `onStarted(opId)` the operation id.
   */
  request(command, params = {}, { onEvent = null, onStarted = null } = {}) {
    return this.#send({ type: "request", command, params }, { onEvent, onStarted });
  }

  /** Asks the host to cancel an operation (by the op id from onStarted or onOperation). */
  cancel(op) {
    return this.#send({ type: "cancel", op });
  }

  #send(message, handlers = {}) {
    this.start();
    const rid = this.#nextRid++;
    return new Promise((resolve, reject) => {
      this.#pending.set(rid, { resolve, reject, ...handlers });
      try {
        this.#port.postMessage({ ...message, rid });
      } catch (error) {
        this.#pending.delete(rid);
        this.#port = null;
        reject(new HostError({ code: HOST_DISCONNECTED, message: String(error?.message ?? error), params: { kind: "relay" } }));
      }
    });
  }

  #setHost(host) {
    this.#host = { state: host?.state ?? "idle", message: host?.message ?? null };
    for (const listener of this.#hostListeners) {
      listener(this.host);
    }
  }

  #setOp(op) {
    this.#ops.delete(op.id);
    this.#ops.set(op.id, op);
    // keep running ones and the newest finished one per command
    for (const other of [...this.#ops.values()]) {
      if (other.id !== op.id && other.command === op.command && other.state !== "running" && op.state !== "running") {
        this.#ops.delete(other.id);
      }
    }
    for (const listener of this.#opListeners) {
      listener(op);
    }
  }

  #onMessage(message) {
    switch (message?.type) {
      case "welcome":
        this.#setHost(message.host);
        for (const op of message.ops ?? []) {
          this.#setOp(op);
        }
        return;
      case "host":
        this.#setHost(message.host);
        return;
      case "op":
        this.#setOp(message.op);
        return;
      case "started":
        this.#pending.get(message.rid)?.onStarted?.(message.op);
        return;
      case "event":
        this.#pending.get(message.rid)?.onEvent?.(message.event, message.data);
        return;
      case "reply": {
        const entry = this.#pending.get(message.rid);
        if (!entry) {
          return;
        }
        this.#pending.delete(message.rid);
        if (message.ok) {
          entry.resolve(message.data);
        } else {
          entry.reject(new HostError(message.error ?? { code: "internal", message: "no error given" }));
        }
        return;
      }
      default:
    }
  }

  #onDisconnect(port) {
    if (this.#port !== port) {
      return;
    }
    this.#port = null;
    const failure = new HostError({
      code: HOST_DISCONNECTED,
      message: "the add-on's background page went away",
      params: { kind: "relay" },
    });
    for (const entry of this.#pending.values()) {
      entry.reject(failure);
    }
    this.#pending.clear();
  }
}
