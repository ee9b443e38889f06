// "Launching from the desktop" in a real headless Firefox with the real release host: the page
// shows the state of the desktop entry that sends launches through `launch --prefetch`, turns it
// on (the user's copy of the system's entry, Exec through the host) and off again (the copy
// removed, the system's entry byte for byte as it was), and says when a Firefox update made the
// traced plan stale. The "system" applications folder is a fixture (XDG_DATA_DIRS) whose entry
// runs the Firefox under test, so nothing of the machine's own desktop is touched; the user's
// folder is the throwaway HOME's.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { By } from "selenium-webdriver";
import { artifactsFolder, defaultFirefox, useFirefox, waitFor } from "./harness.js";
import { HOST_BINARY } from "../../scripts/lib/project.mjs";

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

/**
 * A stored trace of this install from an older build (the shape `launch --trace` stores,
 * docs/export-format.md; no reads needed): the traced plan is then stale, as after an update.
 */
function storeOldTrace(stateHome) {
  const dir = path.join(stateHome, "about-startup", "traces");
  fs.mkdirSync(dir, { recursive: true });
  const id = "1700000000000-1-1";
  const trace = {
    version: 1,
    source: "tracefs",
    field_sources: {},
    pid: 1,
    process_start_ticks: 1,
    install_dir: installDir,
    firefox_version: "140.0",
    build_id: "19990101000000",
    recorded_at_ms: 1700000000000,
    zero: "the traced fork of the Firefox process (CLOCK_BOOTTIME)",
    attached_ms: 0,
    ended_ms: 1000,
    ended_by: "quiet",
    lost_events: 0,
    tree_read_bytes: 0,
    traced_read_bytes: 0,
    written_bytes: 0,
    processes: [],
    files: [],
    events: [],
    block: [],
    samples: [],
    notes: [],
    use_counts: { used_pages: 0, unused_pages: 0, gone_pages: 0 },
  };
  fs.writeFileSync(path.join(dir, `${id}.json`), JSON.stringify(trace));
  const meta = { id, pid: 1, process_start_ticks: 1, firefox_version: "140.0", build_id: "19990101000000", recorded_at_ms: 1700000000000, source: "tracefs", traced_read_bytes: 0, tree_read_bytes: 0, lost_events: 0, bytes: 1 };
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
  const ctx = useFirefox(
    () => {
      // The host's state folder is the throwaway HOME's (made here: HOME is not known yet).
      stateHome = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-desktop-state-"));
      storeOldTrace(stateHome);
      return { experiments: true, installHost: true, flavour: "full", env: { XDG_DATA_DIRS: path.join(fixture, "share"), XDG_STATE_HOME: stateHome, XDG_DATA_HOME: "" } };
    },
    { prefix: "desktop", page: PAGE },
  );
  after(() => stateHome && fs.rmSync(stateHome, { recursive: true, force: true }));

  it("shows the state and the stale plan, turns it on and off, and leaves the system's entry as it was", async () => {
    const { driver, home } = ctx.ff;
    const first = await settled(driver, (d) => d.present && d.state !== "loading", "the desktop block's first answer");
    assert.equal(first.state, "off", `a host no other user can replace, a system entry for this Firefox: ${JSON.stringify(first.lines)}`);
    assert.equal(first.lines.state, `Off: the desktop launches Firefox through its own entry, ${systemEntry}.`);
    // The only trace is of an older build: the plan is stale, and the page says what a launch does instead.
    assert.equal(first.stale, "true");
    assert.match(first.lines.stale, /^The traced plan is stale: it was traced on Firefox build 19990101000000, and this is build \d+ \(Firefox was updated\)\./);
    assert.ok(first.lines.plan, "which plan a launch reads");
    assert.deepEqual(first.button, { text: "Launch through the prefetch", disabled: false });
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

    await driver.executeScript(() => document.getElementById("desktop-toggle").click());
    const off = await settled(driver, (d) => d.state === "off" && d.button && !d.button.disabled, "the entry removed");
    assert.equal(off.button.text, "Launch through the prefetch");
    assert.equal(fs.existsSync(userEntry), false, "the copy is gone");
    assert.deepEqual(fs.readdirSync(path.dirname(userEntry)), [], "nothing else was written there");
    assert.equal(fs.readFileSync(systemEntry, "utf8"), SYSTEM_TEXT, "the system's entry byte for byte");
  });
});
