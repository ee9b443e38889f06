// `npm start` on a Release Firefox, for real: a stand-in Release install (this machine's ESR
// binary behind a folder whose channel-prefs.js says "release", with extension experiments off,
// as Release has them) is told from ESR by `npm start`'s choice, which picks the basic flavour;
// the full flavour's temporary install is refused there and the basic flavour works, host and all.
// Its answer line is measured to the add-on's own start (no sessionRestored in basic mode) and
// says so, both for a temporary install (no time: the add-on started after Firefox) and for a
// permanent one across a restart (a time to the add-on's start).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chooseFirefox, inspectFirefox, summaryLine } from "../../scripts/lib/firefox-kind.mjs";
import { findFirefox } from "../../scripts/lib/firefox.mjs";
import { spawnSync } from "node:child_process";
import { pauseProactiveReclaim } from "../../scripts/lib/damon.mjs";
import { HOST_BINARY } from "../../scripts/lib/project.mjs";
import { readStartupPage, startFirefox, useFirefox, waitFor } from "./harness.js";

/** The page's answer line (#answer), once this start is recorded. */
function readyAnswer(driver) {
  return waitFor(
    () =>
      driver.executeScript(() => {
        const answer = document.getElementById("answer");
        return answer.dataset.state === "ready"
          ? { milestone: answer.dataset.milestone, coldness: answer.dataset.coldness, text: answer.textContent.trim() }
          : null;
      }),
    { timeout: 30000, interval: 250, message: "the answer line (this start recorded)" },
  );
}


