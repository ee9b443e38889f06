import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { installName, codeLabel, codeRegion, entryRows, faultSiteCoverage, topCode, topEntries } from "../../../../extension/lib/models/trace-sources.js";

// A real trace of an ESR 153 cold start, trimmed (the host's cargo tests use the same file).
const REAL = JSON.parse(fs.readFileSync(new URL("../../../../native-host/tests/fixtures/profiler/trace-esr153-cold.json", import.meta.url), "utf8"));

test("a faulting instruction reads as the host words it: function, else its address and section", () => {
  assert.equal(codeLabel({ lib: "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", offset: 137522, section: ".text", symbol: "memset" }), "ld-linux-x86-64.so.2 memset");
  // Debian's libxul.so of ESR 153 (readelf -SW): .init at address 0x33640d0, file offset 0x33630d0,
  // 0x17 bytes. A fault 4 bytes into it is at address 0x33640d4, never ".init+0x33630d4".
  assert.equal(codeLabel({ lib: "/usr/lib/firefox-esr/libxul.so", offset: 0x33630d4, address: 0x33640d4, section: ".init" }), "libxul.so 0x33640d4 (.init)");
  // A trace of an older host has no address: the file offset, said as such.
  assert.equal(codeLabel({ lib: "/usr/lib/firefox-esr/libxul.so", offset: 66907760, section: ".text" }), "libxul.so file offset 0x3fcee70 (.text)");
  assert.equal(codeLabel({ lib: "[unknown]", offset: 140014284081386 }), "[unknown] 0x7f579daa88ea");
  // Stripped code is summed per 64 KiB block (which may span sections, so none is named); a function stays itself.
  assert.deepEqual(codeRegion({ lib: "/usr/lib/firefox-esr/libxul.so", offset: 0x33630d4, address: 0x33640d4, section: ".init" }), { label: "libxul.so 0x3360000–0x336ffff (64 KiB block)", block: true });
  assert.deepEqual(codeRegion({ lib: "/usr/lib/firefox-esr/libxul.so", offset: 66907760, section: ".text" }), { label: "libxul.so file offset 0x3fc0000–0x3fcffff (64 KiB block)", block: true });
  assert.deepEqual(codeRegion({ lib: "/l/ld.so", offset: 58276, section: ".text", symbol: "_dl_relocate_object" }), { label: "ld.so _dl_relocate_object", block: false });
});

test("the code that faulted in the most, from a real start: memset twice is one region, libxul.so's block next", () => {
  const rows = topCode(REAL);
  assert.equal(rows[0].label, "ld-linux-x86-64.so.2 memset");
  // Two sites with the same symbol (4 and 7): 84 + 251 + 147 + 1001 pages.
  assert.equal(rows[0].pages, 84 + 251 + 147 + 1001);
  assert.equal(rows[0].bytes, rows[0].pages * 4096);
  assert.equal(rows[0].reads, 4);
  assert.deepEqual(rows[0].read.map((r) => r.path.split("/").pop()), ["libmozavcodec.so", "libfreeblpriv3.so", "libmozavutil.so", "libsoftokn3.so"]);
  assert.equal(rows[1].label, "libxul.so file offset 0x3fc0000–0x3fcffff (64 KiB block)");
  assert.equal(rows[1].block, true);
  assert.deepEqual(rows[1].read, [{ path: "/usr/lib/firefox-esr/omni.ja", bytes: 694 * 4096 }]);
  // Every read with a site is counted once, in some region.
  const withSite = REAL.events.filter((e) => Number.isInteger(e.c));
  assert.equal(topCode(REAL, 100).reduce((s, r) => s + r.reads, 0), withSite.length);
  assert.equal(faultSiteCoverage(REAL).withCode, withSite.length);
  assert.equal(topCode(REAL, 1).length, 1);
});

test("a trace without fault sites has no code regions (not an empty table of zeros)", () => {
  const old = { ...REAL };
  delete old.code;
  assert.deepEqual(topCode(old), []);
  assert.deepEqual(topCode({ ...REAL, code: [] }), []);
  // A `c` pointing past the table (a damaged file) is skipped, not a crash.
  assert.deepEqual(topCode({ ...REAL, code: [REAL.code[0]], events: [{ t: 1, f: 0, o: 0, n: 1, p: 1, k: "fault", c: 9 }] }), []);
});

test("omni.ja's entries, most read first; the module loaded then where Firefox's profile said", () => {
  const omni = REAL.files.find((f) => f.path.endsWith("/omni.ja"));
  const rows = entryRows(omni);
  assert.equal(rows.length, omni.entries.length);
  assert.equal(rows[0].name, "chrome/pdfjs/content/build/pdf.worker.mjs");
  assert.equal(rows[0].bytesRead, 2193944);
  assert.equal(rows[0].firstMs, 7770.324);
  assert.equal(rows[0].module, null, "this trace was not merged with a Firefox profile");
  assert.equal(entryRows(REAL.files[0]), null, "firefox-esr is no archive");
  const loaded = entryRows({ entries: [{ name: "modules/A.sys.mjs", offset: 0, len: 10, bytes_read: 10, first_ms: 5, module: "resource://gre/modules/A.sys.mjs", module_ms: 7.5 }] });
  assert.deepEqual(loaded[0], { name: "modules/A.sys.mjs", bytesRead: 10, size: 10, firstMs: 5, module: "resource://gre/modules/A.sys.mjs", moduleMs: 7.5 });
});

test("the entries this start read the most, named by archive across omni.ja and browser/omni.ja", () => {
  const browserOmni = { path: "/usr/lib/firefox-esr/browser/omni.ja", bytes_read: 1, entries: [{ name: "chrome/browser/content/browser/browser.js", offset: 0, len: 3_000_000, bytes_read: 3_000_000, first_ms: 6000 }] };
  const rows = topEntries({ ...REAL, files: [...REAL.files, browserOmni] }, 3);
  assert.deepEqual(rows.map((r) => [r.archive, r.name]), [
    ["browser/omni.ja", "chrome/browser/content/browser/browser.js"],
    ["omni.ja", "chrome/pdfjs/content/build/pdf.worker.mjs"],
    ["omni.ja", "modules/translations/cld-worker.js.mem"],
  ]);
  assert.equal(installName("/opt/ff/browser/omni.ja"), "browser/omni.ja");
  assert.equal(installName("/opt/ff/omni.ja", "/opt/ff"), "omni.ja");
  assert.equal(installName("/opt/ff/browser/omni.ja", "/opt/ff"), "browser/omni.ja");
  assert.equal(installName("/usr/lib/x86_64-linux-gnu/libc.so.6", "/opt/ff"), "libc.so.6");
  assert.deepEqual(topEntries({ files: [{ path: "/x/libxul.so" }] }), []);
});
