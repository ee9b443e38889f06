import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { answerAttribute, extensionFiles, generatedCode, injectedAttribute, packXpi } from "../../../../scripts/profile/extensions.mjs";
import { EXTENSION_KINDS } from "../../../../scripts/profile/presets.mjs";
import { stream } from "../../../../scripts/profile/random.mjs";

const ext = (kind, seed = 11) => ({ ...EXTENSION_KINDS.find((k) => k.kind === kind), id: `${kind}@synthetic.profile.test`, uuid: "00000000-0000-4000-8000-000000000000", seed });

test("generated code is JavaScript V8 compiles, about the size asked for", () => {
  const code = generatedCode(stream(1, "t"), 50_000, "x_bg");
  assert.doesNotThrow(() => new Function(code));
  assert.ok(code.length >= 50_000 && code.length < 51_000, `${code.length}`);
});

test("each kind's background and content script compile and have its sizes", () => {
  for (const kind of EXTENSION_KINDS) {
    const files = extensionFiles(ext(kind.kind));
    assert.doesNotThrow(() => new Function(files["background.js"]), kind.kind);
    assert.ok(files["background.js"].length >= kind.backgroundBytes);
    if (kind.contentBytes > 0) {
      assert.doesNotThrow(() => new Function(files["content.js"]), kind.kind);
      assert.ok(files["content.js"].includes(injectedAttribute(kind.kind)) && files["content.js"].includes(answerAttribute(kind.kind)));
    } else {
      assert.equal(files["content.js"], undefined);
    }
    const assets = Object.entries(files).filter(([name]) => !["manifest.json", "background.js", "content.js"].includes(name));
    const bytes = assets.reduce((n, [, v]) => n + v.length, 0);
    assert.ok(Math.abs(bytes - kind.assetBytes) < 2048, `${kind.kind}: assets ${bytes} against ${kind.assetBytes}`);
  }
});

test("the manifest: the add-on's id, its manifest version, its content script on every page", () => {
  const mv3 = JSON.parse(extensionFiles(ext("password-manager"))["manifest.json"]);
  assert.equal(mv3.manifest_version, 3);
  assert.equal(mv3.browser_specific_settings.gecko.id, "password-manager@synthetic.profile.test");
  assert.deepEqual(mv3.host_permissions, ["<all_urls>"]);
  assert.deepEqual(mv3.content_scripts[0].matches, ["<all_urls>"]);
  const mv2 = JSON.parse(extensionFiles(ext("tab-manager"))["manifest.json"]);
  assert.equal(mv2.manifest_version, 2);
  assert.equal(mv2.background.persistent, true);
  assert.equal(mv2.content_scripts, undefined);
});

test("the .xpi is a zip Info-ZIP reads, with every file, and the same bytes for the same seed", async (t) => {
  const files = extensionFiles(ext("dark-mode"));
  const xpi = await packXpi(files);
  assert.ok(xpi.equals(await packXpi(extensionFiles(ext("dark-mode")))));
  assert.ok(!xpi.equals(await packXpi(extensionFiles(ext("dark-mode", 12)))));
  let unzip;
  try {
    execFileSync("unzip", ["-v"], { stdio: "ignore" });
    unzip = true;
  } catch {
    unzip = false;
  }
  if (!unzip) {
    t.skip("unzip (Info-ZIP) is not installed: apt-get install unzip");
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "xpi-test-"));
  try {
    const file = path.join(dir, "a.xpi");
    fs.writeFileSync(file, xpi);
    execFileSync("unzip", ["-tq", file]);
    const listed = execFileSync("unzip", ["-Z1", file], { encoding: "utf8" }).trim().split("\n").sort();
    assert.deepEqual(listed, Object.keys(files).sort());
    assert.equal(execFileSync("unzip", ["-p", file, "background.js"], { encoding: "utf8", maxBuffer: 1 << 26 }), files["background.js"]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
