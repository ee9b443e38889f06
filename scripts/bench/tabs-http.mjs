// The A/B mode's restored tabs over http (issue 40): the presets' tabs are local files, and only
// http(s) requests reach an add-on's webRequest listeners, so an add-on that holds page loads
// (the costly add-on, ab.mjs) would hold nothing. For an A/B run the bench serves the preset's
// pages from 127.0.0.1 and gives the base profile the same session with each file:// page of
// the pages folder at that server's address; every arm's template is made from it, so every
// arm restores the same http tabs. The pages are served from memory-cached files by this
// process, outside any throttle: A/B runs are hot starts.
//
// Firefox reads a plain `sessionstore.js` when no sessionstore.jsonlz4 (or backup) is there
// (SessionFile.sys.mjs, ESR 153.8: "Probably because of migration, let's load uncompressed
// session files") and writes jsonlz4 at its next quit: so the session needs decoding, never
// encoding.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";

import { uncompressSync } from "lz4-napi";

const MAGIC = Buffer.from("mozLz40\0", "latin1");

/**
 * The text of a mozlz4 file (Firefox's jsonlz4: the 8-byte magic, the decoded size as a 32-bit
 * little-endian number, one LZ4 block). Throws on anything else, or on a block that does not
 * decode to exactly that size (lz4-napi decodes the size-prepended block, and stops short of the
 * header's size without a word when the block is cut short, so the size is checked here). Pure.
 */
export function decodeMozLz4(bytes) {
  if (bytes.length < 12 || !bytes.subarray(0, 8).equals(MAGIC)) {
    throw new Error("not a mozlz4 file (no mozLz40 magic)");
  }
  const size = bytes.readUInt32LE(8);
  let out;
  try {
    out = uncompressSync(bytes.subarray(8));
  } catch (error) {
    throw new Error(`mozlz4: ${error.message}`, { cause: error });
  }
  if (out.length !== size) throw new Error(`mozlz4: decoded ${out.length} bytes, the header says ${size}`);
  return out.toString("utf8");
}

/**
 * The session text with every file:// URL under `pagesDir` at `base` instead (http://host:port),
 * and how many URLs were changed. Only whole URLs of that folder change (the JSON's strings and
 * the escaped forms Firefox keeps, e.g. in referrerInfo, alike). Pure.
 */
export function sessionOverHttp(text, pagesDir, base) {
  const from = `file://${pagesDir.replace(/\/+$/, "")}/`;
  const parts = text.split(from);
  return { text: parts.join(`${base.replace(/\/+$/, "")}/`), changed: parts.length - 1 };
}

/**
 * Gives `profile` its session with the tabs over http: sessionstore.jsonlz4 decoded, its pages'
 * URLs moved to `base`, written as sessionstore.js; the compressed file and the backups (which
 * Firefox would read first) removed. Returns how many URLs changed; throws if none did (the
 * session is not of these pages) or the profile has no session.
 */
export function giveSessionOverHttp(profile, pagesDir, base) {
  const file = path.join(profile, "sessionstore.jsonlz4");
  if (!fs.existsSync(file)) {
    throw new Error(`${file}: no session to serve over http`);
  }
  const { text, changed } = sessionOverHttp(decodeMozLz4(fs.readFileSync(file)), pagesDir, base);
  if (changed === 0) {
    throw new Error(`${file}: no tab shows a page of ${pagesDir}`);
  }
  JSON.parse(text); // still a session
  fs.writeFileSync(path.join(profile, "sessionstore.js"), text);
  fs.rmSync(file);
  fs.rmSync(path.join(profile, "sessionstore-backups"), { recursive: true, force: true });
  return changed;
}

/**
 * Serves the files of `dir` (its top level: the pages are flat) on 127.0.0.1, a port the system
 * picks. Resolves with {base: "http://127.0.0.1:PORT", requests: [{path, at}], close()}.
 */
export async function servePages(dir) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url, "http://x").pathname).replace(/^\/+/, "");
    requests.push({ path: name, at: Date.now() });
    const file = path.join(dir, path.basename(name));
    if (name.includes("/") || !fs.existsSync(file)) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    res.writeHead(200, { "content-type": name.endsWith(".html") ? "text/html; charset=utf-8" : "application/octet-stream" });
    res.end(fs.readFileSync(file));
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address();
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
