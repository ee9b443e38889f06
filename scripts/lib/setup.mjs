// A fresh machine, two commands: `npm start` and `npm test` set up what they can without root
// (node modules, geckodriver built into a project-local cache, rustfmt/clippy through rustup) and
// stop at once with the exact command for what needs root (Firefox from apt).
//
// planSetup() is the decision, a pure function of what is there (tests pass fakes);
// ensureSetup() looks at the machine and carries the plan out.
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { ROOT } from "./project.mjs";
import { findGeckodriver } from "./firefox.mjs";
import { findCandidates } from "./firefox-kind.mjs";
import { run } from "./run.mjs";

/** Where `cargo install --root` puts geckodriver: <project>/.cache/geckodriver/bin/geckodriver. */
export const GECKODRIVER_CACHE = path.join(ROOT, ".cache", "geckodriver");

/** The one command that builds geckodriver into the project's cache (what `npm test` runs when it is missing). */
export function geckodriverInstall(geckodriverCache = GECKODRIVER_CACHE) {
  return { command: "cargo", args: ["install", "--locked", "geckodriver", "--root", geckodriverCache] };
}

/**
 * What a script that drives Firefox says when geckodriver is missing: that command, to run
 * once, or where to point instead; never a stack trace or "run the whole e2e suite".
 */
export function geckodriverMissing(geckodriverCache = GECKODRIVER_CACHE) {
  const { command, args } = geckodriverInstall(geckodriverCache);
  return (
    "geckodriver not found (it drives Firefox). Build it once, a few minutes, into the project's cache " +
    `(${path.join(geckodriverCache, "bin")}, where the scripts and tests find it):\n  ${[command, ...args].join(" ")}\n` +
    "or set GECKODRIVER=/path/to/geckodriver, or put one on PATH."
  );
}

/**
 * A Node ≥ 24 for the Firefox Profiler's own loader (`@firefox-devtools/profiler-cli` needs it;
 * this project runs on Node ≥ 20): npm's `node` package, installed once into
 * <project>/.cache/node24 (the package fetches the official build for this platform).
 */
export const NODE24_CACHE = path.join(ROOT, ".cache", "node24");
const NODE24_BIN = path.join(NODE24_CACHE, "node_modules", ".bin", "node");

/** The node binary the profiler loader runs on: this one when it is ≥ 24, else the cached one. */
export function profilerNode({ version = process.versions.node, execPath = process.execPath } = {}) {
  return Number(version.split(".")[0]) >= 24 ? execPath : NODE24_BIN;
}

/**
 * The Firefox Profiler's loader itself, installed on demand (not a devDependency: it wants
 * Node ≥ 24, and `npm ci` on the Node 20 the README allows would warn EBADENGINE about it) from
 * its own manifest and lockfile (tests/e2e/profiler-cli/, version and integrity pinned) into
 * <project>/.cache/profiler-cli, by npm running on that Node ≥ 24.
 */
export const PROFILER_CLI_SOURCE = path.join(ROOT, "tests", "e2e", "profiler-cli");
export const PROFILER_CLI_CACHE = path.join(ROOT, ".cache", "profiler-cli");
const PROFILER_CLI_PACKAGE = path.join("node_modules", "@firefox-devtools", "profiler-cli");
/** The loader's entry point, run with profilerNode(). */
export const PROFILER_CLI = path.join(PROFILER_CLI_CACHE, PROFILER_CLI_PACKAGE, "dist", "profiler-cli.js");

/** Whether `cache` holds the loader at the version `source`'s manifest pins. */
export function profilerCliInstalled({ source = PROFILER_CLI_SOURCE, cache = PROFILER_CLI_CACHE } = {}) {
  try {
    const wanted = JSON.parse(fs.readFileSync(path.join(source, "package.json"), "utf8")).dependencies["@firefox-devtools/profiler-cli"];
    const have = JSON.parse(fs.readFileSync(path.join(cache, PROFILER_CLI_PACKAGE, "package.json"), "utf8")).version;
    return have === wanted;
  } catch {
    return false;
  }
}

/**
 * npm's own script, to run it on another node ([node, script]); ["npm"] when `npm` on PATH is
 * not a script (then it runs on its own node, and its engine warning is the setup's, not npm ci's).
 */
