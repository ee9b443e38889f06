// The residency panel in a real headless Firefox with the real host: the files and their cached
// share, Evict (with its confirmation), Preload with progress, a host killed mid-preload, and the
// host missing. Screenshots go to the artifacts folder the run prints.
//
// So that a preload lasts long enough to watch (this machine reads Firefox's 300 MB in ~0.2 s),
// the host runs through a wrapper script that puts it into a read-throttled cgroup (root; cgroup
// v1 blkio or v2 io.max, the benchmark's own scripts/lib/slow-disk.mjs) and then execs the real
// host, so Firefox is still its parent. Without root the plain host is used and the mid-preload
// kill is skipped, saying why.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { useFirefox, waitFor } from "./harness.js";
import { EXTENSION_ID, HOST_BINARY, HOST_NAME } from "../../scripts/lib/project.mjs";
import { createSlowDisk } from "../../scripts/lib/slow-disk.mjs";
import { pauseProactiveReclaim } from "../../scripts/lib/damon.mjs";

const PAGE = "page/startup.html";
/** 25 MiB/s; the IOPS cap is set high so that only the bandwidth limits the preload. */
const THROTTLE = "25:100000";

/** What the residency panel shows, from its data attributes and texts. */
function readPanel(driver) {
  return driver.executeScript(() => {
    const $ = (id) => document.getElementById(id);
    const shown = (id) => Boolean($(id)) && !$(id).hidden;
    return {
      state: $("residency").dataset.state,
      busy: $("residency").dataset.busy,
      status: $("residency-status").textContent.trim(),
      hostMissingShown: shown("residency-host-missing"),
      installCommand: document.querySelector("[data-testid=residency-install-command]")?.textContent.trim() ?? null,
      installTotal: document.querySelector("#residency-install .res-total")?.textContent.trim() ?? null,
      systemOpen: $("residency-system").open,
      files: [...document.querySelectorAll("#residency-install tbody tr")].map((tr) => ({
        name: tr.dataset.name,
        status: tr.dataset.status,
        size: Number(tr.dataset.size),
        fraction: tr.dataset.fraction === undefined ? null : Number(tr.dataset.fraction),
        text: tr.cells[2].textContent.trim(),
        sizeText: tr.cells[1].textContent.trim(),
        strip: Boolean(tr.cells[3].querySelector("svg")),
      })),
      progressShown: shown("residency-progress"),
      progressUpdates: Number($("residency-progress").dataset.updates ?? 0),
      progressMax: Number($("residency-progress").dataset.maxFraction ?? 0),
      progressText: $("residency-progress-text").textContent.trim(),
      result: shown("residency-result") ? $("residency-result").textContent.trim() : null,
      resultState: $("residency-result").dataset.state ?? null,
      evictShown: shown("residency-evict-result"),
      evictText: $("residency-evict-result").textContent.trim(),
      evictRows: [...document.querySelectorAll("#residency-evict-result tbody tr")].map((tr) => ({
        name: tr.dataset.name,
        after: Number(tr.dataset.after),
        note: tr.lastElementChild?.textContent ?? "",
      })),
      dialogOpen: $("residency-evict-dialog").open,
      buttons: {
        preload: !$("residency-preload").disabled,
        evict: !$("residency-evict").disabled,
        refresh: !$("residency-refresh").disabled,
      },
    };
  });
}

const click = (driver, id) => driver.executeScript((i) => document.getElementById(i).click(), id);

/** A cgroup that throttles reads from the disk holding Firefox: {group, remove} or {reason}. */
function makeThrottle(name) {
  if (process.getuid?.() !== 0) {
    return { reason: "needs root to make a read-throttled cgroup" };
  }
  try {
    return createSlowDisk(THROTTLE, "/usr/lib", { name });
  } catch (error) {
    console.log(`no read throttle (${error.message}): the preload runs at full speed`);
    return { reason: `no read throttle: ${error.message}` };
  }
}

/** Registers the host for the temp HOME: a wrapper that joins the throttle group, then execs the host. */
function registerWrappedHost(home, throttle) {
  const dir = path.join(home, ".mozilla", "native-messaging-hosts");
  fs.mkdirSync(dir, { recursive: true });
  const wrapper = path.join(home, "throttled-host.sh");
  fs.writeFileSync(
    wrapper,
    `#!/bin/sh\n${throttle ? `echo $$ > ${throttle}/cgroup.procs\n` : ""}exec ${HOST_BINARY} "$@"\n`,
    { mode: 0o755 },
  );
  const manifest = {
    name: HOST_NAME,
    description: "about:startup host behind a read throttle (e2e)",
    path: wrapper,
    type: "stdio",
    allowed_extensions: [EXTENSION_ID],
  };
  fs.writeFileSync(path.join(dir, `${HOST_NAME}.json`), JSON.stringify(manifest));
}

