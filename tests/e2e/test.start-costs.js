// Issue 40: where a start's time went beyond the disk. A real test add-on that does work as it
// starts sits in the profile beside about:startup (installed permanently); Firefox starts twice
// on that profile, and the second start's page shows the test add-on's startup figure under that
// add-on and that start, equal to the one sample Glean took in the second start (its sum now less
// its sum read at the end of the first start), never the first start's sample.
/* global browser -- the extension page's, in executeScript */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { inChrome, readExport, startFirefox, waitFor, waitForPageReady } from "./harness.js";
import { By } from "selenium-webdriver";
import { packXpi } from "../../scripts/profile/extensions.mjs";
import { attributionOf } from "../../extension/lib/models/attribution.js";
import { formatPercent } from "../../extension/lib/wording/format.js";

const TEST_ID = "costly-start@test.startup-lab.dev";
const TEST_NAME = "Costly start (test add-on)";
const PREFS = {
  "xpinstall.signatures.required": false,
  "extensions.autoDisableScopes": 0, // the sideloaded test add-on starts enabled, as make.mjs does it
  "browser.startup.page": 3,
};

/** A real add-on whose background script works for a while before it is done starting. */
function testAddon() {
  return packXpi({
    "manifest.json": JSON.stringify({
      manifest_version: 2,
      name: TEST_NAME,
      version: "1.0",
      browser_specific_settings: { gecko: { id: TEST_ID } },
      background: { scripts: ["background.js"], persistent: true },
    }),
    "background.js": "let x = 0; for (let i = 0; i < 2e7; i++) { x = (x * 31 + i) % 1000003; } globalThis.result = x;\n",
  });
}

/** Glean's own samples of one add-on's startup, read in the chrome context. */
const gleanStartup = (driver, id) =>
  inChrome(driver, "const [id, done] = arguments; done(Glean.extensionsTiming.extensionStartupByAddonid[id].testGetValue());", id);

/** The costs section once it shows a start: {state, startId, rows}. */
async function readCosts(driver, wantState) {
  return waitFor(
    () =>
      driver.executeScript((want) => {
        const section = document.getElementById("costs");
        if (section.dataset.state !== want) {
          return null;
        }
        return {
          state: section.dataset.state,
          startId: section.dataset.startId,
          answer: document.querySelector('[data-testid="costs-answer"]')?.textContent ?? null,
          unavailable: document.querySelector('[data-testid="costs-unavailable"]')?.textContent ?? null,
          rows: [...section.querySelectorAll('[data-testid="costs-addons"] tbody tr')].map((tr) => ({
            id: tr.dataset.addonId,
            cells: [...tr.children].map((td) => td.textContent),
          })),
        };
      }, wantState),
    { timeout: 60000, message: `the costs section in state ${wantState}` },
  );
}

const storedRecords = (driver) =>
  driver.executeAsyncScript((done) => browser.storage.local.get(["history", "startCosts.lastReading"]).then(done));

