// The startup I/O trace end to end: `about-startup-host launch --cold --trace` starts the real
// Firefox cold, records which pages of which files it reads (tracefs, root), and the figures must
// agree with the kernel's own count (/proc read_bytes of the Firefox tree) within ±10 % unless
// events were lost, which must then be reported. Then the page draws the trace: imported from an
// export, and from the host for the page's own Firefox (`trace --pid`).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { By } from "selenium-webdriver";
import { artifactsFolder, privateInstall, useFirefox, waitFor } from "./harness.js";
import { entriesByBuild } from "../../extension/lib/models/entries-by-build.js";
import { isRoot } from "../../scripts/lib/users.mjs";
import { inspectFirefox } from "../../scripts/lib/firefox-kind.mjs";
import { homeStateDir } from "../../scripts/lib/state-layout.mjs";
import { endProcess, endProcessesWithHome, runHostCli } from "./processes.js";

const PAGE = "page/startup.html";
const INSTANCES = "/sys/kernel/tracing/instances";

function ourInstances() {
  return fs.existsSync(INSTANCES) ? fs.readdirSync(INSTANCES).filter((n) => n.startsWith("about-startup-")) : [];
}

/**
 * The tracer's instances a recording of this test's (run by `uid`) may have left: those there
 * now and not in `before`, less every instance of a slot whose tree instance
 * (`about-startup-K-uUID`, src/tracer/arm.rs) is another user's. Another tracer session on the
 * machine (another user's launch, the root-only Rust tests' sessions, each a uid of its own)
 * makes and removes its own slot's three on its own clock: under load one of theirs
 * (about-startup-0, -0-exec, -0-u3700000004) was there when this test looked.
 */
function instancesLeft(before, uid = process.getuid()) {
  const now = ourInstances();
  const owner = new Map();
  for (const name of now) {
    const m = /^about-startup-(\d+)-u(\d+)$/.exec(name);
    if (m) owner.set(m[1], Number(m[2]));
  }
  const others = (name) => {
    const slot = /^about-startup-(\d+)/.exec(name)?.[1];
    return owner.has(slot) && owner.get(slot) !== uid;
  };
  return now.filter((n) => !before.includes(n) && !others(n));
}

/** The cold start's install copy (below), removed when the whole file is done: later suites read its trace. */
let copy = null;
after(() => copy?.remove?.());

