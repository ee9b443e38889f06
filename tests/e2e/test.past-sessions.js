// Basic mode's milestones from Firefox's own Telemetry archive, for real: one session of a
// profile in full mode (experiments on) records its milestones through getStartupInfo() and quits
// cleanly, which archives its main ping; a second session of the same profile in basic mode
// (experiments off, as on Release) shows that past session through the host's `telemetry`
// command, and its figures equal what the first session's getStartupInfo() reported.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readStartupPage, startFirefox, waitFor } from "./harness.js";

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-profile-"));
after(() => fs.rmSync(profile, { recursive: true, force: true }));

function archivedMainPings() {
  const root = path.join(profile, "datareporting", "archived");
  if (!fs.existsSync(root)) {
    return [];
  }
  return fs
    .readdirSync(root)
    .flatMap((month) => fs.readdirSync(path.join(root, month)).filter((name) => name.endsWith(".main.jsonlz4")));
}

async function pastSessions(driver) {
  return driver.executeScript(() => ({
    state: document.getElementById("past-sessions").dataset.state,
    status: document.getElementById("past-sessions-status").textContent,
    rows: [...document.querySelectorAll("#past-sessions-table tbody tr")].map((tr) => ({
      ping: tr.dataset.ping,
      cells: Object.fromEntries(
        [...tr.querySelectorAll("td[data-milestone]")].map((td) => [td.dataset.milestone, td.textContent]),
      ),
    })),
  }));
}

describe("past sessions from Firefox's Telemetry archive", () => {
  let first = null;

  it("a fresh profile has no archive yet, and the page says so instead of a blank table", async () => {
    const ff = await startFirefox({ profileDir: profile, experiments: true, flavour: "full" });
    try {
      await ff.openExtensionPage("page/startup.html");
      const page = await waitFor(
        async () => {
          const p = await readStartupPage(ff.driver);
          return p.milestones.some((m) => m.name === "sessionRestored") ? p : null;
        },
        { timeout: 60000, message: "this start's sessionRestored in the milestones table" },
      );
      first = Object.fromEntries(page.milestones.map((m) => [m.name, m.sinceOrigin]));
      const past = await waitFor(
        async () => {
          const p = await pastSessions(ff.driver);
          return p.state === "loading" ? null : p;
        },
        { message: "the past-sessions status" },
      );
      assert.equal(past.state, "no-archive", past.status);
      assert.match(past.status, /datareporting\/archived/);
      assert.equal(past.rows.length, 0);
    } finally {
      await ff.stop(); // a clean quit: Firefox archives this session's main ping
    }
    assert.ok(archivedMainPings().length >= 1, "Firefox archived a main ping at shutdown");
  });

  it("the next session, in basic mode, shows the first one with Firefox's own figures", async () => {
    assert.ok(first, "the first session's milestones were read");
    const ff = await startFirefox({ profileDir: profile, experiments: false, flavour: "basic" });
    try {
      await ff.openExtensionPage("page/startup.html");
      const page = await readStartupPage(ff.driver);
      assert.equal(page.mode, "basic");
      assert.equal(page.milestonesState, "unavailable");
      const past = await waitFor(
        async () => {
          const p = await pastSessions(ff.driver);
          return p.state === "ready" ? p : null;
        },
        { timeout: 30000, message: "past sessions ready" },
      );
      assert.equal(past.rows.length, 1, past.status);
      const cells = past.rows[0].cells;
      // The same session's figures, from two independent paths: getStartupInfo() while it ran,
      // the archived ping after it ended.
      for (const name of ["main", "sessionRestored"]) {
        const shown = Number(cells[name].replace(/[^\d]/g, ""));
        assert.ok(Number.isFinite(first[name]), `the first session reported ${name}`);
        assert.ok(
          Math.abs(shown - first[name]) <= 1,
          `${name}: ping ${cells[name]} against getStartupInfo ${first[name]} ms`,
        );
      }
      assert.equal(cells.firstPaint2 !== undefined, true, "every main column is there, missing or not");
      await ff.screenshot("past-sessions-basic");
    } finally {
      await ff.stop();
    }
  });
});
