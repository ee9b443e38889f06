// The launch prefetch on a profile with something in it (issue 31, item 3), end to end: the
// small realistic profile (scripts/profile/make.mjs) is traced on a cold start (root:
// `launch --cold --trace`), then started cold again through `launch --prefetch`, which reads
// what the traced start read of the profile while Firefox starts and writes that very profile
// (its session, prefs, history). Firefox's own data must come out intact: what Firefox itself
// counts in Places and the session, the history this test adds meanwhile, and SQLite's own
// `PRAGMA integrity_check` of every database (the sqlite3 program, read-only and immutable, not
// the host). The prefetch as an ordinary user, and every file's bytes and times before and after
// a prefetch, are native-host/tests/prefetch.rs's (with setpriv to nobody).
/* global ChromeUtils -- addHistory and found run in Firefox's chrome context */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { artifactsFolder, defaultFirefox, waitFor } from "./harness.js";
import { restoreTree } from "../../scripts/bench/launch.mjs";
import { HOST_BINARY, ROOT } from "../../scripts/lib/project.mjs";
import { userJs } from "../../scripts/lib/prefs-js.mjs";
import { MAKING_PREFS, startFirefox } from "../../scripts/profile/firefox.mjs";
import * as inFirefox from "../../scripts/profile/in-firefox.mjs";
import { PRESETS } from "../../scripts/profile/presets.mjs";

const isRoot = process.getuid?.() === 0;
const skip = isRoot ? false : "the traced plan needs a trace with page use, which needs root (tracefs): run the e2e suite as root (CI does)";
const PRESET = PRESETS.small;
const ADDED = 25;
/** Pages, visits and URL bookmarks, as Places' tables hold them. */
const COUNTS = "SELECT (SELECT count(*) FROM moz_places), (SELECT count(*) FROM moz_historyvisits), (SELECT count(*) FROM moz_bookmarks WHERE type = 1);";

/** Every regular file below `dir`. */
function filesBelow(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) filesBelow(full, out);
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

/** Drops a file's clean pages (posix_fadvise DONTNEED through dd's nocache flag). */
function evict(file) {
  execFileSync("dd", [`if=${file}`, "iflag=nocache", "count=0", "status=none"]);
}

/** sqlite3's answer to `sql` on `db`, opened read-only and immutable: nothing is written beside it. */
function sqlite(db, sql) {
  return execFileSync("sqlite3", ["-readonly", `file:${db}?immutable=1`, sql], { encoding: "utf8" }).trim();
}

/** (Chrome context.) Adds `n` visits to new pages and one bookmark, through Places. */
async function addHistory(n, stamp) {
  const { PlacesUtils } = ChromeUtils.importESModule("resource://gre/modules/PlacesUtils.sys.mjs");
  const now = Date.now();
  const pages = Array.from({ length: n }, (_, i) => ({
    url: `https://added-while-prefetching.example/${stamp}/${i}`,
    title: `added ${i}`,
    visits: [{ date: new Date(now - i * 1000), transition: PlacesUtils.history.TRANSITIONS.TYPED }],
  }));
  await PlacesUtils.history.insertMany(pages);
  await PlacesUtils.bookmarks.insert({ parentGuid: PlacesUtils.bookmarks.unfiledGuid, url: pages[0].url, title: "added while prefetching" });
  return pages.map((p) => p.url);
}

/** (Chrome context.) How many of `urls` Places finds, by URL, as Firefox looks pages up. */
async function found(urls) {
  const { PlacesUtils } = ChromeUtils.importESModule("resource://gre/modules/PlacesUtils.sys.mjs");
  let n = 0;
  for (const url of urls) {
    if (await PlacesUtils.history.fetch(url)) n += 1;
  }
  return n;
}

