// What a start is called is what it was (issue 39), in a real Firefox with the real host, read
// from the page's history rows (the class each row shows, and the group it is counted in):
// - a start launched through the prefetch, as the desktop entry launches it (`launch --prefetch
//   --firefox … -- <Firefox's arguments>`, the launcher's pid becoming Firefox), is "prefetched",
//   in a group of its own beside the plain start of the same profile, never in its mean;
// - a start the add-on recorded more than a minute after sessionRestored (installed into a
//   running Firefox, as README's about:addons path does) is "recorded late", with no mean;
// - a Firefox that fails (no display, as `sudo launch --cold --trace` pasted into a terminal
//   without one) is a failed command: exit 1 with Firefox's own message, no trace stored, and
//   the page's history holds no start of it.
// No timing is asserted: the late start waits until it is late by the product's own rule, and
// which class a plain start gets (cold, warm, hot) is the machine's, so only "not prefetched".
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { defaultFirefox, inChrome, privateInstall, startFirefox, waitFor } from "./harness.js";
import { buildExtension } from "../../scripts/build.mjs";
import { HOST_BINARY } from "../../scripts/lib/project.mjs";
import { stateDir } from "../../scripts/lib/state-layout.mjs";
import { LATE_MS } from "../../extension/lib/models/recorder.js";
import { formatBytes } from "../../extension/lib/wording/format.js";

const PAGE = "page/startup.html";
const isRoot = process.getuid?.() === 0;

/** The page's history: each start's row (class, id, whether it is this start) and each group. */
function readHistory(driver) {
  return waitFor(
    () =>
      driver.executeScript(() => {
        const answer = document.getElementById("answer");
        if (answer?.dataset.state !== "ready") {
          return null;
        }
        const groups = [...document.querySelectorAll("#history-table tbody[data-coldness]")].map((body) => {
          const average = body.querySelector("tr[data-average]");
          return {
            coldness: body.dataset.coldness,
            title: body.querySelector("tr.group")?.textContent.trim() ?? "",
            mean: average?.dataset.mean ?? null,
            n: Math.max(0, ...[...(average?.querySelectorAll("td[data-n]") ?? [])].map((td) => Number(td.dataset.n))),
            rows: [...body.querySelectorAll("tr[data-record-id]")].map((tr) => ({
              id: tr.dataset.recordId,
              coldness: tr.dataset.coldness,
              current: tr.classList.contains("current"),
              text: tr.querySelector("td.coldness")?.textContent.trim() ?? "",
              notes: tr.querySelector("td.detail")?.textContent.trim() ?? "",
              // In em of the cell's own font: a note squeezed to a letter a line is unreadable.
              notesEm: (() => {
                const cell = tr.querySelector("td.detail");
                return cell ? cell.getBoundingClientRect().width / parseFloat(getComputedStyle(cell).fontSize) : 0;
              })(),
            })),
          };
        });
        return { answer: { coldness: answer.dataset.coldness, text: answer.textContent.trim() }, groups };
      }),
    { timeout: 90000, interval: 250, message: "the answer line and the history (this start recorded)" },
  );
}

const rowsOf = (history) => history.groups.flatMap((g) => g.rows.map((r) => ({ ...r, group: g.coldness })));

