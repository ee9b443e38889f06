// npm start: from a fresh clone to Firefox showing the page, in one command.
//   1. npm ci if node_modules is missing
//   2. pick a Firefox (scripts/lib/firefox-kind.mjs): one that honours extension experiments
//      (ESR, Developer Edition, Nightly, self-built) runs the full flavour; else the basic flavour
//      runs on what there is (Release, Beta, Snap, Flatpak). One line says which, which flavour, why.
//   3. cargo build --release of the host, then `about-startup-host install` for this user (not
//      for a Snap or Flatpak: they reach native hosts only through the desktop portal)
//   4. web-ext run of the flavour in a fresh profile (experiments enabled for the full one);
//      the add-on opens its page on this temporary install.
// Options: --headless (pass -headless to Firefox), --no-host (skip step 3),
//          --firefox PATH (a binary or an install folder; overrides the choice, like $FIREFOX),
//          --flavour full|basic (force the flavour).
// Only node: built-ins are imported statically: web-ext may not be installed yet.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { EXTENSION_DIR, EXTENSION_ID, HOST_BINARY, HOST_MANIFEST_PATH, ROOT } from "./lib/project.mjs";
import { FirefoxNotFoundError } from "./lib/firefox.mjs";
import { chooseFirefox, label, profileTmpDir, summaryLine } from "./lib/firefox-kind.mjs";
import { CommandError, run } from "./lib/run.mjs";
import { ensureDependencies } from "./lib/deps.mjs";
import { ensureSetup, SetupError } from "./lib/setup.mjs";
import { hostPathLines } from "./lib/host-path.mjs";

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

/** Parses start's options; exported for the unit tests. */
export function parseArgs(args) {
  const value = (name) => {
    const i = args.indexOf(name);
    if (i < 0) {
      return null;
    }
    if (i + 1 >= args.length || args[i + 1].startsWith("--")) {
      throw new FirefoxNotFoundError(`${name} needs a value`);
    }
    return args[i + 1];
  };
  const flavour = value("--flavour");
  if (flavour && !["full", "basic"].includes(flavour)) {
    throw new FirefoxNotFoundError(`--flavour ${flavour}: use full or basic`);
  }
  return {
    headless: args.includes("--headless"),
    noHost: args.includes("--no-host"),
    firefox: value("--firefox"),
    flavour,
  };
}

async function main(args) {
  const options = parseArgs(args);
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
    console.log(`not building the host: ${choice.install.kind} Firefox cannot start it without the desktop portal`);
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
  const runner = await webExt.cmd.run(
    {
      sourceDir,
      firefox: choice.install.launch,
      target: ["firefox-desktop"],
      pref: choice.flavour === "full" ? { "extensions.experiments.enabled": true } : {},
      args: headless ? ["-headless"] : [],
      noReload: false,
    },
    { shouldExitProgram: false },
  );
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
  if (error instanceof FirefoxNotFoundError || error instanceof CommandError || error instanceof SetupError) {
    console.error(`npm start: ${error.message}`);
  } else {
    console.error(error);
  }
  process.exit(1);
}
