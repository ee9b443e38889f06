// The export the page would make of three starts of one profile, their `costs` built by the
// extension's own model from the three recorded getStartCosts readings (tests/fixtures/start-costs/
// reading-1/2/3.json): the input of the CLI's `costs` tests (native-host/tests/cli_costs.rs reads
// tests/fixtures/start-costs/export.json). tests/unit/lib/models/test.costs-export.js fails when
// the committed file is not what the model makes today; `RECORD_COSTS_EXPORT=1 node --test
// tests/unit/lib/models/test.costs-export.js` writes it again.
import { readFileSync } from "node:fs";
import { buildExport } from "../../extension/lib/models/export.js";
import { costsFromReading } from "../../extension/lib/models/start-costs.js";

export const EXPORT_FIXTURE = new URL("../fixtures/start-costs/export.json", import.meta.url);
const reading = (n) => JSON.parse(readFileSync(new URL(`../fixtures/start-costs/reading-${n}.json`, import.meta.url), "utf8"));

/**
 * The recorded readings with one built-in add-on made a user's (the readings hold only Firefox's
 * own: tests/fixtures/README.md): "Picture-In-Picture" becomes "Tab Tidy" 2.1, not built in, so
 * the answer line has an add-on a user can turn off.
 */
export const USER_ADDON = { from: "pictureinpicture@mozilla.org", id: "tab-tidy@example.org", name: "Tab Tidy", version: "2.1" };

function asUserAddon(r) {
  return {
    ...r,
    addons: r.addons.map((a) => (a.id === USER_ADDON.from ? { ...a, id: USER_ADDON.id, name: USER_ADDON.name, version: USER_ADDON.version, builtIn: false } : a)),
  };
}

/** Three starts' records, 10 s of process start apart, each read 8 s after its start. */
export function costsExport() {
  const readings = [1, 2, 3].map((n) => asUserAddon(reading(n)));
  const records = readings.map((now, i) => {
    const processStart = now.readAt - 8000;
    return {
      id: `full-${processStart}`,
      recordedAt: now.readAt,
      mode: "full",
      firefox: { version: "153.8.0esr", buildId: "20261110000000" },
      processStart,
      milestones: { main: 120, firstPaint2: 900, sessionRestored: 1400 + 100 * i },
      io: null,
      costs: costsFromReading(now, i === 0 ? null : readings[i - 1], { processStart, selfId: "about-startup@startup-lab.dev" }),
    };
  });
  return buildExport({
    current: records.at(-1),
    history: records,
    environment: { firefoxVersion: "153.8.0esr", buildId: "20261110000000", os: "Linux", kernel: "6.1.0", mode: "full" },
    exportedAt: readings.at(-1).readAt + 1000,
  });
}

/**
 * One start's costs from two recorded readings, with the webcompat add-on taken as the
 * benchmark's costly one (`id`: its id; built in no more): what the A/B tests of the bench and
 * the page measure a saving against.
 */
export function costlyAddonCosts(id) {
  const [one, two] = [reading(1), reading(2)];
  for (const r of [one, two]) {
    Object.assign(r.addons.find((a) => a.id === "webcompat@mozilla.org"), { id, builtIn: false });
  }
  return costsFromReading(two, one);
}
