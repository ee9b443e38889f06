// npm start's choice of Firefox and flavour, on fake installs of each kind built in a temp folder:
// the same files the real installs carry (application.ini, channel-prefs.js, update-settings.ini,
// Snap and Flatpak layouts, launcher scripts), binaries that are empty executable files.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  channelOf,
  chooseFirefox,
  findCandidates,
  inspectFirefox,
  parseIni,
  flatpakReachesHost,
  profileTmpDir,
  summaryLine,
} from "../../../../scripts/lib/firefox-kind.mjs";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "firefox-kind-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

let n = 0;
/** A fresh fake machine: its own /usr/bin, /usr/lib, /snap, flatpak roots and HOME. */
function machine() {
  const root = path.join(tmp, `m${n++}`);
  const m = {
    root,
    bin: path.join(root, "usr", "bin"),
    roots: {
      snap: path.join(root, "snap"),
      distribution: [path.join(root, "usr", "lib")],
      flatpak: [path.join(root, "var", "lib", "flatpak")],
      tarballs: [path.join(root, "home", "u", "firefox")],
      installed: [path.join(root, "usr", "lib", "firefox-esr"), path.join(root, "usr", "lib64", "firefox")],
    },
  };
  fs.mkdirSync(m.bin, { recursive: true });
  m.env = { PATH: m.bin, HOME: path.join(root, "home", "u") };
  m.opts = { env: m.env, roots: m.roots };
  return m;
}

function write(file, text, mode = 0o644) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, { mode });
  fs.chmodSync(file, mode);
}

/**
 * An install folder: application.ini (Vendor/Name/Version/RemotingName/SourceRepository), and as
 * asked channel-prefs.js and update-settings.ini; `binary` is the executable's name in it.
 */
function install(dir, { binary = "firefox", version = "153.0", remoting = "firefox", repo, channel, mar } = {}) {
  write(
    path.join(dir, "application.ini"),
    `; comment\n[App]\nVendor=Mozilla\nName=Firefox\nRemotingName=${remoting}\nVersion=${version}\n` +
      (repo ? `SourceRepository=https://hg.mozilla.org/${repo}\n` : "") +
      "[Gecko]\nMinVersion=1\n",
  );
  if (channel) {
    write(
      path.join(dir, "defaults", "pref", "channel-prefs.js"),
      `// comment\npref("app.update.channel", "${channel}");\n`,
    );
  }
  if (mar) {
    write(path.join(dir, "update-settings.ini"), `[Settings]\nACCEPTED_MAR_CHANNEL_IDS=${mar}\n`);
  }
  write(path.join(dir, binary), "", 0o755);
  return path.join(dir, binary);
}

function link(target, file) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.symlinkSync(target, file);
  return file;
}

test("parseIni reads sections, skips comments", () => {
  assert.deepEqual(parseIni("; c\n[App]\nName=Firefox\nVersion = 1.0\n\n[X]\na=b=c\n"), {
    App: { Name: "Firefox", Version: "1.0" },
    X: { a: "b=c" },
  });
});

test("Debian's firefox-esr as installed here: channel-prefs.js says esr → full flavour", () => {
  const m = machine();
  const dir = path.join(m.root, "usr", "lib", "firefox-esr");
  const bin = install(dir, {
    binary: "firefox-esr",
    remoting: "firefox-esr",
    repo: "releases/mozilla-esr153",
    channel: "esr",
    version: "153.7.0",
  });
  link(bin, path.join(m.bin, "firefox-esr"));
  const ff = inspectFirefox(path.join(m.bin, "firefox-esr"), m.opts);
  assert.equal(ff.kind, "distribution");
  assert.equal(ff.dir, dir);
  assert.equal(ff.channel, "esr");
  assert.equal(ff.edition, "ESR");
  assert.equal(ff.experiments, true);
  assert.equal(ff.version, "153.7.0");
  const choice = chooseFirefox(m.opts);
  assert.equal(choice.flavour, "full");
  assert.equal(choice.host, true);
  assert.match(summaryLine(choice), /^Firefox: Firefox ESR 153\.7\.0 \(distribution, .*firefox-esr\) → full flavour: ESR honours extension experiments \(defaults\/pref\/channel-prefs\.js: app\.update\.channel "esr"\)$/);
});

test("an ESR installed in /usr/lib/firefox-esr but not on PATH is found, as the host's CLI finds it", () => {
  const m = machine();
  const dir = path.join(m.root, "usr", "lib", "firefox-esr");
  install(dir, { binary: "firefox-esr", remoting: "firefox-esr", channel: "esr", version: "153.7.0" });
  // nothing on PATH (m.bin is empty)
  const choice = chooseFirefox(m.opts);
  assert.equal(choice.install.dir, dir);
  assert.equal(choice.flavour, "full");
});

