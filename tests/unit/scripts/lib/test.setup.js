// What `npm test` and `npm start` set up alone on a fresh machine, and where they stop for root.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ensureSetup, npmOn, planSetup, profilerCliInstalled, profilerNode, PROFILER_CLI_SOURCE, SetupError } from "../../../../scripts/lib/setup.mjs";
import { ROOT } from "../../../../scripts/lib/project.mjs";
import { findGeckodriver } from "../../../../scripts/lib/firefox.mjs";

const ALL = ["fmt", "clippy", "cargo-test", "eslint", "web-ext-lint", "unit", "host-release", "e2e"];
const everything = { nodeModules: true, cargo: true, rustup: true, rustfmt: true, clippy: true, firefox: true, geckodriver: true, node24: true, profilerCli: true };
const cmd = (step) => [step.command, ...step.args].join(" ");

test("a ready machine: nothing to do", () => {
  assert.deepEqual(planSetup(ALL, everything), { steps: [], root: [], missing: [] });
});

test("a fresh machine with rustup and firefox-esr: npm ci, rustup component add, geckodriver into the project cache", () => {
  const have = { ...everything, nodeModules: false, rustfmt: false, clippy: false, geckodriver: false };
  const plan = planSetup(ALL, have, { geckodriverCache: "/p/.cache/geckodriver" });
  assert.deepEqual(plan.steps.map(cmd), [
    "npm ci --no-audit --no-fund",
    "rustup component add rustfmt clippy",
    "cargo install --locked geckodriver --root /p/.cache/geckodriver",
  ]);
  assert.deepEqual(plan.root, []);
});

test("the e2e stage gets a Node ≥ 24 for the Profiler's loader from npm's node@24, into the project cache", () => {
  const plan = planSetup(["e2e"], { ...everything, node24: false }, { node24Cache: "/p/.cache/node24" });
  assert.deepEqual(plan.steps.map(cmd), ["npm install --no-save --no-package-lock --no-audit --no-fund --prefix /p/.cache/node24 node@24"]);
  assert.deepEqual(planSetup(["unit"], { ...everything, node24: false }).steps, [], "only e2e loads profiles");
  assert.equal(profilerNode({ version: "24.1.0", execPath: "/usr/bin/node" }), "/usr/bin/node");
  assert.match(profilerNode({ version: "20.20.2", execPath: "/usr/bin/node" }), /\.cache\/node24\/node_modules\/\.bin\/node$/);
});

test("the Profiler's loader: not a devDependency (npm ci on Node 20 warns of nothing), installed for e2e from its own lockfile by npm on Node 24", () => {
  // The README's first command must not warn EBADENGINE: no dependency of the project wants a
  // newer Node than package.json's engines allows.
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, "package-lock.json"), "utf8"));
  assert.equal(manifest.engines.node, ">=20");
  const wantNewer = Object.entries(lock.packages)
    .filter(([name, p]) => name && /^>=?\s*(2[1-9]|[3-9]\d)/.test(p.engines?.node ?? ""))
    .map(([name, p]) => `${name} (${p.engines.node})`);
  assert.deepEqual(wantNewer, [], "packages npm ci would warn EBADENGINE about on Node 20");
  // Its own manifest pins the version, its lockfile the integrity.
  const own = JSON.parse(fs.readFileSync(path.join(PROFILER_CLI_SOURCE, "package-lock.json"), "utf8"));
  const pinned = own.packages["node_modules/@firefox-devtools/profiler-cli"];
  assert.equal(pinned.version, JSON.parse(fs.readFileSync(path.join(PROFILER_CLI_SOURCE, "package.json"), "utf8")).dependencies["@firefox-devtools/profiler-cli"]);
  assert.match(pinned.integrity, /^sha512-/);

  const plan = planSetup(["e2e"], { ...everything, profilerCli: false }, { profilerCliCache: "/p/.cache/profiler-cli", npm: ["/p/node24", "/usr/lib/npm-cli.js"] });
  assert.deepEqual(plan.steps.map(cmd), ["/p/node24 /usr/lib/npm-cli.js ci --no-audit --no-fund --prefix /p/.cache/profiler-cli"]);
  assert.deepEqual(plan.steps[0].copy.files, ["package.json", "package-lock.json"]);
  assert.equal(plan.steps[0].copy.to, "/p/.cache/profiler-cli");
  assert.deepEqual(planSetup(["unit", "start"], { ...everything, profilerCli: false }).steps, [], "only e2e loads profiles");
});

