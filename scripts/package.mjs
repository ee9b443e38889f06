// npm run package: a Debian package (dist/about-startup_<version>_<arch>.deb) that gives every user
// of the machine a working host without a Rust toolchain:
//   /usr/lib/about-startup/about-startup-host                  the host, root-owned, 0755
//   /usr/bin/about-startup-host                                a link to it, for the command line
//   /usr/lib/mozilla/native-messaging-hosts/about_startup.json the system-wide manifest naming it
//   /usr/share/about-startup/about-startup-{full,basic}.xpi    both add-on flavours, to install by hand
//   /usr/share/polkit-1/actions/dev.startup-lab.about-startup.policy   "Restart cold and trace"
//   /usr/share/doc/about-startup/{copyright,README.Debian,changelog.gz}
//   /usr/share/doc/about-startup/<docs>                         the project's documents the manual names
//   /usr/share/man/man1/about-startup-host{,-<command>}.1.gz   the manual, rendered by the host itself
//   /usr/share/lintian/overrides/about-startup                 lintian's one override, with its reason
// Nothing else: no maintainer scripts, no Firefox policies or preferences, no add-on installed
// behind the user's back (docs/design/package.md). dpkg removes exactly these files. Debian's own
// checker, lintian, finds nothing to say of it but that one override (tests/e2e/test.package.js).
//
// Built with dpkg-deb (Debian's own tool, in every Debian and Ubuntu) from a staged tree, rather
// than with cargo-deb: the package holds the add-on flavours and the polkit action as well as the
// binary, and dpkg-deb needs no crate compiled first.
//   node scripts/package.mjs               builds the extension and the release host first
//   node scripts/package.mjs --no-build    packs what dist/ and native-host/target/release hold
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { pathToFileURL } from "node:url";
import { buildExtension, buildHost, readManifest } from "./build.mjs";
import { DIST_DIR, EXTENSION_ID, HOST_BINARY, ROOT } from "./lib/project.mjs";
import { run } from "./lib/run.mjs";

export const PACKAGE = "about-startup";
/** Where the package puts the host: a system folder only root can write. */
export const PACKAGED_HOST = "/usr/lib/about-startup/about-startup-host";
export const POLKIT_ACTION_FILE = "dev.startup-lab.about-startup.policy";
export const SYSTEM_MANIFEST = "/usr/lib/mozilla/native-messaging-hosts/about_startup.json";

/** The newest GLIBC_x.y symbol version the binary asks for (its libc6 dependency). */
export function glibcNeeded(bytes) {
  let best = null;
  for (const match of bytes.toString("latin1").matchAll(/GLIBC_(\d+)\.(\d+)(?:\.(\d+))?/g)) {
    const version = [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
    if (!best || compare(version, best) > 0) {
      best = version;
    }
  }
  return best && (best[2] ? best.join(".") : `${best[0]}.${best[1]}`);
}

function compare(a, b) {
  for (let i = 0; i < 3; i++) {
    if (a[i] !== b[i]) {
      return a[i] - b[i];
    }
  }
  return 0;
}

/** The DEBIAN/control text. */
export function controlFile({ version, arch, glibc, installedKib }) {
  return `${[
    `Package: ${PACKAGE}`,
    `Version: ${version}`,
    `Architecture: ${arch}`,
    "Maintainer: about:startup <about-startup@startup-lab.dev>",
    `Installed-Size: ${installedKib}`,
    `Depends: libc6 (>= ${glibc})`,
    "Recommends: firefox-esr | firefox",
    // pkexec (and a polkit agent, which every desktop has) for "Restart cold and trace".
    "Suggests: pkexec",
    "Section: web",
    "Priority: optional",
    "Description: Firefox startup lab: startup milestones and the page cache",
    // lintian: at most 80 columns a line (extended-description-line-too-long).
    " about:startup shows what a start of Firefox cost (its milestones, what it",
    " read from disk, cold or hot) and what of Firefox sits in the page cache, and",
    " can preload, evict, restart Firefox cold and trace a start. This package",
    " holds the native host (also a command-line tool) registered for every user's",
    " Firefox, both flavours of the add-on in /usr/share/about-startup/ to install",
    " from about:addons, and the polkit action of the traced restart. It changes no",
    " Firefox setting and installs no add-on by itself.",
  ].join("\n")}\n`;
}

/**
 * A date as Debian's changelog writes it (RFC 2822: "Thu, 26 Nov 2026 16:41:20 +0000"), in UTC.
 * Pure.
 */
export function changelogDate(date) {
  const day = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][date.getUTCDay()];
  const month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][date.getUTCMonth()];
  const two = (n) => String(n).padStart(2, "0");
  return `${day}, ${two(date.getUTCDate())} ${month} ${date.getUTCFullYear()} ${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} +0000`;
}

