// A normal user with a Firefox of their own, for real: the install folder copied into a folder the
// user `nobody` (65534) owns, and the built host run as that user (setpriv, its own HOME, a clean
// environment, no root anywhere in the child). The kernel reports exact residency for files the
// caller owns (mm/mincore.c can_do_mincore), so residency must be exact there, while the same
// user sees the root-owned system copy as hidden; evict and preload work on the user's copy; a
// file the user may not open is that file's error, as a code the add-on words (open_failed, 13).
//
// Needs root only to set the stage (copy, chown, switch user). Without root it is skipped with
// the reason printed, never silently.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { findFirefox } from "../../scripts/lib/firefox.mjs";
import { inspectFirefox } from "../../scripts/lib/firefox-kind.mjs";
import { pauseProactiveReclaim } from "../../scripts/lib/damon.mjs";
import { HOST_BINARY } from "../../scripts/lib/project.mjs";
import { NOBODY, asUser as userArgv, switchUserSkip } from "../../scripts/lib/users.mjs";

const skip = switchUserSkip("needs root to copy Firefox for another user and switch to it (setpriv); run npm test as root");
if (skip) {
  console.warn(`SKIPPED test.unprivileged.js: ${skip}`);
}

describe("a user-owned copy of Firefox, host run as an unprivileged user", { skip }, () => {
  const stage = {};

  /** Runs the host as nobody with only HOME and PATH in its environment; returns parsed JSON. */
  function asUser(args) {
    const [command, ...argv] = userArgv(NOBODY, [stage.host, ...args], { env: { HOME: stage.home, PATH: "/usr/bin:/bin" } });
    const result = spawnSync(command, argv, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    assert.equal(result.status, 0, `${args.join(" ")} as ${NOBODY} failed: ${result.stderr}`);
    return JSON.parse(result.stdout);
  }

  const byName = (report, name) => report.files.find((f) => path.basename(f.path) === name);

  before(() => {
    const systemDir = inspectFirefox(findFirefox()).dir;
    assert.ok(systemDir && fs.existsSync(path.join(systemDir, "application.ini")), `no install folder for ${findFirefox()}`);
    stage.systemDir = systemDir;
    // /root and Debian's home folders are 0700: stage where nobody can reach it.
    stage.root = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-user-"));
    fs.chmodSync(stage.root, 0o755);
    stage.dir = path.join(stage.root, "firefox");
    stage.home = path.join(stage.root, "home");
    stage.host = path.join(stage.root, "about-startup-host");
    const copy = spawnSync("cp", ["-a", systemDir, stage.dir], { encoding: "utf8" });
    assert.equal(copy.status, 0, copy.stderr);
    // The fresh copy's pages are dirty until written back, and no one can evict dirty pages.
    const sync = spawnSync("sync", ["-f", stage.dir], { encoding: "utf8" });
    assert.equal(sync.status, 0, sync.stderr);
    fs.mkdirSync(stage.home);
    const own = spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, stage.dir, stage.home], { encoding: "utf8" });
    assert.equal(own.status, 0, own.stderr);
    assert.ok(fs.existsSync(HOST_BINARY), `${HOST_BINARY} is missing: cargo build --release first`);
    fs.copyFileSync(HOST_BINARY, stage.host);
    fs.chmodSync(stage.host, 0o755);
  });

  after(() => {
    if (stage.root) {
      fs.rmSync(stage.root, { recursive: true, force: true });
    }
  });

  it("the child really runs as nobody, not root", () => {
    const [command, ...argv] = userArgv(NOBODY, ["id", "-u"]);
    const id = spawnSync(command, argv, { encoding: "utf8" });
    assert.equal(id.stdout.trim(), String(NOBODY));
  });

  it("residency of the user's own copy is exact for every file, and hidden for the root-owned system copy", () => {
    const own = asUser(["residency", "--firefox", stage.dir, "--json"]);
    assert.equal(own.install.dir, stage.dir);
    const install = own.files.filter((f) => f.group === "install");
    assert.ok(install.length > 10, `only ${install.length} files`);
    assert.deepEqual(
      install.filter((f) => f.status !== "exact").map((f) => `${f.path}: ${f.status}`),
      [],
    );
    assert.ok(byName(own, "libxul.so"));
    const system = asUser(["residency", "--firefox", stage.systemDir, "--json", "libxul.so"]);
    assert.equal(byName(system, "libxul.so").status, "hidden", "the control: root's files are hidden to nobody");
  });

  it("a file the user cannot open is that file's error, with a code and errno beside the English", (t) => {
    // Root's own file, mode 0600, inside the user's copy: nobody may not open it (EACCES).
    const locked = path.join(stage.dir, "about-startup-locked.bin");
    fs.writeFileSync(locked, "x".repeat(4096), { mode: 0o600 });
    t.after(() => fs.rmSync(locked, { force: true }));
    const scanned = byName(asUser(["residency", "--firefox", stage.dir, "--json", path.basename(locked)]), path.basename(locked));
    assert.equal(scanned.status, "error", JSON.stringify(scanned));
    assert.equal(scanned.error_code, "open_failed");
    assert.equal(scanned.error_params.os_error, 13);
    assert.match(scanned.error, /^cannot open: /, "the English stays for the CLI and older add-ons");
    const evicted = byName(asUser(["evict", "--firefox", stage.dir, "--json", path.basename(locked)]), path.basename(locked));
    assert.equal(evicted.error_code, "open_failed", JSON.stringify(evicted));
  });

  it("evict then preload, as the user: libxul.so goes to 0 pages and back to all of them", (t) => {
    // DAMON proactive reclaim (this machine runs one) pages out page cache it judges idle, freshly
    // read pages included: "all of them" would be a race with it, not a property of the host.
    const { restore } = pauseProactiveReclaim();
    t.after(restore);
    asUser(["evict", "--firefox", stage.dir, "--json"]);
    const evicted = byName(asUser(["residency", "--firefox", stage.dir, "--json", "libxul.so"]), "libxul.so");
    assert.equal(evicted.status, "exact");
    console.log(`as ${NOBODY}: libxul.so ${evicted.resident_pages}/${evicted.pages} pages resident after evict`);
    assert.equal(evicted.resident_pages, 0, "nothing maps the copy, so evict drops every page");
    asUser(["preload", "--firefox", stage.dir, "--json", "libxul.so"]);
    const loaded = byName(asUser(["residency", "--firefox", stage.dir, "--json", "libxul.so"]), "libxul.so");
    assert.equal(loaded.status, "exact");
    console.log(`as ${NOBODY}: libxul.so ${loaded.resident_pages}/${loaded.pages} pages resident after preload`);
    assert.equal(loaded.resident_pages, loaded.pages);
  });
});