/** PIDs of the real host binary started under this HOME. */
function hostPids(home) {
  const exe = fs.realpathSync(HOST_BINARY);
  return fs.readdirSync("/proc").filter((pid) => {
    try {
      return fs.readlinkSync(`/proc/${pid}/exe`) === exe && fs.readFileSync(`/proc/${pid}/environ`, "latin1").includes(`HOME=${home}\0`);
    } catch {
      return false;
    }
  });
}

async function settled(driver, predicate, message, timeout = 60000) {
  let last = null;
  try {
    return await waitFor(
      async () => {
        last = await readPanel(driver);
        return predicate(last) ? last : null;
      },
      { timeout, interval: 100, message },
    );
  } catch (error) {
    error.message += `\nlast panel: ${JSON.stringify(last, null, 1)?.slice(0, 3000)}`;
    throw error;
  }
}

async function evictConfirmed(driver) {
  await click(driver, "residency-evict");
  const asking = await settled(driver, (p) => p.dialogOpen, "the evict confirmation dialog", 5000);
  assert.equal(asking.dialogOpen, true);
  const words = await driver.executeScript(() => document.getElementById("residency-evict-dialog").textContent);
  assert.match(words, /cold start/);
  assert.match(words, /running Firefox keeps the pages it has mapped/);
  assert.match(words, /libxul\.so/);
  await click(driver, "residency-evict-yes");
  return settled(driver, (p) => p.resultState === "evict-ok" && p.evictShown && p.buttons.evict, "the evict results");
}