/** A folder that looks like Mozilla's Release tarball and runs the real Firefox found here. */
function releaseStandIn() {
  const real = findFirefox();
  const realDir = inspectFirefox(real).dir;
  assert.ok(realDir, `no install folder found for ${real}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-release-"));
  const app = fs.readFileSync(path.join(realDir, "application.ini"), "utf8");
  fs.writeFileSync(
    path.join(dir, "application.ini"),
    app.replace(/^RemotingName=.*$/m, "RemotingName=firefox").replace(/^SourceRepository=.*$/m, "SourceRepository=https://hg.mozilla.org/releases/mozilla-release"),
  );
  fs.mkdirSync(path.join(dir, "defaults", "pref"), { recursive: true });
  fs.writeFileSync(path.join(dir, "defaults", "pref", "channel-prefs.js"), 'pref("app.update.channel", "release");\n');
  fs.writeFileSync(path.join(dir, "update-settings.ini"), "[Settings]\nACCEPTED_MAR_CHANNEL_IDS=firefox-mozilla-release\n");
  fs.writeFileSync(path.join(dir, "firefox"), `#!/bin/sh\nexec ${real} "$@"\n`, { mode: 0o755 });
  return dir;
}

const dir = releaseStandIn();
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const choice = chooseFirefox({ override: dir });
const binary = path.join(dir, "firefox");

describe("a Release stand-in (channel release, experiments off)", () => {
  it("npm start's choice names it Release and picks the basic flavour, with the reason", () => {
    console.log(summaryLine(choice));
    assert.equal(choice.install.edition, "Release");
    assert.equal(choice.install.kind, "tarball");
    assert.equal(choice.flavour, "basic");
    assert.equal(choice.host, true);
    assert.match(choice.why, /Release .* refuses the full flavour's experiments/);
  });

  it("refuses the full flavour's temporary install", async () => {
    await assert.rejects(
      startFirefox({ firefox: binary, experiments: false, installHost: false, flavour: "full" }).then((ff) => ff.stop()),
      /Could not install Add-on/,
    );
  });
});

describe("the basic flavour npm start picks, on the Release stand-in", () => {
  const ctx = useFirefox(
    () => ({ firefox: binary, experiments: false, installHost: choice.host, flavour: choice.flavour }),
    { prefix: "release-basic", page: "page/startup.html" },
  );
  before(() => assert.equal(choice.flavour, "basic"));

  it("shows basic mode and reaches the host", async () => {
    const page = await waitFor(
      async () => {
        const current = await readStartupPage(ctx.ff.driver);
        return current.hostState !== "connecting" ? current : null;
      },
      { message: "the host's reply" },
    );
    assert.equal(page.mode, "basic");
    assert.equal(page.hostState, "connected", `host status: ${page.hostStatus} ${page.hostErrorDetail}`);
  });

  it("answers to the add-on's own start, never to sessionRestored: installed mid-run, this start has no time", async () => {
    const answer = await readyAnswer(ctx.ff.driver);
    assert.equal(answer.milestone, "extensionBackground");
    assert.match(answer.text, /^This start has no time: this add-on was installed or enabled after Firefox started/);
    // Issue 39 #5: a start the add-on recorded after being installed mid-run is classed
    // "recorded late": the host's figure is named, and not taken as this start's coldness.
    assert.match(
      answer.text,
      /Recorded late: this add-on started .+ after Firefox \(installed or enabled while it ran\), so the [\d.,]+ (MB|kB) read from disk by then are not this start's, and how cold it was is unknown\. This build: cold starts /,
      "the host's I/O figure named, the start classed late",
    );
    assert.doesNotMatch(answer.text, /A (cold|warm|hot) start: it read/, "a late start is not classified by what was read by then");
    assert.doesNotMatch(answer.text, /sessionRestored:|—|a unknown start/);
  });
});

describe("the basic flavour installed permanently on the Release stand-in, across a restart", () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-release-profile-"));
  after(() => fs.rmSync(profile, { recursive: true, force: true }));
  const options = {
    firefox: binary,
    experiments: false,
    installHost: true,
    flavour: "basic",
    prefs: { "xpinstall.signatures.required": false }, // unsigned build; the stand-in is ESR inside
  };

  it("a start the add-on was there for: its time to the add-on's start, said as such", { timeout: 180000 }, async (t) => {
    // The second start's class is made here, not left to the machine: hot, Firefox's files read
    // into the cache right before it, with DAMON reclaim paused (as test.restart.js and the
    // benchmarks do). Left to the cache the first start left behind, a 3 s kdamond paged part of
    // it out and the start read 93-104 MB: warm, a class the build line has no mean for (issue 37).
    const reclaim = pauseProactiveReclaim();
    t.after(() => reclaim.restore());
    const first = await startFirefox({ ...options, profileDir: profile, temporary: false });
    await first.stop();
    const preload = spawnSync(HOST_BINARY, ["preload", "--firefox", inspectFirefox(findFirefox()).dir], { encoding: "utf8" });
    assert.equal(preload.status, 0, preload.stderr);
    // The same profile again, add-on not reinstalled: it starts with Firefox, as for a user.
    const second = await startFirefox({ ...options, profileDir: profile, installAddon: false });
    try {
      await second.openExtensionPage("page/startup.html");
      const answer = await readyAnswer(second.driver);
      await second.screenshot("release-basic-restart-answer");
      assert.equal(answer.milestone, "extensionBackground");
      assert.match(
        answer.text,
        /^This start took [\d.,]+\s?s until this add-on started \(basic mode: Firefox reports no sessionRestored to add-ons, so this is the point measured\)\. A (cold|warm|hot) start: it read /,
      );
      assert.match(answer.text, /on average \(n = 1\)/, "this start counts in its class's mean");
      assert.doesNotMatch(answer.text, /—|a unknown start/);
      // The trend chart plots the same milestone (it had nothing to plot in basic mode before).
      const trend = await second.driver.executeScript(() => {
        const figure = document.getElementById("history-trend");
        return { shown: !figure.hidden, milestone: figure.dataset.milestone, points: figure.querySelectorAll(".point").length };
      });
      assert.deepEqual(trend, { shown: true, milestone: "extensionBackground", points: 1 });
    } finally {
      await second.stop();
    }
  });
});
