// When Firefox dies before web-ext reaches it (no display, a broken profile, a crash), web-ext
// keeps knocking on Firefox's remote-debugging port for about 30 s and then ends in an
// ECONNREFUSED stack trace that says nothing of why (issue 30, item 1). `watchFirefox` wraps
// web-ext's own way of starting Firefox (its `firefoxApp`, which `cmd.run` takes as a
// collaborator) so that `npm start` sees the Firefox process: the last lines it wrote to stderr
// and its exit, which ends the wait at once with a FirefoxExitedError.

/** How many of Firefox's last stderr lines the error quotes. */
const TAIL_LINES = 12;

export class FirefoxExitedError extends Error {
  /** `code`/`signal` as a child process's "close" gives them; `lines`: its last stderr lines. */
  constructor({ code, signal, lines }) {
    const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
    const said = lines.length > 0 ? `; its last lines on stderr:\n  ${lines.join("\n  ")}` : ", writing nothing to stderr";
    super(`Firefox ${how} before the add-on could be installed${said}`);
    this.name = "FirefoxExitedError";
    this.code = code;
    this.signal = signal;
    this.lines = lines;
  }
}

/** Keeps the last `max` non-empty lines of a stream's chunks. */
export function lineTail(max = TAIL_LINES) {
  const lines = [];
  let partial = "";
  return {
    push(chunk) {
      const parts = (partial + chunk.toString()).split("\n");
      partial = parts.pop();
      for (const line of parts) {
        if (line.trim()) {
          lines.push(line.trimEnd());
          if (lines.length > max) {
            lines.shift();
          }
        }
      }
    },
    lines: () => (partial.trim() ? [...lines, partial.trimEnd()].slice(-max) : [...lines]),
  };
}

/**
 * `firefoxApp` (web-ext's lib/firefox module, or a fake) with its `run` wrapped: returns
 * {app, exited}. `exited` rejects with a FirefoxExitedError when the Firefox that `app.run`
 * started ends; race it against `cmd.run`, which resolves once web-ext reached Firefox (after
 * that, Firefox closing is the normal end and nobody listens to `exited` any more).
 */
export function watchFirefox(firefoxApp, { tail = lineTail() } = {}) {
  let reject;
  const exited = new Promise((_, r) => {
    reject = r;
  });
  exited.catch(() => {}); // a close after web-ext connected is not an error
  const app = {
    ...firefoxApp,
    async run(profile, options) {
      const info = await firefoxApp.run(profile, options);
      info.firefox.stderr?.on("data", (chunk) => tail.push(chunk));
      // "close" comes after the stdio streams ended, so every line is in.
      info.firefox.on("close", (code, signal) => reject(new FirefoxExitedError({ code, signal, lines: tail.lines() })));
      return info;
    },
  };
  return { app, exited };
}

/**
 * web-ext's own `firefoxApp`, the module `cmd.run` uses by default: not in its package's exports,
 * so reached by its file in this project's node_modules.
 */
export async function webExtFirefoxApp() {
  return import("../../node_modules/web-ext/lib/firefox/index.js");
}
