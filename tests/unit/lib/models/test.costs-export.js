import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { checkExport } from "../../../../extension/lib/models/export.js";
import { costsExport, EXPORT_FIXTURE, USER_ADDON } from "../../costs-export.js";

// The CLI's `costs` is tested on this file (native-host/tests/cli_costs.rs): it must be what the
// extension's model makes of the recorded readings today, or the CLI is tested against a stale page.
test("tests/fixtures/start-costs/export.json is the export the model makes of the recorded readings", () => {
  const doc = costsExport();
  assert.deepEqual(checkExport(doc), { ok: true });
  if (process.env.RECORD_COSTS_EXPORT) {
    writeFileSync(EXPORT_FIXTURE, `${JSON.stringify(doc, null, 1)}\n`);
  }
  assert.deepEqual(JSON.parse(readFileSync(EXPORT_FIXTURE, "utf8")), doc, "re-record: RECORD_COSTS_EXPORT=1 node --test tests/unit/lib/models/test.costs-export.js");
  // What the CLI's tests rely on: the later starts have figures of their own (the growth since
  // the previous reading), and the user's add-on is there, not built in.
  const current = doc.current.costs.addons.find((a) => a.id === USER_ADDON.id);
  assert.equal(current.builtIn, false);
  assert.equal(current.startupMs.source, "glean-delta");
});
