import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { installFolderOf, stageInstallCopy } from "../../../../scripts/lib/install-copy.mjs";

function fakeInstall(root) {
  const dir = path.join(root, "lib", "firefox-esr");
  fs.mkdirSync(path.join(dir, "browser"), { recursive: true });
  fs.writeFileSync(path.join(dir, "application.ini"), "[App]\nName=Firefox\n");
  fs.writeFileSync(path.join(dir, "firefox-esr"), "#!/bin/sh\n", { mode: 0o755 });
  fs.writeFileSync(path.join(dir, "browser", "omni.ja"), "x".repeat(1000));
  fs.symlinkSync("/etc/firefox-esr", path.join(dir, "defaults"));
  fs.symlinkSync("../../share/firefox-esr/distribution", path.join(dir, "distribution"));
  fs.symlinkSync("firefox-esr", path.join(dir, "firefox-bin"));
  fs.mkdirSync(path.join(root, "bin"));
  fs.symlinkSync(path.join(dir, "firefox-esr"), path.join(root, "bin", "firefox-esr"));
  return dir;
}

test("the install folder of a binary behind a symlink; none for a wrapper script", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "install-copy-"));
  try {
    const dir = fakeInstall(root);
    assert.deepEqual(installFolderOf(path.join(root, "bin", "firefox-esr")), { dir: fs.realpathSync(dir), name: "firefox-esr" });
    fs.writeFileSync(path.join(root, "bin", "wrapper"), "#!/bin/sh\nexec firefox\n");
    assert.equal(installFolderOf(path.join(root, "bin", "wrapper")), null);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("stageInstallCopy copies the folder (links kept as links), runs the copy's binary, and removes it", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "install-copy-"));
  try {
    fakeInstall(root);
    const copy = stageInstallCopy({ parent: root, find: () => path.join(root, "bin", "firefox-esr") });
    assert.ok(copy.binary.startsWith(path.join(root, "about-startup-e2e-firefox-")), copy.binary);
    assert.equal(path.basename(copy.binary), "firefox-esr");
    assert.equal(fs.readFileSync(path.join(copy.dir, "browser", "omni.ja"), "utf8").length, 1000);
    assert.equal(fs.readlinkSync(path.join(copy.dir, "defaults")), "/etc/firefox-esr");
    // A relative link out of the folder points where it pointed; one inside stays relative.
    assert.equal(fs.readlinkSync(path.join(copy.dir, "distribution")), path.join(fs.realpathSync(root), "share/firefox-esr/distribution"));
    assert.equal(fs.readlinkSync(path.join(copy.dir, "firefox-bin")), "firefox-esr");
    copy.remove();
    assert.equal(fs.existsSync(copy.dir), false);
    const wrapper = path.join(root, "wrapper");
    fs.writeFileSync(wrapper, "#!/bin/sh\n");
    assert.match(stageInstallCopy({ parent: root, find: () => wrapper, env: { PATH: "" } }).reason, /wrapper script/);
    // Debian: `firefox` is a script, `firefox-esr` on PATH is the binary in its folder.
    const viaPath = stageInstallCopy({ parent: root, find: () => wrapper, env: { PATH: path.join(root, "bin") } });
    assert.equal(path.basename(viaPath.binary), "firefox-esr");
    viaPath.remove();
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
