// `npm start` on a Release Firefox, for real: a stand-in Release install (this machine's ESR
// binary behind a folder whose channel-prefs.js says "release", with extension experiments off,
// as Release has them) is told from ESR by `npm start`'s choice, which picks the basic flavour;
// the full flavour's temporary install is refused there and the basic flavour works, host and all.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chooseFirefox, inspectFirefox, summaryLine } from "../../scripts/lib/firefox-kind.mjs";
import { findFirefox } from "../../scripts/lib/firefox.mjs";
import { readStartupPage, startFirefox, useFirefox, waitFor } from "./harness.js";

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
});
