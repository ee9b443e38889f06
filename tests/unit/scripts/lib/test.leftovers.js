import { test } from "node:test";
import assert from "node:assert/strict";
import { cgroupV2Mount, cgroupV2Of, describeLeftovers, leftoverLoops, leftoverMounts, leftoverProcesses, MARKER } from "../../../../scripts/lib/leftovers.mjs";

const DIRS = ["/tmp/about-startup-e2e-test.restart.js-Ab12", "/var/tmp/about-startup-e2e-test.restart.js-Cd34"];

/** A /proc of `procs` ({pid: {environ, cmdline, exe, cwd, uid, name, zombie}}), unreadable where null. */
function fakeProc(procs) {
  const files = {};
  const links = {};
  for (const [pid, p] of Object.entries(procs)) {
    files[`/proc/${pid}/status`] = `Name:\t${p.name ?? "firefox-esr"}\nState:\t${p.zombie ? "Z (zombie)" : "S (sleeping)"}\nUid:\t${p.uid ?? 0}\t0\t0\t0\n`;
    if (p.environ !== null) files[`/proc/${pid}/environ`] = (p.environ ?? []).join("\0") + "\0";
    files[`/proc/${pid}/cmdline`] = (p.cmdline ?? []).join("\0") + "\0";
    if (p.exe) links[`/proc/${pid}/exe`] = p.exe;
    if (p.cwd) links[`/proc/${pid}/cwd`] = p.cwd;
    if (p.cgroup) files[`/proc/${pid}/cgroup`] = `4:memory:/m\n1:name=systemd:/\n0::${p.cgroup}\n`;
  }
  const fail = () => {
    throw new Error("ENOENT");
  };
  return {
    readdirSync: () => [...Object.keys(procs), "self", "meminfo"],
    readFileSync: (file) => (file in files ? Buffer.from(files[file]) : fail()),
    readlinkSync: (file) => (file in links ? links[file] : fail()),
  };
}

test("a process is the file's by its marker or by naming the file's folders, never by being a Firefox", () => {
  const fsApi = fakeProc({
    // geckodriver's Firefox: the marker inherited.
    10: { environ: ["PATH=/bin", `${MARKER}=test.restart.js:1:ab`], cmdline: ["/usr/lib/firefox-esr/firefox-esr", "-headless"] },
    // The same marker of another run (another helper's suite, the same file): not this run's.
    11: { environ: [`${MARKER}=test.restart.js:2:cd`], cmdline: ["firefox-esr"] },
    // A relaunched Firefox run as nobody (sudo dropped the environment): its profile names the folder.
    12: { uid: 65534, environ: ["HOME=/nonexistent"], cmdline: ["firefox-esr", "-profile", `${DIRS[0]}/about-startup-restart-x`] },
    // Another user's Firefox from the same install: nothing of the file's.
    13: { uid: 1000, environ: ["HOME=/home/u"], cmdline: ["/usr/lib/firefox-esr/firefox-esr"], exe: "/usr/lib/firefox-esr/firefox-esr" },
    // A Firefox of the file's private install copy.
    14: { environ: null, cmdline: ["firefox-esr"], exe: `${DIRS[1]}/about-startup-e2e-firefox-1/firefox-esr/firefox-esr` },
    // A host whose HOME is the file's throwaway home, environment readable.
    15: { name: "about-startup-h", environ: [`HOME=${DIRS[0]}/about-startup-e2e-9/home`], cmdline: ["about-startup-host"] },
    // Works in the file's folder.
    16: { name: "node", environ: null, cmdline: ["node", "profiler-cli"], cwd: `${DIRS[0]}/w` },
    // A zombie of the file's: exited already.
    17: { zombie: true, environ: [`${MARKER}=test.restart.js:1:ab`] },
    // A folder whose name only starts like the file's.
    18: { environ: [`HOME=${DIRS[0]}x/home`], cmdline: ["x", `${DIRS[1]}-other/profile`], exe: `${DIRS[1]}-other/firefox` },
    // This runner.
    19: { environ: [`${MARKER}=test.restart.js:1:ab`] },
  });
  const found = leftoverProcesses({ marker: "test.restart.js:1:ab", dirs: DIRS }, { fsApi, self: 19 });
  assert.deepEqual(
    found.map((p) => [p.pid, p.uid, p.why]),
    [
      [10, 0, `${MARKER}=test.restart.js:1:ab`],
      [12, 65534, "its command line names the file's folders"],
      [14, 0, `runs ${DIRS[1]}/about-startup-e2e-firefox-1/firefox-esr/firefox-esr`],
      [15, 0, `HOME=${DIRS[0]}/about-startup-e2e-9/home`],
      [16, 0, `works in ${DIRS[0]}/w`],
    ],
  );
});

