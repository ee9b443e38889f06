import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { decodeMozLz4, giveSessionOverHttp, servePages, sessionOverHttp } from "../../../../scripts/bench/tabs-http.mjs";

// A session file Firefox ESR 153.8 wrote itself (tests/fixtures/README.md, "sessionstore").
const FIXTURE = fs.readFileSync(new URL("../../../fixtures/sessionstore/recovery.jsonlz4", import.meta.url));

test("decodeMozLz4: Firefox's own session file decodes to the size its header gives, as JSON", () => {
  const text = decodeMozLz4(FIXTURE);
  assert.equal(Buffer.byteLength(text), FIXTURE.readUInt32LE(8));
  const session = JSON.parse(text);
  assert.equal(session.windows[0].tabs[0].entries[0].url, "about:welcome");
  assert.deepEqual(session.version, ["sessionrestore", 1]);
});

test("decodeMozLz4: anything else is refused with what is wrong, never half-decoded", () => {
  assert.throws(() => decodeMozLz4(Buffer.from("{\"windows\":[]}")), /not a mozlz4 file/);
  // cut short: fewer bytes than the header says
  assert.throws(() => decodeMozLz4(FIXTURE.subarray(0, FIXTURE.length - 40)), /mozlz4: decoded \d+ bytes, the header says \d+/);
  // a header that promises more than the block holds
  const longer = Buffer.from(FIXTURE);
  longer.writeUInt32LE(FIXTURE.readUInt32LE(8) + 1, 8);
  assert.throws(() => decodeMozLz4(longer), /decoded \d+ bytes, the header says \d+/);
  // a match that points before the start
  const bad = Buffer.concat([FIXTURE.subarray(0, 8), Buffer.from([8, 0, 0, 0]), Buffer.from([0x14, 0x61, 0x05, 0x00])]);
  assert.throws(() => decodeMozLz4(bad), /mozlz4: /);
});

test("sessionOverHttp: only whole addresses of the pages folder move to the server, everywhere they occur", () => {
  const text = JSON.stringify({
    windows: [{ tabs: [{ entries: [{ url: "file:///p/pages/a.html", referrerInfo: "x file:///p/pages/b.html y" }, { url: "file:///p/pages-other/c.html" }, { url: "about:blank" }] }] }],
  });
  const { text: moved, changed } = sessionOverHttp(text, "/p/pages/", "http://127.0.0.1:4321");
  assert.equal(changed, 2);
  const tab = JSON.parse(moved).windows[0].tabs[0];
  assert.equal(tab.entries[0].url, "http://127.0.0.1:4321/a.html");
  assert.equal(tab.entries[0].referrerInfo, "x http://127.0.0.1:4321/b.html y");
  assert.equal(tab.entries[1].url, "file:///p/pages-other/c.html");
});

test("giveSessionOverHttp: the profile gets sessionstore.js and loses the compressed session and its backups; a session of other pages is refused", () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "tabs-http-"));
  try {
    fs.writeFileSync(path.join(profile, "sessionstore.jsonlz4"), FIXTURE);
    fs.mkdirSync(path.join(profile, "sessionstore-backups"));
    fs.writeFileSync(path.join(profile, "sessionstore-backups", "recovery.jsonlz4"), FIXTURE);
    // the fixture's one tab is about:welcome: no page of the folder
    assert.throws(() => giveSessionOverHttp(profile, "/p/pages", "http://127.0.0.1:1"), /no tab shows a page of \/p\/pages/);
    assert.ok(fs.existsSync(path.join(profile, "sessionstore.jsonlz4")), "nothing removed on refusal");
    // the same session with its tab on a page of the folder (Firefox reads the plain file too)
    fs.rmSync(path.join(profile, "sessionstore.jsonlz4"));
    assert.throws(() => giveSessionOverHttp(profile, "/p/pages", "http://127.0.0.1:1"), /no session to serve over http/);
    const text = decodeMozLz4(FIXTURE).replace("about:welcome", "file:///p/pages/a.html");
    const lz4Stand = Buffer.concat([FIXTURE.subarray(0, 8), u32(Buffer.byteLength(text)), literalsBlock(Buffer.from(text))]);
    fs.writeFileSync(path.join(profile, "sessionstore.jsonlz4"), lz4Stand);
    assert.equal(giveSessionOverHttp(profile, "/p/pages", "http://127.0.0.1:1"), 1);
    assert.deepEqual(fs.readdirSync(profile).sort(), ["sessionstore.js"]);
    const session = JSON.parse(fs.readFileSync(path.join(profile, "sessionstore.js"), "utf8"));
    assert.equal(session.windows[0].tabs[0].entries[0].url, "http://127.0.0.1:1/a.html");
  } finally {
    fs.rmSync(profile, { recursive: true, force: true });
  }
});

test("servePages: the folder's files at 127.0.0.1, each request noted; nothing outside the folder", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tabs-http-pages-"));
  fs.writeFileSync(path.join(dir, "a.html"), "<p>a</p>");
  fs.writeFileSync(path.join(path.dirname(dir), `${path.basename(dir)}-secret`), "no");
  const server = await servePages(dir);
  try {
    assert.match(server.base, /^http:\/\/127\.0\.0\.1:\d+$/);
    const page = await fetch(`${server.base}/a.html`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type"), /^text\/html/);
    assert.equal(await page.text(), "<p>a</p>");
    assert.equal((await fetch(`${server.base}/missing.html`)).status, 404);
    assert.equal((await fetch(`${server.base}/..%2F${path.basename(dir)}-secret`)).status, 404);
    assert.deepEqual(server.requests.map((r) => r.path), ["a.html", "missing.html", `../${path.basename(dir)}-secret`]);
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(path.join(path.dirname(dir), `${path.basename(dir)}-secret`), { force: true });
  }
});

/** A 32-bit little-endian number. */
function u32(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

/** An LZ4 block of literals only (valid LZ4: the last sequence may be literals alone). */
function literalsBlock(bytes) {
  const out = [];
  let n = bytes.length;
  out.push(Math.min(n, 15) << 4);
  if (n >= 15) {
    n -= 15;
    while (n >= 255) {
      out.push(255);
      n -= 255;
    }
    out.push(n);
  }
  return Buffer.concat([Buffer.from(out), bytes]);
}
