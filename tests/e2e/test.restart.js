// "Restart cold" from the page, for real: the add-on installed permanently in a profile kept on
// disk, the page's button pressed, Firefox quits (the experiment's quitForRestart), the host's
// detached `relaunch` waits for every Firefox process to exit, evicts the install folder and
// starts the same binary with the same arguments and environment; the restarted Firefox (which
// geckodriver did not start: the test attaches to its Marionette port, which the same profile and
// arguments open again) shows the page, restored by session restore, and that start recorded as
// cold, having read many times what the hot start before it read. A temporary install is offered
// no button.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Builder } from "selenium-webdriver";
import firefox from "selenium-webdriver/firefox.js";
import { findGeckodriver } from "../../scripts/lib/firefox.mjs";
import { inspectFirefox } from "../../scripts/lib/firefox-kind.mjs";
import { HOST_BINARY } from "../../scripts/lib/project.mjs";
import { artifactsFolder, defaultFirefox, EXTENSION_ORIGIN, startFirefox, useFirefox, waitFor } from "./harness.js";

const PREFS = { "xpinstall.signatures.required": false };
// As an ordinary user where the test can switch to one (root), as the people this is for run it.
const USER = process.getuid?.() === 0 ? 65534 : null;
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-restart-"));
after(() => fs.rmSync(profile, { recursive: true, force: true }));

/** The page's restart section and this start's record, as the page holds them. */
function readRestart(driver) {
  return driver.executeAsyncScript(`
    const done = arguments[arguments.length - 1];
    const s = document.getElementById("restart");
    (async () => {
      const { history } = await browser.storage.local.get("history");
      const { "history.currentStart": currentId } = await browser.storage.session.get("history.currentStart");
      const current = history?.records?.find((r) => r.id === currentId) ?? null;
      done({
        ready: document.body?.dataset.ready === "true",
        state: s?.dataset.state ?? null,
        offer: s?.dataset.offer ?? null,
        last: s?.dataset.last ?? null,
        lastThisStart: s?.dataset.lastThisStart === "true",
        lines: [...document.querySelectorAll("#restart-last p")].map((p) => ({ line: p.dataset.line, text: p.textContent })),
        buttonShown: !document.getElementById("restart-cold")?.hidden,
        offerText: document.getElementById("restart-offer")?.textContent ?? "",
        answer: document.getElementById("answer")?.dataset.coldness ?? null,
        current,
      });
    })().catch((e) => done({ error: String(e) }));
  `);
}

/** Switches to a tab showing the page (about:startup, restored by session restore). */
async function findPage(driver) {
  for (const handle of await driver.getAllWindowHandles()) {
    await driver.switchTo().window(handle);
    const url = await driver.getCurrentUrl();
    if ((url === "about:startup" || url.startsWith(EXTENSION_ORIGIN)) && (await driver.executeScript("return document.body?.dataset.ready === 'true'"))) {
      return handle;
    }
  }
  return null;
}

describe("a temporary install is not offered a restart", () => {
  const ctx = useFirefox({ temporary: true }, { prefix: "restart-temporary", page: "page/startup.html" });
  it("says a restart would remove the add-on, with no button", async () => {
    const page = await waitFor(async () => {
      const p = await readRestart(ctx.ff.driver);
      return p.state === "ready" ? p : null;
    }, { message: "the restart section" });
    assert.equal(page.offer, "temporary");
    assert.equal(page.buttonShown, false);
    assert.match(page.offerText, /temporary install/);
  });
});