describe("where the time went: a real add-on's startup figure under the right add-on and start", () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-costs-profile-"));
  after(() => fs.rmSync(profile, { recursive: true, force: true }));

  it("the second start shows the test add-on's own new sample, not the first start's", { timeout: 240000 }, async () => {
    fs.mkdirSync(path.join(profile, "extensions"), { recursive: true });
    fs.writeFileSync(path.join(profile, "extensions", `${TEST_ID}.xpi`), await testAddon());

    // First start: about:startup installed during it (its figures: "installed later"), the test
    // add-on started with Firefox. The recorder keeps Glean's reading as the next start's baseline.
    const first = await startFirefox({ profileDir: profile, temporary: false, prefs: PREFS });
    let firstSample;
    let firstStartId;
    try {
      await first.openExtensionPage("page/startup.html");
      await waitForPageReady(first.driver);
      const shown = await readCosts(first.driver, "unavailable");
      assert.match(shown.unavailable, /installed or enabled after this Firefox started/);
      firstStartId = shown.startId;
      const stored = await waitFor(async () => {
        const s = await storedRecords(first.driver);
        return s["startCosts.lastReading"] ? s : null;
      });
      assert.equal(stored["startCosts.lastReading"].startId, firstStartId);
      firstSample = await gleanStartup(first.driver, TEST_ID);
      assert.equal(firstSample?.count, 1, "Glean holds the first start's one sample of the test add-on");
    } finally {
      await first.stop();
    }

    // Second start of the same profile: both add-ons start with Firefox, as for a user.
    const second = await startFirefox({ profileDir: profile, installAddon: false, prefs: PREFS });
    try {
      await second.openExtensionPage("page/startup.html");
      await waitForPageReady(second.driver);
      const shown = await readCosts(second.driver, "ready");
      const processStart = await inChrome(second.driver, "arguments[0](Services.startup.getStartupInfo().process.getTime())");
      assert.equal(shown.startId, `full-${processStart}`, "the section shows this start");
      assert.notEqual(shown.startId, firstStartId);

      const now = await gleanStartup(second.driver, TEST_ID);
      assert.equal(now.count, 2, "Glean holds both starts' samples");
      const expected = Math.round((now.sum - firstSample.sum) / 1e5) / 10;

      const { history } = await storedRecords(second.driver);
      const record = history.records.find((r) => r.id === shown.startId);
      const figure = record.costs.addons.find((a) => a.id === TEST_ID);
      assert.deepEqual(
        { name: figure.name, version: figure.version, builtIn: figure.builtIn, startupMs: figure.startupMs },
        { name: TEST_NAME, version: "1.0", builtIn: false, startupMs: { value: expected, source: "glean-delta" } },
      );
      // When the restored tabs had loaded: browser.startup.page 3 restores the first start's
      // window, whose selected tab (about:startup's page, opened by the harness) loads again; this
      // start's own moment, after the session store began (the tab selected when the window began
      // restoring counts, whatever the harness selects afterwards).
      const tabs = record.costs.sessionRestore.selectedTabsRestoredAtMs;
      assert.equal(tabs?.source, "session-store-events", JSON.stringify(tabs));
      assert.ok(tabs.value >= record.milestones.sessionRestoreInit, `${tabs.value} ms after sessionRestoreInit ${record.milestones.sessionRestoreInit} ms`);
      // The first start's record keeps no figure of its own (about:startup came later there).
      // Firefox's reason is kept: the harness installs about:startup after Firefox started.
      assert.deepEqual(history.records.find((r) => r.id === firstStartId).costs, { unavailable: "addon-started-later", startupReason: "ADDON_INSTALL" });

      // On the page: the row of that add-on, and no other row with its figure.
      const row = shown.rows.find((r) => r.id === TEST_ID);
      assert.ok(row, `a row for ${TEST_ID} among ${shown.rows.map((r) => r.id).join(", ")}`);
      assert.equal(row.cells[0], TEST_NAME);
      assert.equal(row.cells[1], "1.0");
      const text = new Intl.NumberFormat("en", { style: "unit", unit: "millisecond", maximumFractionDigits: 1 }).format(expected);
      assert.equal(row.cells[3], text);
      assert.match(row.cells[4], /new since the previous start/);
      assert.equal(shown.rows.filter((r) => r.id === TEST_ID).length, 1, "one row per add-on");
      assert.match(shown.rows.find((r) => r.id === "about-startup@startup-lab.dev").cells[2], /^about:startup itself/);
      // The test add-on is the one a user can turn off: the answer names it, or session restore
      // when that was busier; never a built-in add-on.
      assert.match(shown.answer, new RegExp(`^Largest cause you can act on: (the add-on ${TEST_NAME.replace(/[()]/g, "\\$&")} 1\\.0|session restore)`));

      // The CLI says the same figures as the page and the export (issue 40 #5): the page's own
      // Export, read by `about-startup-host costs`, for this start and for the first one.
      const exported = await readExport(second.driver);
      assert.deepEqual(exported.current.costs, record.costs, "export = the page's history");
      const file = path.join(profile, "..", `${path.basename(profile)}-export.json`);
      fs.writeFileSync(file, JSON.stringify(exported));
      try {
        const cli = (args) => {
          const run = spawnSync(second.host, ["costs", file, ...args], { encoding: "utf8" });
          assert.equal(run.status, 0, run.stderr);
          return run.stdout;
        };
        const json = JSON.parse(cli(["--json"]));
        assert.equal(json.start.id, shown.startId, "the CLI shows the page's start");
        assert.deepEqual(json.costs, record.costs, "CLI --json = export = the page's history");
        assert.deepEqual(JSON.parse(cli(["--json", "--start", firstStartId])).costs, history.records.find((r) => r.id === firstStartId).costs);
        // Each page row's startup figure is the CLI's, add-on by add-on.
        for (const row of shown.rows) {
          const figure = json.costs.addons.find((a) => a.id === row.id)?.startupMs;
          assert.ok(figure, `the CLI has ${row.id}`);
          const pageText = "value" in figure ? new Intl.NumberFormat("en", { style: "unit", unit: "millisecond", maximumFractionDigits: 1 }).format(figure.value) : "missing";
          assert.equal(row.cells[3], pageText, `${row.id}: page = CLI`);
        }
        // The baseline paragraph: no benchmark imported here, so no baseline and no share.
        assert.match(await second.driver.executeScript(() => document.querySelector('[data-testid="costs-baseline"]')?.textContent ?? ""), /baseline \(what an empty profile of this build takes\) is not measured here/);
        // The table: the test add-on's row with its name, version and figure.
        const line = cli([]).split("\n").find((l) => l.startsWith(TEST_NAME));
        assert.ok(line, "the table has the test add-on's row");
        assert.match(line, new RegExp(`^${TEST_NAME.replace(/[()]/g, "\\$&")}\\s+1\\.0\\s+installed\\s+${expected.toFixed(1)}\\s+glean-delta\\b`));
      } finally {
        fs.rmSync(file, { force: true });
      }

      // The attribution paragraph after importing a real A/B export (issue 40): the benchmark's
      // medium run (tests/fixtures/README.md, "bench-ab-medium.json"), its records given this
      // Firefox's build id, since the page attributes only a run of its own build. The page's
      // share and steps are the model's of the same records.
      const ab = JSON.parse(fs.readFileSync(new URL("../fixtures/bench-ab-medium.json", import.meta.url), "utf8"));
      for (const r of ab.history) {
        r.firefox.buildId = record.firefox.buildId;
      }
      const model = attributionOf(ab.history, { buildId: record.firefox.buildId });
      assert.ok(model, "the fixture has the chain hot → … → hot-empty-profile");
      const abFile = path.join(profile, "..", "bench-ab-medium.json");
      fs.writeFileSync(abFile, JSON.stringify(ab));
      try {
        await second.driver.findElement(By.id("import-file")).sendKeys(abFile);
        const shownAb = await waitFor(
          () =>
            second.driver.executeScript(() => {
              const head = document.querySelector('[data-testid="costs-attribution"]');
              return head
                ? {
                    head: head.textContent,
                    share: document.querySelector('[data-testid="costs-baseline"]').dataset.share,
                    steps: [...document.querySelectorAll('[data-testid="costs-attribution-steps"] li')].map((li) => ({ causes: li.dataset.causes, counted: li.dataset.counted })),
                  }
                : null;
            }),
          { message: "the attribution paragraph after the import" },
        );
        assert.equal(shownAb.share, String(model.share));
        assert.match(shownAb.head, /^Named by measurement: the A\/B benchmark bench-ab-medium\.json \(profile medium, /);
        assert.ok(shownAb.head.endsWith(`names ${formatPercent(model.share)} of that:`), shownAb.head);
        assert.deepEqual(
          shownAb.steps,
          model.steps.map((step) => ({ causes: step.causes.join(" "), counted: String(step.saving.significant) })),
        );
      } finally {
        fs.rmSync(abFile, { force: true });
      }

      // Glean records here because geckodriver puts FOG in its test mode (port -1), as in the
      // fixtures; Debian's firefox-esr with telemetry off records nothing (docs/design/start-costs.md).
      // The live API still answers in the recorded fixtures' shape (tests/fixtures/start-costs/).
      const live = await second.driver.executeAsyncScript((done) => browser.aboutStartup.getStartCosts().then(done));
      const fixture = JSON.parse(fs.readFileSync(new URL("../fixtures/start-costs/reading-2.json", import.meta.url), "utf8"));
      // Recorded before the experiment watched the restored tabs and read each add-on's
      // webRequestBlocking: the live reading has both beside the fixtures' fields.
      assert.deepEqual(Object.keys(live).sort(), [...Object.keys(fixture), "selectedTabsRestoredAt"].sort());
      assert.deepEqual(Object.keys(live.addons[0]).sort(), [...Object.keys(fixture.addons[0]), "blockingWebRequest"].sort());
      assert.equal(live.addons.find((a) => a.id === TEST_ID).blockingWebRequest, false);
      // The start's reading took the figure and ended the watch: a later reading gives the same.
      assert.equal(Math.round(live.selectedTabsRestoredAt - record.processStart), tabs.value, String(live.selectedTabsRestoredAt));
      // The fixtures were recorded before the experiment read when the session store began
      // restoring (`restoringAt`); the unit tests give it a benchmark start's value.
      assert.deepEqual(Object.keys(live.sessionRestore).sort(), [...Object.keys(fixture.sessionRestore), "restoringAt"].sort());
      if (process.env.RECORD_START_COSTS) {
        fs.writeFileSync(process.env.RECORD_START_COSTS, `${JSON.stringify(live, null, 1)}\n`);
      }
      await second.screenshot("start-costs-second-start");
    } finally {
      await second.stop();
    }
  });
});
