// The real about:startup address (docs/design/about-startup-url.md) in a real headless Firefox:
// registered in every process while the full flavour runs, gone after disable and uninstall,
// back after enable; the entry points (temporary-install landing, omnibox keyword) open it; the
// basic flavour never registers it and keeps its moz-extension page.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import path from "node:path";
import { By } from "selenium-webdriver";
import { EXTENSION_ORIGIN, artifactsFolder, inChrome, useFirefox, waitFor, waitForPageReady } from "./harness.js";
import { EXTENSION_ID } from "../../scripts/lib/project.mjs";

const ABOUT = "about:startup";
const PAGE_URL = `${EXTENSION_ORIGIN}/page/startup.html`;

/** Navigates the current tab; an error page makes WebDriver throw, which is what some tests want. */
async function tryGet(driver, url) {
  try {
    await driver.get(url);
    return null;
  } catch (error) {
    return error;
  }
}

/** What the current tab shows: URL, title, whether it is our page, its rows and chart marks. */
function readAboutPage(driver) {
  return driver.executeScript(() => {
    const rows = [...document.querySelectorAll("#milestones tbody tr")].map((tr) => tr.dataset.milestone);
    const svg = document.querySelector("#timeline svg");
    return {
      documentURI: document.documentURI,
      title: document.title,
      ours: Boolean(document.getElementById("milestones")),
      origin: self.origin,
      baseURI: document.baseURI,
      mode: document.getElementById("mode")?.dataset.mode ?? null,
      rows,
      timelineShown: document.getElementById("timeline-section")?.hidden === false,
      marks: [...document.querySelectorAll("#timeline .timeline-mark")].map((g) => g.dataset.milestone),
      // Milestones after the start's end, listed at the chart's edge (startupCrashDetectionEnd
      // comes ~30 s after the start: there when the page opens late, on a busy machine).
      later: (document.getElementById("timeline")?.dataset.later ?? "").split(" ").filter(Boolean),
      labels: [...document.querySelectorAll("#timeline .timeline-labels text")].map((t) => t.textContent),
      svgRole: svg?.getAttribute("role") ?? null,
      svgTitle: svg?.querySelector("title")?.textContent ?? null,
      svgDesc: svg?.querySelector("desc")?.textContent ?? null,
    };
  });
}

/** Every window handle with the URL it shows (switches the driver around; switch back after). */
async function tabs(driver) {
  const out = [];
  for (const handle of await driver.getAllWindowHandles()) {
    await driver.switchTo().window(handle);
    out.push({ handle, url: await driver.getCurrentUrl() });
  }
  return out;
}

/**
 * Whether about:startup is registered in the parent and in each content process, asked with a
 * probe process script (a data: script: content processes run it, the parent refuses it).
 */
function registrations(driver) {
  return inChrome(
    driver,
    `const done = arguments[arguments.length - 1];
     const contract = "@mozilla.org/network/protocol/about;1?what=startup";
     const registrar = Components.manager.QueryInterface(Ci.nsIComponentRegistrar);
     const children = [];
     const listener = { receiveMessage: (message) => children.push(message.data) };
     Services.ppmm.addMessageListener("aboutStartupProbe", listener);
     try {
       Services.ppmm.loadProcessScript("data:,sendAsyncMessage('aboutStartupProbe', {" +
         "remoteType: Services.appinfo.remoteType, registered: Components.manager" +
         ".QueryInterface(Ci.nsIComponentRegistrar).isContractIDRegistered('" + contract + "')})", false);
     } catch (error) {
       // the parent refuses data: process scripts ("unsafe filename"); the children ran it
     }
     setTimeout(() => {
       Services.ppmm.removeMessageListener("aboutStartupProbe", listener);
       done({ parent: registrar.isContractIDRegistered(contract), children,
              processes: Services.ppmm.childCount - 1 });
     }, 1500);`,
  );
}

