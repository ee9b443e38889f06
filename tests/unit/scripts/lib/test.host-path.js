import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { HOST_CLI_NAME, hostPathLines } from "../../../../scripts/lib/host-path.mjs";

/** A fake machine with a built host in a clone and a home folder. */
function machine() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "host-path-"));
  const binary = path.join(root, "clone", "native-host", "target", "release", HOST_CLI_NAME);
  fs.mkdirSync(path.dirname(binary), { recursive: true });
  fs.writeFileSync(binary, "", { mode: 0o755 });
  const home = path.join(root, "home");
  const localBin = path.join(home, ".local", "bin");
  fs.mkdirSync(localBin, { recursive: true });
  // A system folder of the fake machine's PATH, without the host: the real /usr/bin has it while
  // the Debian package is installed (tests/e2e/test.package.js does, for a while).
  const usrBin = path.join(root, "usr", "bin");
  fs.mkdirSync(usrBin, { recursive: true });
  return { root, binary: fs.realpathSync(binary), home, localBin, usrBin };
}

test("not on PATH: where it is, the ln command for ~/.local/bin, and that the page prints the full path meanwhile", () => {
  const m = machine();
  const lines = hostPathLines(m.binary, { env: { HOME: m.home, PATH: `${m.localBin}:${m.usrBin}` } });
  assert.equal(lines[0].startsWith(`the host: ${m.binary} `), true);
  assert.equal(lines[1], `to run it by name in a terminal: mkdir -p ~/.local/bin && ln -sf ${m.binary} ~/.local/bin/${HOST_CLI_NAME}   (~/.local/bin is on your PATH)`);
  assert.match(lines[2], /full path, which works as printed/);
  // ~/.local/bin not on PATH: also how to add it
  const noLocal = hostPathLines(m.binary, { env: { HOME: m.home, PATH: m.usrBin } });
  assert.match(noLocal[1], /and add ~\/\.local\/bin to PATH/);
});

test("linked into ~/.local/bin (on PATH): says so, nothing to do", () => {
  const m = machine();
  fs.symlinkSync(m.binary, path.join(m.localBin, HOST_CLI_NAME));
  const lines = hostPathLines(m.binary, { env: { HOME: m.home, PATH: `${m.localBin}:${m.usrBin}` } });
  assert.deepEqual(lines.slice(1), [`on your PATH as ${HOST_CLI_NAME} (${path.join(m.localBin, HOST_CLI_NAME)})`]);
});

test("another binary of that name comes first on PATH: named, with how to run this one", () => {
  const m = machine();
  const other = path.join(m.root, "other");
  fs.mkdirSync(other);
  fs.writeFileSync(path.join(other, HOST_CLI_NAME), "", { mode: 0o755 });
  const lines = hostPathLines(m.binary, { env: { HOME: m.home, PATH: `${other}:${m.localBin}` } });
  assert.match(lines[1], /is another binary/);
});
