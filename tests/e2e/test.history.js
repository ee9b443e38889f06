// The startup history, export and import in a real headless Firefox (full mode, real host):
// this start recorded and highlighted, an export that validates against the schema, import
// errors that merge nothing, an import shown beside this machine's starts, and a corrupt stored
// history moved aside with a warning. Screenshots go to the artifacts folder.
import { after, afterEach, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { By } from "selenium-webdriver";
import { readStartupPage, startFirefox, waitFor } from "./harness.js";

const PAGE = "page/startup.html";
const schema = JSON.parse(
  fs.readFileSync(new URL("../../docs/schema/about-startup-export.schema.json", import.meta.url), "utf8"),
);
const validate = new Ajv2020({ allErrors: true, strict: true }).compile(schema);

function readHistory(driver) {
  return driver.executeScript(() => {
    const shown = (id) => {
      const element = document.getElementById(id);
      return Boolean(element) && !element.hidden;
    };
    const section = document.getElementById("history-section");
    return {
      state: section.dataset.state,
      current: section.dataset.current,
      status: document.getElementById("history-status").textContent,
      tableShown: shown("history-table"),
      rows: [...document.querySelectorAll("#history-table tr[data-record-id]")].map((tr) => ({
        id: tr.dataset.recordId,
        current: tr.dataset.current === "true",
        milestones: Object.fromEntries(
          [...tr.querySelectorAll("td[data-milestone][data-ms]")].map((td) => [td.dataset.milestone, Number(td.dataset.ms)]),
        ),
      })),
      averageRows: document.querySelectorAll("#history-table tr[data-average]").length,
      trendPoints: document.querySelectorAll("#history-trend-chart .point").length,
      trendCurrent: document.querySelectorAll("#history-trend-chart .point.current").length,
      recoveredShown: shown("history-recovered"),
      recovered: [...document.querySelectorAll("#history-recovered li")].map((li) => ({
        reason: li.dataset.reason,
        backupKey: li.dataset.backupKey,
        text: li.textContent,
      })),
      exportState: document.getElementById("export-status").dataset.state ?? null,
      exportStatus: document.getElementById("export-status").textContent,
      importErrorShown: shown("import-error"),
      importErrorCode: document.getElementById("import-error").dataset.code ?? null,
      importError: document.getElementById("import-error").textContent,
      compareState: document.getElementById("compare").dataset.state,
      compareColumns: [...document.querySelectorAll("#compare-table thead th[data-origin]")].map((th) => ({
        origin: th.dataset.origin,
        source: th.dataset.source,
        coldness: th.dataset.coldness,
        text: th.textContent,
      })),
      preloadVerdictShown: shown("history-preload-verdict"),
      preloadVerdictFrom: document.getElementById("history-preload-verdict").dataset.from ?? null,
      preloadVerdictState: document.getElementById("history-preload-verdict").dataset.state ?? null,
      preloadVerdict: document.getElementById("history-preload-verdict").textContent,
      compareRows: [...document.querySelectorAll("#compare-table tbody tr")].map((tr) => tr.dataset.milestone),
    };
  });
}

describe("startup history, export and import (full mode, real host)", () => {
  const ctx = { ff: null, downloads: null, work: null, exported: null };

  before(async () => {
    ctx.work = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-history-"));
    ctx.downloads = path.join(ctx.work, "downloads");
    fs.mkdirSync(ctx.downloads);
    ctx.ff = await startFirefox({
      experiments: true,
      installHost: true,
      flavour: "full",
      prefs: {
        "browser.download.folderList": 2,
        "browser.download.dir": ctx.downloads,
        "browser.download.useDownloadDir": true,
        "browser.download.always_ask_before_handling_new_types": false,
      },
    });
    await ctx.ff.openExtensionPage(PAGE);
  });
  afterEach(async (t) => {
    if (ctx.ff?.driver) {
      await ctx.ff.screenshot(`history-${t.name}`).catch(() => {});
    }
  });
  after(async () => {
    await ctx.ff?.stop();
    fs.rmSync(ctx.work, { recursive: true, force: true });
  });

  it("records this start once Firefox reports sessionRestored, and highlights it", async () => {
    const { driver } = ctx.ff;
    const history = await waitFor(
      async () => {
        const current = await readHistory(driver);
        return current.rows.some((r) => r.current) ? current : null;
      },
      { timeout: 90000, interval: 500, message: "this start in the history table" },
    );
    assert.equal(history.state, "ready");
    assert.equal(history.current, "recorded");
    assert.equal(history.tableShown, true);
    assert.equal(history.rows.filter((r) => r.current).length, 1, "one start, highlighted once");
    assert.ok(history.averageRows >= 1, "an average row per build");
    const current = history.rows.find((r) => r.current);
    assert.ok(current.id.startsWith("full-"), current.id);
    for (const name of ["main", "sessionRestored"]) {
      assert.ok(current.milestones[name] > 0, `${name}: ${current.milestones[name]}`);
    }
    assert.ok(current.milestones.main < current.milestones.sessionRestored);
    assert.equal(history.trendPoints, 1);
    assert.equal(history.trendCurrent, 1);
    // a fresh HOME: no bench imported, no planned preload has run: the preload verdict says what it needs
    assert.equal(history.preloadVerdictShown, true);
    assert.equal(history.preloadVerdictFrom, "none");
    assert.match(history.preloadVerdict, /^What preloading gains here is not measured yet: import a benchmark export with at least 3 cold and 3 preload runs/);
    // The answer line at the top: this start's time to sessionRestored (full mode), its class.
    const answer = await waitFor(
      () =>
        driver.executeScript(() => {
          const element = document.getElementById("answer");
          return element.dataset.state === "ready" ? { milestone: element.dataset.milestone, text: element.textContent.trim() } : null;
        }),
      { timeout: 10000, message: "the answer line" },
    );
    assert.equal(answer.milestone, "sessionRestored");
    assert.match(answer.text, /^This start took [\d.,]+\s?s to sessionRestored\. A (cold|warm|hot) start: it read [\d.,]+ (MB|kB) from disk by the time it was recorded\. This build: /);
    // The same figures as the milestones table at the top of the page (Firefox's own).
    const page = await readStartupPage(driver);
    const since = Object.fromEntries(page.milestones.map((m) => [m.name, m.sinceOrigin]));
    assert.equal(current.milestones.sessionRestored, since.sessionRestored);
  });

  it("exports JSON as an object-URL download: dated name, valid against the schema", async () => {
    const { driver } = ctx.ff;
    const before = await readHistory(driver);
    const current = before.rows.find((r) => r.current);
    await driver.findElement(By.id("export-button")).click();
    const file = await waitFor(
      () => {
        const names = fs.readdirSync(ctx.downloads).filter((n) => n.endsWith(".json"));
        return names.length === 1 ? path.join(ctx.downloads, names[0]) : null;
      },
      { timeout: 20000, message: "the exported file in the download folder" },
    );
    assert.match(path.basename(file), /^about-startup-\d{4}-\d{2}-\d{2}-\d{4}\.json$/);
    const status = await waitFor(
      async () => {
        const h = await readHistory(driver);
        return h.exportState === "done" ? h : null;
      },
      { message: "the export's done message" },
    );
    assert.match(status.exportStatus, /Saved about-startup-.*starts: \d+/);
    const doc = JSON.parse(fs.readFileSync(file, "utf8"));
    assert.ok(validate(doc), JSON.stringify(validate.errors, null, 2));
    assert.equal(doc.format, "about-startup-export");
    assert.equal(doc.source, "extension");
    assert.equal(doc.environment.mode, "full");
    assert.equal(doc.environment.os, "linux");
    assert.match(doc.environment.kernel, /^\d+\.\d+/);
    const capabilities = await driver.getCapabilities();
    assert.equal(doc.environment.firefoxVersion, capabilities.get("browserVersion"));
    assert.equal(doc.current.id, current.id);
    assert.deepEqual(doc.current.milestones, current.milestones, "the current start's milestones");
    assert.ok(doc.current.io && doc.current.io.readBytes >= 0, "I/O figures from the host");
    assert.ok(doc.history.some((r) => r.id === current.id));
    assert.ok(doc.residency?.groups?.install, "the residency summary's install-folder totals");
    assert.ok(doc.residency.groups.install.files > 0);
    ctx.exported = file;
  });

  it("refuses a corrupt and a foreign file with specific errors; nothing is merged", async () => {
    const { driver } = ctx.ff;
    const corrupt = path.join(ctx.work, "corrupt.json");
    fs.writeFileSync(corrupt, '{"format": "about-startup-export", "version": 1, "history": [');
    await driver.findElement(By.id("import-file")).sendKeys(corrupt);
    let page = await waitFor(
      async () => {
        const h = await readHistory(driver);
        return h.importErrorShown ? h : null;
      },
      { message: "the import error" },
    );
    assert.equal(page.importErrorCode, "not-json");
    assert.match(page.importError, /corrupt\.json is not JSON, so nothing was imported/);
    assert.equal(page.compareState, "empty");
    assert.deepEqual(page.compareColumns, []);

    const foreign = path.join(ctx.work, "foreign.json");
    fs.writeFileSync(foreign, JSON.stringify({ name: "some other tool", records: [] }));
    await driver.findElement(By.id("import-file")).sendKeys(foreign);
    page = await waitFor(
      async () => {
        const h = await readHistory(driver);
        return h.importErrorCode === "foreign" ? h : null;
      },
      { message: "the foreign-file error" },
    );
    assert.match(page.importError, /not an about:startup export/);
    assert.equal(page.compareState, "empty");
  });

  it("shows a good export beside this machine's starts, labelled by source", async () => {
    const { driver } = ctx.ff;
    assert.ok(ctx.exported, "the export test ran first");
    // Compare a copy, as if it came from another machine.
    const other = path.join(ctx.work, "other-machine.json");
    fs.copyFileSync(ctx.exported, other);
    await driver.findElement(By.id("import-file")).sendKeys(other);
    const page = await waitFor(
      async () => {
        const h = await readHistory(driver);
        return h.compareState === "ready" ? h : null;
      },
      { message: "the comparison view" },
    );
    assert.equal(page.importErrorShown, false, "the earlier error is gone");
    const origins = page.compareColumns.map((c) => c.origin);
    assert.ok(origins.includes("local") && origins.includes("import"), origins.join(", "));
    const imported = page.compareColumns.find((c) => c.origin === "import");
    assert.equal(imported.source, "extension");
    assert.match(imported.text, /other-machine\.json/);
    assert.ok(page.compareRows.includes("sessionRestored"));
    const history = await readHistory(driver);
    assert.equal(history.rows.length, page.rows.length, "the stored history is unchanged");
  });

  it("classifies a recorded benchmark export's runs through Import: cold runs cold, hot and preloaded ones hot; the verdict says what preloading gained or cost", async () => {
    const { driver } = ctx.ff;
    // Without its stored classes (as an export from before classes had them), so the page's own
    // classifier decides, from each run's io figures.
    const fixture = JSON.parse(fs.readFileSync(new URL("../fixtures/bench-cold-preload-hot.json", import.meta.url), "utf8"));
    const scenarios = {};
    for (const record of fixture.history) {
      delete record.coldness;
      scenarios[record.bench.scenario] = (scenarios[record.bench.scenario] ?? 0) + 1;
    }
    assert.deepEqual(scenarios, { cold: 3, preload: 3, hot: 3 }, "the fixture as its README describes it");
    const file = path.join(ctx.work, "bench-cold-preload-hot.json");
    fs.writeFileSync(file, JSON.stringify(fixture));
    await driver.findElement(By.id("import-file")).sendKeys(file);
    const page = await waitFor(
      async () => {
        const h = await readHistory(driver);
        return h.compareColumns.some((c) => c.source === "bench") && h.preloadVerdictFrom === "bench" ? h : null;
      },
      { message: "the bench import in the comparison and the preload verdict" },
    );
    const bench = page.compareColumns.filter((c) => c.source === "bench");
    const count = (column) => Number(column.text.match(/\(n = (\d+)\)/)?.[1]);
    // cold: the 3 cold runs; hot: the 3 hot and the 3 preloaded runs (the start itself read nothing)
    assert.deepEqual(
      bench.map((c) => [c.coldness, count(c)]).sort(),
      [["cold", 3], ["hot", 6]],
      bench.map((c) => c.text).join(" | "),
    );
    assert.equal(page.preloadVerdictShown, true);
    assert.equal(page.preloadVerdictState, "ready");
    // measured: cold 8,254 ms mean, preloaded 499 ms, the preload itself 9,828 ms: a cost right before a launch
    assert.match(
      page.preloadVerdict,
      /^Preloading, from the benchmark in bench-cold-preload-hot\.json \(preload: 3 runs against 3 cold\): a preloaded start reached sessionRestored 7\.8\s?s sooner\. The preload itself took 9\.8\s?s for 308\.4 MB, so preloading right before a launch cost 2\.1\s?s more than a cold start in all/,
    );
  });

  it("moves a corrupt stored history aside, warns, and keeps working", async () => {
    const { driver } = ctx.ff;
    await driver.executeScript(() => globalThis.browser.storage.local.set({ history: "garbage{not a history" }));
    await driver.navigate().refresh();
    await waitFor(() => driver.executeScript("return document.body.dataset.ready === 'true'"), {
      message: "the page to load again",
    });
    const page = await waitFor(
      async () => {
        const h = await readHistory(driver);
        return h.recoveredShown ? h : null;
      },
      { message: "the recovered-history warning" },
    );
    assert.equal(page.recovered.length, 1);
    assert.equal(page.recovered[0].reason, "corrupt");
    assert.match(page.recovered[0].backupKey, /^history\.corrupt\.\d+$/);
    assert.match(page.recovered[0].text, /Nothing was deleted/);
    assert.equal(page.state, "empty", "a fresh history");
    const kept = await driver.executeScript(
      (key) => globalThis.browser.storage.local.get(key).then((items) => items[key]),
      page.recovered[0].backupKey,
    );
    assert.equal(kept, "garbage{not a history", "the old value is kept under the backup key");
    const rest = await readStartupPage(driver);
    assert.equal(rest.mode, "full");
    assert.ok(rest.milestones.length > 0, "the rest of the page still works");
  });
});