/**
 * The Debian changelog of this native package (policy 12.7: /usr/share/doc/<pkg>/changelog.gz),
 * one entry for the version; what changed is the project's CHANGELOG.md. Pure.
 */
export function debianChangelog({ version, date }) {
  return `${PACKAGE} (${version}) unstable; urgency=medium

  * about:startup ${version}, packaged from its source tree by scripts/package.mjs.
    What changed in it: CHANGELOG.md of the project.

 -- about:startup <about-startup@startup-lab.dev>  ${changelogDate(date)}
`;
}

/** The copyright file (machine-readable format), with the notice lintian asks for. Pure. */
export function copyrightFile(years) {
  return `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: about-startup

Files: *
Copyright: ${years} about:startup contributors
License: MPL-2.0
 On Debian systems the full text of the Mozilla Public License 2.0 is in
 /usr/share/common-licenses/MPL-2.0.
`;
}

/**
 * lintian's overrides, each with its reason above it (lintian shows the comment with
 * --show-overrides).
 */
export const LINTIAN_OVERRIDES = `# The host reads /var/lib/dpkg/info/<package>.list, read-only, only to name the package
# that installed Firefox's folder (the page and the CLI say "dpkg package firefox-esr"); a
# missing or reshaped database loses only that label. dpkg-query -S would cost a process for
# every residency scan (native-host/src/firefox/kind.rs).
uses-dpkg-database-directly [usr/lib/about-startup/about-startup-host]
`;

/** `bytes` compressed as \`gzip -9n\` does: best compression, no name, no time (reproducible). */
function gzip(bytes) {
  return zlib.gzipSync(bytes, { level: 9 });
}

/** The last commit's date, else now: the changelog's date (the same package for the same tree). */
async function sourceDate() {
  try {
    return new Date(await output("git", ["-C", ROOT, "log", "-1", "--format=%cI"]));
  } catch {
    return new Date();
  }
}

const README_DEBIAN = `about-startup for Debian
========================

The native host is in /usr/lib/about-startup/ and registered for every user's Firefox by
/usr/lib/mozilla/native-messaging-hosts/about_startup.json; \`about-startup-host\` on PATH is the
same program as a command-line tool.

The add-on itself is not installed by this package (it changes no Firefox setting). Its two
flavours are here:

  /usr/share/about-startup/about-startup-full.xpi   Firefox ESR, Developer Edition, Nightly
  /usr/share/about-startup/about-startup-basic.xpi  any Firefox >= 140

They are not signed: in about:config set xpinstall.signatures.required = false (and
extensions.experiments.enabled = true for the full flavour), then about:addons -> gear menu ->
"Install Add-on From File...". See the project's README for what each flavour does.

"Restart cold and trace" on the page asks for the administrator password through polkit
(action dev.startup-lab.about-startup.trace); Firefox still runs as you.

Removing the package removes all of the above. What each user made stays in their home folder:
~/.local/state/about-startup/ (history of plans and traces) and, if they turned on the login
preload, ~/.config/systemd/user/about-startup-preload.service or
~/.config/autostart/about-startup-preload.desktop, which do nothing once the host is gone
(ConditionPathExists, TryExec).

A user who turned on the desktop launch through the prefetch (\`about-startup-host desktop
enable\`, or the page's "Launching from the desktop") has a copy of Firefox's desktop entry in
~/.local/share/applications/ that runs Firefox through /usr/lib/about-startup/about-startup-host.
Once the package is removed that launcher runs a program that is gone: desktops that honour
TryExec hide the copy (whether the system's entry shows in its place depends on the desktop),
others start nothing when it is clicked. Before removing the package, each such user runs

  about-startup-host desktop disable

(or removes ~/.local/share/applications/firefox*.desktop written by about-startup: its
X-About-Startup-Prefetch key says so). \`desktop status\` of any other about-startup-host names an
entry whose host is gone.
`;

