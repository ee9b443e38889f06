// The realistic profile's add-ons: synthetic, but they load and run at startup like real ones.
// Each has a background script of its kind's size that runs its code and reads all of its
// storage.local at every start (writing it on its first start), a content script on every page
// (when its kind has one) that marks the page and asks the background for its state, and asset
// files it ships but does not load at startup (data lists, icons). Sources are made here and
// packed into an .xpi with JSZip at a fixed date, so the same seed gives the same bytes. Pure
// except packXpi's result being bytes.
import JSZip from "jszip";
import { iconPng } from "./icons.mjs";
import { stream } from "./random.mjs";

/** The share of an add-on's assets that is incompressible (assumed). */
const BINARY_SHARE = 0.6;

/** The date every file in an .xpi carries: fixed, so the archive depends only on its files. */
const ZIP_DATE = new Date(Date.UTC(2025, 0, 1));

/** The attribute a content script of add-on `kind` sets on the page's root element. */
export function injectedAttribute(kind) {
  return `data-synthetic-${kind}`;
}

/** The attribute that carries the background's answer (its storage bytes) into the page. */
export function answerAttribute(kind) {
  return `data-synthetic-${kind}-storage`;
}

/** The storage.local key an add-on writes last on its first start: its data is complete. */
export const FILLED_KEY = "synthetic:filled";

/**
 * About `bytes` of JavaScript: functions over word tables, each called once at load, so the
 * engine parses, compiles and runs all of it as it does an add-on's bundle.
 */
export function generatedCode(r, bytes, prefix) {
  const parts = [`"use strict";\nconst ${prefix}_fns = [];\n`];
  let size = parts[0].length;
  for (let n = 0; size < bytes; n++) {
    const words = Array.from({ length: r.int(4, 12) }, () => JSON.stringify(r.words(1))).join(", ");
    const name = `${prefix}_${r.token(4)}_${n}`;
    const unit = `function ${name}(x) {
  const table = [${words}];
  let n = x | 0;
  for (const w of table) n = (n * 31 + w.length + ${r.int(1, 9999)}) % 1000003;
  return n;
}
${prefix}_fns.push(${name});
`;
    parts.push(unit);
    size += unit.length;
  }
  parts.push(`let ${prefix}_acc = 0;\nfor (const f of ${prefix}_fns) ${prefix}_acc = (${prefix}_acc + f(${prefix}_acc)) % 1000003;\n`);
  return parts.join("");
}

/** The background's own logic, after its bulk: first-start fill, read at every start, answers. */
function backgroundLogic(ext) {
  return `
// --- what the add-on does at every start ---
const SYNTHETIC = ${JSON.stringify({ id: ext.id, kind: ext.kind, storageBytes: ext.storageBytes, seed: ext.seed })};
const FILLED_KEY = ${JSON.stringify(FILLED_KEY)};

// Its first start writes its data (filter lists, a vault, saved tabs…): text made from its seed,
// in values of up to 256 KB, as add-ons keep lists and caches.
function mulberry32(a) {
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const VOCABULARY = ${JSON.stringify(VOCABULARY)};
async function fill() {
  const random = mulberry32(SYNTHETIC.seed);
  const items = {};
  let left = SYNTHETIC.storageBytes;
  for (let key = 0; left > 0; key++) {
    const size = Math.min(left, 256 * 1024);
    const words = [];
    for (let length = 0; length < size; ) {
      const w = VOCABULARY[Math.floor(random() * VOCABULARY.length)];
      words.push(w);
      length += w.length + 1;
    }
    items["data-" + String(key).padStart(4, "0")] = words.join(" ").slice(0, size);
    left -= size;
  }
  await browser.storage.local.set(items);
  await browser.storage.local.set({ [FILLED_KEY]: { bytes: SYNTHETIC.storageBytes } });
}

const state = (async () => {
  const started = performance.now();
  let all = await browser.storage.local.get(null);
  if (!all[FILLED_KEY]) {
    await fill();
    all = await browser.storage.local.get(null);
  }
  let bytes = 0;
  for (const value of Object.values(all)) bytes += typeof value === "string" ? value.length : JSON.stringify(value).length;
  return { id: SYNTHETIC.id, storageBytes: bytes, keys: Object.keys(all).length, readMs: performance.now() - started };
})();

browser.runtime.onStartup.addListener(() => {});
browser.runtime.onMessage.addListener((message) => {
  if (message && message.type === "synthetic-ping") {
    return state;
  }
  return undefined;
});
`;
}

