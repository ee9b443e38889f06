// npm run build: dist/ with both flavours of the extension (unpacked and .xpi), the release host
// binary and the host manifest templates.
//   node scripts/build.mjs            everything
//   node scripts/build.mjs --no-host  only the extension flavours (what lint needs)
import fs from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { DIST_DIR, EXTENSION_DIR, FLAVOURS, HOST_BINARY, HOST_MANIFEST_PATH, ROOT } from "./lib/project.mjs";
import { flavourManifest, includeInFlavour } from "./lib/flavours.mjs";
import { run } from "./lib/run.mjs";

async function listFiles(dir, base = dir) {
  const out = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".")) {
      continue;
    }
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      out.push(...(await listFiles(full, base)));
    } else if (entry.isFile()) {
      out.push(path.relative(base, full).split(path.sep).join("/"));
    }
  }
  return out.sort();
}

export async function readManifest(sourceDir = EXTENSION_DIR) {
  return JSON.parse(await fs.readFile(path.join(sourceDir, "manifest.json"), "utf8"));
}

export function stageDir(flavour, distDir = DIST_DIR) {
  return path.join(distDir, flavour);
}

export function xpiPath(flavour, version, distDir = DIST_DIR) {
  return path.join(distDir, `about-startup-${flavour}-${version}.xpi`);
}

/** Copies extension/ into dist/<flavour>/ with that flavour's manifest and files. */
export async function stageFlavour(flavour, { sourceDir = EXTENSION_DIR, distDir = DIST_DIR } = {}) {
  const manifest = await readManifest(sourceDir);
  const target = stageDir(flavour, distDir);
  await fs.rm(target, { recursive: true, force: true });
  for (const file of await listFiles(sourceDir)) {
    if (file === "manifest.json" || !includeInFlavour(file, manifest, flavour)) {
      continue;
    }
    await fs.mkdir(path.dirname(path.join(target, file)), { recursive: true });
    await fs.copyFile(path.join(sourceDir, file), path.join(target, file));
  }
  const staged = flavourManifest(manifest, flavour);
  await fs.writeFile(path.join(target, "manifest.json"), `${JSON.stringify(staged, null, 2)}\n`);
  return { dir: target, version: manifest.version };
}

/** Stages both flavours and packs each into dist/about-startup-<flavour>-<version>.xpi. */
export async function buildExtension({ distDir = DIST_DIR } = {}) {
  const { default: webExt } = await import("web-ext");
  const built = {};
  for (const flavour of FLAVOURS) {
    const { dir, version } = await stageFlavour(flavour, { distDir });
    const xpi = xpiPath(flavour, version, distDir);
    await webExt.cmd.build(
      {
        sourceDir: dir,
        artifactsDir: distDir,
        filename: path.basename(xpi),
        overwriteDest: true,
      },
      { showReadyMessage: false },
    );
    built[flavour] = { dir, xpi };
  }
  return built;
}

/** cargo build --release of the host; copies the binary and manifests/ into dist/. */
export async function buildHost({ distDir = DIST_DIR } = {}) {
  await run("cargo", ["build", "--release", "--manifest-path", HOST_MANIFEST_PATH]);
  await fs.mkdir(distDir, { recursive: true });
  await fs.copyFile(HOST_BINARY, path.join(distDir, path.basename(HOST_BINARY)));
  const templates = path.join(ROOT, "manifests");
  const files = await listFiles(templates).catch(() => []);
  if (files.length > 0) {
    await fs.cp(templates, path.join(distDir, "manifests"), { recursive: true });
  }
  return path.join(distDir, path.basename(HOST_BINARY));
}

async function main(args) {
  const withHost = !args.includes("--no-host");
  await fs.mkdir(DIST_DIR, { recursive: true });
  const built = await buildExtension();
  for (const { xpi } of Object.values(built)) {
    console.log(`built ${path.relative(ROOT, xpi)}`);
  }
  if (withHost) {
    const host = await buildHost();
    console.log(`built ${path.relative(ROOT, host)}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(`build failed: ${error.message}`);
    process.exit(1);
  });
}
