// npm test: every check, in order, stopping at the first failure, with the time each took
// (after `npm ci` when node_modules is missing, and after setting up what the chosen stages need
// and a user can install: scripts/lib/setup.mjs; so it works right after a clone).
//   node scripts/test.mjs                 all stages
//   node scripts/test.mjs --only unit,e2e only the named stages (names as printed)
//   node scripts/test.mjs --only e2e --files tests/e2e/test.popup.js   only these test files
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { HOST_MANIFEST_PATH, ROOT } from "./lib/project.mjs";
import { describeLeftovers, endLeftovers, fileCgroup, leftovers, MARKER } from "./lib/leftovers.mjs";
import { run } from "./lib/run.mjs";
import { rootOnlyRustTestFiles, testFiles } from "./lib/test-files.mjs";
import { eslint, webExtLint } from "./lint.mjs";
import { buildHost } from "./build.mjs";
import { ensureDependencies } from "./lib/deps.mjs";
import { stageInstallCopy } from "./lib/install-copy.mjs";
import { ensureSetup, SetupError } from "./lib/setup.mjs";

const cargo = (...args) => () => run("cargo", [...args], { cwd: ROOT });
const M = ["--manifest-path", HOST_MANIFEST_PATH];

/**
 * The host's test files with tests that need root (#[ignore]d in ordinary runs), and the
 * library's own (unit tests in src/: `--lib`).
 */
const ROOT_TEST_FILES = rootOnlyRustTestFiles(path.join(ROOT, "native-host", "tests"));

/**
 * The host's tests that need root (a root-owned file seen as `nobody`, switching users) are
 * #[ignore]d in ordinary runs, so a run without root says "ignored", never "ok"; as root (CI
 * is) they run here. Without root this says SKIPPED, never passes.
 */
async function rootOnlyTests() {
  const targets = [["--lib"], ...ROOT_TEST_FILES.map((f) => ["--test", f])];
  if (process.getuid?.() !== 0) {
    console.log(`SKIPPED: not root; the host's root-only tests (src/ unit tests marked #[ignore], ${ROOT_TEST_FILES.map((f) => `tests/${f}.rs`).join(", ")}) need root: run npm test as root to include them`);
    return;
  }
  for (const target of targets) {
    await run("cargo", ["test", ...M, ...target, "--", "--ignored"], { cwd: ROOT });
  }
}

// --files: only these test files of the stages that run (the rest of each stage's folder is left out).
let onlyFiles = null;

function nodeTest(dir, extra = [], env = () => process.env) {
  return () => {
    const all = testFiles(path.join(ROOT, dir));
    const files = onlyFiles ? all.filter((file) => onlyFiles.has(file)) : all;
    if (onlyFiles && files.length === 0) {
      console.log(`no --files under ${dir}: stage left out`);
      return Promise.resolve();
    }
    if (files.length === 0) {
      throw new Error(`no test.*.js files under ${dir}`);
    }
    return run(process.execPath, ["--test", ...extra, ...files], { cwd: ROOT, env: env() });
  };
}

const STAGES = [
  ["fmt", "cargo fmt --check", cargo("fmt", ...M, "--check")],
  ["clippy", "cargo clippy --all-targets -- -D warnings", cargo("clippy", ...M, "--all-targets", "--", "-D", "warnings")],
  ["cargo-test", "cargo test", cargo("test", ...M)],
  ["cargo-test-root", "cargo test -- --ignored (the tests that need root)", rootOnlyTests],
  ["eslint", "eslint .", eslint],
  ["web-ext-lint", "web-ext lint (full --privileged, basic)", webExtLint],
  ["unit", "node --test tests/unit", nodeTest("tests/unit")],
  ["host-release", "cargo build --release (the e2e tests use the real host)", buildHost],
  ["e2e", "node --test tests/e2e, one file at a time, each checked for what it left running", e2eFiles],
];

// One artifacts folder per run (screenshots, Firefox/geckodriver logs), named up front so it can
// be printed at the end whatever happened.
const artifacts =
  process.env.E2E_ARTIFACTS_DIR ?? path.join(ROOT, "artifacts", `e2e-${new Date().toISOString().replace(/[:.]/g, "-")}`);
let e2eStarted = false;

function e2eEnv() {
  e2eStarted = true;
  // A copy of Firefox's install folder for the e2e suites to evict and preload, not the
  // system's own (scripts/lib/install-copy.mjs). E2E_SYSTEM_FIREFOX=1 runs the system's.
  if (process.env.E2E_SYSTEM_FIREFOX === "1") {
    return { ...process.env, E2E_ARTIFACTS_DIR: artifacts };
  }
  const copy = stageInstallCopy();
  if (!copy.binary) {
    console.log(`e2e: running the system Firefox: ${copy.reason}`);
    return { ...process.env, E2E_ARTIFACTS_DIR: artifacts };
  }
  process.on("exit", copy.remove);
  process.once("SIGINT", () => {
    copy.remove();
    process.exit(130);
  });
  console.log(`e2e: on a copy of ${copy.original}'s install folder: ${copy.dir} (removed afterwards)`);
  return { ...process.env, E2E_ARTIFACTS_DIR: artifacts, FIREFOX: copy.binary };
}

/** The e2e files this run takes (--files picks some). */
function e2eFileList() {
  const all = testFiles(path.join(ROOT, "tests/e2e"));
  return onlyFiles ? all.filter((file) => onlyFiles.has(file)) : all;
}

