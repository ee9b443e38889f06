// Stand-ins for the browser objects the extension's pure modules take as parameters, and for what
// the host and the kernel hand them, shared by the unit tests (no mocking framework: plain objects
// that record what they were asked).
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

/**
 * A small trace as the host writes it (native-host/src/trace/model.rs): the header of one traced
 * start (pid 10, 100 ms, nothing lost) followed by `fields` (the byte counts, files, events, …).
 */
export function fakeTrace(fields) {
  return {
    version: 1,
    source: "tracefs",
    pid: 10,
    process_start_ticks: 100,
    attached_ms: 0,
    ended_ms: 100,
    lost_events: 0,
    ...fields,
  };
}

/**
 * A sysfs: `files` maps a path to its content, folders are listed from the keys, writes are
 * recorded in order. `readBack` is what a later read of a written value gives (read_ahead_kb
 * adds a newline); `writable: false` refuses every write as an ordinary user's would be.
 */
export function fakeSysfs(files, { writable = true, readBack = (content) => content } = {}) {
  const writes = [];
  return {
    writes,
    files,
    readFileSync: (p) => {
      if (!(p in files)) throw Object.assign(new Error(`ENOENT ${p}`), { code: "ENOENT" });
      return files[p];
    },
    readdirSync: (dir) => {
      const names = new Set(
        Object.keys(files)
          .filter((p) => p.startsWith(`${dir}/`))
          .map((p) => p.slice(dir.length + 1).split("/")[0]),
      );
      if (names.size === 0) throw Object.assign(new Error(`ENOENT ${dir}`), { code: "ENOENT" });
      return [...names];
    },
    writeFileSync: (p, content) => {
      if (!writable) throw Object.assign(new Error("EACCES"), { code: "EACCES" });
      writes.push([p, content]);
      files[p] = readBack(content);
    },
  };
}
