// npm start: from a fresh clone to Firefox showing the page, in one command.
//   1. npm ci if node_modules is missing
//   2. find a Firefox ($FIREFOX, then firefox, firefox-esr, firefox-developer-edition, firefox-nightly)
//   3. cargo build --release of the host, then `about-startup-host install` for this user
//   4. web-ext run of extension/ (the full flavour) in a fresh profile with experiments enabled;
//      the add-on opens its page on this temporary install.
// Options: --headless (pass -headless to Firefox), --no-host (skip steps 3).
// Only node: built-ins are imported statically: web-ext may not be installed yet.
import path from "node:path";
import { EXTENSION_DIR, EXTENSION_ID, HOST_BINARY, HOST_MANIFEST_PATH, ROOT } from "./lib/project.mjs";
import { findFirefox, FirefoxNotFoundError } from "./lib/firefox.mjs";
import { CommandError, run } from "./lib/run.mjs";
import { ensureDependencies } from "./lib/deps.mjs";

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
}

async function main(args) {
  const headless = args.includes("--headless");
  const firefox = findFirefox();
  console.log(`Firefox: ${firefox}`);
  await ensureDependencies();
  if (!args.includes("--no-host")) {
    await installHost();
  }
  const { default: webExt } = await import("web-ext");
  await webExt.cmd.run(
    {
      sourceDir: EXTENSION_DIR,
      firefox,
      target: ["firefox-desktop"],
      pref: { "extensions.experiments.enabled": true },
      args: headless ? ["-headless"] : [],
      noReload: false,
    },
    { shouldExitProgram: false },
  );
}

main(process.argv.slice(2)).catch((error) => {
  if (error instanceof FirefoxNotFoundError || error instanceof CommandError) {
    console.error(`npm start: ${error.message}`);
  } else {
    console.error(error);
  }
  process.exit(1);
});
