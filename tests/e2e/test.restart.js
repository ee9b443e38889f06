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
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { inspectFirefox } from "../../scripts/lib/firefox-kind.mjs";
import { HOST_BINARY } from "../../scripts/lib/project.mjs";
import { inChrome, privateInstall, startFirefox, useFirefox, waitFor } from "./harness.js";
import { allowSudo, has } from "./privilege-helpers.js";
import { attachToRestarted, readRestart, restartRecord, restartScreenshot, runAsPrinted, waitForRecord, waitForRestoredPage } from "./restart-helpers.js";
import { stateDir } from "../../scripts/lib/state-layout.mjs";
import { endProcess } from "./processes.js";
import { pauseProactiveReclaim } from "../../scripts/lib/damon.mjs";

const PREFS = { "xpinstall.signatures.required": false };
// As an ordinary user where the test can switch to one (root), as the people this is for run it.
const USER = process.getuid?.() === 0 ? 65534 : null;
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-restart-"));

after(() => fs.rmSync(profile, { recursive: true, force: true }));

describe("a temporary install is not offered a restart; a failed restart is told on the next load; the login preload turns on and off from the page", () => {
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

  it("a restart whose Firefox did not quit in time: the next page load says so, and nothing was evicted or started", async () => {
    const driver = ctx.ff.driver;
    const pid = (await driver.getCapabilities()).get("moz:processID");
    assert.ok(pid > 0, "Firefox's pid from geckodriver");
    // The CLI's restart, as a user who then does not quit Firefox: it gives up after a second.
    const run = spawnSync(HOST_BINARY, ["relaunch", "--cold", "--pid", String(pid), "--timeout", "1"], {
      encoding: "utf8",
      // The state folder the page's host uses: $HOME/.local/state in the throwaway HOME.
      env: Object.fromEntries(Object.entries({ ...process.env, HOME: ctx.ff.home }).filter(([k]) => k !== "XDG_STATE_HOME")),
      timeout: 20000,
    });
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stderr, /still running/);
    const record = restartRecord(ctx.ff.home);
    assert.equal(record.stage, "failed", JSON.stringify(record));
    assert.equal(record.error.code, "firefox_did_not_quit");
    assert.equal(record.evicted, null, "nothing evicted");
    assert.equal(record.new_pid, null, "nothing started");
    await driver.navigate().refresh();
    const page = await waitFor(async () => {
      const p = await readRestart(driver);
      return p.state === "ready" && p.last === "failed" ? p : null;
    }, { message: "the reloaded page with the failed restart" });
    assert.deepEqual(page.lines.map((l) => l.line), ["failed", "error"], JSON.stringify(page.lines));
    assert.match(page.lines[1].text, new RegExp(`Firefox was still running after 1 s \\(processes [0-9, ]*${pid}[0-9, ]*\\): nothing was evicted or started\\.`));
    await driver.executeScript("document.getElementById('restart').scrollIntoView()");
    await ctx.ff.screenshot("restart-failed-next-load");
  });

  it("the login preload: on, with the entry the CLI writes, then off and removed", async () => {
    const driver = ctx.ff.driver;
    const planState = () => driver.executeScript(() => ({
      autostart: document.getElementById("plan").dataset.autostart,
      button: document.getElementById("autostart-toggle")?.hidden === false ? document.getElementById("autostart-toggle").textContent : null,
      result: document.getElementById("autostart-result")?.textContent ?? "",
    }));
    const off = await waitFor(async () => {
      const p = await planState();
      return p.autostart === "off" && p.button ? p : null;
    }, { message: "the plan section with the login preload off" });
    assert.match(off.button, /Preload after every login/);
    // No systemd user session here: the XDG autostart entry, as `autostart enable` writes it.
    const entry = path.join(ctx.ff.home, ".config", "autostart", "about-startup-preload.desktop");
    await driver.findElement({ css: "[data-testid=autostart-toggle]" }).click();
    const on = await waitFor(async () => {
      const p = await planState();
      return p.autostart === "xdg" ? p : null;
    }, { message: "the login preload on" });
    assert.match(on.button, /Stop preloading after login/);
    assert.match(fs.readFileSync(entry, "utf8"), new RegExp(`Exec="${HOST_BINARY}" preload --plan --idle`));
    await driver.executeScript("document.getElementById('plan').scrollIntoView()");
    await ctx.ff.screenshot("restart-autostart-on");
    await driver.findElement({ css: "[data-testid=autostart-toggle]" }).click();
    await waitFor(async () => (await planState()).autostart === "off", { message: "the login preload off" });
    assert.ok(!fs.existsSync(entry), "the entry is removed");
  });
});