describe("residency with the real host", () => {
  // The host is registered by hand (a wrapper that throttles it), so the page opens after that.
  const ctx = useFirefox({ experiments: true, installHost: false, flavour: "full" }, { prefix: "residency" });
  ctx.throttle = {};
  before(async () => {
    ctx.throttle = makeThrottle(`about-startup-e2e-${process.pid}`);
    registerWrappedHost(ctx.ff.home, ctx.throttle.group ?? null);
    await ctx.ff.openExtensionPage(PAGE);
  });
  after(async () => {
    const { group } = ctx.throttle;
    if (group) {
      // The host leaves the group when it exits (about 10 s after its last port closed).
      await waitFor(() => fs.readFileSync(path.join(group, "cgroup.procs"), "utf8").trim() === "", {
        timeout: 15000,
        message: `the host to leave ${group}`,
      }).catch((error) => console.error(error.message));
    }
    ctx.throttle.remove?.();
  });

  it("lists libxul.so with its size and a percentage (root: exact) or hidden", async () => {
    const panel = await settled(ctx.ff.driver, (p) => p.state === "ready" || p.state === "error", "the residency scan");
    assert.equal(panel.state, "ready", panel.status);
    const libxul = panel.files.find((f) => f.name === "libxul.so");
    assert.ok(libxul, `libxul.so among ${panel.files.map((f) => f.name).join(", ")}`);
    assert.ok(libxul.size > 10_000_000, `libxul.so is ${libxul.size} bytes`);
    assert.match(libxul.sizeText, /^\d[\d.,]* MB$/);
    const sizes = panel.files.map((f) => f.size);
    assert.deepEqual(sizes, [...sizes].sort((a, b) => b - a), "largest first");
    for (const name of ["omni.ja", "browser/omni.ja"]) {
      assert.ok(panel.files.some((f) => f.name === name), `${name} is listed`);
    }
    if (process.getuid?.() === 0) {
      assert.equal(libxul.status, "exact");
      assert.match(libxul.text, /MB cached of [\d.,]+ MB \([^\s%]+\s?%\)/);
      assert.ok(libxul.fraction > 0, "a running Firefox has libxul.so in the cache");
      assert.ok(libxul.strip, "a page-map strip");
      assert.match(panel.installTotal, /(MB|kB) cached of [\d.,]+ MB/);
    } else {
      assert.ok(["exact", "hidden"].includes(libxul.status));
    }
    for (const file of panel.files.filter((f) => f.status === "hidden")) {
      assert.doesNotMatch(file.text, /%/, `${file.name}: hidden is never a percentage`);
    }
    assert.equal(panel.systemOpen, false, "system libraries collapsed by default");
    assert.deepEqual(panel.buttons, { preload: true, evict: true, refresh: true });
  });

  it("evict asks first, then shows per file which pages stayed", async () => {
    const panel = await evictConfirmed(ctx.ff.driver);
    assert.match(panel.evictText, /pages dropped from \d+ files/);
    if (process.getuid?.() === 0) {
      const libxul = panel.evictRows.find((r) => r.name === "libxul.so");
      assert.ok(libxul && libxul.after > 0, "the running Firefox keeps pages of libxul.so mapped");
      // the host's note code (pages_stayed), worded from _locales
      assert.equal(libxul.note, "pages mapped by a running process, or written and not yet on disk, stay in the cache");
    }
    await settled(ctx.ff.driver, (p) => p.state === "ready" && p.buttons.refresh, "the residency after evict");
  });

  it("preloads the whole install folder with progress to a summary", async (t) => {
    const { driver } = ctx.ff;
    // DAMON proactive reclaim (this machine runs one) pages out page cache it judges idle, freshly
    // read pages included: a run saw libxul.so at 98.4% right after the preload.
    const { restore } = pauseProactiveReclaim();
    t.after(restore);
    await click(driver, "residency-preload");
    const running = await settled(driver, (p) => p.progressShown && p.progressUpdates > 0, "progress during the preload", 30000);
    assert.equal(running.buttons.preload, false, "Preload is disabled while it runs");
    assert.equal(running.buttons.evict, false);
    assert.match(running.progressText, /MB of [\d.,]+ MB read/);
    await ctx.ff.screenshot("residency-preload-progress");
    const done = await settled(driver, (p) => p.resultState === "preload-ok", "the preload summary", 120000);
    assert.match(done.result, /^Preloaded [\d.,]+ MB \(\d+ files\) in [\d.,]+ ms: [\d.,]+ MB\/s/);
    assert.ok(done.progressUpdates >= 1, `${done.progressUpdates} progress updates shown`);
    assert.ok(done.progressMax > 0, `highest progress shown: ${done.progressMax}`);
    console.log(`preload: ${done.progressUpdates} progress updates, highest ${done.progressMax}; ${done.result}`);
    const after = await settled(driver, (p) => p.state === "ready" && p.buttons.preload && p.buttons.refresh, "the residency after the preload");
    if (process.getuid?.() === 0) {
      const libxul = after.files.find((f) => f.name === "libxul.so");
      assert.ok(libxul.fraction > 0.99, `libxul.so is cached after the preload (${libxul.fraction})`);
    }
  });

  it("a host killed mid-preload: the page says so, the buttons come back, Refresh reconnects", async (t) => {
    if (!ctx.throttle.group) {
      t.skip(ctx.throttle.reason);
      return;
    }
    const { driver, home } = ctx.ff;
    await evictConfirmed(driver);
    await settled(driver, (p) => p.state === "ready" && p.buttons.preload, "the residency after evict");
    await click(driver, "residency-preload");
    await settled(driver, (p) => p.progressShown && p.progressUpdates > 0, "the preload to run", 30000);
    const pids = hostPids(home);
    assert.ok(pids.length >= 1, "the host is running");
    for (const pid of pids) {
      process.kill(Number(pid), "SIGKILL");
    }
    const crashed = await settled(driver, (p) => p.resultState === "preload-host_disconnected", "the crash message", 20000);
    assert.match(crashed.result, /The host stopped during the preload: .+\. The next action starts it again\./);
    assert.equal(crashed.progressShown, false);
    assert.deepEqual(crashed.buttons, { preload: true, evict: true, refresh: true });
    await ctx.ff.screenshot("residency-host-killed");
    await click(driver, "residency-refresh");
    const again = await settled(driver, (p) => p.state === "ready" && p.buttons.refresh && p.files.length > 0, "a Refresh after the crash");
    assert.ok(again.files.some((f) => f.name === "libxul.so"));
    assert.equal(hostPids(home).length, 1, "a new host was started");
    const hostState = await waitFor(
      () => driver.executeScript("return document.getElementById('host').dataset.state === 'connected' && 'connected'"),
      { message: "the host section to show the new host" },
    );
    assert.equal(hostState, "connected");
  });
});

describe("residency without the host", () => {
  const ctx = useFirefox({ experiments: true, installHost: false, flavour: "full" }, { prefix: "residency-no-host", page: PAGE });

  it("says the host is missing and shows the install command; the milestones still work", async () => {
    const panel = await settled(ctx.ff.driver, (p) => p.state === "missing", "the missing-host message", 20000);
    assert.equal(panel.hostMissingShown, true);
    assert.equal(panel.installCommand, "native-host/target/release/about-startup-host install");
    assert.match(panel.status, /native host is not installed/);
    assert.deepEqual(panel.buttons, { preload: true, evict: true, refresh: true });
    const milestones = await ctx.ff.driver.executeScript("return document.querySelectorAll('#milestones tbody tr').length");
    assert.ok(milestones > 0, "the milestones do not depend on the host");
  });

  it("Preload without a host says so and breaks nothing", async () => {
    await click(ctx.ff.driver, "residency-preload");
    const panel = await settled(ctx.ff.driver, (p) => p.resultState?.startsWith("preload-") && p.buttons.preload, "the preload to fail", 20000);
    assert.equal(panel.resultState, "preload-host_missing");
    assert.equal(panel.hostMissingShown, true);
  });
});