test("mounts whose mount point or source lies in the file's folders, escapes read", () => {
  const mountinfo = [
    "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw",
    `90 22 7:0 / ${DIRS[0]}/mnt\\040a rw,relatime shared:50 - squashfs /dev/loop0 ro`,
    `91 22 0:60 / /mnt/elsewhere rw,nosuid shared:51 - fuse.squashfuse ${DIRS[1]}/image.sqfs ro`,
    "92 22 0:61 / /mnt/other rw - fuse.squashfuse /home/u/other.sqfs ro",
  ].join("\n");
  assert.deepEqual(leftoverMounts(mountinfo, DIRS), [
    { mountPoint: `${DIRS[0]}/mnt a`, source: "/dev/loop0", fstype: "squashfs" },
    { mountPoint: "/mnt/elsewhere", source: `${DIRS[1]}/image.sqfs`, fstype: "fuse.squashfuse" },
  ]);
});

test("loop devices backed by a file in the file's folders", () => {
  const files = {
    "/sys/block/loop0/loop/backing_file": `${DIRS[0]}/image.sqfs (deleted)\n`,
    "/sys/block/loop1/loop/backing_file": "/home/u/disk.img\n",
  };
  const fsApi = {
    readdirSync: () => ["loop0", "loop1", "loop2", "vda"],
    readFileSync: (file) => {
      if (!(file in files)) throw new Error("ENOENT");
      return Buffer.from(files[file]);
    },
  };
  assert.deepEqual(leftoverLoops(DIRS, { fsApi }), [{ device: "/dev/loop0", backingFile: `${DIRS[0]}/image.sqfs` }]);
});

test("each thing left is one line naming what it is", () => {
  const lines = describeLeftovers({
    processes: [{ pid: 12, name: "firefox-esr", uid: 65534, cmdline: "firefox-esr -profile /tmp/x", why: "its command line names the file's folders" }],
    mounts: [{ mountPoint: "/tmp/x/mnt", fstype: "squashfs", source: "/dev/loop0" }],
    loops: [{ device: "/dev/loop0", backingFile: "/tmp/x/image" }],
  });
  assert.deepEqual(lines, [
    "process 12 firefox-esr (uid 65534): firefox-esr -profile /tmp/x [its command line names the file's folders]",
    "mount /tmp/x/mnt (squashfs of /dev/loop0)",
    "loop device /dev/loop0 of /tmp/x/image",
  ]);
  assert.deepEqual(describeLeftovers({ processes: [], mounts: [], loops: [] }), []);
});

test("a process in the file's cgroup is the file's though it carries nothing of the file's (pkexec's tracer)", () => {
  const cgroup = "/about-startup-e2e-test.restart-trace.js-1-ab";
  const fsApi = fakeProc({
    // The tracer pkexec ran: root's environment, its own session, nothing naming the file.
    20: { name: "about-startup-h", environ: ["PATH=/usr/bin", "PKEXEC_UID=1001"], cmdline: ["/usr/lib/about-startup/about-startup-host", "tracer"], cgroup },
    // Below the file's cgroup (something that made a group of its own in it).
    21: { environ: [], cmdline: ["x"], cgroup: `${cgroup}/inner` },
    // Another user's tracer: another cgroup, one that only starts alike.
    22: { name: "about-startup-h", environ: ["PKEXEC_UID=1000"], cmdline: ["/usr/lib/about-startup/about-startup-host", "tracer"], cgroup: "/" },
    23: { environ: [], cmdline: ["y"], cgroup: `${cgroup}x` },
  });
  const found = leftoverProcesses({ marker: "test.restart-trace.js:1:ab", dirs: DIRS, cgroup }, { fsApi, self: 1 });
  assert.deepEqual(
    found.map((p) => [p.pid, p.why]),
    [
      [20, `in the file's cgroup ${cgroup}`],
      [21, `in the file's cgroup ${cgroup}/inner`],
    ],
  );
  // Without a cgroup (not root: the runner made none) only the marker and the folders count.
  assert.deepEqual(leftoverProcesses({ marker: "test.restart-trace.js:1:ab", dirs: DIRS }, { fsApi, self: 1 }), []);
});

test("the cgroup v2 hierarchy's mount and a process's v2 cgroup, read from their text", () => {
  const mountinfo = [
    "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw",
    "30 22 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
    "31 22 0:27 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
  ].join("\n");
  assert.equal(cgroupV2Mount(mountinfo), "/sys/fs/cgroup/unified");
  assert.equal(cgroupV2Mount(mountinfo.split("\n").slice(0, 2).join("\n")), null);
  assert.equal(cgroupV2Of("4:memory:/process_api/x\n0::/user.slice/a\n"), "/user.slice/a");
  assert.equal(cgroupV2Of("4:memory:/process_api/x\n"), null);
});