/**
 * The registrations once every content process has run the add-on's process script. A
 * preallocated process Firefox spawns while we probe may answer before its delayed process
 * scripts have run; it runs them before it loads any page, so waiting a little is the honest
 * check. Fails with the last state if some process stays unregistered.
 */
async function registeredEverywhere(driver) {
  let last = null;
  try {
    return await waitFor(
      async () => {
        last = await registrations(driver);
        if (!last.parent || last.children.length === 0 || !last.children.every((child) => child.registered)) {
          throw new Error("not yet");
        }
        return last;
      },
      { timeout: 15000, interval: 500, message: "about:startup registered in every process" },
    );
  } catch (error) {
    throw new Error(`${error.message}: ${JSON.stringify(last)}`, { cause: error });
  }
}

function addonAction(driver, action) {
  return inChrome(
    driver,
    `const [id, action, done] = arguments;
     const { AddonManager } = ChromeUtils.importESModule("resource://gre/modules/AddonManager.sys.mjs");
     AddonManager.getAddonByID(id)
       .then((addon) => addon[action]())
       .then(() => done("ok"), (error) => done(String(error)));`,
    EXTENSION_ID,
    action,
  );
}

/** Types "about-startup" + Enter in the address bar, as far as Firefox's omnibox module sees it. */
function omnibox(driver, where = "tab") {
  return inChrome(
    driver,
    `const [where, done] = arguments;
     const { ExtensionSearchHandler } = ChromeUtils.importESModule(
       "resource://gre/modules/ExtensionSearchHandler.sys.mjs");
     ExtensionSearchHandler.handleSearch({ keyword: "about-startup", text: "about-startup " }, () => {});
     ExtensionSearchHandler.handleInputEntered("about-startup", "about-startup ", where);
     done("ok");`,
    where,
  );
}

/** Waits for a tab showing `url` that is not in `known`; switches to it. */
async function waitForNewTab(driver, url, known) {
  return waitFor(
    async () => {
      const found = (await tabs(driver)).find((tab) => tab.url === url && !known.has(tab.handle));
      if (found) {
        await driver.switchTo().window(found.handle);
      }
      return found?.handle;
    },
    { timeout: 15000, message: `a new tab with ${url}` },
  );
}

/** Opens about:startup with WebDriver in a fresh tab and waits for the page. */
async function openAboutTab(driver) {
  await driver.switchTo().newWindow("tab");
  const error = await tryGet(driver, ABOUT);
  assert.equal(error, null, `driver.get(about:startup): ${error?.message}`);
  await waitForPageReady(driver, ABOUT);
  // the chart is drawn right after the milestones; wait for it too
  await waitFor(async () => (await readAboutPage(driver)).marks.length > 0, { message: "the timeline chart" });
  return readAboutPage(driver);
}

async function assertNotOurPage(driver) {
  const handle = await driver.getWindowHandle();
  await driver.switchTo().newWindow("tab");
  const error = await tryGet(driver, ABOUT);
  // The navigation's answer may come before the tab holds its outcome (an error page, or our
  // page if it were registered): read it once the tab is no longer the blank one it opened on,
  // not at once (under load the read saw the blank tab or a document on its way out).
  let page = null;
  await waitFor(
    async () => {
      page = await readAboutPage(driver);
      return page.documentURI !== "about:blank";
    },
    { timeout: 60000, message: `the tab to show what ${ABOUT} gives (${error?.message})` },
  ).catch(() => {});
  page ??= await readAboutPage(driver);
  assert.equal(page.ours, false, `about:startup still shows the page (${page.documentURI})`);
  assert.notEqual(page.title, "about:startup");
  assert.match(page.documentURI, /^about:neterror/, `error page expected, got ${page.documentURI} (${error?.message})`);
  await driver.close();
  await driver.switchTo().window(handle);
}

