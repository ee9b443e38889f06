// Consistency of the extension's static files: manifest, locales, versions.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";

const read = (rel) => fs.readFileSync(new URL(`../../${rel}`, import.meta.url), "utf8");
const manifest = JSON.parse(read("extension/manifest.json"));
const messages = JSON.parse(read("extension/_locales/en/messages.json"));
const pkg = JSON.parse(read("package.json"));

test("manifest and package.json carry the same version", () => {
  assert.equal(manifest.version, pkg.version);
});

test("every __MSG_x__ in the manifest and every data-i18n key in pages has an English string", () => {
  const keys = new Set();
  for (const match of JSON.stringify(manifest).matchAll(/__MSG_(\w+)__/g)) keys.add(match[1]);
  for (const match of read("extension/page/startup.html").matchAll(/data-i18n="(\w+)"/g)) keys.add(match[1]);
  for (const match of read("extension/page/startup.js").matchAll(/\bt\("(\w+)"/g)) keys.add(match[1]);
  assert.ok(keys.size > 10);
  for (const key of keys) {
    assert.ok(messages[key]?.message, `messages.json lacks ${key}`);
  }
});

test("the ids the e2e tests and the host rely on", () => {
  assert.equal(manifest.browser_specific_settings.gecko.id, "about-startup@startup-lab.dev");
  assert.ok(manifest.permissions.includes("nativeMessaging"));
  assert.ok(read("extension/lib/transport/host-client.js").includes('HOST_NAME = "about_startup"'));
});

test("every file the manifest names exists", () => {
  const files = [
    ...manifest.background.scripts,
    ...Object.values(manifest.icons),
    ...Object.values(manifest.experiment_apis).flatMap((api) => [api.schema, api.parent.script]),
  ];
  for (const file of files) {
    assert.ok(fs.existsSync(new URL(`../../extension/${file}`, import.meta.url)), file);
  }
});
