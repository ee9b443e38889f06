// The Debian package (npm run package, scripts/package.mjs) for real: built, installed into this
// machine with dpkg, a Firefox with a fresh profile and no per-user manifest reaching the host
// through the system-wide manifest, an ordinary user running the packaged command, then removed:
// nothing of it may be left.
//
// Needs root (dpkg) and refuses to touch a machine where the package is installed already (it
// would remove a real install): both skip with the reason printed, never silently.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { buildExtension } from "../../scripts/build.mjs";
import { buildPackage, PACKAGE, PACKAGED_HOST, POLKIT_ACTION_FILE, SYSTEM_MANIFEST } from "../../scripts/package.mjs";
import { EXTENSION_ID } from "../../scripts/lib/project.mjs";
import { readStartupPage, startFirefox, waitFor } from "./harness.js";
import { packagedHosts, stopPackagedHosts } from "./package-cleanup.js";

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const dpkg = spawnSync("dpkg-deb", ["--version"]).status === 0;
const isInstalled = () => /install ok installed/.test(spawnSync("dpkg-query", ["-W", "-f=${Status}", PACKAGE], { encoding: "utf8" }).stdout ?? "");
const installed = isInstalled();
const skip = !isRoot
  ? "needs root to install the package with dpkg; run npm test as root"
  : !dpkg
    ? "dpkg-deb is missing (not a Debian-based system)"
    : installed
      ? `${PACKAGE} is installed on this machine already; the test would remove it`
      : false;
if (skip) {
  console.warn(`SKIPPED test.package.js: ${skip}`);
}

function sh(cmd, args) {
  const result = spawnSync(cmd, args, { encoding: "utf8" });
  assert.equal(result.status, 0, `${cmd} ${args.join(" ")} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}

describe("the Debian package: dpkg -i, every user's Firefox reaches the host, dpkg -r leaves nothing", { skip }, () => {
  const stage = { deb: null, files: [], tmp: null };

  before(async () => {
    stage.tmp = await fsp.mkdtemp(path.join(os.tmpdir(), "about-startup-package-"));
    const xpis = await buildExtension({ distDir: path.join(stage.tmp, "dist") });
    stage.deb = await buildPackage({ xpis: { full: xpis.full.xpi, basic: xpis.basic.xpi }, distDir: stage.tmp });
    // Every path the package holds (without the leading "."), as dpkg-deb lists them.
    stage.files = sh("dpkg-deb", ["-c", stage.deb])
      .split("\n")
      .filter(Boolean)
      .map((line) => line.split(/\s+/).slice(5).join(" ").replace(/ -> .*$/, "").replace(/^\./, "").replace(/\/$/, ""))
      .filter(Boolean);
  });

  after(async () => {
    // Removed even when a test failed before its removal step, with any host it left running.
    const left = await stopPackagedHosts();
    if (left.length > 0) {
      console.warn(`test.package.js: ended the packaged host's processes left running: ${JSON.stringify(left)}`);
    }
    spawnSync("dpkg", ["--purge", PACKAGE], { stdio: "ignore" });
    if (stage.tmp) {
      await fsp.rm(stage.tmp, { recursive: true, force: true });
    }
  });

  it("holds the host, the system manifest, both flavours and the polkit action, all root's, and nothing that sets Firefox up", () => {
    for (const file of [
      PACKAGED_HOST,
      "/usr/bin/about-startup-host",
      SYSTEM_MANIFEST,
      "/usr/share/about-startup/about-startup-full.xpi",
      "/usr/share/about-startup/about-startup-basic.xpi",
      `/usr/share/polkit-1/actions/${POLKIT_ACTION_FILE}`,
    ]) {
      assert.ok(stage.files.includes(file), `${file} in ${stage.files.join(", ")}`);
    }
    // No policies.json, no distribution/ add-ons, no default prefs, no maintainer scripts.
    assert.deepEqual(
      stage.files.filter((f) => /firefox|distribution|policies|defaults\/pref/.test(f)),
      [],
    );
    const control = sh("dpkg-deb", ["-I", stage.deb]);
    assert.doesNotMatch(control, /\b(postinst|preinst|prerm|postrm)\b/);
    assert.match(control, /Package: about-startup/);
  });

  it("installs with dpkg: the host root-owned in a folder only root can write, the manifest naming it", () => {
    sh("dpkg", ["-i", stage.deb]);
    const host = fs.statSync(PACKAGED_HOST);
    assert.equal(host.uid, 0);
    assert.equal(host.mode & 0o7777, 0o755);
    const folder = fs.statSync(path.dirname(PACKAGED_HOST));
    assert.equal(folder.uid, 0);
    assert.equal(folder.mode & 0o022, 0, "no one but root may write the host's folder");
    const manifest = JSON.parse(fs.readFileSync(SYSTEM_MANIFEST, "utf8"));
    assert.equal(manifest.path, PACKAGED_HOST);
    assert.deepEqual(manifest.allowed_extensions, [EXTENSION_ID]);
  });

  it("gives an ordinary user a working command", () => {
    const result = spawnSync(
      "setpriv",
      [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "env", "-i", "HOME=/nonexistent", "PATH=/usr/bin:/bin", "about-startup-host", "autostart", "status", "--json"],
      { encoding: "utf8" },
    );
    assert.equal(result.status, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).enabled, false);
  });

  it("a Firefox with a fresh profile and no manifest of its own reaches the packaged host", async () => {
    const ff = await startFirefox({ installHost: false });
    try {
      assert.ok(!fs.existsSync(path.join(ff.home, ".mozilla")), "no per-user manifest in the fresh HOME");
      await ff.openExtensionPage("page/startup.html");
      const page = await waitFor(
        async () => {
          const p = await readStartupPage(ff.driver);
          return p.hostState === "connected" && p.firefoxState === "ready" ? p : null;
        },
        { timeout: 20000, message: "the page to reach the packaged host" },
      );
      assert.ok(page.hostVersion, "the host answered hello");
      assert.ok(packagedHosts().length > 0, "the packaged host is the one running");
      await ff.screenshot("package-system-manifest");
    } finally {
      await ff.stop();
    }
  });

  it("removes with dpkg -r: none of its files or folders is left", () => {
    sh("dpkg", ["-r", PACKAGE]);
    const left = stage.files.filter((f) => {
      if (["/usr", "/usr/bin", "/usr/lib", "/usr/share", "/usr/share/doc", "/usr/share/polkit-1", "/usr/share/polkit-1/actions"].includes(f)) {
        return false; // the system's own folders
      }
      return fs.existsSync(f) || fs.lstatSync(f, { throwIfNoEntry: false });
    });
    // /usr/lib/mozilla/native-messaging-hosts stays only if another package put a host there.
    const shared = left.filter((f) => f.startsWith("/usr/lib/mozilla") && fs.statSync(f, { throwIfNoEntry: false })?.isDirectory() && fs.readdirSync(f).length > 0);
    assert.deepEqual(left.filter((f) => !shared.includes(f)), []);
    sh("dpkg", ["--purge", PACKAGE]);
    assert.equal(isInstalled(), false);
  });
});