describe("about:startup, full flavour (experiments on)", () => {
  // Screenshots of whatever tab each test left selected (failed or not).
  const ctx = useFirefox({ experiments: true, installHost: true, flavour: "full" }, { prefix: "about-url-full" });
  before(async () => {
    // The first tab stays open throughout: disabling closes every about:startup tab.
    ctx.home = (await ctx.ff.driver.getAllWindowHandles())[0];
  });

  it("the temporary install lands on about:startup", async () => {
    const { driver } = ctx.ff;
    await waitForNewTab(driver, ABOUT, new Set([ctx.home]));
    await waitForPageReady(driver, "the landing tab");
    const page = await readAboutPage(driver);
    assert.equal(page.ours, true);
    assert.equal(page.mode, "full");
  });

  it("driver.get(about:startup) shows the page with its milestones and one chart mark per row", async () => {
    const { driver } = ctx.ff;
    const page = await openAboutTab(driver);
    assert.equal(await driver.getCurrentUrl(), ABOUT);
    assert.equal(page.documentURI, ABOUT);
    assert.equal(page.title, "about:startup");
    assert.equal(page.origin, EXTENSION_ORIGIN, "the page runs with the extension's principal");
    assert.equal(page.baseURI, PAGE_URL, "relative URLs resolve against the extension page");
    assert.equal(page.mode, "full");
    assert.ok(page.rows.length > 0, "the milestones table has rows");
    assert.equal(page.timelineShown, true);
    assert.deepEqual([...page.marks, ...page.later], page.rows, "one timeline mark per milestone row, in the same order, or listed at the edge after the start's end");
    assert.ok(page.marks.includes("sessionRestored"), "the start itself is on the axis");
    assert.equal(page.labels.length, page.marks.length);
    for (const [i, label] of page.labels.entries()) {
      assert.ok(label.startsWith(`${page.rows[i]} `), `label ${label} names ${page.rows[i]}`);
    }
    assert.equal(page.svgRole, "img");
    assert.equal(page.svgTitle, "Timeline of this start");
    assert.match(page.svgDesc, new RegExp(`^${page.marks.length} milestones`));
    const url = await inChrome(driver, "arguments[0](gURLBar.value)");
    assert.equal(url, ABOUT, "the address bar says about:startup");
    // Not marked as Firefox's own UI (IS_SECURE_CHROME_UI): the identity box does not say
    // "Firefox"; the page is still a secure context (its principal is the extension's).
    const identity = await inChrome(
      driver,
      `arguments[0]({
         className: gIdentityHandler._identityBox.className,
         secureInternalUI: gIdentityHandler._isSecureInternalUI,
         label: document.getElementById("identity-icon-label")?.value ?? "",
         secureContext: gIdentityHandler._isSecureContext,
       })`,
    );
    assert.equal(identity.secureInternalUI, false, JSON.stringify(identity));
    assert.doesNotMatch(identity.className, /chromeUI|notSecure/, JSON.stringify(identity));
    assert.equal(identity.secureContext, true, JSON.stringify(identity));
    console.log(`about:startup identity box: ${JSON.stringify(identity)}`);
    await ctx.ff.screenshot("about-startup-full");
  });

  it("the timeline chart in light and dark (screenshots of the section)", async () => {
    const { driver } = ctx.ff;
    for (const [scheme, override] of [
      ["light", 1],
      ["dark", 0],
    ]) {
      // layout.css.prefers-color-scheme.content-override: 0 dark, 1 light, 2 system
      await inChrome(
        driver,
        `Services.prefs.setIntPref("layout.css.prefers-color-scheme.content-override", arguments[0]);
         arguments[1]()`,
        override,
      );
      const dark = await driver.executeScript("return matchMedia('(prefers-color-scheme: dark)').matches");
      assert.equal(dark, scheme === "dark");
      const section = await driver.findElement(By.id("timeline-section"));
      const png = await section.takeScreenshot();
      await fs.writeFile(path.join(artifactsFolder(), `timeline-${scheme}.png`), Buffer.from(png, "base64"));
      // labels are drawn in the page's text colour, which follows the scheme
      const [fill, fg] = await driver.executeScript(
        `return [getComputedStyle(document.querySelector("#timeline .timeline-labels text")).fill,
                 getComputedStyle(document.body).color]`,
      );
      assert.equal(fill, fg);
    }
    await inChrome(
      driver,
      `Services.prefs.clearUserPref("layout.css.prefers-color-scheme.content-override"); arguments[0]()`,
    );
  });

  it("no milestone's marker line strikes through another milestone's label, as Firefox renders them", async () => {
    const { driver } = ctx.ff;
    // Each drawn line against each label's box as Firefox laid the text out (getBBox), not as
    // the layout code estimated it; at the window's width and at a narrower one.
    const struck = () =>
      driver.executeScript(() => {
        const svg = document.querySelector("#timeline svg");
        const marks = [...svg.querySelectorAll(".timeline-mark")];
        const labels = [...svg.querySelectorAll(".timeline-labels text")];
        const out = [];
        labels.forEach((text, i) => {
          const box = text.getBBox();
          marks.forEach((mark, j) => {
            const line = mark.querySelector("line");
            const x = Number(line.getAttribute("x1"));
            const top = Math.min(Number(line.getAttribute("y1")), Number(line.getAttribute("y2")));
            const bottom = Math.max(Number(line.getAttribute("y1")), Number(line.getAttribute("y2")));
            if (i !== j && x > box.x && x < box.x + box.width && top < box.y + box.height && bottom > box.y) {
              out.push(`${mark.dataset.milestone} through "${text.textContent}"`);
            }
          });
        });
        return { width: Number(svg.getAttribute("width")), marks: marks.length, struck: out };
      });
    const original = await driver.manage().window().getRect();
    try {
      for (const width of [null, 900]) {
        if (width) {
          await driver.manage().window().setRect({ width, height: original.height });
          await waitFor(async () => (await struck()).width < width, { message: `the chart redrawn for a ${width}px window` });
        }
        const seen = await struck();
        assert.ok(seen.marks > 3, `${seen.marks} marks drawn`);
        const section = await driver.findElement(By.id("timeline-section"));
        await fs.writeFile(path.join(artifactsFolder(), `timeline-${seen.width}px.png`), Buffer.from(await section.takeScreenshot(), "base64"));
        assert.deepEqual(seen.struck, [], `a ${seen.width}px chart`);
      }
    } finally {
      await driver.manage().window().setRect(original);
    }
  });

  it("is registered in the parent and every content process", async () => {
    const state = await registeredEverywhere(ctx.ff.driver);
    assert.equal(state.parent, true);
    assert.ok(state.children.length >= 1, `content processes answered: ${JSON.stringify(state)}`);
    for (const child of state.children) {
      assert.equal(child.registered, true, `${child.remoteType}: ${JSON.stringify(state)}`);
    }
  });

  it("the omnibox keyword 'about-startup' opens about:startup", async () => {
    const { driver } = ctx.ff;
    const known = new Set(await driver.getAllWindowHandles());
    await omnibox(driver, "tab");
    await waitForNewTab(driver, ABOUT, known);
    await waitForPageReady(driver, "the omnibox tab");
    assert.equal((await readAboutPage(driver)).ours, true);
  });

  it("disable: about:startup tabs close and the address no longer loads the page, anywhere", async () => {
    const { driver } = ctx.ff;
    await driver.switchTo().window(ctx.home);
    assert.equal(await addonAction(driver, "disable"), "ok");
    await waitFor(async () => !(await tabs(driver)).some((tab) => tab.url === ABOUT), {
      message: "Firefox to close the about:startup tabs",
    });
    await driver.switchTo().window(ctx.home);
    const state = await registrations(driver);
    assert.equal(state.parent, false);
    assert.ok(state.children.every((child) => !child.registered), JSON.stringify(state));
    await assertNotOurPage(driver);
  });

  it("enable: about:startup works again", async () => {
    const { driver } = ctx.ff;
    assert.equal(await addonAction(driver, "enable"), "ok");
    const page = await waitFor(
      async () => {
        await driver.switchTo().window(ctx.home);
        return openAboutTab(driver).catch(async (error) => {
          await driver.close().catch(() => {});
          throw error;
        });
      },
      { timeout: 20000, interval: 500, message: "about:startup after enable" },
    );
    assert.equal(page.documentURI, ABOUT);
    assert.ok(page.rows.length > 0);
    assert.deepEqual([...page.marks, ...page.later], page.rows);
    const state = await registeredEverywhere(driver);
    assert.equal(state.parent, true);
    assert.ok(state.children.every((child) => child.registered), JSON.stringify(state));
  });

  it("reload (what an update does: shutdown, then startup with the same UUID): works again", async () => {
    const { driver } = ctx.ff;
    await driver.switchTo().window(ctx.home);
    assert.equal(await addonAction(driver, "reload"), "ok");
    const page = await waitFor(
      async () => {
        await driver.switchTo().window(ctx.home);
        return openAboutTab(driver).catch(async (error) => {
          await driver.close().catch(() => {});
          throw error;
        });
      },
      { timeout: 20000, interval: 500, message: "about:startup after reload" },
    );
    assert.equal(page.origin, EXTENSION_ORIGIN);
    assert.deepEqual([...page.marks, ...page.later], page.rows);
    const state = await registeredEverywhere(driver);
    assert.equal(state.parent, true);
    assert.ok(state.children.every((child) => child.registered), JSON.stringify(state));
  });

  it("uninstall: about:startup is gone from every process", async () => {
    const { driver } = ctx.ff;
    await driver.switchTo().window(ctx.home);
    assert.equal(await addonAction(driver, "uninstall"), "ok");
    await waitFor(async () => !(await tabs(driver)).some((tab) => tab.url === ABOUT), {
      message: "Firefox to close the about:startup tabs",
    });
    await driver.switchTo().window(ctx.home);
    const state = await registrations(driver);
    assert.equal(state.parent, false);
    assert.ok(state.children.every((child) => !child.registered), JSON.stringify(state));
    await assertNotOurPage(driver);
  });
});