describe("a temporary install: the commands the page prints instead of the button run as printed, in the order printed", () => {
  it("relaunch, run before the quit, starts the same Firefox again cold; evict, run after a quit, works", { timeout: 240000 }, async () => {
    // A profile kept on disk, as about:debugging's temporary install in one's own profile has.
    const tempProfile = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-restart-temporary-"));
    const first = await startFirefox({ profileDir: tempProfile, temporary: true, user: USER });
    let newPid = null;
    try {
      await first.openExtensionPage("page/startup.html");
      const page = await waitFor(async () => {
        const p = await readRestart(first.driver);
        return p.state === "ready" && p.temporary?.relaunch ? p : null;
      }, { timeout: 30000, message: "the restart section's commands for a temporary install" });
      assert.equal(page.offer, "temporary");
      assert.equal(page.buttonShown, false);
      await restartScreenshot(first.driver, "restart-temporary-commands");
      console.log(`printed: ${page.temporary.relaunch} | ${page.temporary.evict}`);
      // The words order it: relaunch while Firefox runs, then the quit.
      assert.match(page.temporary.text, /run this while this Firefox runs, then quit Firefox/);
      const since = Date.now();
      const relaunch = runAsPrinted(first.home, page.temporary.relaunch, { uid: USER ?? process.getuid?.() });
      try {
        await waitFor(() => {
          const record = restartRecord(first.home);
          return record && record.requested_at_ms >= since && record.stage === "waiting";
        }, { timeout: 30000, message: `${page.temporary.relaunch} to wait for Firefox (stdout ${relaunch.out.stdout}, stderr ${relaunch.out.stderr})` });
      } catch (error) {
        relaunch.child.kill();
        throw error;
      }
      // Then the user quits Firefox (Marionette's quit: an ordinary graceful quit).
      await first.driver.quit().catch(() => {});
      const result = await relaunch.done;
      assert.equal(result.status, 0, `${page.temporary.relaunch}:\n${result.stdout}\n${result.stderr}`);
      newPid = Number(/started Firefox again: process (\d+)/.exec(result.stdout)?.[1]);
      assert.ok(newPid > 0, result.stdout);
      const record = restartRecord(first.home);
      assert.equal(record.stage, "started", JSON.stringify(record));
      assert.equal(record.cold, true);
      assert.ok(record.evicted.files > 10, `evicted ${record.evicted.files} files`);
      assert.equal(record.profile, tempProfile, "the same profile");
      assert.ok(fs.readFileSync(`/proc/${newPid}/cmdline`, "utf8").split("\0").includes(tempProfile), "started again with the same arguments");
      process.kill(newPid, "SIGTERM");
      await waitFor(() => !fs.existsSync(`/proc/${newPid}`) || /^State:\s+Z/m.test(fs.readFileSync(`/proc/${newPid}/status`, "utf8")), {
        timeout: 30000,
        message: "the restarted Firefox to quit",
      });
      newPid = null;
      // npm start's way: with Firefox closed, the printed evict (npm start would then start it cold).
      const evict = await runAsPrinted(first.home, page.temporary.evict, { uid: USER ?? process.getuid?.() }).done;
      assert.equal(evict.status, 0, `${page.temporary.evict}:\n${evict.stdout}\n${evict.stderr}`);
      assert.match(evict.stderr, /Firefox .* in \//, "it names the Firefox it evicted");
    } finally {
      if (newPid) {
        process.kill(newPid, "SIGKILL");
      }
      await first.stop();
      fs.rmSync(tempProfile, { recursive: true, force: true });
    }
  });
});

describe("Restart cold in basic mode: the user quits, the host opens the page again", () => {
  it("after a quit the restarted Firefox shows the page, its start cold", { timeout: 240000 }, async () => {
    const basicProfile = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-restart-basic-"));
    // Its own install: a restart cold evicts the install, and nothing else may hold its pages.
    const own = privateInstall();
    const first = await startFirefox({ firefox: own.binary, profileDir: basicProfile, temporary: false, prefs: PREFS, user: USER, flavour: "basic", experiments: false });
    let attached = null;
    try {
      await first.openExtensionPage("page/startup.html");
      await waitFor(async () => (await readRestart(first.driver)).offer === "offer", { timeout: 30000, message: "the restart offer" });
      const startedAt = Date.now();
      await first.driver.findElement({ css: "[data-testid=restart-cold]" }).click();
      const waiting = await waitFor(async () => {
        const state = await first.driver.executeScript("return document.getElementById('restart').dataset.state");
        return state === "waiting-for-quit" ? state : null;
      }, { message: "the page asking the user to quit" });
      assert.equal(waiting, "waiting-for-quit");
      await first.screenshot("restart-basic-quit-now");
      // The user quits Firefox (here through Marionette's quit, an ordinary graceful quit).
      await first.driver.quit().catch(() => {});
      const status = await waitForRecord(first.home, startedAt);
      assert.equal(status.stage, "started", JSON.stringify(status));
      attached = await attachToRestarted(basicProfile, startedAt);
      const after = await waitForRestoredPage(attached.driver, (p) => p.lastThisStart && p.current?.io?.treeReadBytes != null, "the page the host opened");
      assert.ok(after.current.io.treeReadBytes > 100e6, `the restarted start read ${after.current.io.treeReadBytes} bytes`);
      await restartScreenshot(attached.driver, "restart-basic-after");
    } finally {
      await attached?.driver.quit().catch(() => {});
      await attached?.stop();
      await first.stop();
      fs.rmSync(basicProfile, { recursive: true, force: true });
      own.remove();
    }
  });
});

describe("Restart cold from the page of a permanently installed add-on", () => {
  // The session (and the restarted Firefox) outlive the first test: the second runs the command
  // the page printed while that user's Firefox still runs, as theirs would.
  let first = null;
  let attached = null;
  let printed = null;
  // Its own install: the restart evicts it, and a cold start is asserted (privateInstall).
  let own = null;
  // The first start is hot because the test preloads the install: a DAMON kdamond paging out
  // idle page cache took the preload back before Firefox read it (the "hot" start read 116 MB
  // under a 3 s kdamond, and the cold one was not 5 times that). Paused for the suite, as the
  // benchmarks do, restored after; the restart's own evict makes the second start cold.
  let reclaim = null;
  after(async () => {
    await attached?.driver.quit().catch(() => {});
    await attached?.stop();
    await first?.stop();
    own?.remove();
    reclaim?.restore();
  });
  it("quits, evicts, starts the same Firefox again, and the restored page shows a cold start", { timeout: 240000 }, async () => {
    reclaim = pauseProactiveReclaim();
    own = privateInstall();
    const firefoxBinary = own.binary;
    const installDir = inspectFirefox(firefoxBinary).dir;
    // The first start hot: Firefox's files read into the cache first.
    spawnSync(HOST_BINARY, ["preload", "--firefox", installDir], { stdio: "ignore" });
    first = await startFirefox({ firefox: firefoxBinary, profileDir: profile, temporary: false, prefs: PREFS, user: USER });
    await first.openExtensionPage("page/startup.html");
    const before = await waitFor(async () => {
      const p = await readRestart(first.driver);
      return p.state === "ready" && p.current?.coldness && p.current.io?.treeReadBytes != null ? p : null;
    }, { timeout: 60000, message: "the first start recorded, with its reads" });
    assert.equal(before.offer, "offer");
    assert.equal(before.buttonShown, true);
    // A host built from source (not the package's, root-owned): no traced restart from the
    // page, and the page says why, with the command to use instead.
    assert.equal(before.traceButtonShown, false);
    assert.equal(before.traceOffer, "restartTraceNotInstalled");
    // By the path that runs it: sudo's secure_path does not find a host built from source.
    // With the page's own install: a private copy here, not the Firefox PATH (sudo's) starts.
    const pageInstall = fs.realpathSync(installDir);
    assert.match(pageInstall, /^[\w/.+,:@%-]+$/, "a path the host prints bare");
    assert.equal(before.traceCommand, `sudo ${fs.realpathSync(first.host)} launch --cold --trace --firefox ${pageInstall}`);
    printed = { command: before.traceCommand, home: first.home, host: fs.realpathSync(first.host), install: pageInstall };
    await restartScreenshot(first.driver, "restart-before");
    // One more tab of the user's: it must come back too.
    const pageHandle = await first.driver.getWindowHandle();
    await first.driver.switchTo().newWindow("tab");
    await first.driver.get("about:robots");
    await first.driver.switchTo().window(pageHandle);
    const hotRead = before.current.io.treeReadBytes;
    const startedAt = Date.now();

    await first.driver.findElement({ css: "[data-testid=restart-cold]" }).click();
    const status = await waitForRecord(first.home, startedAt);
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

    attached = await attachToRestarted(profile, startedAt);
    const after = await waitForRestoredPage(
      attached.driver,
      (p) => p.current?.coldness && p.current.io?.treeReadBytes != null && p.lastThisStart,
      "the restored page to show the restarted start",
    );
    await restartScreenshot(attached.driver, "restart-after");
    const urls = [];
    for (const handle of await attached.driver.getAllWindowHandles()) {
      await attached.driver.switchTo().window(handle);
      urls.push(await attached.driver.getCurrentUrl());
    }
    assert.ok(urls.includes("about:robots"), `the user's other tab came back: ${urls.join(", ")}`);
    // The one-shot restore flag is Firefox's own, read and cleared by this start.
    const once = await inChrome(attached.driver, `arguments[0](Services.prefs.getBoolPref("browser.sessionstore.resume_session_once", false))`);
    assert.equal(once, false, "resume_session_once is cleared again");
    assert.equal(after.current.coldness.class, "cold", JSON.stringify(after.current.io));
    assert.equal(after.answer, "cold");
    assert.ok(after.lines.some((l) => l.line === "this"), JSON.stringify(after.lines));
    assert.ok(after.lines.some((l) => l.line === "evicted"));
    const coldRead = after.current.io.treeReadBytes;
    assert.ok(coldRead > 5 * Math.max(hotRead, 1e6), `cold start read ${coldRead} bytes, the hot one ${hotRead}`);
    console.log(`restart cold (${USER === null ? "as this user" : `as uid ${USER}`}): click to record ${restartMs} ms (quit ${status.waited_ms} ms, evict ${status.evicted.elapsed_ms} ms); read hot ${hotRead} B, cold ${coldRead} B`);
  });

  const sudoSkip = USER === null ? "runs the command as the page's user, an ordinary one: needs root to switch to it" : !has("sudo", ["-V"]) ? "needs sudo (apt-get install sudo; .ci/run does)" : false;
  it("the traced start's command the page prints runs as printed, as the page's user", { skip: sudoSkip, timeout: 120000 }, async () => {
    assert.ok(printed?.command, "the page printed a command (the test before)");
    // The page's user may run its host as root (a sudoers drop-in of the test's); their session
    // names the page's state folder (sudo gives the passwd home: nobody's is /nonexistent).
    const sudo = allowSudo(`about-startup-e2e-restart-${process.pid}`, "nobody", [printed.host]);
    // The Firefox the command starts, which it leaves running (it is the user's): this test
    // started it, so this test ends it. Left running, it held the install's $TMPDIR/firefox-esr
    // lock as nobody for the rest of the suite (CI, 28 Nov: test.trace.js's cold start waited
    // on it and recorded 3.3 s of nothing).
    let launched = null;
    try {
      const state = path.join(printed.home, ".local", "state");
      const r = await runAsPrinted(printed.home, printed.command, { uid: USER, env: { XDG_STATE_HOME: state } }).done;
      launched = Number(/^Firefox .*, pid (\d+): recorded/m.exec(r.stdout)?.[1]) || null;
      assert.equal(r.status, 0, `${printed.command}, as printed, as the page's user: exit ${r.status}: ${r.stderr}`);
      assert.ok(launched, `the command names the Firefox it started: ${r.stdout}`);
      // The same install the page runs from (before: PATH's system Firefox, started as nobody).
      assert.equal(path.dirname(fs.realpathSync(`/proc/${launched}/exe`)), printed.install, "the page's install traced");
      const stored = /stored as (\S+): (.+)$/m.exec(r.stderr);
      assert.ok(stored, r.stderr);
      assert.equal(path.dirname(stored[2]), path.join(stateDir(state), "traces"));
      assert.equal(fs.statSync(stored[2]).uid, USER, "the user's");
      assert.equal(JSON.parse(fs.readFileSync(stored[2], "utf8")).source, "tracefs", "the exact trace it is printed for");
    } finally {
      sudo.remove();
      if (launched) {
        await endProcess(launched, { what: `the Firefox ${printed.command} started` });
      }
    }
  });
});
