import { test } from "node:test";
import assert from "node:assert/strict";

import { cgroupPathOf, diskOf, groupReadBytes, mountHolding, parseSlowDisk, squashfuseDaemon } from "../../../../scripts/lib/slow-disk.mjs";

test("--slow-disk takes MiB/s:IOPS, with or without a unit", () => {
  assert.deepEqual(parseSlowDisk("30:150"), { mib: 30, bps: 31457280, iops: 150 });
  assert.deepEqual(parseSlowDisk("30MB:150"), { mib: 30, bps: 31457280, iops: 150 });
  assert.deepEqual(parseSlowDisk("2.5MiB:40"), { mib: 2.5, bps: 2621440, iops: 40 });
});

test("a malformed --slow-disk says what it wants", () => {
  for (const bad of ["30", "fast", "30:", ":150", "30/150", undefined]) {
    assert.throws(() => parseSlowDisk(bad), /MiB\/s:IOPS, e\.g\. 30:150/);
  }
});

function fakeFs(dev, files, devs = {}) {
  return {
    statSync: (p) => ({ dev: devs[p] ?? dev }),
    existsSync: (p) => p in files,
    readFileSync: (p) => files[p],
    realpathSync: (p) => files[p],
  };
}

test("a whole disk is throttled as itself", () => {
  // 254:0 (vda) as st_dev.
  assert.equal(diskOf("/usr", { fsApi: fakeFs(254 * 256, {}) }), "254:0");
});

test("a partition is throttled through the disk that holds it", () => {
  const fsApi = fakeFs(8 * 256 + 2, {
    "/sys/dev/block/8:2/partition": "2",
    "/sys/dev/block/8:2": "/sys/devices/pci/block/sda/sda2",
    "/sys/devices/pci/block/sda/dev": "8:0\n",
  });
  assert.equal(diskOf("/home", { fsApi }), "8:0");
});

test("a loop device (a squashfs mount) is throttled through the disk of its backing file", () => {
  const fsApi = fakeFs(
    7 * 256 + 3,
    {
      "/sys/dev/block/7:3/loop/backing_file": "/var/tmp/ff.squashfs\n",
      "/sys/dev/block/8:2/partition": "2",
      "/sys/dev/block/8:2": "/sys/devices/pci/block/sda/sda2",
      "/sys/devices/pci/block/sda/dev": "8:0\n",
    },
    { "/var/tmp/ff.squashfs": 8 * 256 + 2 },
  );
  assert.equal(diskOf("/mnt/ff", { fsApi }), "8:0");
});

test("a group's bytes read from the disk come from cgroup v1's or v2's statistics", () => {
  // v1: this machine's blkio.throttle.io_service_bytes (recorded 24 Nov 2026, two devices).
  const v1 = "254:0 Read 77645246464\n254:0 Write 119083110400\n254:0 Sync 201696686080\n7:0 Read 5120\nTotal 196728356864\n";
  assert.equal(groupReadBytes(v1, "254:0"), 77645246464);
  assert.equal(groupReadBytes(v1, "7:0"), 5120);
  // v2: io.stat, as in the kernel's cgroup-v2 documentation.
  const v2 = "8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 dios=0\n8:0 rbytes=90430464 wbytes=299008000 rios=8950 wios=1252 dbytes=50331648 dios=3021\n";
  assert.equal(groupReadBytes(v2, "8:0"), 90430464);
  // A device the group never read from is not listed: unknown, not 0.
  assert.equal(groupReadBytes(v2, "254:0"), null);
  assert.equal(groupReadBytes("", "254:0"), null);
});

test("a FUSE mount (squashfuse) is throttled through the disk of the image its daemon reads", () => {
  // 0:61, an anonymous device: the daemon's image, /var/tmp/ff.sqfs, is on sda2.
  const fsApi = fakeFs(
    61,
    {
      "/sys/dev/block/8:2/partition": "2",
      "/sys/dev/block/8:2": "/sys/devices/pci/block/sda/sda2",
      "/sys/devices/pci/block/sda/dev": "8:0\n",
    },
    { "/var/tmp/ff.sqfs": 8 * 256 + 2 },
  );
  const fuse = (dir) => (dir === "/w/mnt" ? { pid: 7, image: "/var/tmp/ff.sqfs" } : null);
  assert.equal(diskOf("/w/mnt", { fsApi, fuse }), "8:0");
  // No daemon found: the anonymous device as it is (createSlowDisk's write then fails, saying so).
  assert.equal(diskOf("/w/other", { fsApi, fuse }), "0:61");
});

test("the mount holding a folder is the longest mount point above it, the last entry winning", () => {
  const info = [
    "22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw",
    "301 22 0:60 / /var/tmp/w/mnt rw shared:150 - squashfs /dev/loop0 ro",
    "302 301 0:61 / /var/tmp/w/mnt ro,relatime shared:151 - fuse.squashfuse_ll squashfuse_ll ro,user_id=0,group_id=0",
    "303 22 0:62 / /var/tmp/my\\040mnt ro - fuse.squashfuse /var/tmp/ff.sqfs ro",
  ].join("\n");
  assert.deepEqual(mountHolding(info, "/var/tmp/w/mnt/browser"), { mountPoint: "/var/tmp/w/mnt", fsType: "fuse.squashfuse_ll" });
  assert.deepEqual(mountHolding(info, "/var/tmp/my mnt"), { mountPoint: "/var/tmp/my mnt", fsType: "fuse.squashfuse" });
  assert.deepEqual(mountHolding(info, "/var/tmp/w/mntx"), { mountPoint: "/", fsType: "ext4" });
});

test("the squashfuse daemon of a mount is found by its operands, whatever its options", () => {
  const procs = [
    { pid: 1, argv: ["/sbin/init"] },
    { pid: 5, argv: ["squashfuse", "-o", "ro", "/i/other.sqfs", "/w/elsewhere"] },
    { pid: 7, argv: ["/usr/bin/squashfuse_ll", "-f", "-o", "ro", "/i/ff.sqfs", "/w/mnt"] },
    { pid: 9, argv: ["cat", "/i/ff.sqfs", "/w/mnt"] },
  ];
  assert.deepEqual(squashfuseDaemon("/w/mnt", procs), { pid: 7, image: "/i/ff.sqfs" });
  assert.deepEqual(squashfuseDaemon("/w/elsewhere", procs), { pid: 5, image: "/i/other.sqfs" });
  assert.equal(squashfuseDaemon("/w/none", procs), null);
});

test("a process's cgroup is read for the blkio controller (v1) or the unified one (v2)", () => {
  const v1 = "12:blkio:/user.slice\n11:cpu,cpuacct:/x\n0::/init.scope\n";
  assert.equal(cgroupPathOf(v1, "blkio"), "/user.slice");
  assert.equal(cgroupPathOf(v1, ""), "/init.scope");
  assert.equal(cgroupPathOf("4:memory:/\n", "blkio"), "/");
});