describe("a start with the launch prefetch on while Firefox writes the profile loses nothing", { skip }, () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-prefetch-profile-"));
  const made = path.join(work, "made");
  const profile = path.join(made, "profile");
  const pristine = path.join(work, "pristine");
  const home = path.join(work, "home");
  fs.mkdirSync(home);
  const env = { ...process.env, HOME: home };
  delete env.XDG_STATE_HOME;
  const firefox = fs.realpathSync(defaultFirefox());
  const databases = () => filesBelow(profile).filter((f) => f.endsWith(".sqlite"));
  let before_ = null;
  let ff = null;
  let record = null;
  let added = [];

  before(async () => {
    execFileSync(process.execPath, [path.join(ROOT, "scripts", "profile", "make.mjs"), "--preset", "small", "--seed", "1", "--out", made, "--firefox", firefox], {
      stdio: ["ignore", fs.openSync(path.join(artifactsFolder(), "prefetch-profile-make.txt"), "w"), "inherit"],
    });
    // Marionette for this test's own look into Firefox (a file the trace never saw), and the
    // profile as made, to put back after the traced start (in place: the files keep their
    // inodes, as a user's profile sits between a traced start and the next).
    fs.writeFileSync(path.join(profile, "user.js"), userJs(MAKING_PREFS));
    // GNU cp -a keeps modification times to the nanosecond (fs.cpSync sets none, or only to the
    // millisecond): restored from it, every file the start did not write is the traced file again.
    execFileSync("cp", ["-a", "--no-target-directory", profile, pristine]);
    before_ = { places: sqlite(path.join(profile, "places.sqlite"), COUNTS).split("|").map(Number) };
    for (const file of filesBelow(profile)) evict(file);
    const traced = execFileSync(HOST_BINARY, ["launch", "--cold", "--trace", "--json", "--firefox", firefox, "--", "--headless", "--no-remote", "-profile", profile], {
      env,
      maxBuffer: 512 * 1024 * 1024,
      stdio: ["ignore", "pipe", fs.openSync(path.join(artifactsFolder(), "prefetch-profile-trace.stderr.txt"), "w")],
    });
    const trace = JSON.parse(traced);
    for (const pid of [trace.pid, ...trace.processes.map((p) => p.pid)]) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    restoreTree(pristine, profile);
    execFileSync("sync");
    // Cold again, the profile too: the prefetch has the profile to read while Firefox starts.
    execFileSync(HOST_BINARY, ["evict", "--firefox", firefox, "--json"], { env });
    for (const file of filesBelow(profile)) evict(file);
    const launcher = [HOST_BINARY, "launch", "--prefetch", "--strategy", "beside", "--firefox", firefox, "--"];
    ff = await startFirefox({ binary: firefox, launcher, profile, home, logFile: path.join(artifactsFolder(), "prefetch-profile-firefox.log"), env });
    await ff.chrome(inFirefox.waitSessionRestored);
    // Firefox writes the profile: history and a bookmark, besides what it writes by itself.
    added = await ff.chrome(addHistory, ADDED, String(Date.now()));
  });

  after(async () => {
    await ff?.kill?.();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("the prefetch read the traced profile's files beside that start", async () => {
    const file = path.join(home, ".local", "state", "about-startup", "last-prefetch.json");
    record = await waitFor(
      () => {
        try {
          const r = JSON.parse(fs.readFileSync(file, "utf8"));
          return r.firefox_pid === ff.pid ? r : null;
        } catch {
          return null; // not written yet
        }
      },
      { timeout: 120_000, message: `the prefetch's record for Firefox ${ff.pid}` },
    );
    fs.writeFileSync(path.join(artifactsFolder(), "prefetch-profile-record.json"), JSON.stringify(record, null, 1));
    console.log(`prefetch: ${JSON.stringify({ planned: record.bytes_planned, read: record.bytes_read, profile: record.profile, profileRead: record.bytes_read_profile, ended: record.ended })}`);
    assert.equal(record.firefox_pid, ff.pid, "this launch's record");
    assert.equal(record.plan.source, "trace", JSON.stringify(record.plan));
    assert.equal(record.profile?.left_out, undefined, JSON.stringify(record.profile));
    assert.ok(record.profile.bytes > 1e6, `the plan holds the profile: ${JSON.stringify(record.profile)}`);
    assert.ok(record.bytes_read_profile > 1e6, `and read it from disk: ${record.bytes_read_profile} B`);
  });

  it("Firefox's own data is all there: Places and the session as Firefox counts them, the history added meanwhile", async () => {
    const counts = await ff.chrome(inFirefox.placesCounts);
    const windows = await ff.chrome(inFirefox.openWindows);
    assert.equal(windows.flatMap((w) => w.tabs).length, PRESET.tabs, "every tab of the session restored");
    assert.ok(counts.visits >= before_.places[1] + ADDED, `visits ${counts.visits}, ${before_.places[1]} before and ${ADDED} added`);
    assert.equal(counts.bookmarks, before_.places[2] + 1, "the bookmarks as made, and the one added");
    assert.equal(await ff.chrome(found, added), ADDED);
    await ff.quit();
    ff = null;
  });

  it("after a clean quit every database passes SQLite's own integrity check, and holds what Firefox wrote", () => {
    const dbs = databases();
    assert.ok(dbs.some((d) => d.endsWith("/places.sqlite")) && dbs.length >= 3, dbs.join(", "));
    for (const db of dbs) {
      assert.equal(sqlite(db, "PRAGMA integrity_check;"), "ok", db);
    }
    const [places, visits, bookmarks] = sqlite(path.join(profile, "places.sqlite"), COUNTS).split("|").map(Number);
    assert.ok(places >= before_.places[0] + ADDED, `places ${places}`);
    assert.ok(visits >= before_.places[1] + ADDED, `visits ${visits}`);
    assert.equal(bookmarks, before_.places[2] + 1, "the bookmark added, none lost");
    const stored = sqlite(path.join(profile, "places.sqlite"), "SELECT count(*) FROM moz_places WHERE url LIKE 'https://added-while-prefetching.example/%';");
    assert.equal(Number(stored), ADDED);
  });
});
