import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";

import { pauseProactiveReclaim, reclaimingKdamonds } from "../../../../scripts/lib/damon.mjs";
import { fakeSysfs } from "../../fakes.js";

const ADMIN = "/sys/kernel/mm/damon/admin/kdamonds";

function kdamond(id, { state = "on", action = "pageout" } = {}) {
  const dir = path.join(ADMIN, String(id));
  return {
    [`${dir}/state`]: `${state}\n`,
    [`${dir}/contexts/nr_contexts`]: "1\n",
    [`${dir}/contexts/0/schemes/nr_schemes`]: "1\n",
    [`${dir}/contexts/0/schemes/0/action`]: `${action}\n`,
  };
}

test("only running kdamonds with a pageout scheme count", () => {
  const fsApi = fakeSysfs({
    [`${ADMIN}/nr_kdamonds`]: "3\n",
    ...kdamond(0),
    ...kdamond(1, { state: "off" }),
    ...kdamond(2, { action: "lru_prio" }),
  });
  assert.deepEqual(reclaimingKdamonds({ fsApi }), [`${ADMIN}/0`]);
});

test("no DAMON on the machine: nothing to pause, nothing to restore", () => {
  const fsApi = fakeSysfs({});
  const { paused, restore } = pauseProactiveReclaim({ fsApi });
  assert.deepEqual(paused, []);
  restore();
  assert.deepEqual(fsApi.writes, []);
});

test("pause turns the reclaiming kdamond off and restore turns it on once", () => {
  const fsApi = fakeSysfs({ [`${ADMIN}/nr_kdamonds`]: "1\n", ...kdamond(0) });
  const { paused, restore } = pauseProactiveReclaim({ fsApi });
  assert.deepEqual(paused, [`${ADMIN}/0`]);
  assert.equal(fsApi.files[`${ADMIN}/0/state`], "off");
  restore();
  restore();
  assert.deepEqual(fsApi.writes, [
    [`${ADMIN}/0/state`, "off"],
    [`${ADMIN}/0/state`, "on"],
  ]);
});