function contentLogic(ext) {
  return `
// --- what the content script does on every page ---
document.documentElement.setAttribute(${JSON.stringify(injectedAttribute(ext.kind))}, "injected");
browser.runtime.sendMessage({ type: "synthetic-ping" }).then((answer) => {
  document.documentElement.setAttribute(${JSON.stringify(answerAttribute(ext.kind))}, String(answer.storageBytes));
});
`;
}

function manifest(ext) {
  const common = {
    name: ext.name,
    version: "1.0.0",
    description: `A synthetic ${ext.kind} add-on of the about:startup realistic profile: its size and startup work, none of its function.`,
    browser_specific_settings: { gecko: { id: ext.id, strict_min_version: "128.0" } },
    icons: { 48: "icons/icon-48.png", 96: "icons/icon-96.png" },
  };
  const content = ext.contentBytes > 0 ? { content_scripts: [{ matches: ["<all_urls>"], js: ["content.js"], run_at: "document_idle" }] } : {};
  if (ext.manifest === 3) {
    return { manifest_version: 3, ...common, background: { scripts: ["background.js"] }, permissions: ["storage"], host_permissions: ["<all_urls>"], ...content };
  }
  return { manifest_version: 2, ...common, background: { scripts: ["background.js"], persistent: true }, permissions: ["storage", "<all_urls>"], ...content };
}

/**
 * The files of add-on `ext` (one of model.extensions): {path: string | Buffer}. The background
 * is `backgroundBytes` of code plus its logic, the content script likewise, the assets
 * `assetBytes` of data lists and icons.
 */
export function extensionFiles(ext) {
  const r = stream(ext.seed, "extension-files");
  const prefix = ext.kind.replace(/-/g, "_");
  const files = {
    "manifest.json": `${JSON.stringify(manifest(ext), null, 2)}\n`,
    "background.js": generatedCode(r, ext.backgroundBytes, `${prefix}_bg`) + backgroundLogic(ext),
  };
  if (ext.contentBytes > 0) {
    files["content.js"] = generatedCode(r, ext.contentBytes, `${prefix}_cs`) + contentLogic(ext);
  }
  let assets = 0;
  for (const size of [16, 32, 48, 96]) {
    // Icons are incompressible and small; iconPng makes 32×32, the manifest's sizes are names.
    const png = iconPng(r.int(0, 0xffffff), ext.seed + size);
    files[`icons/icon-${size}.png`] = png;
    assets += png.length;
  }
  // Real add-ons ship as much that does not compress (images, fonts, WebAssembly) as text
  // (locales, lists): BINARY_SHARE of the assets are seeded bytes, the rest word lists.
  const binaryBytes = Math.max(0, Math.round(((ext.assetBytes - assets) * BINARY_SHARE) / 4) * 4);
  for (let n = 0, left = binaryBytes; left > 0; n++) {
    const blob = Buffer.alloc(Math.min(left, 512 * 1024));
    for (let i = 0; i < blob.length; i += 4) blob.writeInt32LE(r.int(-(2 ** 31), 2 ** 31 - 1), i);
    files[`assets/blob-${String(n).padStart(3, "0")}.bin`] = blob;
    assets += blob.length;
    left -= blob.length;
  }
  for (let n = 0; ext.assetBytes - assets > 1024; n++) {
    let text = "";
    while (text.length < Math.min(256 * 1024, ext.assetBytes - assets)) text += `${r.words(12)}\n`;
    files[`data/list-${String(n).padStart(3, "0")}.txt`] = text;
    assets += text.length;
  }
  return files;
}

/** The .xpi of `files` (deflated, every entry dated ZIP_DATE). Resolves with a Buffer. */
export async function packXpi(files) {
  const zip = new JSZip();
  for (const name of Object.keys(files).sort()) {
    zip.file(name, files[name], { date: ZIP_DATE, createFolders: false });
  }
  return zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE", compressionOptions: { level: 6 }, platform: "UNIX" });
}

/** Words for the add-ons' stored data (short, as in filter lists and caches). */
const VOCABULARY = "ads track pixel banner cdn static img js css api v1 v2 beacon analytics social share frame video player auto consent cookie popup overlay promo sponsor widget chat feed login sync vault entry note tab group saved read later dark light theme style font rule list allow block host path query param".split(" ");
