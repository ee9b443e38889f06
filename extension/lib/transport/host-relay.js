// How pages and the popup reach the background's one host connection (lib/transport/host-connection.js)
// over runtime.connect ports named RELAY_PORT_NAME.
//
// - HostRelay (background) serves those ports. preload and evict are "operations": their progress
//   and result go to every UI, so a preload started from the popup keeps running when the popup
//   closes and any UI opened later sees it. The relay alone decides which operations a UI is told
//   about: those running, plus the last finished one of each command.
// - RelayClient (pages, popup) is the UI end, reconnecting on the next request if the background
//   went away.
//
// Two ids, no more: `rid` pairs a UI's message with the background's answers on that one port;
// `op` is the host's request id (unique for the connection's life), which names an operation to
// every UI, e.g. to cancel it.
//
// Messages, UI → background: {type: "request", rid, command, params, events}, {type: "cancel", rid, op}.
// `events: false` (a request without an onEvent listener): the background does not post that
// request's events to the port, e.g. the per-file page maps of a `residency` whose totals alone
// are wanted (the popup, the export); its reply and the operation broadcasts still come.
// Background → UI: {type: "welcome", host, ops}, {type: "host", host}, {type: "op", op, ops},
// {type: "started", rid, op}, {type: "event", rid, event, data}, {type: "reply", rid, ok, data | error}.
//
// Messages on runtime.connect ports do not keep an MV3 event page alive, and a suspended background
// drops them; the native port does keep it alive. So the relay keeps the native port open while a UI
// is connected or a request runs, and closes it `idleCloseMs` after neither is true. A UI whose port
// was dropped reconnects on its next request; runtime.connect wakes the background again.
// Ports come from injected functions, so node --test passes fakes.

import { HOST_DISCONNECTED, HostError } from "./host-client.js";

/** The runtime.connect port name pages and the popup use to reach the background. */
export const RELAY_PORT_NAME = "about-startup-host-relay";

/** Commands whose progress and result every UI sees (they change the page cache). */
export const OPERATIONS = new Set(["preload", "evict"]);

function errorToJSON(error) {
  return {
    code: error?.code ?? "internal",
    message: String(error?.message ?? error),
    params: error?.params ?? {},
  };
}

/** Background side. `connection` is a HostConnection (send, cancel, status, busy, onStatus, close). */
export class HostRelay {
  #connection;
  #ports = new Set();
  #running = new Map();
  #lastFinished = new Map();
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

  /** Serves one runtime.Port from runtime.onConnect. */
  attach(port) {
    this.#ports.add(port);
    this.#cancelIdle();
    port.onMessage.addListener((message) => this.#onMessage(port, message));
    port.onDisconnect.addListener(() => {
      this.#ports.delete(port);
      this.#scheduleIdle();
    });
    this.#post(port, { type: "welcome", host: this.#connection.status, ops: this.#operations() });
  }

  /** For background code: a request through the same connection (an operation if preload/evict). */
  request(command, params = {}) {
    return this.#start(null, null, command, params);
  }

  /** What every UI is told about: operations running now, then the last finished one of each command. */
  #operations() {
    return structuredClone([...this.#running.values(), ...this.#lastFinished.values()]);
  }

  #onMessage(port, message) {
    if (message?.type === "request") {
      const events = message.events !== false;
      this.#start(port, message.rid, message.command, message.params ?? {}, { events }).catch(() => {}); // replied on the port
    } else if (message?.type === "cancel") {
      this.#connection.cancel(message.op).then(
        (data) => this.#post(port, { type: "reply", rid: message.rid, ok: true, data }),
        (error) => this.#post(port, { type: "reply", rid: message.rid, ok: false, error: errorToJSON(error) }),
      );
    }
  }

  #start(port, rid, command, params, { events = true } = {}) {
    this.#cancelIdle();
    const isOperation = OPERATIONS.has(command);
    let op = null;
    const { id, promise } = this.#connection.send(command, params, {
      onEvent: (event, data) => {
        if (port && events) {
          this.#post(port, { type: "event", rid, event, data });
        }
        if (op && event === "progress") {
          op.progress = data;
          this.#announce(op);
        }
      },
    });
    if (port) {
      this.#post(port, { type: "started", rid, op: id });
    }
    if (isOperation && id !== null) {
      op = { id, command, params, state: "running", startedAt: this.#now(), endedAt: null, progress: null, result: null, error: null };
      this.#running.set(id, op);
      this.#announce(op);
    }
    const finish = (fields, reply) => {
      if (port) {
        this.#post(port, { type: "reply", rid, ...reply });
      }
      if (op) {
        Object.assign(op, fields, { endedAt: this.#now() });
        this.#running.delete(op.id);
        this.#lastFinished.set(command, op);
        this.#announce(op);
      }
      this.#scheduleIdle();
    };
    return promise.then(
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
  }

  #announce(op) {
    this.#broadcast({ type: "op", op: structuredClone(op), ops: this.#operations() });
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

  constructor(connect) {
    this.#connect = connect;
  }

  /** The host's status as the background last told it. */
  get host() {
    return { ...this.#host };
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

  /**
   * Listener for preload/evict operations of any UI: (op, ops), `ops` being every operation the
   * background reports now. On (re)connecting it hears each reported one, before the host status.
   * Returns an unsubscribe function.
   */
  onOperation(listener) {
    this.#opListeners.add(listener);
    return () => this.#opListeners.delete(listener);
  }

  /**
   * Sends a host request through the background. Resolves with the reply's data; rejects with a
   * HostError. `onEvent(event, data)` gets its events, `onStarted(op)` its host request id.
   * Without an `onEvent` the background is told not to send the events at all (`events: false`),
   * so e.g. a `residency` for its totals does not carry every file's page map across the port.
   */
  request(command, params = {}, { onEvent = null, onStarted = null } = {}) {
    return this.#send({ type: "request", command, params, events: onEvent !== null }, { onEvent, onStarted });
  }

  /** Asks the host to cancel an operation (by the id from onStarted or onOperation). */
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

  #tellOperation(op, ops) {
    for (const listener of this.#opListeners) {
      listener(op, ops);
    }
  }

  #onMessage(message) {
    switch (message?.type) {
      case "welcome":
        for (const op of message.ops ?? []) {
          this.#tellOperation(op, message.ops);
        }
        this.#setHost(message.host);
        return;
      case "host":
        this.#setHost(message.host);
        return;
      case "op":
        this.#tellOperation(message.op, message.ops ?? [message.op]);
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
