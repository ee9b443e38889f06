import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";

import {
  memoryCgroupOf,
  pageoutKdamondWrites,
  pauseProactiveReclaim,
  pausesWithin,
  reclaimingKdamonds,
  startPageoutKdamond,
  stopOwnKdamond,
  systemRamRanges,
} from "../../../../scripts/lib/damon.mjs";
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

test("a pause is marked with its pid and memory cgroup while it lasts, and found by cgroup", () => {
  const fsApi = fakeSysfs({ [`${ADMIN}/nr_kdamonds`]: "1\n", ...kdamond(0) });
  fsApi.rmSync = (p) => delete fsApi.files[p];
  const marks = "/run/marks";
  const cgroupText = "4:memory:/process_api/abc\n0::/\n";
  const { restore } = pauseProactiveReclaim({ fsApi, marks, pid: 42, cgroupText });
  assert.deepEqual(JSON.parse(fsApi.files[`${marks}/42.json`]), { pid: 42, memcg: "/process_api/abc", kdamonds: [`${ADMIN}/0`] });
  const alive = (pid) => pid === 42;
  // Our own cgroup's test holds it off; a parent cgroup sees it too; another cgroup does not.
  assert.deepEqual(pausesWithin("/process_api/abc", { fsApi, marks, alive }).map((m) => m.pid), [42]);
  assert.deepEqual(pausesWithin("/process_api", { fsApi, marks, alive }).map((m) => m.pid), [42]);
  assert.deepEqual(pausesWithin("/process_api/ab", { fsApi, marks, alive }), []);
  assert.deepEqual(pausesWithin("/other", { fsApi, marks, alive }), []);
  // A mark of a process that died without restoring counts for nothing.
  assert.deepEqual(pausesWithin("/process_api/abc", { fsApi, marks, alive: () => false }), []);
  restore();
  assert.equal(fsApi.files[`${marks}/42.json`], undefined, "removed with the pause");
  assert.equal(fsApi.files[`${ADMIN}/0/state`], "on");
});

// /proc/iomem as root reads it on this project's VMs (cut down), and as a user does (all zeros).
const IOMEM = `00000000-00000fff : Reserved
00001000-0009fbff : System RAM
000a0000-000fffff : Reserved
00100000-bfffffff : System RAM
  01000000-01ffffff : Kernel code
100000000-63fffffff : System RAM
`;

test("System RAM ranges from /proc/iomem, end exclusive; a user's zeros are none", () => {
  assert.deepEqual(systemRamRanges(IOMEM), [
    [0x1000n, 0x9fc00n],
    [0x100000n, 0xc0000000n],
    [0x100000000n, 0x640000000n],
  ]);
  assert.deepEqual(systemRamRanges("00000000-00000000 : System RAM\n"), []);
});

test("the memory cgroup of a process: cgroup v1's memory line, else v2's", () => {
  assert.equal(memoryCgroupOf("9:name=systemd:/\n4:memory:/process_api/2af7\n0::/\n"), "/process_api/2af7");
  assert.equal(memoryCgroupOf("0::/user.slice/user-1000.slice\n"), "/user.slice/user-1000.slice");
  assert.equal(memoryCgroupOf("4:memory:/\n"), "/");
  assert.equal(memoryCgroupOf(""), "/");
});

