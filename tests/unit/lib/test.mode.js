import { test } from "node:test";
import assert from "node:assert/strict";
import { BASIC, detectMode, FULL } from "../../../extension/lib/mode.js";
import { startupApi } from "../../../extension/lib/startup-api.js";

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
