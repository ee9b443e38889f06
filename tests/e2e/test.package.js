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
import { EXTENSION_ID, HOST_BINARY, ROOT } from "../../scripts/lib/project.mjs";
import { NOBODY, asUser, isRoot } from "../../scripts/lib/users.mjs";
import { readStartupPage, startFirefox, waitFor } from "./harness.js";
import { packagedHosts, stopPackagedHosts } from "./package-cleanup.js";
import { parseDebListing, parsePolicy } from "./package-files.js";

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
// Debian's own checker; .ci/run installs it (apt-get install lintian).
const lintianSkip = skip || (spawnSync("lintian", ["--version"]).status === 0 ? false : "lintian is missing: apt-get install lintian (.ci/run does)");
if (lintianSkip && !skip) {
  console.warn(`SKIPPED test.package.js (lintian): ${lintianSkip}`);
}

function sh(cmd, args) {
  const result = spawnSync(cmd, args, { encoding: "utf8" });
  assert.equal(result.status, 0, `${cmd} ${args.join(" ")} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}

describe("the Debian package: dpkg -i, every user's Firefox reaches the host, dpkg -r leaves nothing", { skip }, () => {
  const stage = { deb: null, entries: [], files: [], tmp: null };

  before(async () => {
    stage.tmp = await fsp.mkdtemp(path.join(os.tmpdir(), "about-startup-package-"));
    // Built under the strictest umask a user may have (077: what they create, only they may
    // read): the package's files must keep Debian's modes all the same (issue 29 #5; checked
    // below from dpkg-deb's own listing, and apt's _apt user must read the .deb).
    const umask = process.umask(0o077);
    try {
      const xpis = await buildExtension({ distDir: path.join(stage.tmp, "dist") });
      stage.deb = await buildPackage({ xpis: { full: xpis.full.xpi, basic: xpis.basic.xpi }, distDir: stage.tmp });
    } finally {
      process.umask(umask);
    }
    assert.equal(fs.statSync(stage.deb).mode & 0o777, 0o644, "the .deb is readable by apt's _apt");
    // Every entry the package holds, as dpkg-deb lists them: mode, owner, path, link target.
    stage.entries = parseDebListing(sh("dpkg-deb", ["-c", stage.deb]));
    stage.files = stage.entries.map((e) => e.path).filter((f) => f !== "/");
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
    // Owner and mode, as Debian policy has them (10.9): everything root:root, folders and the
    // program 0755, data 0644; the command on PATH a link to the program.
    const wrong = stage.entries.filter((e) => e.owner !== "root/root");
    assert.deepEqual(wrong, [], "every entry root/root");
    const modeOf = (e) => (e.mode.startsWith("d") ? "drwxr-xr-x" : e.path === PACKAGED_HOST ? "-rwxr-xr-x" : e.mode.startsWith("l") ? "lrwxrwxrwx" : "-rw-r--r--");
    assert.deepEqual(
      stage.entries.filter((e) => e.mode !== modeOf(e)),
      [],
      "folders and the host 0755, the other files 0644",
    );
    const links = stage.entries.filter((e) => e.mode.startsWith("l"));
    assert.deepEqual(
      links.map((e) => [e.path, path.resolve(path.dirname(e.path), e.target)]),
      [["/usr/bin/about-startup-host", PACKAGED_HOST]],
      "one link: the command on PATH, to the host",
    );
    const control = sh("dpkg-deb", ["-I", stage.deb]);
    assert.doesNotMatch(control, /\b(postinst|preinst|prerm|postrm)\b/);
    assert.match(control, /Package: about-startup/);
  });

  it("is a package Debian's checker passes: lintian says nothing but its one override, which says why", { skip: lintianSkip }, () => {
    // As root lintian only warns, on stderr, that root is not recommended; its tags are on stdout.
    const r = spawnSync("lintian", ["--show-overrides", stage.deb], { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
    const tags = r.stdout.split("\n").filter((line) => /^[A-Z]: /.test(line));
    assert.deepEqual(
      tags.filter((line) => /^[EWX]: /.test(line)),
      [],
      `lintian's errors and warnings: ${r.stdout}`,
    );
    assert.deepEqual(
      tags.filter((line) => line.startsWith("O: ")),
      [`O: ${PACKAGE}: uses-dpkg-database-directly [usr/lib/about-startup/about-startup-host]`],
      "the one override",
    );
    // The override carries its reason (lintian prints the comment above it as N: lines).
    assert.match(r.stdout, /N: The host reads \/var\/lib\/dpkg\/info/);
    assert.equal(r.status, 0, `lintian exited with ${r.status}: ${r.stderr}`);
  });

  it("installs with dpkg: the host root-owned in a folder only root can write, the manifest and the polkit action naming it", () => {
    sh("dpkg", ["-i", stage.deb]);
    const host = fs.statSync(PACKAGED_HOST);
    assert.equal(host.uid, 0);
    assert.equal(host.mode & 0o7777, 0o755);
    const folder = fs.statSync(path.dirname(PACKAGED_HOST));
    assert.equal(folder.uid, 0);
    assert.equal(folder.mode & 0o022, 0, "no one but root may write the host's folder");
    const policyFile = `/usr/share/polkit-1/actions/${POLKIT_ACTION_FILE}`;
    for (const file of [SYSTEM_MANIFEST, policyFile]) {
      const st = fs.lstatSync(file);
      assert.ok(st.isFile(), `${file} is a file`);
      assert.deepEqual([st.uid, st.gid, st.mode & 0o7777], [0, 0, 0o644], `${file}: root's, 0644`);
    }
    // The manifest names the program dpkg installed: the release host the package was built
    // from, byte for byte, at a path with no link in it (Firefox runs what it names).
    const manifest = JSON.parse(fs.readFileSync(SYSTEM_MANIFEST, "utf8"));
    assert.equal(fs.realpathSync(manifest.path), manifest.path, "no link on the manifest's path");
    assert.ok(sh("dpkg", ["-L", PACKAGE]).split("\n").includes(manifest.path), `dpkg installed ${manifest.path}`);
    assert.ok(fs.readFileSync(manifest.path).equals(fs.readFileSync(HOST_BINARY)), `${manifest.path} is the release host`);
    assert.deepEqual(manifest.allowed_extensions, [EXTENSION_ID]);

    // The polkit action, read from the installed file: pkexec runs that same program, with the
    // first argument of the template in manifests/ (the one place it is written), and only
    // after an administrator's password, whatever the session.
    const [action, ...more] = parsePolicy(fs.readFileSync(policyFile, "utf8"));
    assert.deepEqual(more, [], "one action");
    const [template] = parsePolicy(fs.readFileSync(path.join(ROOT, "manifests", POLKIT_ACTION_FILE), "utf8"));
    assert.equal(action.id, template.id);
    assert.equal(action.annotations["org.freedesktop.policykit.exec.path"], manifest.path, "pkexec runs the host Firefox runs");
    assert.equal(action.annotations["org.freedesktop.policykit.exec.argv1"], template.annotations["org.freedesktop.policykit.exec.argv1"]);
    assert.deepEqual(Object.keys(action.defaults).sort(), ["allow_active", "allow_any", "allow_inactive"]);
    assert.deepEqual(action.defaults, template.defaults);
    for (const [session, answer] of Object.entries(action.defaults)) {
      assert.ok(["auth_admin", "auth_admin_keep"].includes(answer), `${session}: ${answer} lets a user run the host as root without an administrator's password`);
    }
  });

  it("has a manual page for the command and each of its subcommands, as --help lists them", () => {
    // The commands the installed program's own --help lists (clap's "Commands:" block).
    const help = sh(PACKAGED_HOST, ["--help"]);
    const block = help.slice(help.indexOf("Commands:"), help.indexOf("\nOptions:"));
    const commands = [...block.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]).filter((c) => c !== "help");
    assert.ok(commands.includes("residency") && commands.includes("trace"), block);
    const page = (name) => sh("gzip", ["-dc", `/usr/share/man/man1/${name}.1.gz`]);
    const main = page("about-startup-host");
    assert.match(main, /^\.TH about-startup-host 1 /m);
    for (const command of commands) {
      assert.ok(main.includes(`about-startup-host-${command}(1)`) || main.includes(`about\\-startup\\-host\\-${command}(1)`), `${command} in the main page's list`);
      assert.match(page(`about-startup-host-${command}`), /^\.SH SYNOPSIS/m, `${command}'s own page`);
    }
    // Issue 39 #9: every page a page names (`trace export`'s, `autostart enable`'s …) is installed,
    // and every document it names is in the package ("No manual entry" and missing docs/ before).
    const installed = fs.readdirSync("/usr/share/man/man1").filter((f) => f.startsWith("about-startup-host"));
    for (const file of installed) {
      const text = sh("gzip", ["-dc", `/usr/share/man/man1/${file}`]).replaceAll("\\-", "-");
      for (const [, name] of text.matchAll(/([A-Za-z0-9_-]+)\(1\)/g)) {
        assert.ok(installed.includes(`${name}.1.gz`), `${file} names ${name}(1), which is not installed`);
      }
      assert.doesNotMatch(text, /[ (]docs\//, `${file} names a document by its place in the source tree`);
      for (const [, doc] of text.matchAll(/(\/usr\/share\/doc\/about-startup\/[A-Za-z0-9_./-]*[A-Za-z0-9_])/g)) {
        assert.ok(fs.existsSync(doc), `${file} names ${doc}, which the package does not ship`);
      }
    }
  });

  it("gives an ordinary user a working command", () => {
    const [command, ...argv] = asUser(NOBODY, ["about-startup-host", "autostart", "status", "--json"], { env: { HOME: "/nonexistent", PATH: "/usr/bin:/bin" } });
    const result = spawnSync(command, argv, { encoding: "utf8" });
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

  it("an ordinary user turns the desktop launch on with the packaged command", () => {
    // Their own HOME, where the package's host writes the copy of Debian's firefox-esr.desktop.
    fs.chmodSync(stage.tmp, 0o755);
    stage.userHome = path.join(stage.tmp, "user-home");
    fs.mkdirSync(stage.userHome);
    fs.chownSync(stage.userHome, NOBODY, NOBODY);
    const result = asNobody(stage.userHome, "about-startup-host", ["desktop", "enable", "--json", "--firefox", "/usr/lib/firefox-esr"]);
    assert.equal(result.status, 0, result.stderr);
    const enabled = JSON.parse(result.stdout);
    assert.equal(enabled.enabled, true);
    assert.equal(enabled.entry_host, PACKAGED_HOST, "the entry runs the packaged host");
    assert.equal(enabled.entry_host_missing, false);
  });

  it("removes with dpkg -r: none of its files or folders is left", () => {
    sh("dpkg", ["-r", PACKAGE]);
    const left = stage.files.filter((f) => {
      if (["/usr", "/usr/bin", "/usr/lib", "/usr/share", "/usr/share/doc", "/usr/share/polkit-1", "/usr/share/polkit-1/actions", "/usr/share/man", "/usr/share/man/man1", "/usr/share/lintian", "/usr/share/lintian/overrides"].includes(f)) {
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

  it("leaves the user's desktop entry running a removed host: README.Debian says so, and desktop status of another host names it", () => {
    // What the package's README said to do before removing it (read from the .deb itself).
    const readme = spawnSync("sh", ["-c", `dpkg-deb --fsys-tarfile '${stage.deb}' | tar -xOf - ./usr/share/doc/${PACKAGE}/README.Debian`], { encoding: "utf8" });
    assert.equal(readme.status, 0, readme.stderr);
    assert.match(readme.stdout, /about-startup-host desktop\s+disable/);
    assert.ok(stage.userHome, "the user turned the desktop launch on");
    // The host built from source, run by that user (a copy they can reach).
    const host = path.join(stage.tmp, "about-startup-host");
    fs.copyFileSync(HOST_BINARY, host);
    fs.chmodSync(host, 0o755);
    const result = asNobody(stage.userHome, host, ["desktop", "status", "--json", "--firefox", "/usr/lib/firefox-esr"]);
    assert.equal(result.status, 0, result.stderr);
    const status = JSON.parse(result.stdout);
    assert.equal(status.entry_host, PACKAGED_HOST);
    assert.equal(status.entry_host_missing, true, JSON.stringify(status));
    const human = asNobody(stage.userHome, host, ["desktop", "status", "--firefox", "/usr/lib/firefox-esr"]);
    assert.match(human.stdout, new RegExp(`the entry runs ${PACKAGED_HOST.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}, which is gone`));
  });
});

/** `cmd args` as nobody, with `home` as HOME and Debian's system entries. */
function asNobody(home, cmd, args) {
  return spawnSync(
    "setpriv",
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "env", "-i", `HOME=${home}`, "PATH=/usr/bin:/bin", "XDG_DATA_DIRS=/usr/share", cmd, ...args],
    { encoding: "utf8" },
  );
}
