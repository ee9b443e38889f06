// npm start: from a fresh clone to Firefox showing the page, in one command.
//   0. refuse at once what cannot work: an unknown option (usage error, exit 2), no display
//      without --headless (exit 1); --help prints the options (scripts/lib/start-options.mjs)
//   1. npm ci if node_modules is missing
//   2. pick a Firefox (scripts/lib/firefox-kind.mjs): one that honours extension experiments
//      (ESR, Developer Edition, Nightly, self-built) runs the full flavour; else the basic flavour
//      runs on what there is (Release, Beta, Snap, Flatpak). One line says which, which flavour, why.
//   3. cargo build --release of the host, then `about-startup-host install` for this user (a Snap
//      reaches it through the desktop's WebExtensions portal, a Flatpak from Firefox 157 on through
//      xdg-native-messaging-proxy; not for an older Flatpak, which has no way to a native host)
//   4. web-ext run of the flavour in a fresh profile (experiments enabled for the full one);
//      the add-on opens its page on this temporary install. A Firefox that exits before web-ext
//      reaches it ends npm start at once, with its last stderr lines (scripts/lib/firefox-exit.mjs).
// Only node: built-ins are imported statically: web-ext may not be installed yet.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { EXTENSION_DIR, EXTENSION_ID, HOST_BINARY, HOST_MANIFEST_PATH, ROOT } from "./lib/project.mjs";
import { FirefoxNotFoundError } from "./lib/firefox.mjs";
import { chooseFirefox, kindNote, label, profileTmpDir, summaryLine } from "./lib/firefox-kind.mjs";
import { CommandError, run } from "./lib/run.mjs";
import { ensureDependencies } from "./lib/deps.mjs";
import { ensureSetup, SetupError } from "./lib/setup.mjs";
import { hostPathLines } from "./lib/host-path.mjs";
import { displayProblem, parseStartArgs, UsageError, USAGE } from "./lib/start-options.mjs";
import { FirefoxExitedError, watchFirefox, webExtFirefoxApp } from "./lib/firefox-exit.mjs";

/** A reason npm start cannot go on that is no one command's failure (no display). */
class StartError extends Error {
  constructor(message) {
    super(message);
    this.name = "StartError";
  }
}

async function installHost() {
  console.log("building the native host (cargo build --release)");
  await run("cargo", ["build", "--release", "--manifest-path", HOST_MANIFEST_PATH], { cwd: ROOT }).catch((error) => {
    if (error.status === 127) {
      error.message += " (install Rust ≥ 1.85 with rustup, https://rustup.rs: Debian 12's cargo package is too old)";
    }
    throw error;
  });
  console.log(`registering it for this user: ${path.relative(ROOT, HOST_BINARY)} install`);
  await run(HOST_BINARY, ["install", "--extension-id", EXTENSION_ID], { cwd: ROOT });
  for (const line of hostPathLines(HOST_BINARY)) {
    console.log(line);
  }
}

async function main(args) {
  const options = parseStartArgs(args);
  if (options.help) {
    console.log(USAGE);
    return null;
  }
  const noDisplay = displayProblem({ headless: options.headless, env: process.env });
  if (noDisplay) {
    throw new StartError(noDisplay);
  }
  let choice;
  try {
    choice = chooseFirefox({ override: options.firefox ?? process.env.FIREFOX ?? null, flavour: options.flavour });
  } catch (error) {
    throw new FirefoxNotFoundError(error.message);
  }
  console.log(summaryLine(choice));
  await ensureDependencies();
  if (!options.noHost && choice.host) {
    await ensureSetup(["start"]);
  }
  if (!options.noHost && choice.host) {
    await installHost();
  } else if (!choice.host) {
    console.log(`not building the host: ${kindNote(choice.install)}`);
  }
  let sourceDir = EXTENSION_DIR;
  if (choice.flavour === "basic") {
    const { stageFlavour } = await import("./build.mjs");
    sourceDir = (await stageFlavour("basic")).dir;
  }
  const tmp = profileTmpDir(choice.install);
  if (tmp) {
    // web-ext makes its temporary profile in os.tmpdir(), which reads TMPDIR.
    fs.mkdirSync(tmp, { recursive: true });
    process.env.TMPDIR = tmp;
    console.log(`Snap: the temporary profile goes to ${tmp} (a Snap cannot read the host's /tmp)`);
  }
  const { default: webExt } = await import("web-ext");
  const headless = options.headless;
  const firefox = watchFirefox(await webExtFirefoxApp());
  const started = webExt.cmd.run(
    {
      sourceDir,
      firefox: choice.install.launch,
      target: ["firefox-desktop"],
      pref: choice.flavour === "full" ? { "extensions.experiments.enabled": true } : {},
      args: headless ? ["-headless"] : [],
      noReload: false,
    },
    { firefoxApp: firefox.app },
  );
  // Whichever comes first: web-ext reached Firefox, or Firefox ended (then web-ext would wait
  // about 30 s more for it and end in ECONNREFUSED).
  const runner = await Promise.race([started, firefox.exited]);
  // The last line says what happened and how to stop it (web-ext's own last lines are about
  // reloading); when Firefox is closed, web-ext ends and so does this command.
  const page = choice.flavour === "full" ? "about:startup" : "the about:startup page (the add-on's moz-extension:// page: basic flavour)";
  console.log(`\n${page} is open in ${headless ? "headless " : ""}${label(choice.install)}. Ctrl-C here stops Firefox and npm start.`);
  return runner;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch(fail);
}

function fail(error) {
  if (error instanceof UsageError) {
    console.error(`npm start: ${error.message}\n(npm start -- --help lists the options)`);
    process.exit(2);
  }
  if (error instanceof FirefoxExitedError) {
    // Firefox says why in its own words ("Error: no DISPLAY environment variable specified").
    const display = error.lines.some((line) => /display/i.test(line));
    console.error(`npm start: ${error.message}${display ? "\nRun it without a window: npm start -- --headless" : ""}`);
  } else if ([FirefoxNotFoundError, CommandError, SetupError, StartError].some((kind) => error instanceof kind)) {
    console.error(`npm start: ${error.message}`);
  } else {
    console.error(error);
  }
  process.exit(1);
}