async function put(root, file, data, mode) {
  const target = path.join(root, file);
  await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
  await fs.writeFile(target, data);
  await fs.chmod(target, mode);
}

async function sizeKib(dir) {
  let bytes = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) {
      bytes += (await fs.stat(path.join(entry.parentPath ?? entry.path, entry.name))).size;
    }
  }
  return Math.ceil(bytes / 1024);
}

/** "<md5>  <path>" for every regular file of the staged tree (DEBIAN/ aside), sorted by path. */
async function md5sums(stage) {
  const { createHash } = await import("node:crypto");
  const lines = [];
  for (const entry of await fs.readdir(stage, { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath ?? entry.path, entry.name);
    const rel = path.relative(stage, file);
    if (entry.isFile() && !rel.startsWith("DEBIAN")) {
      lines.push(`${createHash("md5").update(await fs.readFile(file)).digest("hex")}  ${rel}`);
    }
  }
  return `${lines.sort((a, b) => a.slice(34).localeCompare(b.slice(34))).join("\n")}\n`;
}

async function output(cmd, args) {
  const { execFile } = await import("node:child_process");
  return new Promise((resolve, reject) => {
    execFile(cmd, args, (error, stdout) => (error ? reject(error) : resolve(stdout.trim())));
  });
}

/**
 * Stages the package tree in dist/deb/ and packs it. Returns the .deb's path.
 * `host`: the release binary; `xpis`: {full, basic} .xpi paths.
 */
/** Where the package puts the documents the manual names (native-host/src/cli/manpages.rs SHIPPED_DOCS). */
export const SHIPPED_DOCS = "/usr/share/doc/about-startup/";

/**
 * The documents a manual page names (`/usr/share/doc/about-startup/X`, roff's `\-` read as `-`),
 * as paths under docs/ of this tree: the package ships each of them, so a page names nothing it
 * lacks (issue 39 #9). The package's own files there (copyright, README.Debian, changelog.gz) are
 * not documents of the tree. Pure.
 */
export function docsNamedBy(pageText) {
  const text = pageText.replaceAll("\\-", "-");
  const own = new Set(["copyright", "README.Debian", "changelog.gz"]);
  const out = new Set();
  for (const match of text.matchAll(/\/usr\/share\/doc\/about-startup\/([A-Za-z0-9_./-]+)/g)) {
    const doc = match[1].replace(/[.)]+$/, "");
    if (!own.has(doc)) out.add(doc);
  }
  return [...out];
}

