import { test } from "node:test";
import assert from "node:assert/strict";
import { changelogDate, controlFile, copyrightFile, debianChangelog, docsNamedBy } from "../../../scripts/package.mjs";

test("the Debian changelog's date is RFC 2822 in UTC, as `date -uR` prints it", () => {
  // `date -uR -d @1795711280` → "Thu, 26 Nov 2026 16:41:20 +0000"
  assert.equal(changelogDate(new Date(1795711280 * 1000)), "Thu, 26 Nov 2026 16:41:20 +0000");
  // One digit days and hours are padded, as date(1) pads them.
  assert.equal(changelogDate(new Date(Date.UTC(2027, 0, 3, 4, 5, 6))), "Sun, 03 Jan 2027 04:05:06 +0000");
});

test("the changelog is one entry in dpkg's format, the copyright has a notice with the year", () => {
  const text = debianChangelog({ version: "0.1.0", date: new Date(1795711280 * 1000) });
  const lines = text.split("\n");
  // dpkg-parsechangelog's shape: "pkg (version) dist; urgency=…", "  * …", " -- name <mail>  date".
  assert.match(lines[0], /^about-startup \(0\.1\.0\) unstable; urgency=medium$/);
  assert.match(lines[2], /^ {2}\* /);
  assert.match(text, /\n -- about:startup <about-startup@startup-lab\.dev> {2}Thu, 26 Nov 2026 16:41:20 \+0000\n$/);
  assert.match(copyrightFile("2026"), /^Copyright: 2026 about:startup contributors$/m);
});

test("no line of the package's description is longer than lintian's 80 columns", () => {
  const control = controlFile({ version: "0.1.0", arch: "amd64", glibc: "2.34", installedKib: 1 });
  const description = control.slice(control.indexOf("Description:")).split("\n").filter(Boolean);
  assert.ok(description.length > 3);
  assert.deepEqual(description.filter((line) => line.length > 80), []);
});

test("the package ships each document a manual page names, read from roff (issue 39 #9)", () => {
  // as clap_mangen writes a help text's "docs/PROTOCOL.md" once the host's `manpages` placed it
  const page = String.raw`see /usr/share/doc/about\-startup/PROTOCOL.md.
.TP
(/usr/share/doc/about\-startup/design/privilege.md) and /usr/share/doc/about\-startup/copyright`;
  assert.deepEqual(docsNamedBy(page).sort(), ["PROTOCOL.md", "design/privilege.md"]);
  assert.deepEqual(docsNamedBy("no document here"), []);
});