describe("basic flavour (experiments off): no about:startup, the extension page works", () => {
  const ctx = useFirefox({ experiments: false, installHost: true, flavour: "basic" }, { prefix: "about-url-basic" });
  before(async () => {
    ctx.home = (await ctx.ff.driver.getAllWindowHandles())[0];
  });

  it("the temporary install lands on the moz-extension page", async () => {
    const { driver } = ctx.ff;
    await waitForNewTab(driver, PAGE_URL, new Set([ctx.home]));
    await waitForPageReady(driver, "the landing tab");
    const page = await readAboutPage(driver);
    assert.equal(page.mode, "basic");
    assert.equal(page.timelineShown, false, "no milestones, no chart");
    assert.deepEqual(page.marks, []);
  });

  it("about:startup is not registered anywhere and does not load", async () => {
    const { driver } = ctx.ff;
    await driver.switchTo().window(ctx.home);
    const state = await registrations(driver);
    assert.equal(state.parent, false);
    assert.ok(state.children.every((child) => !child.registered), JSON.stringify(state));
    await assertNotOurPage(driver);
  });

  it("the omnibox keyword opens the moz-extension page", async () => {
    const { driver } = ctx.ff;
    await driver.switchTo().window(ctx.home);
    const known = new Set(await driver.getAllWindowHandles());
    await omnibox(driver, "tab");
    await waitForNewTab(driver, PAGE_URL, known);
    await waitForPageReady(driver, "the omnibox tab");
    assert.equal((await readAboutPage(driver)).mode, "basic");
  });
});
