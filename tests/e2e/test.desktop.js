// "Launching from the desktop" in a real headless Firefox with the real release host: the page
// shows the state of the desktop entry that sends launches through `launch --prefetch`, turns it
// on (the user's copy of the system's entry, Exec through the host) and off again (the copy
// removed, the system's entry byte for byte as it was), and says when a Firefox update made the
// traced plan stale. The "system" applications folder is a fixture (XDG_DATA_DIRS) whose entry
// runs the Firefox under test, so nothing of the machine's own desktop is touched; the user's
// folder is the throwaway HOME's. One launch through the entry's own Exec line shows the prefetch
// it did; the live `desktop` reply and that launch's last-prefetch.json have the shapes recorded
// in tests/fixtures/host/ (the unit tests' fakes).
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { By } from "selenium-webdriver";
import { artifactsFolder, defaultFirefox, useFirefox, waitFor } from "./harness.js";
import { HOST_BINARY } from "../../scripts/lib/project.mjs";
import { recordedReply, shapeDiff } from "../unit/host-replies.js";
import { stateDir } from "../../scripts/lib/state-layout.mjs";

const PAGE = "page/startup.html";

// The Firefox under test and its install folder, as the host will find them (real paths).
const binary = fs.realpathSync(defaultFirefox());
const installDir = path.dirname(binary);
const fixture = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-desktop-"));
const systemEntry = path.join(fixture, "share", "applications", "firefox-esr.desktop");
// Debian 12's firefox-esr.desktop, cut down, its Exec pointed at the Firefox under test.
const SYSTEM_TEXT = `[Desktop Entry]
Name=Firefox ESR
Comment=Browse the World Wide Web
GenericName=Web Browser
Exec=${binary} %u
Terminal=false
Type=Application
Icon=firefox-esr
Categories=Network;WebBrowser;
MimeType=text/html;x-scheme-handler/http;x-scheme-handler/https;
StartupWMClass=firefox-esr
StartupNotify=true
`;
fs.mkdirSync(path.dirname(systemEntry), { recursive: true });
fs.writeFileSync(systemEntry, SYSTEM_TEXT);
after(() => fs.rmSync(fixture, { recursive: true, force: true }));

// A real trace (native-host/tests/fixtures/profiler/trace-esr153-cold.json, a cold start of
// Debian's ESR 153.7 recorded by `launch --cold --trace`) made a trace of the install under test
// from an older build: the traced plan is then stale, as after an update. Its files are rewritten
// against the installed ones at test time (path, inode, size, modification time; a file the
// install no longer has is left out), so that which build apt installed this month changes
// nothing: the test relies only on the trace's shape and on its build differing.
const RECORDED_TRACE = new URL("../../native-host/tests/fixtures/profiler/trace-esr153-cold.json", import.meta.url);
const OLD_BUILD = "19990101000000";
/** The BuildID of the Firefox under test, read from its application.ini. */
const BUILD_ID = /^BuildID=(\d+)$/m.exec(fs.readFileSync(path.join(installDir, "application.ini"), "utf8"))?.[1];

/**
 * Stores the recorded trace as one of this install, of build `build` (OLD_BUILD: stale), as
 * `launch --trace` stores one; `later` ms after the recording (another id).
 */
