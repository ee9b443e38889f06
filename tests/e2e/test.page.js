// The about:startup page in a real headless Firefox: full mode with the real host, basic mode,
// and no host installed. Screenshots of each go to the artifacts folder the run prints.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { readStartupPage, startFirefox, useFirefox, waitFor } from "./harness.js";

const PAGE = "page/startup.html";

describe("full mode (experiments on, full flavour, real host)", () => {
  const ctx = useFirefox({ experiments: true, installHost: true, flavour: "full" }, { prefix: "full", page: PAGE });

  it("shows mode full", async () => {
    const page = await readStartupPage(ctx.ff.driver);
    assert.equal(page.mode, "full");
    assert.equal(page.modeName, "Full mode");
    assert.match(page.modeExplanation, /getStartupInfo/);
  });

  it("shows the milestones ordered by time, main before sessionRestored", async () => {
    const { driver } = ctx.ff;
    // sessionRestored comes a little after the first window; reload until Firefox reports it.
    const page = await waitFor(
      async () => {
        await driver.navigate().refresh();
        await waitFor(() => driver.executeScript("return document.body.dataset.ready === 'true'"), {
          message: "the page to load again",
        });
        const current = await readStartupPage(driver);
        return current.milestones.some((m) => m.name === "sessionRestored") ? current : null;
      },
      { timeout: 60000, interval: 1000, message: "sessionRestored in the milestones table" },
    );
    assert.equal(page.milestonesState, "ready");
    assert.equal(page.milestonesTableShown, true);
    const names = page.milestones.map((m) => m.name);
    for (const name of ["process", "main", "sessionRestored"]) {
      assert.ok(names.includes(name), `${name} is in ${names.join(", ")}`);
    }
    assert.equal(names[0], "process", "nothing happens before the process starts");
    for (const m of page.milestones) {
      assert.ok(Number.isFinite(m.sinceOrigin) && m.sinceOrigin >= 0, `${m.name}: ${m.sinceOrigin} ms`);
      assert.ok(m.ms > Date.UTC(2020, 0, 1), `${m.name} is a real time, not 0`);
    }
    const times = page.milestones.map((m) => m.ms);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
      "rows are in time order",
    );
    assert.ok(names.indexOf("main") < names.indexOf("sessionRestored"));
    const since = Object.fromEntries(page.milestones.map((m) => [m.name, m.sinceOrigin]));
    assert.ok(since.main < since.sessionRestored);
  });

  it("talks to the real host: hello gives its version, firefox matches this browser", async () => {
    const { driver } = ctx.ff;
    const page = await waitFor(
      async () => {
        const current = await readStartupPage(driver);
        const settled = current.firefoxState !== "pending" || current.hostState !== "connected";
        return current.hostState !== "connecting" && settled ? current : null;
      },
      { message: "the host's replies on the page" },
    );
    assert.equal(page.hostState, "connected", `host status: ${page.hostStatus} ${page.hostErrorDetail}`);
    assert.equal(page.hostMissingShown, false);
    assert.match(page.hostVersion, /^\d+\.\d+\.\d+/);
    assert.equal(page.firefoxError, null, "the firefox command succeeded");
    const capabilities = await driver.getCapabilities();
    assert.equal(page.firefoxVersion, capabilities.get("browserVersion"));
    assert.equal(page.browserVersion, capabilities.get("browserVersion"));
    assert.match(page.firefoxReadBytes, /\d/);
    assert.match(page.firefoxMajorFaults, /\d/);
  });
});

describe("basic mode (experiments off, basic flavour)", () => {
  const ctx = useFirefox({ experiments: false, installHost: true, flavour: "basic" }, { prefix: "basic", page: PAGE });

  it("shows mode basic and explains how to get full mode", async () => {
    const page = await readStartupPage(ctx.ff.driver);
    assert.equal(page.mode, "basic");
    assert.equal(page.modeName, "Basic mode");
    assert.match(page.modeExplanation, /extensions\.experiments\.enabled/);
    assert.match(page.modeExplanation, /ESR, Developer Edition, Nightly/);
    assert.equal(page.milestonesState, "unavailable");
    assert.equal(page.milestonesTableShown, false);
    assert.equal(page.milestones.length, 0);
  });

  it("still reaches the host", async () => {
    const page = await waitFor(
      async () => {
        const current = await readStartupPage(ctx.ff.driver);
        return current.hostState !== "connecting" ? current : null;
      },
      { message: "the host's reply" },
    );
    assert.equal(page.hostState, "connected", `host status: ${page.hostStatus} ${page.hostErrorDetail}`);
  });
});