test("the channel is told by channel-prefs.js, else update-settings.ini, else application.ini, else the binary name", () => {
  const m = machine();
  const a = path.join(m.root, "a");
  install(a, { channel: "release", mar: "firefox-mozilla-esr", repo: "releases/mozilla-esr153" });
  assert.equal(channelOf(a).channel, "release");
  const b = path.join(m.root, "b");
  install(b, { mar: "firefox-mozilla-aurora", repo: "releases/mozilla-beta" });
  assert.equal(channelOf(b).channel, "aurora");
  const c = path.join(m.root, "c");
  install(c, { repo: "mozilla-central" });
  assert.equal(channelOf(c).channel, "nightly");
  const d = path.join(m.root, "d");
  install(d, { remoting: "firefox-esr" });
  assert.equal(channelOf(d).channel, "esr");
  // a beta repository alone does not tell Beta from Developer Edition
  const e = path.join(m.root, "e");
  install(e, { repo: "releases/mozilla-beta" });
  assert.equal(channelOf(e), null);
  assert.equal(channelOf(e, "firefox-developer-edition").channel, "aurora");
});

test("Mozilla's Release tarball in the home folder alone → basic flavour, with the reason", () => {
  const m = machine();
  const dir = m.roots.tarballs[0];
  install(dir, { channel: "release", mar: "firefox-mozilla-release", repo: "releases/mozilla-release" });
  const [ff] = findCandidates(m.opts);
  assert.equal(ff.kind, "tarball");
  assert.equal(ff.edition, "Release");
  assert.equal(ff.experiments, false);
  const choice = chooseFirefox(m.opts);
  assert.equal(choice.flavour, "basic");
  assert.equal(choice.host, true);
  assert.match(choice.why, /no Firefox here honours extension experiments/);
  assert.match(summaryLine(choice), /→ basic flavour: .*\(tarball, /);
});

test("Release on PATH as `firefox` and ESR beside it: ESR is chosen although firefox is the usual name", () => {
  const m = machine();
  link(install(path.join(m.root, "usr", "lib", "firefox"), { channel: "release" }), path.join(m.bin, "firefox"));
  link(
    install(path.join(m.root, "opt", "firefox-esr"), { binary: "firefox-esr", channel: "esr" }),
    path.join(m.bin, "firefox-esr"),
  );
  const choice = chooseFirefox(m.opts);
  assert.equal(choice.install.edition, "ESR");
  assert.equal(choice.install.kind, "tarball");
  assert.equal(choice.flavour, "full");
});

test("Developer Edition, Nightly and a self-built (channel default) run the full flavour; Beta does not", () => {
  for (const [channel, edition, full] of [
    ["aurora", "Developer Edition", true],
    ["nightly", "Nightly", true],
    ["default", "a self-built or unbranded build", true],
    ["beta", "Beta", false],
  ]) {
    const m = machine();
    link(install(path.join(m.root, "opt", channel), { channel }), path.join(m.bin, "firefox"));
    const choice = chooseFirefox(m.opts);
    assert.equal(choice.install.edition, edition, channel);
    assert.equal(choice.flavour, full ? "full" : "basic", channel);
  }
});

test("a distribution launcher script (Debian's /usr/bin/firefox runs firefox-esr) is followed to its folder", () => {
  const m = machine();
  const dir = path.join(m.root, "usr", "lib", "firefox-esr");
  link(install(dir, { binary: "firefox-esr", channel: "esr" }), path.join(m.bin, "firefox-esr"));
  write(path.join(m.bin, "firefox"), '#!/bin/sh\nexec firefox-esr "$@"\n', 0o755);
  const ff = inspectFirefox(path.join(m.bin, "firefox"), m.opts);
  assert.equal(ff.dir, dir);
  assert.equal(ff.kind, "distribution");
  // found twice (firefox and firefox-esr), listed once
  assert.equal(findCandidates(m.opts).length, 1);
});

test("Snap: /snap/bin/firefox is named as a Snap, runs the basic flavour, with the host (the WebExtensions portal reads the usual manifest folders)", () => {
  const m = machine();
  const snapDir = path.join(m.roots.snap, "firefox", "current", "usr", "lib", "firefox");
  install(snapDir, { channel: "release" });
  write(path.join(m.root, "usr", "bin", "snap"), "", 0o755);
  link(path.join(m.root, "usr", "bin", "snap"), path.join(m.roots.snap, "bin", "firefox"));
  const choice = chooseFirefox(m.opts);
  assert.equal(choice.install.kind, "snap");
  assert.equal(choice.install.dir, snapDir);
  assert.equal(choice.install.launch, path.join(m.roots.snap, "bin", "firefox"));
  assert.equal(choice.flavour, "basic");
  // Ubuntu's WebExtensions portal reads ~/.mozilla/native-messaging-hosts (NOTES, round 4): the
  // host is registered as for any Firefox, and the words say it is untested here, never "no host".
  assert.equal(choice.host, true);
  assert.match(choice.why, /requires signed add-ons .*; Snap: it reaches the native host through the desktop's WebExtensions portal/);
  assert.match(choice.why, /not tested here/);
  assert.doesNotMatch(choice.why, /no host/);
  // web-ext's temporary profile must be somewhere the Snap can read
  assert.equal(profileTmpDir(choice.install, { HOME: "/h" }), "/h/snap/firefox/common/about-startup-tmp");
  assert.equal(profileTmpDir({ kind: "tarball" }), null);
});

test("Ubuntu's transitional firefox .deb (a script running /snap/bin/firefox) is the Snap", () => {
  const m = machine();
  install(path.join(m.roots.snap, "firefox", "current", "usr", "lib", "firefox"), { channel: "release" });
  write(path.join(m.bin, "firefox"), `#!/bin/sh\nexec ${m.roots.snap}/bin/firefox "$@"\n`, 0o755);
  const ff = inspectFirefox(path.join(m.bin, "firefox"), m.opts);
  assert.equal(ff.kind, "snap");
  assert.equal(ff.channel, "release");
});

test("Flatpak: exports/bin/org.mozilla.firefox is named, launched as flatpak:<id>, basic; before Firefox 157 no host", () => {
  const m = machine();
  const root = m.roots.flatpak[0];
  install(path.join(root, "app", "org.mozilla.firefox", "current", "active", "files", "lib", "firefox"), {
    channel: "release",
  });
  write(
    path.join(root, "exports", "bin", "org.mozilla.firefox"),
    '#!/bin/sh\nexec /usr/bin/flatpak run --branch=stable --arch=x86_64 org.mozilla.firefox "$@"\n',
    0o755,
  );
  const choice = chooseFirefox(m.opts);
  assert.equal(choice.install.kind, "flatpak");
  assert.equal(choice.install.launch, "flatpak:org.mozilla.firefox");
  assert.equal(choice.install.edition, "Release");
  assert.equal(choice.flavour, "basic");
  assert.equal(choice.host, false);
  assert.match(summaryLine(choice), /Flatpak: Firefox 153\.0 has no way to native hosts \(xdg-native-messaging-proxy came with Firefox 157\)/);
});

test("Flatpak from Firefox 157 on: the host is registered (xdg-native-messaging-proxy), said untested here", () => {
  const m = machine();
  const root = m.roots.flatpak[0];
  install(path.join(root, "app", "org.mozilla.firefox", "current", "active", "files", "lib", "firefox"), { channel: "release", version: "157.0" });
  write(path.join(root, "exports", "bin", "org.mozilla.firefox"), '#!/bin/sh\nexec /usr/bin/flatpak run org.mozilla.firefox "$@"\n', 0o755);
  const choice = chooseFirefox(m.opts);
  assert.equal(choice.install.kind, "flatpak");
  assert.equal(choice.host, true);
  assert.match(choice.why, /from Firefox 157 on it reaches native hosts through xdg-native-messaging-proxy.*not tested here/);
  assert.equal(flatpakReachesHost({ version: "156.0.1" }), false);
  assert.equal(flatpakReachesHost({ version: null }), true, "unknown: registering costs nothing");
});

test("a plain Release is preferred over a Snap for the basic flavour (it can use the host)", () => {
  const m = machine();
  install(path.join(m.roots.snap, "firefox", "current", "usr", "lib", "firefox"), { channel: "release" });
  write(path.join(m.roots.snap, "bin", "firefox"), "", 0o755);
  install(m.roots.tarballs[0], { channel: "release" });
  const choice = chooseFirefox(m.opts);
  assert.equal(choice.install.kind, "tarball");
  assert.equal(choice.host, true);
});

test("--firefox overrides the choice: a binary or its install folder; the flavour still follows the build", () => {
  const m = machine();
  link(install(path.join(m.root, "opt", "esr"), { channel: "esr" }), path.join(m.bin, "firefox-esr"));
  const release = path.join(m.root, "opt", "release");
  install(release, { channel: "release" });
  for (const override of [release, path.join(release, "firefox")]) {
    const choice = chooseFirefox({ ...m.opts, override });
    assert.equal(choice.install.dir, release);
    assert.equal(choice.flavour, "basic");
    assert.match(choice.why, /^as asked .*Release .*refuses the full flavour's experiments/);
  }
  const forced = chooseFirefox({ ...m.opts, override: release, flavour: "full" });
  assert.equal(forced.flavour, "full");
  assert.throws(() => chooseFirefox({ ...m.opts, override: path.join(m.root, "nope") }), /not an executable Firefox/);
});

test("an install whose channel cannot be told runs the basic flavour and says so", () => {
  const m = machine();
  link(install(path.join(m.root, "opt", "x"), {}), path.join(m.bin, "firefox"));
  const choice = chooseFirefox(m.opts);
  assert.equal(choice.flavour, "basic");
  assert.match(choice.why, /could not be told/);
});

test("no Firefox at all: the error names the root command to run", () => {
  const m = machine();
  assert.throws(() => chooseFirefox(m.opts), /apt-get install firefox-esr/);
});
