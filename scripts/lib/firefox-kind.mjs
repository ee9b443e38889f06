// What kind of Firefox a binary is, and which flavour of the extension it can run.
//
// `npm start` must not try the full flavour (experiment_apis) on a Firefox that refuses it: Release
// and Beta builds require signed add-ons and ignore extensions.experiments.enabled, so the
// temporary install of the full flavour fails there. What tells the builds apart, read from the
// install folder without starting Firefox (checked on Debian's firefox-esr 153 in
// /usr/lib/firefox-esr):
//   defaults/pref/channel-prefs.js  pref("app.update.channel", "esr")  (release, beta, aurora =
//                                   Developer Edition, nightly, default = self-built)
//   update-settings.ini             ACCEPTED_MAR_CHANNEL_IDS=firefox-mozilla-<channel> (Mozilla's
//                                   tarballs; Debian's package has none)
//   application.ini [App]           Name, Vendor, Version, RemotingName (firefox-esr on Debian),
//                                   SourceRepository (…/mozilla-esr153, mozilla-release, …)
//   the binary's name               firefox-esr, firefox-developer-edition, firefox-nightly
// The first of these that names a channel decides. Where the files live tells the kind of
// install: a Snap (/snap/…), a Flatpak (…/flatpak/…), a distribution package (/usr/lib*), or a
// tarball anywhere else (/opt/firefox, ~/firefox).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { isExecutableFile } from "./firefox.mjs";

/** Channels whose builds honour extension experiments (temporary installs of the full flavour). */
const CHANNELS = {
  esr: { edition: "ESR", experiments: true },
  aurora: { edition: "Developer Edition", experiments: true },
  nightly: { edition: "Nightly", experiments: true },
  default: { edition: "a self-built or unbranded build", experiments: true },
  release: { edition: "Release", experiments: false },
  beta: { edition: "Beta", experiments: false },
};

/** Names `npm start` looks for on PATH, the ones that can run the full flavour first. */
export const CANDIDATE_NAMES = [
  "firefox-esr",
  "firefox-developer-edition",
  "firefox-nightly",
  "firefox",
  "firefox-beta",
];

/** Where Snap and Flatpak keep things; parameters so tests can point them at a temp folder. */
export function defaultRoots(env = process.env) {
  const home = env.HOME ?? os.homedir();
  return {
    snap: "/snap",
    distribution: ["/usr/lib", "/usr/lib64", "/usr/lib32"],
    flatpak: ["/var/lib/flatpak", path.join(home, ".local", "share", "flatpak")],
    tarballs: [path.join(home, "firefox"), "/opt/firefox", "/opt/firefox-esr", "/opt/firefox-developer-edition"],
    // The host CLI's usual folders (native-host/src/firefox/install.rs USUAL_DIRS): a Firefox
    // installed there but not on PATH is found by `about-startup-host residency`, so `npm start`
    // finds it too (issue 19).
    installed: ["/usr/lib/firefox", "/usr/lib/firefox-esr", "/usr/lib64/firefox", "/usr/lib64/firefox-esr", "/usr/local/lib/firefox"],
  };
}

/** The executables an install folder may hold, as the host looks for them. */
const INSTALL_BINARIES = ["firefox", "firefox-esr", "firefox-bin"];

/** Parses an .ini file's text into {section: {key: value}}. */
export function parseIni(text) {
  const out = {};
  let section = "";
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith(";") || line.startsWith("#")) {
      continue;
    }
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1];
      out[section] ??= {};
      continue;
    }
    const eq = line.indexOf("=");
    if (eq > 0) {
      out[section] ??= {};
      out[section][line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
    }
  }
  return out;
}