describe("a start launched through the prefetch, as the desktop entry launches it", () => {
  const binary = fs.realpathSync(defaultFirefox());
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-start-class-"));
  const stateHome = path.join(work, "state");
  const profile = path.join(work, "profile");
  fs.mkdirSync(stateHome);
  fs.mkdirSync(profile);
  after(() => fs.rmSync(work, { recursive: true, force: true }));
  // geckodriver starts this instead of Firefox: the desktop entry's Exec line (learn/desktop.rs),
  // Firefox's arguments after `--`. Asked only for its version, Firefox answers itself.
  const wrapper = path.join(work, "firefox-through-prefetch");
  fs.writeFileSync(
    wrapper,
    [
      "#!/bin/sh",
      'case " $* " in *" --version "*|*" -version "*|*" -v "*) exec ' + `'${binary}'` + ' "$@";; esac',
      `exec '${fs.realpathSync(HOST_BINARY)}' launch --prefetch --firefox '${binary}' -- "$@"`,
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  const options = {
    experiments: true,
    installHost: true,
    flavour: "full",
    profileDir: profile,
    prefs: { "xpinstall.signatures.required": false }, // the add-on stays installed, unsigned
    env: { XDG_STATE_HOME: stateHome },
  };

  it("is recorded prefetched, on its row and in a group of its own, apart from the plain start before it", { timeout: 300000 }, async () => {
    // A plain start of the profile, the add-on installed for good: it records the start, and the
    // background learns its working set, the plan a launch reads without a trace.
    const plain = await startFirefox({ ...options, temporary: false });
    let plainId;
    try {
      await plain.openExtensionPage(PAGE);
      const first = await readHistory(plain.driver);
      plainId = rowsOf(first).find((r) => r.current)?.id;
      assert.ok(plainId, JSON.stringify(first));
      assert.notEqual(first.answer.coldness, "prefetched", "a plain start is not prefetched");
      await waitFor(() => fs.existsSync(path.join(stateDir(stateHome), "working-set.json")), {
        timeout: 90000,
        message: "the background's learn of the plain start (working-set.json)",
      });
    } finally {
      await plain.stop();
    }

    // The same profile through the prefetch; the add-on starts with Firefox.
    const prefetched = await startFirefox({ ...options, firefox: wrapper, installAddon: false });
    try {
      await prefetched.openExtensionPage(PAGE);
      const history = await readHistory(prefetched.driver);
      await prefetched.screenshot("start-class-prefetched");
      const last = JSON.parse(fs.readFileSync(path.join(stateDir(stateHome), "last-prefetch.json"), "utf8"));
      assert.equal(last.plan?.source, "learned", `the launch read the learned plan: ${JSON.stringify(last.plan)}`);
      assert.equal(last.failed, undefined, JSON.stringify(last));
      const rows = rowsOf(history);
      const current = rows.find((r) => r.current);
      assert.ok(current, JSON.stringify(history));
      assert.equal(history.answer.coldness, "prefetched", history.answer.text);
      assert.match(history.answer.text, /prefetch/i, "the answer line says it was prefetched");
      // What the prefetch read and what it found cached, from its own record (the plain start
      // before it left much of the install cached: "read 0.0 MB" alone said nothing of that).
      const mb = (bytes) => formatBytes(bytes, "en");
      assert.equal(typeof last.bytes_cached, "number", JSON.stringify(last));
      assert.ok(
        history.answer.text.includes(`the launch prefetch read ${mb(last.bytes_read)} for it and found ${mb(last.bytes_cached)} already cached`),
        `the answer line says what the prefetch read and found cached (${mb(last.bytes_read)}, ${mb(last.bytes_cached)}): ${history.answer.text}`,
      );
      console.log(`prefetch record: read ${last.bytes_read}, cached ${last.bytes_cached}, planned ${last.bytes_planned}; answer: ${history.answer.text}`);
      assert.equal(current.coldness, "prefetched", "the row's class");
      assert.equal(current.group, "prefetched", "counted in the prefetched group");
      assert.equal(current.text, "prefetched", "the class shown on the row");
      // Never averaged with the plain start: each is the only start of its own group.
      const plainRow = rows.find((r) => r.id === plainId);
      assert.ok(plainRow, `the plain start is still in the history: ${JSON.stringify(rows)}`);
      assert.notEqual(plainRow.group, "prefetched");
      const groupOf = (coldness) => history.groups.find((g) => g.coldness === coldness);
      assert.equal(groupOf("prefetched").rows.length, 1);
      assert.equal(groupOf("prefetched").n, 1, "the prefetched mean counts the prefetched start alone");
      assert.equal(groupOf(plainRow.group).n, 1, "the plain start's mean counts it alone");
    } finally {
      await prefetched.stop();
    }
  });
});

describe("a start the add-on recorded more than a minute after sessionRestored (installed into a running Firefox)", () => {
  it("is recorded late: on its row, with no mean", { timeout: 300000 }, async () => {
    const ff = await startFirefox({ experiments: true, installHost: true, flavour: "full", installAddon: false });
    const dist = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-late-"));
    try {
      // Waits until the start is late by the recorder's own rule (LATE_MS after sessionRestored),
      // then installs the add-on, as a user does from about:addons minutes after the start.
      const restoredAt = await waitFor(
        () => inChrome(ff.driver, "const done = arguments[arguments.length - 1]; const s = Services.startup.getStartupInfo().sessionRestored; done(s ? s.getTime() : null);"),
        { timeout: 60000, message: "sessionRestored" },
      );
      const wait = restoredAt + LATE_MS + 2000 - Date.now();
      if (wait > 0) {
        await sleep(wait);
      }
      const built = await buildExtension({ distDir: dist });
      await ff.driver.installAddon(built.full.xpi, true);
      await ff.openExtensionPage(PAGE);
      const history = await readHistory(ff.driver);
      await ff.screenshot("start-class-late");
      const current = rowsOf(history).find((r) => r.current);
      assert.ok(current, JSON.stringify(history));
      assert.equal(history.answer.coldness, "late", history.answer.text);
      assert.match(history.answer.text, /Recorded late/);
      assert.doesNotMatch(history.answer.text, /A (cold|warm|hot) start: it read/, "not classed by what was read by then");
      assert.equal(current.coldness, "late");
      assert.equal(current.group, "late");
      assert.equal(current.text, "recorded late", "the class shown on the row");
      assert.match(current.notes, /Recorded late/, "the row's note says why");
      // A late start has every milestone Firefox reported by then: the row is wide, and its note
      // was squeezed to a letter a line (the table scrolls instead).
      assert.ok(current.notesEm >= 15, `the note is readable, not a letter a line: ${current.notesEm.toFixed(1)} em wide`);
      assert.equal(history.groups.find((g) => g.coldness === "late").mean, "false", "no mean of late starts");
    } finally {
      await ff.stop();
      fs.rmSync(dist, { recursive: true, force: true });
    }
  });
});

describe("a Firefox that fails to start (no display)", { skip: isRoot ? false : "the traced launch needs root's tracer (tracefs): run the e2e suite as root (CI does)" }, () => {
  const install = isRoot ? privateInstall() : null;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-failed-"));
  const stateHome = path.join(work, "state");
  const home = path.join(work, "home");
  const profile = path.join(work, "profile");
  for (const dir of [stateHome, home, profile]) {
    fs.mkdirSync(dir);
  }
  after(() => {
    install?.remove();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("is a failed command with Firefox's own message, stores no trace, and is no start in the page's history", { timeout: 300000 }, async () => {
    // As the page prints the command, pasted where there is no display (no --headless).
    const env = { ...process.env, HOME: home, XDG_STATE_HOME: stateHome };
    delete env.DISPLAY;
    delete env.WAYLAND_DISPLAY;
    const launched = spawnSync(HOST_BINARY, ["launch", "--cold", "--trace", "--firefox", install.binary, "--", "-no-remote", "-profile", profile], {
      env,
      encoding: "utf8",
      timeout: 120000,
    });
    assert.equal(launched.status, 1, `exit 1 for a failed Firefox: ${launched.status}\n${launched.stderr}`);
    assert.match(launched.stderr, /Firefox \(pid \d+\) exited with exit status 1/, launched.stderr);
    assert.match(launched.stderr, /no DISPLAY/i, `Firefox's own message repeated: ${launched.stderr}`);
    const traces = path.join(stateDir(stateHome), "traces");
    const stored = fs.existsSync(traces) ? fs.readdirSync(traces).filter((f) => f.endsWith(".json")) : [];
    assert.deepEqual(stored, [], "no trace stored of a failed start");
    const list = spawnSync(HOST_BINARY, ["trace", "list", "--json"], { env, encoding: "utf8" });
    assert.equal(list.status, 0, list.stderr);
    assert.equal(JSON.parse(list.stdout).traces?.length ?? 0, 0, list.stdout);

    // The page of a Firefox on the same state folder: its history holds this start alone.
    const ff = await startFirefox({ experiments: true, installHost: true, flavour: "full", env: { XDG_STATE_HOME: stateHome } });
    try {
      await ff.openExtensionPage(PAGE);
      const history = await readHistory(ff.driver);
      await ff.screenshot("start-class-after-failed-launch");
      const rows = rowsOf(history);
      assert.equal(rows.length, 1, `one start, this one: ${JSON.stringify(rows)}`);
      assert.ok(rows[0].current);
      assert.notEqual(rows[0].coldness, "failed");
      const traceState = await ff.driver.executeScript(() => document.getElementById("trace")?.dataset.state ?? null);
      assert.equal(traceState, "none", "no trace to show: the failed start's was not stored");
    } finally {
      await ff.stop();
    }
  });
});

// A start that follows a preload of the whole install is "preloaded": the CLI's `preload`, as a
// user runs it (or the page's Preload, the same host command), then Firefox. On a private copy of
// the install, which no other process maps, so that the evicts here decide what each start reads
// and no other test's Firefox does. The CLI's evict and preload run in the state folder the
// Firefox's host uses (XDG_STATE_HOME), where last-preload.json is kept.
describe("a start that follows a preload of the whole install (the CLI's `preload`)", () => {
  const install = privateInstall();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "about-startup-preloaded-"));
  const stateHome = path.join(work, "state");
  const profile = path.join(work, "profile");
  fs.mkdirSync(stateHome);
  fs.mkdirSync(profile);
  after(() => {
    install.remove();
    fs.rmSync(work, { recursive: true, force: true });
  });
  const env = { ...process.env, XDG_STATE_HOME: stateHome };
  const cli = (...args) => {
    const done = spawnSync(HOST_BINARY, [...args, "--firefox", install.dir], { env, encoding: "utf8", timeout: 120000 });
    assert.equal(done.status, 0, `${args.join(" ")}: ${done.status}\n${done.stdout}\n${done.stderr}`);
    return done;
  };
  const lastPreload = () => {
    const file = path.join(stateDir(stateHome), "last-preload.json");
    return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : null;
  };
  const options = {
    experiments: true,
    installHost: true,
    flavour: "full",
    firefox: install.binary,
    profileDir: profile,
    prefs: { "xpinstall.signatures.required": false }, // the add-on stays installed, unsigned
    env: { XDG_STATE_HOME: stateHome },
  };
  /** One start of the profile on the copy: the page's history once it has recorded this start. */
  const start = async (name, more = {}) => {
    const ff = await startFirefox({ ...options, installAddon: false, ...more });
    try {
      await ff.openExtensionPage(PAGE);
      const history = await readHistory(ff.driver);
      await ff.screenshot(`start-class-${name}`);
      const current = rowsOf(history).find((r) => r.current);
      assert.ok(current, JSON.stringify(history));
      return { history, current };
    } finally {
      await ff.stop();
    }
  };

  it("is recorded preloaded, in a group of its own apart from the cold starts, and an evict after the preload undoes it", { timeout: 600000 }, async () => {
    // 1. Evicted, then started: a cold start (the copy is read from disk, nothing else maps it).
    cli("evict");
    assert.equal(lastPreload(), null, "no preload recorded yet");
    const cold = await start("cold-before-preload", { temporary: false, installAddon: true });
    // Which class an evicted start gets (cold, or warm where the disk reads ahead little) is the
    // classifier's rule against the machine's reads: only "not preloaded" is the code's.
    assert.notEqual(cold.current.coldness, "preloaded", `no preload yet: ${cold.history.answer.text}`);

    // 2. The whole install preloaded, then started: preloaded, on its row and in its own group.
    const preload = cli("preload");
    assert.match(preload.stdout, /preloaded \d+ files, [\d.]+ MB/, preload.stdout);
    const record = lastPreload();
    assert.ok(record, "the preload is recorded in last-preload.json");
    assert.equal(record.install_dir, install.dir, JSON.stringify(record));
    assert.equal(record.planned, false, "the whole install, not the plan");
    const preloaded = await start("preloaded");
    assert.equal(preloaded.history.answer.coldness, "preloaded", preloaded.history.answer.text);
    assert.match(preloaded.history.answer.text, /A preloaded start: it followed a preload that read [\d.]+ MB/, preloaded.history.answer.text);
    assert.equal(preloaded.current.coldness, "preloaded", "the row's class");
    assert.equal(preloaded.current.group, "preloaded", "counted in the preloaded group");
    assert.equal(preloaded.current.text, "preloaded", "the class shown on the row");
    assert.ok(lastPreload().claimed_by, "the start claimed the preload: the next start does not follow it");

    // 3. Preloaded, then evicted, then started: the evict undid the preload, so a cold start.
    cli("preload");
    assert.ok(lastPreload(), "the second preload is recorded");
    cli("evict");
    assert.equal(lastPreload(), null, "the evict forgot the preload");
    const evicted = await start("cold-after-preload-and-evict");
    assert.notEqual(evicted.current.coldness, "preloaded", `an evict after the preload makes the start not preloaded: ${evicted.history.answer.text}`);
    assert.doesNotMatch(evicted.history.answer.text, /preloaded/i, evicted.history.answer.text);
    console.log(`classes: ${cold.current.coldness}, ${preloaded.current.coldness}, ${evicted.current.coldness}`);

    // Never averaged across classes: the preloaded start alone in its group, the evicted ones
    // in theirs (cold), without it.
    const rows = rowsOf(evicted.history);
    const groupOf = (coldness) => evicted.history.groups.find((g) => g.coldness === coldness);
    assert.deepEqual(
      groupOf("preloaded")?.rows.map((r) => r.id),
      [preloaded.current.id],
      `the preloaded group holds the preloaded start alone: ${JSON.stringify(rows)}`,
    );
    assert.equal(groupOf("preloaded").n, 1, "the preloaded mean counts the preloaded start alone");
    for (const id of [cold.current.id, evicted.current.id]) {
      const row = rows.find((r) => r.id === id);
      assert.ok(row, `the evicted start ${id} is still in the history: ${JSON.stringify(rows)}`);
      const group = groupOf(row.group);
      assert.ok(!group.rows.some((r) => r.id === preloaded.current.id), `the ${row.group} group holds no preloaded start`);
      assert.equal(group.n, group.rows.length, `the ${row.group} mean counts its own starts alone`);
    }
  });
});
