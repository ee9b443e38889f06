// npm run lint: ESLint on the JS, then web-ext lint on both built flavours
// (full with --privileged because of experiment_apis; basic must be clean without it).
import path from "node:path";
import { pathToFileURL } from "node:url";
import { FLAVOURS, ROOT } from "./lib/project.mjs";
import { run } from "./lib/run.mjs";
import { stageFlavour } from "./build.mjs";

export async function eslint() {
  await run(process.execPath, [path.join(ROOT, "node_modules", "eslint", "bin", "eslint.js"), "."], { cwd: ROOT });
}

/** Stages each flavour into dist/<flavour>/ and lints it with warnings as errors. */
export async function webExtLint() {
  const { default: webExt } = await import("web-ext");
  for (const flavour of FLAVOURS) {
    const { dir } = await stageFlavour(flavour);
    const privileged = flavour === "full";
    console.log(`web-ext lint ${path.relative(ROOT, dir)}${privileged ? " --privileged" : ""}`);
    const result = await webExt.cmd.lint(
      {
        sourceDir: dir,
        privileged,
        warningsAsErrors: true,
        selfHosted: false,
        output: "text",
      },
      { shouldExitProgram: false },
    );
    const problems = (result?.errors?.length ?? 1) + (result?.warnings?.length ?? 0);
    if (problems > 0) {
      throw new Error(`web-ext lint found ${problems} problem(s) in the ${flavour} flavour`);
    }
  }
}

async function main() {
  await eslint();
  await webExtLint();
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(`lint failed: ${error.message}`);
    process.exit(1);
  });
}