function storeOldTrace(stateHome, build = OLD_BUILD, later = 0) {
  const trace = JSON.parse(fs.readFileSync(RECORDED_TRACE, "utf8"));
  assert.notEqual(BUILD_ID, OLD_BUILD);
  const recordedDir = trace.install_dir;
  trace.install_dir = installDir;
  delete trace.install_dir_b64;
  trace.build_id = build;
  trace.recorded_at_ms += later;
  const kept = new Map();
  const mtimes = new Map();
  trace.files.forEach((file, index) => {
    if (!file.path.startsWith(`${recordedDir}/`)) {
      kept.set(index, file); // the profile's and the system's: as recorded
      return;
    }
    file.path = installDir + file.path.slice(recordedDir.length);
    delete file.path_b64;
    let stat;
    try {
      stat = fs.statSync(file.path, { bigint: true });
    } catch {
      return; // not in this build's install
    }
    // Nanoseconds since 1970 are past a double's exact integers: written as digits below.
    mtimes.set(`__mtime_ns_${index}__`, stat.mtimeNs.toString());
    Object.assign(file, { ino: Number(stat.ino), size: Number(stat.size), mtime_ns: `__mtime_ns_${index}__` });
    kept.set(index, file);
  });
  assert.ok([...kept.values()].some((f) => f.path === path.join(installDir, "libxul.so")), "the rewritten trace names the install's libxul.so");
  // Events point at files by index: renumbered, those of files left out dropped.
  const renumber = new Map([...kept.keys()].map((old, i) => [old, i]));
  trace.files = [...kept.values()];
  trace.events = trace.events.filter((e) => renumber.has(e.f)).map((e) => ({ ...e, f: renumber.get(e.f) }));
  // The store's names and meta file (native-host/src/trace/store.rs): `<ms>-<pid>-<ticks>`.
  const id = `${trace.recorded_at_ms}-${trace.pid}-${trace.process_start_ticks}`;
  const body = JSON.stringify(trace).replace(/"(__mtime_ns_\d+__)"/g, (_, key) => mtimes.get(key));
  const dir = path.join(stateDir(stateHome), "traces");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${id}.json`), body);
  const meta = { id, bytes: Buffer.byteLength(body) };
  for (const key of ["pid", "process_start_ticks", "firefox_version", "build_id", "recorded_at_ms", "source", "traced_read_bytes", "tree_read_bytes", "lost_events"]) {
    meta[key] = trace[key];
  }
  fs.writeFileSync(path.join(dir, `${id}.meta.json`), JSON.stringify(meta));
}

function readDesktop(driver) {
  return driver.executeScript(() => {
    const section = document.getElementById("desktop");
    const button = document.getElementById("desktop-toggle");
    return {
      present: Boolean(section),
      state: section?.dataset.state ?? null,
      stale: section?.dataset.stale ?? null,
      source: section?.dataset.source ?? null,
      lines: Object.fromEntries([...document.querySelectorAll("#desktop-lines p")].map((p) => [p.dataset.line, p.textContent.trim()])),
      button: button && !button.hidden ? { text: button.textContent.trim(), disabled: button.disabled } : null,
    };
  });
}

async function settled(driver, predicate, message, timeout = 30000) {
  let last = null;
  try {
    return await waitFor(
      async () => {
        last = await readDesktop(driver);
        return predicate(last) ? last : null;
      },
      { timeout, interval: 200, message },
    );
  } catch (error) {
    error.message += `\nlast desktop block: ${JSON.stringify(last, null, 1)}`;
    throw error;
  }
}

/** Ends a process group (a Firefox the entry's Exec started), SIGKILL after 5 s. */
async function stopGroup(pgid) {
  const signal = (name) => {
    try {
      process.kill(-pgid, name);
      return true;
    } catch {
      return false;
    }
  };
  for (let i = 0; i < 50 && signal(i === 0 ? "SIGTERM" : 0); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  signal("SIGKILL");
}

async function shot(driver, name) {
  // Scrolled to first and a frame later: taken at once after a click, the element's picture
  // was of another part of the page (the rest of it still laying out).
  const block = await driver.findElement(By.id("desktop"));
  await driver.executeScript((el) => {
    el.scrollIntoView({ block: "start" });
    return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  }, block);
  const data = await block.takeScreenshot(true);
  fs.writeFileSync(path.join(artifactsFolder(), `${name}.png`), Buffer.from(data, "base64"));
}

describe("launching from the desktop through the prefetch, from the page", () => {
  let stateHome = null;
  let env = null;
  const ctx = useFirefox(
    () => {
      // The host's state folder is the throwaway HOME's (made here: HOME is not known yet).
      stateHome = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-desktop-state-"));
      storeOldTrace(stateHome);
      env = { XDG_DATA_DIRS: path.join(fixture, "share"), XDG_STATE_HOME: stateHome, XDG_DATA_HOME: "" };
      return { experiments: true, installHost: true, flavour: "full", env };
    },
    { prefix: "desktop", page: PAGE },
  );
  after(() => stateHome && fs.rmSync(stateHome, { recursive: true, force: true }));

  it("shows the state and the stale plan, turns it on and off, and leaves the system's entry as it was", async () => {
    const { driver, home } = ctx.ff;
    const hostEnv = { ...process.env, ...env, HOME: home };
    const status = () => {
      const r = spawnSync(HOST_BINARY, ["desktop", "status", "--json", "--firefox", installDir], { env: hostEnv, encoding: "utf8" });
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout);
    };
    // Settled: answered and no request under way (a second status, asked when the plan section
    // answers, keeps the button disabled while it runs).
    const first = await settled(driver, (d) => d.present && d.state !== "loading" && d.button && !d.button.disabled, "the desktop block's first answer, with no request under way");
    assert.equal(first.state, "off", `a host no other user can replace, a system entry for this Firefox: ${JSON.stringify(first.lines)}`);
    assert.equal(first.lines.state, `Off: the desktop launches Firefox through its own entry, ${systemEntry}.`);
    // The only trace is of an older build: the plan is stale, and the page says what a launch does instead.
    assert.equal(first.stale, "true");
    assert.ok(first.lines.stale?.startsWith(`The traced plan is stale: it was traced on Firefox build ${OLD_BUILD}, and this is build ${BUILD_ID} (Firefox was updated).`), first.lines.stale);
    assert.ok(first.lines.plan, "which plan a launch reads");
    assert.deepEqual(first.button, { text: "Launch through the prefetch", disabled: false });
    assert.deepEqual(shapeDiff(status(), recordedReply("desktop-stale").reply), [], "the live reply is shaped as the recorded one");
    await shot(driver, "desktop-off-stale");

    await driver.executeScript(() => document.getElementById("desktop-toggle").click());
    const on = await settled(driver, (d) => d.state === "on" && d.button && !d.button.disabled, "the entry written");
    const userEntry = path.join(home, ".local", "share", "applications", "firefox-esr.desktop");
    assert.match(on.lines.state, new RegExp(`^On: ${userEntry.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} launches Firefox through the prefetch`));
    assert.equal(on.button.text, "Stop launching through the prefetch");
    const written = fs.readFileSync(userEntry, "utf8");
    const host = fs.realpathSync(HOST_BINARY);
    assert.ok(written.includes(`\nExec=${host} launch --prefetch --firefox ${binary} -- %u\n`), written);
    for (const line of SYSTEM_TEXT.split("\n").filter((l) => l && !l.startsWith("Exec="))) {
      assert.ok(written.split("\n").includes(line), `${line} kept`);
    }
    assert.equal(fs.readFileSync(systemEntry, "utf8"), SYSTEM_TEXT);
    await shot(driver, "desktop-on");

    // What the launch will read: the traced plan is stale, so the working set the background
    // learned from this very start (after sessionRestored: it may still be learning). Waited
    // for, so that the launch has a plan whatever the machine's speed; the state is then
    // checked, not assumed.
    const ready = await waitFor(
      () => {
        const s = status();
        return s.prefetch?.source === "learned" ? s : null;
      },
      { timeout: 60000, interval: 500, message: "the background's learn of this start (desktop status: prefetch.source learned)" },
    );
    assert.equal(ready.prefetch.fallback?.code, "other_build", JSON.stringify(ready.prefetch));

    // One launch as the desktop makes it: the entry's Exec, Firefox's arguments for %u. Its
    // prefetch records what it did in the state folder, as the recorded record is shaped.
    const exec = /^Exec=(.*) %u$/m.exec(written)[1].split(" ");
    const profile = fs.mkdtempSync(path.join(fixture, "profile-"));
    const launched = spawn(exec[0], [...exec.slice(1), "--headless", "--no-remote", "-profile", profile, "about:blank"], { env: hostEnv, stdio: "ignore", detached: true });
    const lastFile = path.join(stateDir(stateHome), "last-prefetch.json");
    let last;
    try {
      last = await waitFor(
        () => {
          try {
            const record = JSON.parse(fs.readFileSync(lastFile, "utf8"));
            return record.firefox_pid === launched.pid ? record : null;
          } catch {
            return null; // not written yet
          }
        },
        { timeout: 60000, interval: 200, message: `${lastFile} of the launch through the entry (Firefox ${launched.pid})` },
      );
    } finally {
      await stopGroup(launched.pid);
    }
    assert.equal(last.plan?.source, "learned", `the launch read the learned plan: ${JSON.stringify(last.plan)}`);
    assert.ok(last.bytes_planned > 0, `a plan with something in it: ${last.bytes_planned} bytes`);
    // `profile` is absent where the plan says nothing of a profile (learn/prefetch/record.rs):
    // this launch's plan is the learned one of an older build's trace, the recording's a trace's.
    const lastDiff = shapeDiff(last, recordedReply("last-prefetch").reply).filter((line) => line !== "profile: recorded only");
    assert.deepEqual(lastDiff, [], "last-prefetch.json is shaped as the recorded one");
    const onDiff = shapeDiff(status(), recordedReply("desktop-on").reply).filter((line) => line !== "last.profile: recorded only");
    assert.deepEqual(onDiff, [], "the live reply is shaped as the recorded one");

    await driver.executeScript(() => document.getElementById("desktop-toggle").click());
    const off = await settled(driver, (d) => d.state === "off" && d.button && !d.button.disabled, "the entry removed");
    assert.equal(off.button.text, "Launch through the prefetch");
    // The launch's prefetch, as the page words it: the bytes it read from the record.
    const read = last.bytes_read === 0 || last.bytes_read >= 100_000 ? `${(last.bytes_read / 1e6).toFixed(1)} MB` : "";
    assert.match(off.lines.last ?? "", /^Last launch \(.+\): read .+ (before starting Firefox|beside the start), found .+ cached already/);
    assert.ok(off.lines.last.includes(`read ${read}`), `${off.lines.last} / ${last.bytes_read} bytes read`);
    assert.equal(fs.existsSync(userEntry), false, "the copy is gone");
    assert.deepEqual(fs.readdirSync(path.dirname(userEntry)), [], "nothing else was written there");
    assert.equal(fs.readFileSync(systemEntry, "utf8"), SYSTEM_TEXT, "the system's entry byte for byte");

    // What packing would save: unknown while the only trace is of another build; with a trace
    // of this build, the page says the host's figures (the traced plan's bytes of the install,
    // and what an lz4 image of those blocks holds), as `desktop status --json` gives them.
    assert.equal(off.lines.packing, "What packing would save here: unknown until a traced start of this Firefox build.");
    assert.equal(status().packing, null);
    storeOldTrace(stateHome, BUILD_ID, 1);
    await driver.navigate().refresh();
    const saved = await settled(driver, (d) => d.state === "off" && d.lines.packing && !d.lines.packing.includes("unknown"), "the packing line of a traced start of this build", 60000);
    const packing = status().packing;
    assert.equal(packing.basis, "estimate");
    assert.ok(packing.bytes_plain > 0 && packing.bytes_compressed > 0, JSON.stringify(packing));
    const mbOf = (b) => `${(Math.floor((b + 5e4) / 1e5) / 10).toFixed(1)} MB`;
    const ratio = (packing.bytes_compressed / packing.bytes_plain).toFixed(2);
    assert.ok(saved.lines.packing.startsWith(`What packing would save here: this machine's traced start needs ${mbOf(packing.bytes_plain)} of the install's files`), saved.lines.packing);
    assert.ok(saved.lines.packing.includes(`would hold them in ${mbOf(packing.bytes_compressed)} (${ratio}x the bytes)`), `${saved.lines.packing} / ${JSON.stringify(packing)}`);
  });
});
