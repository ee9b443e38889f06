#!/usr/bin/env node
// Retakes the README's picture of the page (docs/screenshot.png, issue 30 #18) the way an
// ordinary person meets it: a clean first start of Firefox from its install folder, run by an
// ordinary user (nobody: the kernel hides the residency of root's files, as it does from most
// users), with the release host in that user's ~/.local/bin (on PATH) and registered there with
// `about-startup-host install`. No build folder of this machine appears on the page.
//
//   node scripts/screenshot.mjs [OUT.png]     (root: it hands Firefox to another user)
//
// Look at the picture before committing it.
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startFirefox, waitFor, waitForPageReady } from "../tests/e2e/harness.js";
import { EXTENSION_ID, HOST_BINARY, ROOT } from "./lib/project.mjs";
import { run } from "./lib/run.mjs";

const NOBODY = 65534;
const out = path.resolve(process.argv[2] ?? path.join(ROOT, "docs", "screenshot.png"));

if (process.getuid?.() !== 0) {
  console.error("screenshot.mjs: run it as root (Firefox runs as the user nobody)");
  process.exit(1);
}
if (!fs.existsSync(HOST_BINARY)) {
  console.error(`screenshot.mjs: ${HOST_BINARY} is missing: cargo build --release --manifest-path native-host/Cargo.toml`);
  process.exit(1);
}

const userPath = "$HOME/.local/bin:/usr/local/bin:/usr/bin:/bin";
const ff = await startFirefox({
  experiments: true,
  installHost: false,
  flavour: "full",
  user: NOBODY,
  firefox: "/usr/lib/firefox-esr/firefox-esr",
  env: { PATH: userPath },
});
try {
  // Installed as the user would: the binary in ~/.local/bin, then its own `install`.
  const bin = path.join(ff.home, ".local", "bin");
  await fsp.mkdir(bin, { recursive: true });
  const host = path.join(bin, "about-startup-host");
  await fsp.copyFile(HOST_BINARY, host);
  await fsp.chmod(host, 0o755);
  await run("chown", ["-R", `${NOBODY}:${NOBODY}`, path.join(ff.home, ".local")]);
  await run(
    "setpriv",
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "env", "-i", `HOME=${ff.home}`,
      `PATH=${userPath.replace("$HOME", ff.home)}`, host, "install", "--extension-id", EXTENSION_ID],
    { stdio: ["ignore", "inherit", "inherit"] },
  );
  const { driver } = ff;
  await driver.switchTo().newWindow("tab");
  await driver.get("about:startup");
  await waitForPageReady(driver, "about:startup");
  // The host's sections fill in after the first render: wait until it answered.
  const hostState = () => driver.executeScript("return document.getElementById('host')?.dataset.state");
  await waitFor(async () => (await hostState()) !== "connecting", { timeout: 30000, message: "the host to answer" });
  if ((await hostState()) !== "connected") {
    throw new Error(`the page's host section says ${await hostState()}, not connected`);
  }
  await sleep(3000);
  const data = await driver.takeFullPageScreenshot();
  await fsp.writeFile(out, Buffer.from(data, "base64"));
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
} finally {
  await ff.stop();
}