describe("launch --cold --trace: a real cold start, traced", { skip: isRoot ? false : "tracefs needs root: run the e2e suite as root (CI does)" }, () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-trace-"));
  const home = path.join(work, "home");
  const profile = path.join(work, "profile");
  fs.mkdirSync(home);
  fs.mkdirSync(profile);
  const env = { ...process.env, HOME: home };
  delete env.XDG_STATE_HOME;
  // Firefox's own temporary folder, private: Firefox keeps an install-wide lock in
  // $TMPDIR/firefox-esr, made 0700 by whoever started first; behind another user's Firefox
  // (one a test left running, say) a new one retries that lock for ~5 s reading nothing, and
  // the recording ended there as "quiet" (CI, 28 Nov: 150 MB read, omni.ja never).
  env.TMPDIR = path.join(work, "tmp");
  fs.mkdirSync(env.TMPDIR);
  let trace = null;
  const shared = globalThis.__aboutStartupTrace ?? (globalThis.__aboutStartupTrace = {});
  shared.work = work;

  // The cold start's own install: a copy no other process maps (a Firefox running from the
  // install under test, another user's say, keeps its pages cached through the evict and the
  // start then reads a fraction of a cold one's), on disk and synced (no dirty page to stay),
  // named with --firefox (without it the host takes the oldest running Firefox's install).
  // The instances there before the launch: another tracer on the machine (another user's
  // launch, another checkout's tests) has its own, named the same way; CI under load saw three
  // of another tracer's while this one had removed its own.
  let instancesBefore = [];
  before(async () => {
    copy = privateInstall();
    instancesBefore = ourInstances();
    const out = (await runHostCli(["launch", "--cold", "--trace", "--json", "--firefox", copy.dir, "--", "--headless", "--no-remote", "-profile", profile], env, "trace-launch")).out;
    trace = JSON.parse(out);
    fs.writeFileSync(path.join(artifactsFolder(), "trace-cold-start.json"), out);
    shared.trace = trace;
  });
  after(async () => {
    if (trace?.pid) {
      await endProcess(trace.pid, { what: `Firefox ${trace.pid}` });
    }
    // A launch that failed after it started Firefox named no pid: its HOME does.
    await endProcessesWithHome(home, "what the cold launch left running");
  });

  it("agrees with /proc read_bytes within ±10 %, or reports lost events", () => {
    assert.equal(trace.source, "tracefs");
    assert.equal(trace.version, 1);
    assert.ok(Number.isInteger(trace.lost_events), "lost_events is always reported");
    // Cold because the test made it so, and checked: nothing kept the copy's pages through the evict.
    assert.deepEqual((trace.note_codes ?? []).filter((n) => n.code === "cold_held"), [], "no page of the copy stayed cached through the evict");
    assert.ok(trace.tree_read_bytes > 50e6, `a cold start reads tens of MB (read_bytes ${trace.tree_read_bytes})`);
    const ratio = trace.traced_read_bytes / trace.tree_read_bytes;
    console.log(
      `traced ${trace.traced_read_bytes} B, /proc read_bytes ${trace.tree_read_bytes} B, ratio ${ratio.toFixed(4)}, lost events ${trace.lost_events}, written ${trace.written_bytes} B, ${trace.events.length} reads, ${trace.block.length} block requests, ended by ${trace.ended_by} at ${Math.round(trace.ended_ms)} ms`,
    );
    if (trace.lost_events === 0) {
      assert.ok(ratio >= 0.9 && ratio <= 1.1, `traced/proc = ${ratio}`);
    } else {
      assert.ok(trace.notes.some((n) => n.includes("lost")), "lost events are said in the notes");
    }
  });

  it("tells the pages read and then used from readahead nobody touched (/proc/kpageflags of the traced frames)", () => {
    const counts = trace.use_counts;
    assert.ok(counts, "a root tracefs trace reads the page flags");
    // Every traced (not written) page is classified once: used, unused or gone.
    assert.equal(counts.used_pages + counts.unused_pages + counts.gone_pages, trace.traced_read_bytes / 4096);
    assert.ok(counts.used_pages > 0, "the start used pages it read");
    const libxul = trace.files.find((f) => f.path.endsWith("/libxul.so"));
    const used = (libxul.used ?? []).reduce((sum, [, n]) => sum + n, 0);
    console.log(`page use: ${counts.used_pages} used, ${counts.unused_pages} never used, ${counts.gone_pages} gone; libxul.so ${used} of ${libxul.bytes_read / 4096} pages used`);
    assert.ok(used > 0 && used <= libxul.bytes_read / 4096, `libxul.so: ${used} used of ${libxul.bytes_read / 4096} read`);
    for (const [first, n] of libxul.used) {
      assert.ok(
        trace.events.some((e) => trace.files[e.f] === libxul && e.o <= first && first < e.o + e.n) && n > 0,
        `used range ${first}+${n} starts at a page the trace saw read`,
      );
    }
    assert.ok(trace.files.filter((f) => f.written).every((f) => f.used === undefined), "written files have no use ranges");
  });

  it("names the files, with libxul.so's ELF sections and extents, and times on the process axis", () => {
    const libxul = trace.files.find((f) => f.path.endsWith("/libxul.so"));
    assert.ok(libxul, "libxul.so was read");
    assert.ok(libxul.bytes_read > 10e6, `libxul.so: ${libxul.bytes_read} bytes`);
    assert.ok(libxul.sections.some((s) => s.name === ".text"), "ELF sections");
    assert.ok(libxul.extents.length > 0, "FIEMAP extents");
    assert.ok(trace.files.some((f) => f.path.endsWith("/omni.ja")), "omni.ja was read");
    assert.ok(trace.files.some((f) => f.written), "the new profile's files count as written, not read");
    assert.ok(trace.processes.some((p) => p.kind === "parent" && p.pid === trace.pid));
    for (const e of trace.events) {
      assert.ok(e.t >= trace.attached_ms - 1 && e.t <= trace.ended_ms + 1, `read at ${e.t} ms within the recording`);
    }
    // Time zero is the held launcher's fork (native-host/src/os/held.rs): the tracer follows it
    // before it execs Firefox, so the fork itself is before the recording, on the same clock.
    assert.match(trace.zero, /held launcher's fork/);
  });

  it("removes its tracefs instance and stores the trace in the state folder", () => {
    // Those of this launch: made after the list above was taken. (Main's tracer names them
    // about-startup-<its pid>[-…]; which pid was the launch's tracer is not said.)
    const left = instancesLeft(instancesBefore);
    assert.deepEqual(left, [], `instances left (before the launch: ${instancesBefore.join(", ") || "none"})`);
    const dir = path.join(homeStateDir(home), "traces");
    const stored = fs.readdirSync(dir).filter((n) => n.endsWith(".meta.json"));
    assert.equal(stored.length, 1);
    const meta = JSON.parse(fs.readFileSync(path.join(dir, stored[0]), "utf8"));
    assert.equal(meta.pid, trace.pid);
    assert.equal(meta.traced_read_bytes, trace.traced_read_bytes);
  });
});

