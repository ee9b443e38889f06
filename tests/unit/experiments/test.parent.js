// Runs the experiment's parent script as Firefox does (a classic script defining
// this.aboutStartup) in a node:vm context with fake ExtensionAPI and Services.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import vm from "node:vm";

const source = fs.readFileSync(
  new URL("../../../extension/experiments/about-startup/parent.js", import.meta.url),
  "utf8",
);

function loadApi(startupInfo) {
  const sandbox = {
    ExtensionAPI: class {},
    Services: { startup: { getStartupInfo: () => startupInfo } },
  };
  vm.createContext(sandbox);
  vm.runInContext(source, sandbox);
  return new sandbox.aboutStartup().getAPI({}).aboutStartup;
}

test("Dates become ms since epoch", async () => {
  const api = loadApi({ process: new Date(1000), main: new Date(1500) });
  assert.deepEqual({ ...(await api.getStartupInfo()) }, { process: 1000, main: 1500 });
});

test("invalid, zero and non-Date milestones are left out, not 0", async () => {
  const api = loadApi({
    process: new Date(1000),
    sessionRestored: new Date(Number.NaN),
    firstPaint: new Date(0),
    weird: "yesterday",
    nothing: null,
  });
  assert.deepEqual({ ...(await api.getStartupInfo()) }, { process: 1000 });
});