export function npmOn(node, env = process.env) {
  for (const dir of (env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
    try {
      const real = fs.realpathSync(path.join(dir, "npm"));
      return real.endsWith(".js") ? [node, real] : ["npm"];
    } catch {
      // not in this folder
    }
  }
  return ["npm"];
}

/** What each `npm test` stage needs besides node modules. */
const NEEDS = {
  fmt: ["cargo", "rustfmt"],
  clippy: ["cargo", "clippy"],
  "cargo-test": ["cargo"],
  "host-release": ["cargo"],
  e2e: ["cargo", "firefox", "geckodriver", "node24", "profilerCli"],
  start: ["cargo", "firefox"],
};

export class SetupError extends Error {
  constructor(message) {
    super(message);
    this.name = "SetupError";
  }
}

/**
 * Returns {steps: [{why, command, args}], root: [{why, command}], missing: [{why, command}]} for
 * the given stages. `have` says what is there: {nodeModules, cargo, rustup, rustfmt, clippy,
 * firefox, geckodriver, node24, profilerCli} (booleans). `root` lists what only root can install (the caller stops
 * with it); `missing` what a user can install but this script will not (Rust itself).
 */
export function planSetup(
  stages,
  have,
  { geckodriverCache = GECKODRIVER_CACHE, node24Cache = NODE24_CACHE, profilerCliCache = PROFILER_CLI_CACHE, npm = npmOn(NODE24_BIN) } = {},
) {
  const needs = new Set(stages.flatMap((stage) => NEEDS[stage] ?? []));
  const steps = [];
  const root = [];
  const missing = [];
  if (!have.nodeModules) {
    steps.push({ why: "node_modules is missing", command: "npm", args: ["ci", "--no-audit", "--no-fund"] });
  }
  if (needs.has("firefox") && !have.firefox) {
    root.push({ why: "no Firefox found", command: "apt-get install -y firefox-esr" });
  }
  if (needs.has("cargo") && !have.cargo) {
    missing.push({
      why: "cargo is missing (Rust ≥ 1.85; Debian 12's cargo package is too old)",
      command: "curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --component rustfmt,clippy",
    });
    return { steps, root, missing };
  }
  const components = ["rustfmt", "clippy"].filter((c) => needs.has(c) && !have[c]);
  if (components.length > 0) {
    if (have.rustup) {
      steps.push({
        why: `${components.join(" and ")} missing`,
        command: "rustup",
        args: ["component", "add", ...components],
      });
    } else {
      missing.push({
        why: `${components.join(" and ")} missing and no rustup to add them`,
        command: `install them with your Rust toolchain's package manager (e.g. as root: apt-get install -y ${components.map((c) => (c === "clippy" ? "rust-clippy" : "rustfmt")).join(" ")})`,
      });
    }
  }
  if (needs.has("geckodriver") && !have.geckodriver) {
    steps.push({ why: "geckodriver is not on PATH (a few minutes, once)", ...geckodriverInstall(geckodriverCache) });
  }
  if (needs.has("node24") && !have.node24) {
    steps.push({
      why: "the Firefox Profiler's loader (profiler-cli) needs Node ≥ 24",
      command: "npm",
      args: ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--prefix", node24Cache, "node@24"],
    });
  }
  if (needs.has("profilerCli") && !have.profilerCli) {
    steps.push({
      why: "the Firefox Profiler's loader (profiler-cli, pinned in tests/e2e/profiler-cli/) for the Profiler's e2e test, on that Node ≥ 24",
      // its manifest and lockfile go into the cache folder first; npm ci installs exactly those
      copy: { from: PROFILER_CLI_SOURCE, to: profilerCliCache, files: ["package.json", "package-lock.json"] },
      command: npm[0],
      args: [...npm.slice(1), "ci", "--no-audit", "--no-fund", "--prefix", profilerCliCache],
    });
  }
  return { steps, root, missing };
}

function succeeds(command, args) {
  const result = spawnSync(command, args, { stdio: "ignore" });
  return result.status === 0;
}

function onPath(name, env) {
  return (env.PATH ?? "").split(path.delimiter).some((dir) => {
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** What is on this machine, as planSetup wants it. */
export function probe(env = process.env) {
  const cargo = succeeds("cargo", ["--version"]);
  return {
    nodeModules: fs.existsSync(path.join(ROOT, "node_modules", ".package-lock.json")),
    cargo,
    rustup: onPath("rustup", env),
    rustfmt: cargo && succeeds("cargo", ["fmt", "--version"]),
    clippy: cargo && succeeds("cargo", ["clippy", "--version"]),
    firefox: Boolean(env.FIREFOX) || findCandidates({ env }).length > 0,
    geckodriver: findGeckodriver({ env }) !== null,
    node24: profilerNode() === process.execPath || succeeds(NODE24_BIN, ["-e", "process.exit(Number(process.versions.node.split('.')[0]) >= 24 ? 0 : 1)"]),
    profilerCli: profilerCliInstalled(),
  };
}

/** Sets up what `stages` need; throws SetupError naming the exact commands for the rest. */
export async function ensureSetup(stages, { env = process.env, have = probe(env) } = {}) {
  const plan = planSetup(stages, have);
  if (plan.root.length > 0 || plan.missing.length > 0) {
    const lines = [
      ...plan.root.map((r) => `${r.why}: run as root:  ${r.command}`),
      ...plan.missing.map((m) => `${m.why}: ${m.command}`),
    ];
    throw new SetupError(`cannot set this machine up alone:\n  ${lines.join("\n  ")}`);
  }
  for (const step of plan.steps) {
    console.log(`setup: ${step.why}: ${[step.command, ...step.args].join(" ")}`);
    if (step.copy) {
      fs.mkdirSync(step.copy.to, { recursive: true });
      for (const file of step.copy.files) {
        fs.copyFileSync(path.join(step.copy.from, file), path.join(step.copy.to, file));
      }
    }
    await run(step.command, step.args, { cwd: ROOT, env });
  }
}