describe("the page draws a trace", () => {
  // The Export button's download lands here (the omni.ja entries per build, issue 21).
  const downloads = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-trace-downloads-"));
  after(() => fs.rmSync(downloads, { recursive: true, force: true }));
  const ctx = useFirefox(
    {
      experiments: true,
      installHost: true,
      flavour: "full",
      prefs: {
        "browser.download.folderList": 2,
        "browser.download.dir": downloads,
        "browser.download.useDownloadDir": true,
        "browser.download.always_ask_before_handling_new_types": false,
      },
    },
    { prefix: "trace", page: PAGE },
  );

  async function readTrace(driver) {
    return driver.executeScript(() => {
      const s = document.getElementById("trace");
      return {
        state: s?.dataset.state ?? null,
        origin: s?.dataset.origin ?? null,
        lost: s?.dataset.lostEvents ?? null,
        summary: document.querySelector("[data-testid=trace-summary]")?.textContent ?? null,
        command: document.querySelector("[data-testid=trace-command]")?.textContent ?? null,
        charts: ["trace-read-chart", "trace-pattern-chart", "trace-disk-chart"].map((id) => document.querySelector(`[data-testid=${id}]`)?.querySelectorAll("rect").length ?? -1),
        sections: [...document.querySelectorAll("[data-testid=trace-pattern-chart] [data-section]")].map((g) => g.dataset.section),
        rows: document.querySelectorAll("[data-testid=trace-files] > tbody > tr").length,
        // Which code, which resources (issue 21)
        code: document.querySelector("[data-testid=trace-code]")?.dataset.state ?? null,
        codeRows: [...document.querySelectorAll("[data-testid=trace-code] tbody tr")].map((tr) => ({ code: tr.dataset.code, bytes: Number(tr.dataset.bytes) })),
        entries: document.querySelector("[data-testid=trace-entries]")?.dataset.state ?? null,
        entryRows: [...document.querySelectorAll("[data-testid=trace-entries] tbody tr")].map((tr) => tr.dataset.entry),
        omniFolds: [...document.querySelectorAll("[data-testid=trace-files] [data-testid=trace-file-entries]")].map((d) => ({
          path: d.closest("tr").dataset.path,
          summary: d.querySelector("summary").textContent,
          rows: d.querySelectorAll(":scope > table > tbody > tr").length,
        })),
        nodes: document.querySelectorAll("#trace *").length,
        picked: document.querySelector("[data-testid=trace-file-picker]")?.selectedOptions[0]?.textContent ?? null,
        marks: [...document.querySelectorAll("[data-testid=trace-pattern-chart] rect[data-mark]")].map((r) => r.dataset.mark),
        faultsTurned: [...document.querySelectorAll("[data-testid=trace-pattern-chart] rect[data-mark=fault]")].every((r) => /^rotate\(45 /.test(r.getAttribute("transform"))),
        legend: [...document.querySelectorAll("[data-testid=trace-pattern-legend] li")].map((li) => li.dataset.mark),
        legendFills: [...document.querySelectorAll("[data-testid=trace-pattern-legend] rect")].map((r) => getComputedStyle(r).fill),
        // colours come from the stylesheet (forced-colors can replace them), not SVG attributes
        colourAttrs: [...document.querySelectorAll("#trace svg *")].filter((n) =>
          ["fill", "stroke"].some((a) => n.hasAttribute(a) && !["none", "currentColor"].includes(n.getAttribute(a))),
        ).length,
        text: s?.textContent ?? "",
      };
    });
  }

  /** The section, and each chart on its own (the section is taller than the window). */
  async function shot(driver, name) {
    const data = await driver.findElement(By.id("trace")).takeScreenshot(true);
    fs.writeFileSync(path.join(artifactsFolder(), `${name}.png`), Buffer.from(data, "base64"));
    const figures = await driver.findElements(By.css("#trace figure"));
    for (const [i, figure] of figures.entries()) {
      await driver.executeScript((f) => f.scrollIntoView(), figure);
      const png = await figure.takeScreenshot(true);
      fs.writeFileSync(path.join(artifactsFolder(), `${name}-chart-${i + 1}.png`), Buffer.from(png, "base64"));
    }
  }

  it("without a trace, says how to record one (the exact command)", async () => {
    const { driver } = ctx.ff;
    const page = await waitFor(async () => {
      const p = await readTrace(driver);
      return p.state === "none" ? p : null;
    }, { message: "the trace section's answer" });
    // The host names itself as it runs (issue 19): by its absolute path here (not on PATH), and
    // without sudo, since this host already runs as root; and the install the page runs from
    // (issue 37), not the one a PATH would find.
    const install = fs.realpathSync(inspectFirefox(ctx.ff.firefox).dir);
    assert.match(page.command, /^\/\S+\/about-startup-host launch --cold --trace --firefox \S+$/);
    assert.equal(page.command.split(" --firefox ")[1], install);
    assert.ok(fs.existsSync(page.command.split(" ")[0]), `${page.command} names a binary that is there`);
    await shot(driver, "trace-none");
  });

  it("an imported export with the cold-start trace shows the four views, aggregated", { skip: isRoot ? false : "needs the traced cold start (root)" }, async () => {
    const { driver } = ctx.ff;
    const trace = globalThis.__aboutStartupTrace?.trace;
    assert.ok(trace, "the cold-start suite ran first");
    const doc = {
      format: "about-startup-export",
      version: 1,
      exportedAt: Date.now(),
      source: "extension",
      environment: { firefoxVersion: trace.firefox_version, buildId: trace.build_id, os: "linux", kernel: null, mode: "full" },
      current: null,
      history: [],
      trimmed: 0,
      trace,
    };
    const file = path.join(globalThis.__aboutStartupTrace.work, "with-trace.json");
    fs.writeFileSync(file, JSON.stringify(doc));
    await driver.findElement(By.id("import-file")).sendKeys(file);
    const page = await waitFor(async () => {
      const p = await readTrace(driver);
      return p.state === "ready" ? p : null;
    }, { message: "the imported trace drawn" });
    assert.equal(page.origin, "with-trace.json");
    assert.equal(page.lost, String(trace.lost_events));
    assert.ok(page.charts.every((n) => n > 0), `every chart has marks: ${page.charts}`);
    assert.match(page.picked, /libxul\.so$/);
    assert.ok(page.sections.includes(".text"), `sections shaded: ${page.sections}`);
    // Faults differ from reads through a readahead window by shape (a turned square), and the
    // legend says which is which; no colour is an SVG attribute.
    assert.ok(page.marks.length > 0 && page.marks.every((m) => ["fault", "window"].includes(m)), `marks: ${new Set(page.marks)}`);
    assert.ok(page.faultsTurned, "every fault mark is a diamond");
    assert.deepEqual(page.legend, ["fault", "window"]);
    assert.notEqual(page.legendFills[0], page.legendFills[1], `the colour repeats the shape: ${page.legendFills}`);
    assert.equal(page.colourAttrs, 0, "colours are CSS classes");
    assert.ok(page.rows > 5, `per-file rows: ${page.rows}`);
    const pages = trace.events.reduce((s, e) => s + e.n, 0);
    assert.ok(page.nodes < 30000, `${page.nodes} nodes for ${pages} pages: aggregated`);
    console.log(`page: ${page.summary} (${page.nodes} nodes for ${pages} pages)`);
    // Which code faulted the pages in: the regions the trace's fault sites name, most first.
    assert.equal(page.code, "ready", "a launch --trace records fault sites");
    assert.ok(page.codeRows.length > 0 && page.codeRows.every((r) => r.code && r.bytes > 0), JSON.stringify(page.codeRows));
    assert.ok(page.codeRows.every((r, i) => i === 0 || page.codeRows[i - 1].bytes >= r.bytes), "most first");
    assert.ok(page.codeRows.some((r) => r.code.startsWith("libxul.so ")), `libxul.so's own code faults: ${page.codeRows.map((r) => r.code)}`);
    // Which resources: omni.ja's rows open into their entries, and the most read are listed.
    const archives = trace.files.filter((f) => f.entries?.length > 0);
    assert.ok(archives.length > 0, "the cold start read omni.ja and the host mapped its entries");
    assert.equal(page.entries, "ready");
    assert.ok(page.entryRows.length > 0, "the entries read the most");
    assert.deepEqual(page.omniFolds.map((f) => f.path).sort(), archives.map((f) => f.path).sort());
    for (const fold of page.omniFolds) {
      const file = trace.files.find((f) => f.path === fold.path);
      assert.equal(fold.rows, Math.min(100, file.entries.length), `${fold.path}: ${fold.summary}`);
      assert.match(fold.summary, new RegExp(`${file.entries.length} entr(y|ies) read`));
    }
    await shot(driver, "trace-imported");
    // An omni.ja row opened: its entries, as a person clicking it sees them.
    await driver.findElement(By.css("[data-testid=trace-file-entries] summary")).click();
    for (const id of ["trace-file-entries", "trace-code", "trace-entries"]) {
      const node = await driver.findElement(By.css(`[data-testid=${id}]`));
      await driver.executeScript((n) => n.scrollIntoView(), node);
      fs.writeFileSync(path.join(artifactsFolder(), `trace-imported-${id}.png`), Buffer.from(await node.takeScreenshot(true), "base64"));
    }

    // Across builds (issue 21): one build traced says so; an export of another build (its
    // omniEntries only: this start's, named as a later build that read the most read entry half)
    // sets the two side by side, and the page's export carries both.
    const entriesBlock = () => driver.executeScript(() => {
      const box = document.querySelector("[data-testid=compare-entries]");
      const rows = [...box.querySelectorAll("tbody tr")].map((tr) => ({ entry: tr.dataset.entry, change: Number(tr.dataset.change) }));
      return { state: box.dataset.state ?? null, hidden: box.hidden, text: box.textContent, rows };
    });
    const one = await entriesBlock();
    assert.equal(one.state, "one-build");
    assert.ok(one.text.includes(`build ${trace.build_id}, 1 traced start)`), one.text);
    const own = entriesByBuild({ traces: [trace] }).builds[0];
    const top = own.entries[0];
    const later = {
      buildId: "20991231235959",
      firefoxVersion: `${trace.firefox_version}-later`,
      traces: ["4102444799000-1-1"],
      entries: own.entries.map((e) => (e === top ? { ...e, bytesRead: Math.floor(e.bytesRead / 2) } : e)),
    };
    const laterFile = path.join(globalThis.__aboutStartupTrace.work, "later-build.json");
    fs.writeFileSync(laterFile, JSON.stringify({ ...doc, trace: undefined, environment: { ...doc.environment, buildId: later.buildId }, omniEntries: { version: 1, builds: [later] } }));
    await driver.findElement(By.id("import-file")).sendKeys(laterFile);
    const two = await waitFor(async () => {
      const b = await entriesBlock();
      return b.state === "ready" ? b : null;
    }, { message: "the entries of two builds compared" });
    assert.deepEqual(two.rows, [{ entry: top.name, change: Math.floor(top.bytesRead / 2) - top.bytesRead }]);
    assert.match(two.text, /less/);
    const block = await driver.findElement(By.css("[data-testid=compare-entries]"));
    await driver.executeScript((n) => n.scrollIntoView(), block);
    fs.writeFileSync(path.join(artifactsFolder(), "trace-compare-entries.png"), Buffer.from(await block.takeScreenshot(true), "base64"));
    await driver.findElement(By.id("export-button")).click();
    const exported = await waitFor(() => {
      const names = fs.readdirSync(downloads).filter((n) => n.endsWith(".json"));
      return names.length === 1 ? JSON.parse(fs.readFileSync(path.join(downloads, names[0]), "utf8")) : null;
    }, { timeout: 20000, message: "the exported file" });
    assert.deepEqual(exported.omniEntries.builds.map((b) => b.buildId), [later.buildId, trace.build_id]);
    assert.deepEqual(exported.omniEntries.builds[1], own, "this start's entries, as the model counts them");
  });

  it("a trace of the page's own Firefox (trace --pid) comes from the host", { skip: isRoot ? false : "tracefs needs root" }, async () => {
    const { driver, home } = ctx.ff;
    const pid = Number(await driver.executeScript(() => document.getElementById("firefox-pid")?.textContent));
    assert.ok(pid > 0, "the page knows its Firefox's pid");
    const env = { ...process.env, HOME: home };
    delete env.XDG_STATE_HOME;
    const before = ourInstances();
    const out = (await runHostCli(["trace", "--pid", String(pid), "--seconds", "2", "--json"], env, "trace-attach")).out;
    const trace = JSON.parse(out);
    assert.equal(trace.pid, pid);
    assert.ok(trace.attached_ms > 0, "attached after the start");
    assert.ok(trace.notes.some((n) => n.startsWith("attached")), "says what it missed");
    assert.ok(trace.note_codes.some((n) => n.code === "attached_late" && n.params.ms > 0), JSON.stringify(trace.note_codes));
    assert.equal(trace.ended_by_code, "seconds");
    assert.deepEqual(instancesLeft(before), [], `instances left (before the trace: ${before.join(", ") || "none"})`);
    await ctx.ff.openExtensionPage(PAGE);
    const page = await waitFor(async () => {
      const p = await readTrace(ctx.ff.driver);
      return p.state === "ready" || p.state === "none" ? p : null;
    }, { message: "the host's trace" });
    assert.equal(page.state, "ready", "the host lists the trace of this Firefox as current");
    assert.equal(page.origin, "host");
    const missed = await ctx.ff.driver.executeScript(() => document.querySelectorAll("[data-testid=trace-read-chart] [data-missed]").length);
    assert.equal(missed, 1, "the time before the tracer attached is shaded, not drawn as nothing read");
    // the host's notes and ending worded from _locales, never its English
    assert.match(page.text, /The recording began [\d,]+ ms after the process started/);
    assert.match(page.text, /ended by: the time asked for ran out/);
    assert.doesNotMatch(page.text, /attached \d+ ms after|ended by: seconds/);
    await shot(ctx.ff.driver, "trace-host");

    // "Open in the Firefox Profiler" (issue 21): the host writes the profile, the page saves it
    // and hands it to profiler.firefox.com; with no network here the Profiler never answers, so
    // the page must say where the file is and how to load it.
    await ctx.ff.driver.findElement(By.css("[data-testid=profiler-open]")).click();
    const profiler = await waitFor(
      () => ctx.ff.driver.executeScript(() => {
        const s = document.querySelector("[data-testid=profiler-status]");
        return ["injected", "timeout", "offline", "blocked", "error"].includes(s?.dataset.state) ? { ...s.dataset, text: s.textContent } : null;
      }),
      { timeout: 60000, message: "the profiler button's outcome" },
    );
    console.log(`Open in the Firefox Profiler: ${profiler.state}: ${profiler.text}`);
    assert.notEqual(profiler.state, "error", profiler.text);
    assert.equal(profiler.kind, "trace", "a trace --pid trace has no Firefox profile: the trace alone");
    assert.match(profiler.filename, /^about-startup-.*\.profile\.json$/);
    if (profiler.state !== "injected") {
      assert.match(profiler.text, /Load a profile from file/);
    }
    await shot(ctx.ff.driver, "trace-host-profiler");
  });
});

// The cold start's folder (its HOME, profile and the exports the page test writes) is used by
// both suites above: removed once the file is done (~100 MB a run were left in /tmp).
after(() => {
  const work = globalThis.__aboutStartupTrace?.work;
  if (work) fs.rmSync(work, { recursive: true, force: true });
});