describe("host missing (no manifest in HOME)", () => {
  const ctx = useFirefox({ experiments: true, installHost: false, flavour: "full" }, { prefix: "host-missing", page: PAGE });

  it("says the host is missing and shows the install command; the rest still works", async () => {
    const page = await waitFor(
      async () => {
        const current = await readStartupPage(ctx.ff.driver);
        return current.hostState !== "connecting" ? current : null;
      },
      { message: "the host's status" },
    );
    assert.equal(page.hostState, "missing", `host status: ${page.hostStatus} ${page.hostErrorDetail}`);
    assert.equal(page.hostMissingShown, true);
    assert.match(page.hostStatus, /not installed/);
    assert.equal(page.hostInstallCommand, "native-host/target/release/about-startup-host install");
    assert.match(page.hostErrorDetail, /about_startup/);
    // A Snap's or Flatpak's Firefox is not told "no host": what reaches it, and what is untested.
    assert.match(page.hostMissingSandboxed, /Snap.*WebExtensions portal.*same manifest folders/);
    assert.match(page.hostMissingSandboxed, /Flatpak.*Firefox 157.*xdg-native-messaging-proxy/);
    assert.match(page.hostMissingSandboxed, /Neither is tested/);
    assert.equal(page.mode, "full", "milestones do not depend on the host");
    assert.ok(page.milestones.length > 0);
  });
});

describe("permanent install of the unsigned full .xpi (signatures off, experiments on)", () => {
  const ctx = useFirefox(
    { temporary: false, prefs: { "xpinstall.signatures.required": false }, flavour: "full" },
    { prefix: "permanent", page: PAGE },
  );

  it("runs in full mode, as the README promises for ESR/Developer Edition/Nightly", async () => {
    const page = await readStartupPage(ctx.ff.driver);
    assert.equal(page.mode, "full");
    assert.ok(page.milestones.some((m) => m.name === "main"));
  });
});

describe("permanent install of the unsigned full .xpi with experiments off", () => {
  const ctx = useFirefox(
    { temporary: false, experiments: false, prefs: { "xpinstall.signatures.required": false }, flavour: "full" },
    { prefix: "permanent-no-experiments", page: PAGE },
  );

  it("still loads, in basic mode", async () => {
    const page = await readStartupPage(ctx.ff.driver);
    assert.equal(page.mode, "basic");
    assert.equal(page.milestones.length, 0);
  });
});

describe("temporary install of the full flavour with experiments off", () => {
  it("is refused by Firefox, and the harness cleans up after the failed start", async () => {
    let home = null;
    await assert.rejects(
      startFirefox({ experiments: false, installHost: false, flavour: "full" }).then(async (ff) => {
        home = ff.home;
        await ff.stop();
      }),
      /Could not install Add-on/,
    );
    assert.equal(home, null);
    const leftovers = fs.readdirSync("/proc").filter((pid) => {
      try {
        return /HOME=[^\0]*about-startup-e2e-/.test(fs.readFileSync(`/proc/${pid}/environ`, "latin1"));
      } catch {
        return false;
      }
    });
    assert.deepEqual(leftovers, [], "no Firefox or geckodriver left under a temp HOME");
  });
});

describe("host registered but unusable", () => {
  const ctx = useFirefox({ experiments: true, installHost: false, flavour: "full" }, { prefix: "host-unusable" });

  /** Writes <temp HOME>/.mozilla/native-messaging-hosts/about_startup.json; Firefox reads it on connect. */
  function writeManifest(fields) {
    const dir = path.join(ctx.ff.home, ".mozilla", "native-messaging-hosts");
    fs.mkdirSync(dir, { recursive: true });
    const manifest = {
      name: "about_startup",
      description: "e2e stand-in",
      type: "stdio",
      allowed_extensions: ["about-startup@startup-lab.dev"],
      ...fields,
    };
    fs.writeFileSync(path.join(dir, "about_startup.json"), JSON.stringify(manifest));
  }

  async function settledHostState() {
    await ctx.ff.openExtensionPage(PAGE);
    return waitFor(
      async () => {
        const current = await readStartupPage(ctx.ff.driver);
        return current.hostState !== "connecting" ? current : null;
      },
      { message: "the host's status" },
    );
  }

  it("a manifest that does not allow this add-on's id: reported like a missing host", async () => {
    // Firefox (ESR 153) skips manifests whose allowed_extensions lack the caller, so the port
    // fails with the same "No such native application" as when there is no manifest at all.
    writeManifest({ path: "/bin/true", allowed_extensions: ["someone-else@example.org"] });
    const page = await settledHostState();
    assert.equal(page.hostState, "missing", `host status: ${page.hostStatus} ${page.hostErrorDetail}`);
    assert.equal(page.hostMissingShown, true);
    assert.equal(page.hostInstallCommand, "native-host/target/release/about-startup-host install");
  });

  it("a host that exits without answering: says it ended", async () => {
    writeManifest({ path: "/bin/true" });
    const page = await settledHostState();
    assert.equal(page.hostState, "ended", `host status: ${page.hostStatus} ${page.hostErrorDetail}`);
    assert.match(page.hostStatus, /ended without answering/);
    assert.equal(page.mode, "full");
  });
});
