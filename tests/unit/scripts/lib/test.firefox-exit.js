import { test } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { FirefoxExitedError, lineTail, watchFirefox } from "../../../../scripts/lib/firefox-exit.mjs";

/** web-ext's firefoxApp with a fake Firefox process: `run` resolves with it, as web-ext's does. */
function fakeApp() {
  const firefox = new EventEmitter();
  firefox.stderr = new PassThrough();
  return { firefox, app: { createProfile: () => "profile", run: async () => ({ firefox, debuggerPort: 6000 }) } };
}

test("a Firefox that ends before web-ext reached it rejects `exited` with its last stderr lines", async () => {
  const { firefox, app } = fakeApp();
  const watch = watchFirefox(app);
  assert.equal(watch.app.createProfile(), "profile", "the rest of web-ext's firefoxApp is kept");
  const info = await watch.app.run("profile", {});
  assert.equal(info.debuggerPort, 6000);
  firefox.stderr.write("Gtk-Message: one\nError: cannot open ");
  firefox.stderr.write("display: :99\n");
  await new Promise((resolve) => setImmediate(resolve));
  firefox.emit("close", 1, null);
  await assert.rejects(watch.exited, (error) => {
    assert.ok(error instanceof FirefoxExitedError);
    assert.deepEqual(error.lines, ["Gtk-Message: one", "Error: cannot open display: :99"]);
    assert.match(error.message, /^Firefox exited with status 1 before the add-on could be installed; its last lines on stderr:\n {2}Gtk-Message: one\n {2}Error: cannot open display: :99$/);
    return true;
  });
});

test("killed, and silent: the error says so", () => {
  assert.equal(new FirefoxExitedError({ code: null, signal: "SIGSEGV", lines: [] }).message, "Firefox was killed by SIGSEGV before the add-on could be installed, writing nothing to stderr");
});

test("lineTail keeps the last lines, joining lines split across chunks and a last line without newline", () => {
  const tail = lineTail(2);
  tail.push("a\nb\n\n");
  tail.push("c");
  assert.deepEqual(tail.lines(), ["b", "c"]);
  tail.push("d\ne\n");
  assert.deepEqual(tail.lines(), ["cd", "e"]);
});