describe("Restart cold from the page of a permanently installed add-on", () => {
  it("quits, evicts, starts the same Firefox again, and the restored page shows a cold start", { timeout: 240000 }, async () => {
    const firefoxBinary = defaultFirefox();
    const installDir = inspectFirefox(firefoxBinary).dir;
    // The first start hot: Firefox's files read into the cache first.
    spawnSync(HOST_BINARY, ["preload", "--firefox", installDir], { stdio: "ignore" });
    const first = await startFirefox({ profileDir: profile, temporary: false, prefs: PREFS, user: USER });
    let attached = null;
    let geckodriver = null;
    try {
      await first.openExtensionPage("page/startup.html");
      const before = await waitFor(async () => {
        const p = await readRestart(first.driver);
        return p.state === "ready" && p.current?.coldness && p.current.io?.treeReadBytes != null ? p : null;
      }, { timeout: 60000, message: "the first start recorded, with its reads" });
      assert.equal(before.offer, "offer");
      assert.equal(before.buttonShown, true);
      await first.driver.executeScript("document.getElementById('restart').scrollIntoView()");
      await first.screenshot("restart-before");
      const hotRead = before.current.io.treeReadBytes;
      const startedAt = Date.now();

      await first.driver.findElement({ css: "[data-testid=restart-cold]" }).click();
      const statusFile = path.join(first.home, ".local", "state", "about-startup", "relaunch.json");
      const status = await waitFor(() => {
        const s = fs.existsSync(statusFile) ? JSON.parse(fs.readFileSync(statusFile, "utf8")) : null;
        return s && (s.stage === "started" || s.stage === "failed") ? s : null;
      }, { timeout: 90000, interval: 200, message: "the host's record of the restart" });
      const restartMs = Date.now() - startedAt;
      assert.equal(status.stage, "started", JSON.stringify(status));
      assert.equal(status.cold, true);
      assert.ok(status.evicted.files > 10, `evicted ${status.evicted.files} files`);
      assert.equal(status.evicted.failed, 0);
      assert.equal(status.profile, profile, "the same profile");
      assert.ok(status.new_pid > 0);
      const cmdline = fs.readFileSync(`/proc/${status.new_pid}/cmdline`, "utf8").split("\0");
      assert.ok(cmdline.includes(profile), `the same arguments: ${cmdline.join(" ")}`);
      if (USER !== null) {
        assert.equal(fs.statSync(`/proc/${status.new_pid}`).uid, USER, "Firefox runs as the user again");
        assert.ok(status.evicted.hidden_files > 0, "a user sees the root-owned install's cache state as hidden");
      }

      // The restarted Firefox listens on the profile's Marionette port again.
      const port = Number(await waitFor(() => {
        const file = path.join(profile, "MarionetteActivePort");
        return fs.existsSync(file) && fs.readFileSync(file, "utf8").trim();
      }, { timeout: 30000, message: "the restarted Firefox's Marionette port" }));
      const wdPort = 4400 + (process.pid % 500);
      geckodriver = spawn(findGeckodriver(), ["--connect-existing", "--marionette-port", String(port), "--port", String(wdPort)], { stdio: "ignore" });
      await waitFor(async () => (await fetch(`http://127.0.0.1:${wdPort}/status`)).ok, { timeout: 15000, interval: 100, message: "geckodriver" });
      attached = await new Builder().forBrowser("firefox").setFirefoxOptions(new firefox.Options()).usingServer(`http://127.0.0.1:${wdPort}`).build();
      let seen = null;
      const after = await waitFor(async () => {
        if (!(await findPage(attached))) {
          seen = { urls: await Promise.all((await attached.getAllWindowHandles()).map(async (h) => (await attached.switchTo().window(h), attached.getCurrentUrl()))) };
          return null;
        }
        const p = (seen = await readRestart(attached));
        return p.state === "ready" && p.current?.coldness && p.current.io?.treeReadBytes != null && p.lastThisStart ? p : null;
      }, { timeout: 60000, interval: 500, message: "the restored page to show the restarted start" }).catch((error) => {
        throw new Error(`${error.message}; last seen: ${JSON.stringify(seen)}`);
      });
      await attached.executeScript("document.getElementById('restart').scrollIntoView()");
      fs.writeFileSync(path.join(artifactsFolder(), "restart-after.png"), await attached.takeScreenshot(), "base64");
      assert.equal(after.current.coldness.class, "cold", JSON.stringify(after.current.io));
      assert.equal(after.answer, "cold");
      assert.ok(after.lines.some((l) => l.line === "this"), JSON.stringify(after.lines));
      assert.ok(after.lines.some((l) => l.line === "evicted"));
      const coldRead = after.current.io.treeReadBytes;
      assert.ok(coldRead > 5 * Math.max(hotRead, 1e6), `cold start read ${coldRead} bytes, the hot one ${hotRead}`);
      console.log(`restart cold (${USER === null ? "as this user" : `as uid ${USER}`}): click to record ${restartMs} ms (quit ${status.waited_ms} ms, evict ${status.evicted.elapsed_ms} ms); read hot ${hotRead} B, cold ${coldRead} B`);
    } finally {
      await attached?.quit().catch(() => {});
      if (geckodriver && geckodriver.exitCode === null) {
        geckodriver.kill("SIGTERM");
      }
      await sleep(200);
      await first.stop();
    }
  });
});