test("profilerCliInstalled: only the pinned version counts; npmOn runs npm's script on the given node", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "profiler-cli-"));
  const pkg = path.join(tmp, "node_modules", "@firefox-devtools", "profiler-cli");
  assert.equal(profilerCliInstalled({ cache: tmp }), false, "nothing installed");
  fs.mkdirSync(pkg, { recursive: true });
  fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ version: "0.9.0" }));
  assert.equal(profilerCliInstalled({ cache: tmp }), false, "another version");
  fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ version: JSON.parse(fs.readFileSync(path.join(PROFILER_CLI_SOURCE, "package.json"), "utf8")).dependencies["@firefox-devtools/profiler-cli"] }));
  assert.equal(profilerCliInstalled({ cache: tmp }), true);
  // npm on PATH as a link to its script (Debian's, nodejs.org's, nvm's)
  const bin = path.join(tmp, "bin");
  fs.mkdirSync(path.join(tmp, "lib", "npm", "bin"), { recursive: true });
  fs.writeFileSync(path.join(tmp, "lib", "npm", "bin", "npm-cli.js"), "");
  fs.mkdirSync(bin);
  fs.symlinkSync(path.join(tmp, "lib", "npm", "bin", "npm-cli.js"), path.join(bin, "npm"));
  assert.deepEqual(npmOn("/n24", { PATH: bin }), ["/n24", fs.realpathSync(path.join(tmp, "lib", "npm", "bin", "npm-cli.js"))]);
  assert.deepEqual(npmOn("/n24", { PATH: path.join(tmp, "none") }), ["npm"]);
  fs.rmSync(tmp, { recursive: true, force: true });
});

test("only the stages asked for: --only fmt needs rustfmt, not clippy, geckodriver or Firefox", () => {
  const have = { ...everything, rustfmt: false, clippy: false, geckodriver: false, firefox: false };
  const plan = planSetup(["fmt"], have);
  assert.deepEqual(plan.steps.map(cmd), ["rustup component add rustfmt"]);
  assert.deepEqual(plan.root, []);
  assert.deepEqual(planSetup(["eslint", "unit"], { ...have, cargo: false }), { steps: [], root: [], missing: [] });
});

test("no Firefox: the e2e and npm start stop with the one root command", () => {
  for (const stages of [ALL, ["start"]]) {
    const plan = planSetup(stages, { ...everything, firefox: false });
    assert.deepEqual(plan.root.map((r) => r.command), ["apt-get install -y firefox-esr"]);
  }
});

test("no rustup: missing components are named, not installed", () => {
  const plan = planSetup(["clippy"], { ...everything, rustup: false, clippy: false });
  assert.deepEqual(plan.steps, []);
  assert.match(plan.missing[0].why, /clippy missing and no rustup/);
});

test("no cargo: says how to get Rust and plans no cargo step", () => {
  const plan = planSetup(ALL, { ...everything, cargo: false, geckodriver: false });
  assert.equal(plan.steps.length, 0);
  assert.match(plan.missing[0].command, /sh\.rustup\.rs/);
});

test("ensureSetup stops at once, before running any step, when root is needed", async () => {
  const have = { ...everything, nodeModules: false, firefox: false };
  await assert.rejects(
    ensureSetup(["e2e"], { have }),
    (error) => error instanceof SetupError && /run as root: {2}apt-get install -y firefox-esr/.test(error.message),
  );
});

test("geckodriver built into the project cache is found there", () => {
  const found = findGeckodriver({
    env: { PATH: "/a" },
    cache: "/p/.cache/geckodriver",
    isExecutable: (p) => p === "/p/.cache/geckodriver/bin/geckodriver",
  });
  assert.equal(found, "/p/.cache/geckodriver/bin/geckodriver");
});
