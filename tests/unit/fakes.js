// Stand-ins for the browser objects the extension's pure modules take as parameters, shared by
// the unit tests (no mocking framework: plain objects that record what they were asked).
import { readFileSync } from "node:fs";

/** storage.local: get(key) → {key: value}, set(items); values are copied, as the real one does. */
export function fakeStorage(initial = {}) {
  const data = structuredClone(initial);
  const writes = [];
  return {
    data,
    writes,
    async get(key) {
      return key in data ? { [key]: structuredClone(data[key]) } : {};
    },
    async set(items) {
      writes.push(structuredClone(items));
      Object.assign(data, structuredClone(items));
    },
  };
}

/** A runtime.Port (native or not): records posted messages, lets the test play the far end. */
export function fakePort(name = "port") {
  const messageListeners = [];
  const disconnectListeners = [];
  const port = {
    name,
    posted: [],
    error: null,
    disconnected: false,
    onMessage: { addListener: (l) => messageListeners.push(l) },
    onDisconnect: { addListener: (l) => disconnectListeners.push(l) },
    postMessage(message) {
      if (port.disconnected) {
        throw new Error("Attempt to postMessage on disconnected port");
      }
      port.posted.push(structuredClone(message));
    },
    disconnect() {
      port.disconnected = true;
    },
    reply(message) {
      for (const l of messageListeners) l(structuredClone(message));
    },
    drop(error = null) {
      port.error = error;
      port.disconnected = true;
      for (const l of disconnectListeners) l(port);
    },
  };
  return port;
}

/**
 * browser.i18n.getMessage over the real English messages.json, as Firefox words them: each
 * $NAME$ becomes its placeholder's content, then $1…$9 become the substitutions. A missing key
 * throws, so a test that words a message also checks that it exists.
 */
export function englishMessage(key, subs = []) {
  const messages = englishMessages();
  const entry = messages[key];
  if (!entry?.message) {
    throw new Error(`messages.json has no ${key}`);
  }
  const list = Array.isArray(subs) ? subs : [subs];
  const placeholders = entry.placeholders ?? {};
  return entry.message
    .replace(/\$(\w+)\$/g, (whole, name) => placeholders[name.toLowerCase()]?.content ?? whole)
    .replace(/\$(\d)/g, (_, n) => String(list[Number(n) - 1] ?? ""));
}

let cachedMessages = null;
/** The English messages.json, parsed once. */
export function englishMessages() {
  cachedMessages ??= JSON.parse(readFileSync(new URL("../../extension/_locales/en/messages.json", import.meta.url), "utf8"));
  return cachedMessages;
}

/**
 * A HostConnection (lib/transport/host-connection.js) over fake native ports: `ports` lists every port it
 * opened, `last()` the newest, `ask(...)` sends and returns the reply's promise.
 */
export function fakeHostConnection(HostConnection) {
  const ports = [];
  const conn = new HostConnection(() => {
    const port = fakePort(`native-${ports.length + 1}`);
    ports.push(port);
    return port;
  });
  return { conn, ports, last: () => ports.at(-1), ask: (...args) => conn.send(...args).promise };
}