/**
 * Runs one e2e file in its own `node --test`, marked and given private temporary folders
 * (TMPDIR, and E2E_VAR_TMPDIR for the harness's privateInstall), then looks for what it left:
 * a process or mount of the file's still there after it ended is the file's failure, named,
 * and is ended then (scripts/lib/leftovers.mjs). Another user's Firefox is not the file's.
 * Returns the reasons it failed (none: passed).
 */
async function e2eFile(file, env) {
  const name = path.basename(file);
  const marker = `${name}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `about-startup-e2e-${name}-`));
  // Like /tmp: the tests hand folders in it to other users (nobody).
  fs.chmodSync(tmp, 0o1777);
  const varTmp = fs.mkdtempSync(path.join("/var/tmp", `about-startup-e2e-${name}-`));
  fs.chmodSync(varTmp, 0o1777);
  const dirs = [tmp, varTmp];
  // A cgroup of the file's own (root): what pkexec starts keeps it, though not the marker.
  const group = fileCgroup(`${name}-${marker.split(":").slice(1).join("-")}`);
  const failures = [];
  try {
    const command = [process.execPath, "--test", "--test-concurrency=1", file];
    // Moved in before node starts: everything the file starts is born there.
    const [program, args] = group ? ["/bin/sh", ["-c", 'echo $$ > "$0" || echo "e2e: not moved into $0: what pkexec starts is not found as the file\'s" >&2; exec "$@"', group.procs, ...command]] : [command[0], command.slice(1)];
    await run(program, args, {
      cwd: ROOT,
      env: { ...env, TMPDIR: tmp, E2E_VAR_TMPDIR: varTmp, [MARKER]: marker },
    });
  } catch {
    failures.push("tests failed");
  }
  const cgroup = group?.path ?? null;
  // What is still ending by itself (a Firefox told to quit as the file ended) gets 5 s.
  let found = leftovers({ marker, dirs, cgroup });
  for (let i = 0; i < 25 && found.processes.length > 0 && found.mounts.length + found.loops.length === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    found = leftovers({ marker, dirs, cgroup });
  }
  const lines = describeLeftovers(found);
  if (lines.length > 0) {
    console.error(`\ne2e: ${name} left running when it ended (a failure of ${name}; ended now):\n  ${lines.join("\n  ")}`);
    failures.push(`left ${lines.length} running: ${lines.join("; ")}`);
    await endLeftovers(found);
  }
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  group?.remove();
  return failures;
}

async function e2eFiles() {
  const files = e2eFileList();
  if (files.length === 0) {
    if (onlyFiles) {
      console.log("no --files under tests/e2e: stage left out");
      return;
    }
    throw new Error("no test.*.js files under tests/e2e");
  }
  const env = e2eEnv();
  const failed = [];
  for (const file of files) {
    const failures = await e2eFile(file, env);
    if (failures.length > 0) failed.push(`${path.relative(ROOT, file)} (${failures.join("; ")})`);
  }
  if (failed.length > 0) {
    throw new Error(`${failed.length} of ${files.length} e2e files failed:\n  ${failed.join("\n  ")}`);
  }
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

const USAGE = `npm test [-- --only STAGE[,STAGE…]] [--files FILE[,FILE…]]: every check, in order, stopping at
the first failure. --files runs only those test files in the unit and e2e stages.
Stages:
${STAGES.map(([name, label]) => `  ${name.padEnd(16)}${label}`).join("\n")}`;

/** --only's stage set (null: all stages); --help prints the stages; anything else is an error. */
function parseArgs(args) {
  let only = null;
  for (let i = 0; i < args.length; i += 1) {
    if (args[i] === "--help" || args[i] === "-h") {
      console.log(USAGE);
      process.exit(0);
    } else if (args[i] === "--only" && args[i + 1]) {
      only = new Set(args[++i].split(","));
      const unknown = [...only].filter((name) => !STAGES.some(([stage]) => stage === name));
      if (unknown.length > 0) {
        throw new Error(`no stage named ${unknown.join(", ")}\n${USAGE}`);
      }
    } else if (args[i] === "--files" && args[i + 1]) {
      onlyFiles = new Set(args[++i].split(",").map((file) => path.resolve(file)));
    } else {
      throw new Error(`unknown argument ${args[i]}\n${USAGE}`);
    }
  }
  return only;
}

async function main(args) {
  let only;
  try {
    only = parseArgs(args);
  } catch (error) {
    console.error(`npm test: ${error.message}`);
    process.exit(2);
  }
  const done = [];
  await ensureDependencies();
  // geckodriver into .cache/, rustfmt/clippy through rustup; stops with the root command for Firefox.
  const selected = STAGES.map(([name]) => name).filter((name) => !only || only.has(name));
  try {
    await ensureSetup(selected);
  } catch (error) {
    console.error(`\nnpm test: ${error instanceof SetupError ? error.message : error.stack}`);
    process.exit(1);
  }
  for (const [name, label, stage] of STAGES) {
    if (only && !only.has(name)) {
      continue;
    }
    console.log(`\n=== ${name}: ${label}`);
    const started = performance.now();
    try {
      await stage();
    } catch (error) {
      const took = performance.now() - started;
      console.error(`\n=== ${name} FAILED after ${seconds(took)}: ${error.message}`);
      report(done);
      process.exit(1);
    }
    done.push([name, performance.now() - started]);
  }
  report(done);
}

function report(done) {
  console.log("\n=== stage times");
  for (const [name, ms] of done) {
    console.log(`${name.padEnd(14)} ${seconds(ms)}`);
  }
  if (e2eStarted) {
    console.log(`\ne2e screenshots and logs: ${path.relative(ROOT, artifacts)}/`);
  }
}

main(process.argv.slice(2));