function readText(file) {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

function realpath(file) {
  try {
    return fs.realpathSync(file);
  } catch {
    return null;
  }
}

function isUnder(file, dir) {
  const rel = path.relative(dir, file);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

/** The update channel and the fact that told it, or null. */
export function channelOf(dir, binaryName = "") {
  const prefs = readText(path.join(dir, "defaults", "pref", "channel-prefs.js"));
  const pref = prefs && /pref\(\s*["']app\.update\.channel["']\s*,\s*["']([^"']+)["']/.exec(prefs);
  if (pref) {
    return { channel: pref[1], fact: `defaults/pref/channel-prefs.js: app.update.channel "${pref[1]}"` };
  }
  const settings = readText(path.join(dir, "update-settings.ini"));
  const mar = settings && parseIni(settings).Settings?.ACCEPTED_MAR_CHANNEL_IDS;
  if (mar) {
    const ids = mar.split(",").map((s) => s.trim());
    const id = ids.find((s) => /^firefox-mozilla-/.test(s));
    const channel = id?.replace(/^firefox-mozilla-/, "").replace(/^central$/, "nightly");
    if (channel && CHANNELS[channel]) {
      return { channel, fact: `update-settings.ini: ACCEPTED_MAR_CHANNEL_IDS=${mar}` };
    }
  }
  const app = parseIni(readText(path.join(dir, "application.ini")) ?? "").App ?? {};
  const repo = /mozilla-(esr\d*|release|beta|central)\b/.exec(app.SourceRepository ?? "");
  if (repo) {
    const channel = repo[1].startsWith("esr") ? "esr" : repo[1] === "central" ? "nightly" : repo[1];
    // Developer Edition is built from mozilla-beta: a beta repository alone does not tell.
    if (channel !== "beta") {
      return { channel, fact: `application.ini: SourceRepository=${app.SourceRepository}` };
    }
  }
  if (app.RemotingName === "firefox-esr") {
    return { channel: "esr", fact: "application.ini: RemotingName=firefox-esr" };
  }
  const byName = { "firefox-esr": "esr", "firefox-developer-edition": "aurora", "firefox-nightly": "nightly" };
  if (byName[binaryName]) {
    return { channel: byName[binaryName], fact: `binary name ${binaryName}` };
  }
  return null;
}

/** The launcher script's text when `file` is a script (#!), else null. */
function scriptText(file) {
  try {
    const fd = fs.openSync(file, "r");
    const head = Buffer.alloc(2);
    fs.readSync(fd, head, 0, 2, 0);
    fs.closeSync(fd);
    return head.toString() === "#!" ? fs.readFileSync(file, "utf8").slice(0, 64 * 1024) : null;
  } catch {
    return null;
  }
}

/**
 * Describes the Firefox that `binary` starts: {binary, dir, kind, channel, edition, experiments,
 * name, version, facts, launch, notes}. kind is "snap", "flatpak", "distribution", "tarball" or
 * "unknown" (no install folder found). `launch` is what web-ext is given as its firefox option.
 */
export function inspectFirefox(binary, { roots = defaultRoots(), env = process.env } = {}) {
  const abs = path.resolve(binary);
  const resolved = realpath(abs) ?? abs;
  const facts = [];
  const base = path.basename(abs);
  const out = { binary: abs, dir: null, kind: "unknown", channel: null, edition: "unknown", experiments: false };
  out.launch = abs;

  // Snap: /snap/bin/<name> is a link to /usr/bin/snap; the files are in /snap/<name>/current.
  // A launcher script that runs /snap/bin/firefox (Ubuntu's transitional firefox .deb) is one too.
  const script = scriptText(resolved);
  const snapBin = path.join(roots.snap, "bin");
  const snapName = isUnder(abs, snapBin)
    ? base
    : (script && new RegExp(`${escapeRe(snapBin)}/([\\w-]+)`).exec(script)?.[1]) ||
      (isUnder(resolved, roots.snap) ? path.relative(roots.snap, resolved).split(path.sep)[0] : null);
  if (snapName) {
    out.kind = "snap";
    out.dir = path.join(roots.snap, snapName, "current", "usr", "lib", "firefox");
    out.launch = path.join(snapBin, snapName);
    out.snapName = snapName;
    facts.push(script && !isUnder(abs, snapBin) ? `${abs} runs ${out.launch}` : `under ${roots.snap}`);
  }

  // Flatpak: <root>/exports/bin/<app-id> is a script running `flatpak run <app-id>`.
  if (!out.dir) {
    for (const root of roots.flatpak) {
      const inExports = isUnder(abs, path.join(root, "exports", "bin")) || isUnder(resolved, path.join(root, "app"));
      const appId =
        (inExports && isUnder(abs, path.join(root, "exports", "bin")) && base) ||
        (script && /flatpak\s+run\b[^\n]*?\s(org\.mozilla\.[\w.]+)/.exec(script)?.[1]) ||
        (isUnder(resolved, path.join(root, "app")) && path.relative(path.join(root, "app"), resolved).split(path.sep)[0]);
      if (appId) {
        out.kind = "flatpak";
        out.dir = path.join(root, "app", appId, "current", "active", "files", "lib", "firefox");
        // web-ext runs a Flatpak Firefox as "flatpak:<app-id>".
        out.launch = `flatpak:${appId}`;
        out.appId = appId;
        facts.push(`Flatpak app ${appId}`);
        break;
      }
    }
  }

  if (!out.dir) {
    let dir = path.dirname(resolved);
    if (!fs.existsSync(path.join(dir, "application.ini")) && script) {
      // A distribution's launcher script (/usr/bin/firefox on Debian runs firefox-esr; Fedora's
      // runs /usr/lib64/firefox/firefox): follow the first path or name it runs.
      dir = followScript(script, abs, env) ?? dir;
    }
    if (fs.existsSync(path.join(dir, "application.ini"))) {
      out.dir = dir;
      out.kind = roots.distribution.some((root) => isUnder(dir, root)) ? "distribution" : "tarball";
      facts.push(`${out.kind === "distribution" ? "a distribution package" : "a tarball"} in ${dir}`);
    }
  }

  if (out.dir) {
    const app = parseIni(readText(path.join(out.dir, "application.ini")) ?? "").App ?? {};
    out.name = app.Name ?? null;
    out.vendor = app.Vendor ?? null;
    out.version = app.Version ?? null;
    out.remotingName = app.RemotingName ?? null;
    const found = channelOf(out.dir, base);
    if (found) {
      out.channel = found.channel;
      facts.push(found.fact);
    }
  } else {
    const found = channelOf("/nonexistent", base);
    if (found) {
      out.channel = found.channel;
      facts.push(found.fact);
    }
  }
  const known = CHANNELS[out.channel];
  out.edition = known?.edition ?? (out.channel ? `channel "${out.channel}"` : "unknown");
  out.experiments = known?.experiments ?? false;
  out.facts = facts;
  return out;
}

function escapeRe(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function followScript(script, self, env) {
  for (const match of script.matchAll(/(\/[\w./-]*firefox[\w.-]*)/g)) {
    const target = realpath(match[1]);
    if (target && target !== realpath(self) && fs.existsSync(path.join(path.dirname(target), "application.ini"))) {
      return path.dirname(target);
    }
  }
  for (const match of script.matchAll(/exec\s+(firefox[\w-]*)/g)) {
    for (const dir of (env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
      const target = realpath(path.join(dir, match[1]));
      if (target && target !== realpath(self) && fs.existsSync(path.join(path.dirname(target), "application.ini"))) {
        return path.dirname(target);
      }
    }
  }
  return null;
}

/** Every Firefox this machine has, found on PATH, as Snap or Flatpak, or as a known tarball. */
export function findCandidates({ env = process.env, roots = defaultRoots(env), isExecutable = isExecutableFile } = {}) {
  const paths = [];
  const dirs = (env.PATH ?? "").split(path.delimiter).filter(Boolean);
  for (const name of CANDIDATE_NAMES) {
    for (const dir of dirs) {
      paths.push(path.join(dir, name));
    }
  }
  for (const dir of roots.tarballs) {
    paths.push(path.join(dir, "firefox"));
  }
  for (const dir of roots.installed ?? []) {
    for (const name of INSTALL_BINARIES) {
      paths.push(path.join(dir, name));
    }
  }
  paths.push(path.join(roots.snap, "bin", "firefox"));
  for (const root of roots.flatpak) {
    paths.push(path.join(root, "exports", "bin", "org.mozilla.firefox"));
  }
  const seen = new Set();
  const out = [];
  for (const candidate of paths) {
    if (!isExecutable(candidate)) {
      continue;
    }
    const install = inspectFirefox(candidate, { roots, env });
    const key = install.dir ?? realpath(candidate) ?? candidate;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(install);
    }
  }
  return out;
}

/** Where Firefox, and Ubuntu's WebExtensions portal for a Snap, look for native-messaging manifests. */
const MANIFEST_FOLDERS = "~/.mozilla/native-messaging-hosts and /usr/lib/mozilla/native-messaging-hosts";

/**
 * Whether a Flatpak Firefox can reach a native host: from 157 on, through
 * xdg-native-messaging-proxy (NOTES, round 4); a version that cannot be read is given the benefit
 * (registering the host costs nothing).
 */
export function flatpakReachesHost(install) {
  const major = Number.parseInt(install.version ?? "", 10);
  return !Number.isFinite(major) || major >= 157;
}

/** What works on this kind of install, in a few words, for the one-line summary and the docs. */
export function kindNote(install) {
  switch (install.kind) {
    case "snap":
      return `Snap: it reaches the native host through the desktop's WebExtensions portal (Ubuntu's xdg-desktop-portal, which reads ${MANIFEST_FOLDERS}), so the host is registered as for any Firefox (not tested here: no Snap on this machine)`;
    case "flatpak":
      return flatpakReachesHost(install)
        ? "Flatpak: from Firefox 157 on it reaches native hosts through xdg-native-messaging-proxy, a D-Bus service outside the sandbox, so the host is registered as for any Firefox (not tested here: no Flatpak on this machine)"
        : `Flatpak: Firefox ${install.version} has no way to native hosts (xdg-native-messaging-proxy came with Firefox 157), so no host (no residency, preload or evict from the page); for them install firefox-esr (apt)`;
    case "distribution":
      return "distribution package: residency is hidden from users who do not own its files (root sees it exactly)";
    case "tarball":
      return "tarball: residency is exact for the user who owns its files";
    default:
      return "no install folder with application.ini found next to the binary";
  }
}

/**
 * Picks the Firefox and flavour for `npm start`. `override` (--firefox PATH, or $FIREFOX) wins;
 * a folder means its `firefox` binary. Otherwise the first candidate that honours experiments and
 * is not a Snap or Flatpak runs the full flavour; else the first candidate (a plain install before
 * a Snap or Flatpak) runs the basic flavour. `flavour` ("full" | "basic") forces the flavour.
 * Returns {install, flavour, host, why}; throws when there is no Firefox at all.
 */
export function chooseFirefox({ override = null, flavour = null, candidates = null, ...options } = {}) {
  let install;
  let why;
  if (override) {
    let binary = override;
    if (fs.existsSync(override) && fs.statSync(override).isDirectory()) {
      binary = path.join(override, "firefox");
    }
    if (!isExecutableFile(binary)) {
      throw new Error(`--firefox ${override}: not an executable Firefox (give the binary or its install folder)`);
    }
    install = inspectFirefox(binary, options);
    why = "as asked (--firefox/FIREFOX)";
  } else {
    const all = candidates ?? findCandidates(options);
    if (all.length === 0) {
      throw new Error(
        "No Firefox found (looked for " +
          `${CANDIDATE_NAMES.join(", ")} on PATH, ~/firefox, /opt/firefox*, /usr/lib*/firefox*, the Snap and the Flatpak).\n` +
          "Install one that honours extension experiments, as root: apt-get install firefox-esr\n" +
          "or pass --firefox PATH.",
      );
    }
    const sandboxed = (i) => i.kind === "snap" || i.kind === "flatpak";
    install = all.find((i) => i.experiments && !sandboxed(i));
    if (install) {
      why = `${install.edition} honours extension experiments (${channelFact(install)})`;
    } else {
      install = all.find((i) => !sandboxed(i)) ?? all[0];
      why = `no Firefox here honours extension experiments (found: ${all.map(label).join("; ")})`;
    }
  }
  let chosen = flavour;
  if (!chosen) {
    if (install.experiments && install.kind !== "snap" && install.kind !== "flatpak") {
      chosen = "full";
      if (override) {
        why += `; ${install.edition} honours extension experiments (${channelFact(install)})`;
      }
    } else {
      chosen = "basic";
      if (override || install.kind === "snap" || install.kind === "flatpak" || !install.experiments) {
        why += `; ${refusal(install)}`;
      }
    }
  } else {
    why += `; flavour ${flavour} as asked (--flavour)`;
  }
  // A Snap reaches the host through the portal, a Flatpak from 157 on through the proxy: both
  // read the manifest npm start registers (issue 30, item 17).
  const host = install.kind !== "flatpak" || flatpakReachesHost(install);
  return { install, flavour: chosen, host, why };
}

function refusal(install) {
  const sandbox = install.kind === "snap" || install.kind === "flatpak" ? `; ${kindNote(install)}` : "";
  if (install.channel === null) {
    return `its update channel could not be told, so the basic flavour is the safe one (--flavour full to try)${sandbox}`;
  }
  return `${install.edition} (${channelFact(install)}) requires signed add-ons and refuses the full flavour's experiments${sandbox}`;
}

function channelFact(install) {
  return install.facts.at(-1) ?? "no facts";
}

/** "Firefox ESR 153.7.0 (distribution package, /usr/lib/firefox-esr)" */
export function label(install) {
  const name = install.name ?? "Firefox";
  const edition = ["ESR", "Developer Edition", "Nightly", "Beta"].includes(install.edition) ? ` ${install.edition}` : "";
  const version = install.version ? ` ${install.version}` : "";
  const where = install.dir ?? install.binary;
  return `${name}${edition}${version} (${install.kind === "unknown" ? "unknown kind" : install.kind}, ${where})`;
}

/**
 * Where web-ext's temporary profile must go for this Firefox: a Snap cannot see the host's /tmp
 * (mozilla/web-ext#1696), only its own ~/snap/<name>/common. Null: the default temp folder.
 */
export function profileTmpDir(install, env = process.env) {
  if (install.kind !== "snap") {
    return null;
  }
  return path.join(env.HOME ?? os.homedir(), "snap", install.snapName, "common", "about-startup-tmp");
}

/** The one line `npm start` prints. */
export function summaryLine({ install, flavour, why }) {
  return `Firefox: ${label(install)} → ${flavour} flavour: ${why}`;
}
