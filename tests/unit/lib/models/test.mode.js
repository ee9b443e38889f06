import { test } from "node:test";
import assert from "node:assert/strict";
import { BASIC, detectMode, FULL, isAboutRegistered, modeOf, startupApi } from "../../../../extension/lib/models/mode.js";

test("full with the experiment API, basic without", () => {
  const api = { getStartupInfo: async () => ({}) };
  assert.equal(detectMode(startupApi({ aboutStartup: api })), FULL);
  assert.equal(detectMode(startupApi({})), BASIC);
  assert.equal(detectMode(startupApi(undefined)), BASIC);
  assert.equal(detectMode(startupApi({ aboutStartup: {} })), BASIC);
});

test("startupApi returns the namespace itself or null", () => {
  const api = { getStartupInfo: async () => ({}) };
  assert.equal(startupApi({ aboutStartup: api }), api);
  assert.equal(startupApi({ aboutStartup: { getStartupInfo: 1 } }), null);
});

test("one mode detection: modeOf and isAboutRegistered live in lib/models/mode.js", async () => {
  const full = { aboutStartup: { getStartupInfo: async () => ({}), status: async () => ({ ours: true }) } };
  assert.equal(modeOf(full), FULL);
  assert.equal(modeOf({}), BASIC);
  assert.equal(modeOf(undefined), BASIC);
  assert.equal(await isAboutRegistered(full), true);
  assert.equal(await isAboutRegistered({}), false);
});
