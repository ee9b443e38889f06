import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import {
  experimentFolders,
  flavourManifest,
  includeInFlavour,
  PRIVILEGED_PERMISSIONS,
} from "../../../../scripts/lib/flavours.mjs";

const manifest = JSON.parse(fs.readFileSync(new URL("../../../../extension/manifest.json", import.meta.url), "utf8"));

test("full keeps the manifest as written, as a copy", () => {
  const full = flavourManifest(manifest, "full");
  assert.deepEqual(full, manifest);
  assert.notEqual(full, manifest);
  assert.ok(full.experiment_apis.aboutStartup);
});

test("basic drops experiment_apis and privileged permissions, keeps the rest", () => {
  const before = structuredClone(manifest);
  const basic = flavourManifest(manifest, "basic");
  assert.equal("experiment_apis" in basic, false);
  assert.ok(basic.permissions.includes("nativeMessaging"));
  assert.ok(PRIVILEGED_PERMISSIONS.every((p) => !basic.permissions.includes(p)));
  assert.equal(basic.browser_specific_settings.gecko.id, "about-startup@startup-lab.dev");
  assert.equal(basic.version, manifest.version);
  assert.deepEqual(manifest, before, "the input manifest is not changed");
});

test("unknown flavours are refused", () => {
  assert.throws(() => flavourManifest(manifest, "nightly"), /unknown flavour/);
});

test("the experiment folder is left out of basic only", () => {
  assert.deepEqual(experimentFolders(manifest), ["experiments"]);
  assert.equal(includeInFlavour("experiments/about-startup/parent.js", manifest, "basic"), false);
  assert.equal(includeInFlavour("experiments/about-startup/parent.js", manifest, "full"), true);
  assert.equal(includeInFlavour("page/startup.js", manifest, "basic"), true);
  assert.equal(includeInFlavour("experiments-notes.txt", manifest, "basic"), true);
});

test("experimentFolders reads schema, parent and child scripts", () => {
  const m = {
    experiment_apis: {
      a: { schema: "api/schema.json", parent: { script: "./api/parent.js" } },
      b: { schema: "b.json", child: { script: "child/b.js" } },
    },
  };
  assert.deepEqual(experimentFolders(m), ["api", "b.json", "child"]);
  assert.deepEqual(experimentFolders({}), []);
});