test("the kdamond's setup: paddr over the RAM ranges, one pageout scheme for regions idle min-age, page cache only", () => {
  const dir = `${ADMIN}/0`;
  const writes = new Map(pageoutKdamondWrites(dir, { ranges: systemRamRanges(IOMEM), minAgeS: 3 }));
  const ctx = `${dir}/contexts/0`;
  assert.equal(writes.get(`${ctx}/operations`), "paddr");
  assert.equal(writes.get(`${ctx}/targets/0/regions/nr_regions`), "3");
  assert.equal(writes.get(`${ctx}/targets/0/regions/2/start`), String(0x100000000));
  assert.equal(writes.get(`${ctx}/targets/0/regions/2/end`), String(0x640000000));
  const scheme = `${ctx}/schemes/0`;
  assert.equal(writes.get(`${scheme}/action`), "pageout");
  assert.equal(writes.get(`${scheme}/access_pattern/nr_accesses/max`), "0");
  // 3 s in aggregation intervals of 100 ms.
  assert.equal(writes.get(`${scheme}/access_pattern/age/min`), "30");
  assert.equal(writes.get(`${scheme}/ops_filters/nr_filters`), "1");
  assert.equal(writes.get(`${scheme}/ops_filters/0/type`), "anon");
  assert.equal(writes.get(`${scheme}/ops_filters/0/allow`), "N");
  // A number before the folder it creates: nr_* first.
  const order = pageoutKdamondWrites(dir, { ranges: systemRamRanges(IOMEM) }).map(([file]) => file);
  assert.ok(order.indexOf(`${ctx}/targets/nr_targets`) < order.indexOf(`${ctx}/targets/0/regions/nr_regions`));
  assert.ok(order.indexOf(`${scheme}/ops_filters/nr_filters`) < order.indexOf(`${scheme}/ops_filters/0/type`));
  // With a memcg: only its pages (a second filter allows them; what matches none is rejected).
  const mine = new Map(pageoutKdamondWrites(dir, { ranges: systemRamRanges(IOMEM), memcg: "/process_api/x" }));
  assert.equal(mine.get(`${scheme}/ops_filters/nr_filters`), "2");
  assert.equal(mine.get(`${scheme}/ops_filters/1/type`), "memcg");
  assert.equal(mine.get(`${scheme}/ops_filters/1/memcg_path`), "/process_api/x");
  assert.equal(mine.get(`${scheme}/ops_filters/1/allow`), "Y");
  assert.throws(() => pageoutKdamondWrites(dir, { ranges: [] }), /no System RAM/);
});

function markedSysfs(files) {
  const fsApi = fakeSysfs({ "/proc/iomem": IOMEM, ...files });
  fsApi.rmSync = (p) => delete fsApi.files[p];
  return fsApi;
}

test("start turns a new kdamond on and notes it; stop turns it off and removes it", () => {
  const fsApi = markedSysfs({ [`${ADMIN}/nr_kdamonds`]: "0\n" });
  const mark = "/run/mark.json";
  const k = startPageoutKdamond({ fsApi, mark, minAgeS: 5 });
  assert.equal(k.dir, `${ADMIN}/0`);
  assert.deepEqual(fsApi.writes[0], [`${ADMIN}/nr_kdamonds`, "1"]);
  const on = fsApi.writes.findIndex(([p, v]) => p === `${ADMIN}/0/state` && v === "on");
  assert.ok(on > 0 && fsApi.writes.slice(0, on).some(([p]) => p.endsWith("/action")), "on once set up");
  assert.equal(JSON.parse(fsApi.files[mark]).dir, `${ADMIN}/0`);
  assert.equal(k.stop(), true);
  assert.deepEqual(fsApi.writes.slice(-2), [
    [`${ADMIN}/0/state`, "off"],
    [`${ADMIN}/nr_kdamonds`, "0"],
  ]);
  assert.equal(mark in fsApi.files, false);
  assert.equal(stopOwnKdamond({ fsApi, mark }), false, "nothing left to stop");
});

test("start leaves the machine's own kdamonds alone, and says where DAMON is missing", () => {
  const fsApi = markedSysfs({ [`${ADMIN}/nr_kdamonds`]: "1\n", ...kdamond(0) });
  assert.throws(() => startPageoutKdamond({ fsApi, mark: "/run/m" }), /1 kdamond\(s\) of the machine's own: left as they are/);
  assert.deepEqual(fsApi.writes, []);
  assert.throws(() => startPageoutKdamond({ fsApi: markedSysfs({}), mark: "/run/m" }), /no DAMON sysfs interface/);
});