export async function buildPackage({ host = HOST_BINARY, xpis, distDir = DIST_DIR } = {}) {
  const { version } = await readManifest();
  const arch = await output("dpkg", ["--print-architecture"]);
  const stage = path.join(distDir, "deb", `${PACKAGE}_${version}_${arch}`);
  await fs.rm(stage, { recursive: true, force: true });
  await fs.mkdir(stage, { recursive: true, mode: 0o755 });
  const binary = await fs.readFile(host);
  await put(stage, PACKAGED_HOST, binary, 0o755);
  await fs.mkdir(path.join(stage, "usr/bin"), { recursive: true, mode: 0o755 });
  await fs.symlink("../lib/about-startup/about-startup-host", path.join(stage, "usr/bin/about-startup-host"));
  // The manifest is rendered by the host itself (the one renderer), naming where dpkg puts it.
  const manifest = await output(host, ["manifest", "--binary", PACKAGED_HOST, "--extension-id", EXTENSION_ID]);
  await put(stage, SYSTEM_MANIFEST, `${manifest}\n`, 0o644);
  for (const flavour of ["full", "basic"]) {
    await put(stage, `/usr/share/about-startup/about-startup-${flavour}.xpi`, await fs.readFile(xpis[flavour]), 0o644);
  }
  const policy = await fs.readFile(path.join(ROOT, "manifests", POLKIT_ACTION_FILE));
  await put(stage, `/usr/share/polkit-1/actions/${POLKIT_ACTION_FILE}`, policy, 0o644);
  const date = await sourceDate();
  await put(stage, "/usr/share/doc/about-startup/copyright", copyrightFile(String(date.getUTCFullYear())), 0o644);
  await put(stage, "/usr/share/doc/about-startup/README.Debian", README_DEBIAN, 0o644);
  await put(stage, "/usr/share/doc/about-startup/changelog.gz", gzip(debianChangelog({ version, date })), 0o644);
  await put(stage, `/usr/share/lintian/overrides/${PACKAGE}`, LINTIAN_OVERRIDES, 0o644);
  // The manual, rendered by the host from its own clap definitions (its hidden `manpages`).
  const pages = await fs.mkdtemp(path.join(os.tmpdir(), "about-startup-man-"));
  try {
    await output(host, ["manpages", pages]);
    const docs = new Set();
    for (const name of (await fs.readdir(pages)).sort()) {
      const page = await fs.readFile(path.join(pages, name));
      await put(stage, `/usr/share/man/man1/${name}.gz`, gzip(page), 0o644);
      for (const doc of docsNamedBy(page.toString("utf8"))) docs.add(doc);
    }
    // What the pages name, from docs/ of this tree (a page naming one the tree lacks fails here).
    for (const doc of [...docs].sort()) {
      await put(stage, `${SHIPPED_DOCS}${doc}`, await fs.readFile(path.join(ROOT, "docs", doc)), 0o644);
    }
  } finally {
    await fs.rm(pages, { recursive: true, force: true });
  }
  // DEBIAN/md5sums, as dh_md5sums writes it: `debsums` and `dpkg --verify` check the files by it.
  await put(stage, "DEBIAN/md5sums", await md5sums(stage), 0o644);
  const glibc = glibcNeeded(binary) ?? "2.17";
  await put(stage, "DEBIAN/control", controlFile({ version, arch, glibc, installedKib: await sizeKib(stage) }), 0o644);
  // Every folder 0755 whatever the umask, DEBIAN/ too (made last: under umask 077 it was 0700,
  // and dpkg-deb refuses a control folder that is not >= 0755): dpkg installs the modes it is
  // given (issue 29 #5).
  await fs.chmod(stage, 0o755);
  for (const entry of await fs.readdir(stage, { withFileTypes: true, recursive: true })) {
    if (entry.isDirectory()) {
      await fs.chmod(path.join(entry.parentPath ?? entry.path, entry.name), 0o755);
    }
  }
  const deb = path.join(distDir, `${PACKAGE}_${version}_${arch}.deb`);
  // --root-owner-group: every file root:root in the package, whoever builds it.
  await run("dpkg-deb", ["--root-owner-group", "-Zxz", "--build", stage, deb], { stdio: ["ignore", "ignore", "inherit"] });
  // Readable by apt's own user (_apt), which fetches local .deb files, whatever the umask.
  await fs.chmod(deb, 0o644);
  return deb;
}

async function main(args) {
  const build = !args.includes("--no-build");
  const built = build ? await buildExtension() : null;
  if (build) {
    await buildHost();
  }
  const { version } = await readManifest();
  const xpis = {
    full: built?.full.xpi ?? path.join(DIST_DIR, `about-startup-full-${version}.xpi`),
    basic: built?.basic.xpi ?? path.join(DIST_DIR, `about-startup-basic-${version}.xpi`),
  };
  const deb = await buildPackage({ xpis });
  console.log(`built ${path.relative(ROOT, deb)}`);
  console.log(`install it with: sudo apt install ./${path.relative(process.cwd(), deb)}`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(`package failed: ${error.message}`);
    process.exit(1);
  });
}
