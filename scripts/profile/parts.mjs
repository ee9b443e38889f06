// What a made profile's bytes are, by part (the session, Places, favicons, each add-on and its
// storage, the startup cache…): the summary make.mjs prints and writes into profile.json.
import fs from "node:fs";
import path from "node:path";

/**
 * The part a file of the profile belongs to, from its path relative to the profile folder
 * ("/"-separated). `extensions`: [{id, uuid, kind}] of the installed add-ons. Pure.
 */
export function partOf(relative, extensions = []) {
  const [top, second] = relative.split("/");
  if (top === "sessionstore.jsonlz4" || top === "sessionstore-backups") return "session";
  if (/^places\.sqlite/.test(top)) return "places";
  if (/^favicons\.sqlite/.test(top)) return "favicons";
  if (/^cookies\.sqlite/.test(top)) return "cookies";
  if (/^permissions\.sqlite/.test(top)) return "permissions";
  if (top === "startupCache") return "startup cache";
  if (top === "prefs.js" || top === "user.js") return "prefs";
  if (["extensions.json", "addonStartup.json.lz4", "extension-preferences.json", "extension-settings.json"].includes(top)) return "add-on registry";
  if (top === "extensions") {
    const ext = extensions.find((e) => second === `${e.id}.xpi`);
    return ext ? `add-on ${ext.kind}` : "add-ons, other";
  }
  if (top === "storage" && second === "default") {
    const origin = relative.split("/")[2] ?? "";
    const ext = extensions.find((e) => origin.startsWith(`moz-extension+++${e.uuid}`));
    if (ext) return `add-on storage ${ext.kind}`;
  }
  if (top === "storage" || top === "storage.sqlite") return "site storage";
  return "other";
}

function walk(dir, base = dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, base, out);
    else if (entry.isFile()) out.push({ relative: path.relative(base, full).split(path.sep).join("/"), bytes: fs.statSync(full).size });
  }
  return out;
}

/** {total, files, parts: [{part, bytes, files}] largest first} of the profile folder. */
export function profileParts(profileDir, extensions) {
  const byPart = new Map();
  let total = 0;
  const files = walk(profileDir);
  for (const { relative, bytes } of files) {
    const part = partOf(relative, extensions);
    const entry = byPart.get(part) ?? { part, bytes: 0, files: 0 };
    entry.bytes += bytes;
    entry.files += 1;
    byPart.set(part, entry);
    total += bytes;
  }
  return { total, files: files.length, parts: [...byPart.values()].sort((a, b) => b.bytes - a.bytes || a.part.localeCompare(b.part)) };
}

/** The parts as an aligned text table, MB with one decimal. Pure. */
export function partsTable({ total, files, parts }) {
  const mb = (b) => (b / 1e6).toFixed(1).padStart(8);
  const width = Math.max(5, ...parts.map((p) => p.part.length));
  const lines = parts.map((p) => `  ${p.part.padEnd(width)} ${mb(p.bytes)} MB ${String(p.files).padStart(6)} files`);
  return [...lines, `  ${"total".padEnd(width)} ${mb(total)} MB ${String(files).padStart(6)} files`].join("\n");
}
