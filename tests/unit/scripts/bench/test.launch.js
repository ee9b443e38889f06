import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { BENCH_PREFS, benchPaths, logTail } from "../../../../scripts/bench/launch.mjs";

test("the prefs a sideloaded unsigned full flavour needs", () => {
  assert.equal(BENCH_PREFS["xpinstall.signatures.required"], false);
  assert.equal(BENCH_PREFS["extensions.experiments.enabled"], true);
  assert.equal(BENCH_PREFS["extensions.autoDisableScopes"], 0);
});

test("a launch always uses the same profile path; templates beside it", () => {
  assert.deepEqual(benchPaths("/tmp/b"), {
    root: "/tmp/b",
    profile: "/tmp/b/profile",
    home: "/tmp/b/home",
    templateProfile: "/tmp/b/template-profile",
    templateHome: "/tmp/b/template-home",
    record: "/tmp/b/record.json",
    log: "/tmp/b/firefox.log",
  });
});

test("a template's copy keeps every file's time to the nanosecond (Firefox compares an add-on's .xpi mtime in ms)", async () => {
  const { default: fs } = await import("node:fs");
  const { default: os } = await import("node:os");
  const { default: path } = await import("node:path");
  const { execFileSync } = await import("node:child_process");
  const { copyTree } = await import("../../../../scripts/bench/launch.mjs");
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "copy-"));
  try {
    const from = path.join(root, "profile");
    fs.mkdirSync(path.join(from, "extensions"), { recursive: true });
    const xpi = path.join(from, "extensions", "about-startup@startup-lab.dev.xpi");
    fs.writeFileSync(xpi, "an add-on");
    // A time whose fraction Node's double of seconds does not keep in its millisecond (a real
    // one from a bench run: fs.cpSync made it …726 ms, Firefox had recorded …725).
    execFileSync("touch", ["-m", "-d", "@1795909349.725527123", xpi]);
    const to = path.join(root, "copies", "template");
    copyTree(from, to);
    const stat = (f) => execFileSync("stat", ["-c", "%s %y", f], { encoding: "utf8" });
    assert.equal(stat(path.join(to, "extensions", "about-startup@startup-lab.dev.xpi")), stat(xpi));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("restoring the profile in place: the template's bytes and times, every file keeping its inode", async () => {
  const { default: fs } = await import("node:fs");
  const { default: os } = await import("node:os");
  const { default: path } = await import("node:path");
  const { restoreTree } = await import("../../../../scripts/bench/launch.mjs");
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "restore-"));
  try {
    const from = path.join(root, "template");
    const to = path.join(root, "profile");
    fs.mkdirSync(path.join(from, "storage", "idb"), { recursive: true });
    fs.writeFileSync(path.join(from, "places.sqlite"), "template places");
    fs.writeFileSync(path.join(from, "storage", "idb", "1.sqlite"), "template idb");
    fs.writeFileSync(path.join(from, "kind"), "a file in the template");
    fs.symlinkSync("127.0.0.1:+1", path.join(from, "lock"));
    fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true });
    // What a launch leaves: a database written in place, a file replaced (a new inode), one
    // added, one removed, a folder where the template has a file, another lock.
    const places = path.join(to, "places.sqlite");
    const inode = fs.statSync(places).ino;
    fs.writeFileSync(places, "written by Firefox, longer than before");
    fs.rmSync(path.join(to, "storage", "idb", "1.sqlite"));
    fs.writeFileSync(path.join(to, "sessionstore.jsonlz4"), "new");
    fs.rmSync(path.join(to, "kind"));
    fs.mkdirSync(path.join(to, "kind"));
    fs.rmSync(path.join(to, "lock"));
    fs.symlinkSync("127.0.0.1:+2", path.join(to, "lock"));
    restoreTree(from, to);
    const list = (dir) => fs.readdirSync(dir, { recursive: true }).sort();
    assert.deepEqual(list(to), list(from));
    assert.equal(fs.readFileSync(places, "utf8"), "template places");
    assert.equal(fs.statSync(places).ino, inode, "the file is rewritten in place, not replaced");
    // Times to the nanosecond, as stat(1) says them.
    const { execFileSync } = await import("node:child_process");
    const stat = (f) => execFileSync("stat", ["-c", "%s %y", f], { encoding: "utf8" });
    assert.equal(stat(places), stat(path.join(from, "places.sqlite")));
    assert.equal(fs.readlinkSync(path.join(to, "lock")), "127.0.0.1:+1");
    assert.equal(fs.readFileSync(path.join(to, "kind"), "utf8"), "a file in the template");
    assert.equal(fs.readFileSync(path.join(to, "storage", "idb", "1.sqlite"), "utf8"), "template idb");
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("logTail: a failed start's error carries the log's last lines, or says it was empty or unreadable", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "logtail-"));
  try {
    const log = path.join(dir, "firefox.log");
    fs.writeFileSync(log, `${Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n")}\n`);
    assert.equal(logTail(log, 3), "  line 28\n  line 29\n  line 30");
    fs.writeFileSync(log, "");
    assert.equal(logTail(log), "  (empty)");
    assert.equal(logTail(path.join(dir, "missing.log")), "  (unreadable: ENOENT)");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
