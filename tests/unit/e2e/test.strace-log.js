// strace-log.js on excerpts of real logs (tests/fixtures/strace/README.md says how each was
// recorded and cut): the expectations are read off those lines, not off the module.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { analyse, applySetId, byArea, creds, execvePaths, fileOp, isRoot, parseLog, parseReturn, resolvePath, rootMay, splitCall, straceArgs, TRACED, unescape } from "../../e2e/strace-log.js";

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures", "strace");
const PRIV_HOME = "/tmp/about-startup-priv-2PdKfE/home";
const PAGE_HOME = "/tmp/about-startup-e2e-3dX3k7/home";

/** A fixture's log parsed and analysed with the facts recorded beside it. */
function load(name) {
  const text = fs.readFileSync(path.join(FIXTURES, `${name}.strace`), "utf8");
  const facts = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8"));
  const calls = parseLog(text);
  const result = analyse(calls, {
    roots: facts.roots.map((r) => ({ ...r, creds: creds(r.creds.uid, r.creds.gid, r.creds.groups) })),
    hostImages: new Set(facts.hostImages),
    setuidRoot: new Set(facts.setuidRoot),
    loaderFiles: new Set(facts.loaderFiles),
  });
  return { text, facts, calls, result, task: (pid) => result.tasks.find((t) => t.pid === pid) };
}

describe("reading strace's lines", () => {
  it("splits a call at its top-level commas, keeping strings, structs and -y's <path> whole", () => {
    const line =
      'openat2(3</tmp/about-startup-priv-2PdKfE/home/firefox>, "libplant.so", {flags=O_RDONLY|O_NOCTTY|O_NONBLOCK|O_LARGEFILE|O_NOFOLLOW|O_CLOEXEC, resolve=RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH}, 24) = 4</tmp/about-startup-priv-2PdKfE/home/firefox/libplant.so>';
    const call = splitCall(line);
    assert.equal(call.name, "openat2");
    assert.equal(call.args.length, 4);
    assert.equal(call.args[0], "3</tmp/about-startup-priv-2PdKfE/home/firefox>");
    assert.equal(call.args[1], '"libplant.so"');
    assert.equal(call.args[3], "24");
    assert.deepEqual(parseReturn(call.ret), { value: 4, errno: null, path: "/tmp/about-startup-priv-2PdKfE/home/firefox/libplant.so" });
  });

  it("reads a failure's errno, and escapes as bytes", () => {
    assert.deepEqual(parseReturn("-1 EEXIST (File exists)"), { value: -1, errno: "EEXIST", path: null });
    assert.equal(unescape("a\\\"b\\x41\\101\\n"), 'a"bAA\n');
  });

  it("resolves a path against a folder without following anything", () => {
    assert.equal(resolvePath("/tmp/a", "b/../c"), "/tmp/a/c");
    assert.equal(resolvePath(null, "/etc//passwd"), "/etc/passwd");
    assert.equal(resolvePath(null, "relative"), null, "unknown, not guessed");
  });

  it("joins an unfinished call with its resumption, at the place it started", () => {
    const { calls } = load("sudo-launch-main");
    // 5169  clone(child_stack=NULL, flags=CLONE_NEWUSER|SIGCHLD <unfinished ...>
    // 5173  unshare(CLONE_NEWPID)             = 0
    // 5173  +++ exited with 0 +++
    // 5169  <... clone resumed>)              = 5173
    const clone = calls.findIndex((c) => c.pid === 5169 && c.name === "clone" && /CLONE_NEWUSER/.test(c.args[1] ?? ""));
    assert.ok(clone >= 0);
    assert.equal(calls[clone].ret.value, 5173);
    assert.equal(calls[clone + 1].pid, 5173);
    assert.equal(calls[clone + 1].name, "unshare");
    assert.equal(calls[clone + 2].kind, "exit");
  });

  it("records what strace is asked to: every file operation of the brief, what changes who a task is, and Landlock", () => {
    for (const name of ["openat", "openat2", "creat", "renameat2", "unlinkat", "linkat", "symlinkat", "fchmodat", "fchownat", "mkdirat", "mknodat", "chdir", "fchdir", "execve", "clone3", "vfork", "setresuid", "setgroups", "unshare", "landlock_restrict_self"]) {
      assert.ok(TRACED.includes(name), name);
    }
    const args = straceArgs("/tmp/x.strace");
    assert.ok(args.includes("-f") && args.includes("-y"));
    assert.ok(!args.includes("--seccomp-bpf"), "strace 6.1 would set no_new_privs: sudo and pkexec refuse to run");
  });
});

describe("what a call touches", () => {
  it("an open that followed a link: the path asked for and the file it led to", () => {
    const { calls } = load("sudo-library-link-main");
    const open = calls.find((c) => c.name === "openat" && c.args[1] === `"${PRIV_HOME}/firefox/libplant.so"`);
    const op = fileOp(open, PRIV_HOME);
    assert.equal(op.kind, "open");
    assert.deepEqual(op.paths.map((p) => p.path), [`${PRIV_HOME}/firefox/libplant.so`, "/tmp/about-startup-priv-2PdKfE/secret/libsecret.so"]);
    assert.ok(op.paths.every((p) => !p.write));
  });

  it("a call on a descriptor: the path strace -y shows for it", () => {
    const { calls } = load("sudo-launch-main");
    const chown = calls.find((c) => c.name === "fchown");
    assert.deepEqual(fileOp(chown, null).paths, [{ path: `${PRIV_HOME}/.local`, write: true }]);
  });
});

describe("whose credentials", () => {
  it("set*id calls as the kernel applies them: sudo's juggling, then the child's drop to the user", () => {
    const root = creds(0, 0, []);
    const user = applySetId(applySetId(applySetId(root, "setgroups", ["1", "[1001]"], 0), "setgid", ["1001"], 0), "setuid", ["1001"], 0);
    assert.deepEqual(user, creds(1001, 1001, [1001]));
    // Unprivileged: only the effective ids move.
    const asUser = applySetId(creds(1001), "setreuid", ["-1", "1001"], 0);
    assert.deepEqual(asUser, creds(1001));
    const failed = applySetId(root, "setuid", ["1001"], null);
    assert.deepEqual(failed, root, "a call that failed changes nothing");
  });

  it("sudo: its own work is not the host's; the host it starts runs as root; Firefox as the user", () => {
    const { result, task } = load("sudo-launch-main");
    assert.deepEqual(result.unattributed, []);
    // 5167 execs /usr/bin/sudo (setuid root): effective uid 0, its reads of sudoers are its own.
    assert.equal(task(5167).image, "/usr/bin/sudo");
    assert.equal(task(5167).ours, false);
    assert.ok(!result.rootOps.some((o) => /sudoers/.test(o.path)));
    // 5168: sudo's child, setresuid(0, 0, 0), then execve of the host.
    assert.deepEqual(result.hostRuns.map((h) => [h.pid, h.root]), [[5168, true]]);
    // 5169: setgroups([1001]), setgid(1001), setuid(1001), execve of Firefox.
    assert.equal(task(5169).image, "/var/tmp/about-startup-e2e-firefox-DF73r8/firefox-esr/firefox-esr");
    assert.deepEqual(task(5169).creds, creds(1001, 1001, [1001]));
    assert.equal(task(5169).ours, true, "what the host starts is the host's");
    assert.ok(!result.rootOps.some((o) => o.pid === 5169));
    // 5173: Firefox's child in a user namespace it made: no more than the user outside it.
    assert.equal(task(5173).nsOuterEuid, 1001);
  });

  it("a setuid-root program exec'd by the user: effective uid 0, real uid the user's", () => {
    const { task } = load("pkexec-refused-main");
    // 11235 (relaunch, uid 1001) forks 11350, which execs /usr/bin/pkexec and is refused.
    const c = task(11350).creds;
    assert.deepEqual([c.ruid, c.euid, c.suid, c.fsuid], [1001, 0, 0, 0]);
  });

  it("a pid used again after its task exited is another task, with its own program and credentials", () => {
    // Recorded in a fresh pid namespace with ns_last_pid set back: /bin/true as root (pid 6)
    // exits, then pid 6 again: setpriv (standing in for the host) drops to nobody, execs /bin/true.
    const { result } = load("pid-reuse");
    const sixes = result.tasks.filter((t) => t.pid === 6);
    assert.deepEqual(sixes.map((t) => [t.image, t.ours, t.creds.euid]), [["/bin/true", false, 0], ["/bin/true", true, 65534]]);
    assert.deepEqual(result.hostRuns.map((h) => [h.pid, h.root]), [[6, true]]);
    // Root's part of it: the loader's files, /proc and the name service are allowed; the
    // locale files it reads before dropping are not.
    const areas = byArea(result.rootOps);
    assert.ok(areas.loader >= 3 && areas.proc >= 3 && areas["name service"] >= 3, JSON.stringify(areas));
    assert.ok(result.violations.length > 0 && result.violations.every((v) => /locale|gconv/.test(v.path)), result.violations.map((v) => v.path).join("\n"));
  });

  it("pkexec: its threads, its chdir and its PAM are its own; the host it execs is root", () => {
    const { result, task } = load("pkexec-restart-main");
    assert.deepEqual(result.unattributed, []);
    assert.equal(task(9144).image, "/usr/lib/about-startup/about-startup-host", "pkexec exec'd the host");
    assert.ok(!result.rootOps.some((o) => o.path === "/root" || /pam\.d/.test(o.path)));
    assert.deepEqual(result.hostRuns.map((h) => [h.pid, h.root]), [[9058, false], [9144, true]]);
    // The user's own host read their state folder as the user (9057): not root's.
    assert.ok(!result.rootOps.some((o) => o.pid === 9057));
  });
});

describe("the privilege split (priv): root's part and the user's, from the split's own logs", () => {
  it("sudo trace --pid: the root parent touches only tracefs, /proc, the loader and the name service; the child drops to the user for good", () => {
    const { result, task } = load("sudo-trace-pid-split");
    assert.deepEqual(result.unattributed, []);
    // 18252: sudo's child, the host as root; it forks 18253 and stays root as the tracer.
    assert.deepEqual(result.hostRuns.map((h) => [h.pid, h.root]), [[18252, true]]);
    assert.deepEqual(byArea(result.rootOps.filter((o) => o.pid === 18252)), { loader: 12, proc: 7, "name service": 50, chdir: 1, tracefs: 12 });
    assert.deepEqual(result.violations, []);
    // 18253: setgroups([1001]), setresgid and setresuid to 1001, then setuid(0) fails (EPERM):
    // the user's, and nothing it does (the install, dpkg's lists, the state folder) is root's.
    assert.deepEqual(task(18253).creds, creds(1001, 1001, [1001]));
    assert.equal(task(18253).ours, true);
    assert.ok(!result.rootOps.some((o) => o.pid === 18253));
    // The tracer's own instances, made and removed by it.
    const instance = result.rootOps.filter((o) => /^\/sys\/kernel\/tracing\/instances\/about-startup-18252(?:-system)?$/.test(o.path));
    assert.deepEqual(instance.map((o) => o.syscall), ["mkdir", "mkdir", "rmdir", "rmdir"]);
  });

  it("systemd's name service walks to /lib/userdb, a folder Debian 12's module lists: /lib opened O_PATH on the way is allowed, nothing more", () => {
    const { result } = load("sudo-trace-pid-split");
    const lib = result.rootOps.filter((o) => o.path === "/lib");
    assert.deepEqual(lib.map((o) => [o.area, o.ok]), [["name service", true], ["name service", true]]);
    assert.ok(lib.every((o) => /O_PATH/.test(o.text)), "only O_PATH opens of it were seen");
    assert.equal(rootMay("open", { path: "/lib", write: false }).ok, false, "reading /lib itself is no name-service lookup");
    assert.equal(rootMay("open", { path: "/lib/x86_64-linux-gnu", write: false, pathOnly: true }).ok, false, "a folder beside the name service's");
    assert.equal(rootMay("open", { path: "/lib/userdb/u.user", write: false }).ok, true);
    assert.equal(rootMay("open", { path: "/lib/userdb/u.user", write: true }).ok, false);
  });

  it("Landlock: root's operations after its landlock_restrict_self are confined, those before are not; a thread it starts after inherits it", () => {
    const { result, task } = load("sudo-trace-pid-split");
    const host = result.rootOps.filter((o) => o.pid === 18252);
    const confined = (p) => host.filter((o) => o.path === p).map((o) => o.confined);
    // Before: its tracefs instance made and /proc/kpageflags opened; after: the followed
    // process (18157, the pid the user named) looked at, and the instances removed.
    assert.deepEqual(confined("/sys/kernel/tracing/instances/about-startup-18252"), [false, true]);
    assert.deepEqual(confined("/proc/kpageflags"), [false]);
    assert.deepEqual(confined("/proc/18157/status"), [true]);
    // 18252's thread started after it confined itself (its clone3 follows the call).
    const threads = result.tasks.filter((t) => t.pid !== 18252 && t.image === task(18252).image && isRoot(t));
    assert.ok(threads.length > 0 && threads.every((t) => t.confined), JSON.stringify(threads.map((t) => [t.pid, t.confined])));
    assert.equal(task(18253).confined, false, "the user's side is not Landlock-confined (it needs not be)");
  });

  it("defects planted in the real log of the tracer (issue 38) are violations: another's environ and maps, /proc/kcore, sysfs, a global event's enable", () => {
    const text = fs.readFileSync(path.join(FIXTURES, "sudo-trace-pid-split.strace"), "utf8");
    const facts = JSON.parse(fs.readFileSync(path.join(FIXTURES, "sudo-trace-pid-split.json"), "utf8"));
    const planted = [
      '18252 open("/proc/1/environ", O_RDONLY|O_CLOEXEC) = 27</proc/1/environ>',
      '18252 open("/proc/18157/maps", O_RDONLY|O_CLOEXEC) = 27</proc/18157/maps>',
      '18252 open("/proc/kcore", O_RDONLY|O_CLOEXEC) = 27</proc/kcore>',
      '18252 open("/sys/block/vda/queue/read_ahead_kb", O_RDONLY|O_CLOEXEC) = 27</sys/block/vda/queue/read_ahead_kb>',
      '18252 openat(AT_FDCWD</>, "/sys/kernel/tracing/events/sched/sched_process_exec/enable", O_WRONLY|O_CLOEXEC) = 27</sys/kernel/tracing/events/sched/sched_process_exec/enable>',
    ];
    const lines = text.split("\n");
    // Right after the tracer's last honest look at the followed process.
    const at = lines.findLastIndex((l) => l.startsWith('18252 open("/proc/18157/stat"'));
    lines.splice(at + 1, 0, ...planted);
    const analysed = (t) =>
      analyse(parseLog(t), {
        roots: facts.roots.map((r) => ({ ...r, creds: creds(r.creds.uid, r.creds.gid, r.creds.groups) })),
        hostImages: new Set(facts.hostImages),
        setuidRoot: new Set(facts.setuidRoot),
        loaderFiles: new Set(facts.loaderFiles),
      });
    assert.deepEqual(analysed(text).violations, [], "the real log alone passes");
    const bad = analysed(lines.join("\n")).violations.map((v) => v.path);
    assert.deepEqual(bad, ["/proc/1/environ", "/proc/18157/maps", "/proc/kcore", "/sys/block/vda/queue/read_ahead_kb", "/sys/kernel/tracing/events/sched/sched_process_exec/enable"]);
  });

  it("without the landlock_restrict_self line (a tracer that did not confine itself) the same looks are unconfined", () => {
    const text = fs.readFileSync(path.join(FIXTURES, "sudo-trace-pid-split.strace"), "utf8");
    const facts = JSON.parse(fs.readFileSync(path.join(FIXTURES, "sudo-trace-pid-split.json"), "utf8"));
    const result = analyse(parseLog(text.split("\n").filter((l) => !/landlock_restrict_self/.test(l)).join("\n")), {
      roots: facts.roots.map((r) => ({ ...r, creds: creds(r.creds.uid, r.creds.gid, r.creds.groups) })),
      hostImages: new Set(facts.hostImages),
      setuidRoot: new Set(facts.setuidRoot),
      loaderFiles: new Set(facts.loaderFiles),
    });
    assert.deepEqual(result.rootOps.filter((o) => o.confined), []);
  });
});

describe("what root did outside its part (today's main: all of the user's work)", () => {
  it("sudo launch: the loader's libraries and /proc are allowed; the install, dpkg's lists and the user's state folder are not", () => {
    const { result } = load("sudo-launch-main");
    const area = (p) => result.rootOps.find((o) => o.path === p)?.area;
    assert.equal(area("/etc/ld.so.cache"), "loader");
    assert.equal(area("/usr/lib/x86_64-linux-gnu/libc.so.6"), "loader");
    assert.equal(area("/proc/self/maps"), "proc");
    const bad = result.violations.map((v) => `${v.syscall} ${v.path}`);
    assert.ok(bad.includes("openat2 /var/tmp/about-startup-e2e-firefox-DF73r8/firefox-esr/application.ini"), bad.join("\n"));
    assert.ok(bad.includes("openat /var/lib/dpkg/info/firefox-esr.list"));
    assert.ok(bad.includes(`mkdirat ${PRIV_HOME}/.local`));
    assert.ok(bad.includes(`fchown ${PRIV_HOME}/.local/state/about-startup/traces`));
    assert.ok(result.violations.every((v) => v.pid === 5168), "only the host's own task");
  });

  it("a library read after the loader is done is not the loader's, and a link's target counts", () => {
    const { result } = load("sudo-library-link-main");
    const at = (p) => result.rootOps.filter((o) => o.path === p).map((o) => [o.area, o.ok]);
    // ld.so: mapped by the loader at the start, read again for the fault sites at the end.
    assert.deepEqual(at("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"), [["library", false], ["library", false]]);
    assert.deepEqual(at("/tmp/about-startup-priv-2PdKfE/secret/libsecret.so"), [["other", false]]);
    assert.deepEqual(at("/sys/kernel/tracing/instances/about-startup-9040"), [["tracefs", true], ["tracefs", true]], "mkdir and rmdir of its instance");
    assert.deepEqual(at("/"), [["name service", true]], "an O_PATH open of / reads nothing");
  });

  it("pkexec restart: root enters the user's working folder before it drops to the user, and reads and removes in their state folder", () => {
    const { result } = load("pkexec-restart-main");
    const bad = result.violations.map((v) => `${v.pid} ${v.syscall} ${v.path}`);
    assert.ok(bad.includes("9258 chdir /work/wt/privtest"), bad.join("\n"));
    assert.ok(bad.includes(`9144 unlinkat ${PAGE_HOME}/.local/state/about-startup/relaunch-request.json`));
  });

  it("pkexec refused: the host never runs as root, and nothing of root's is counted", () => {
    const { result, calls } = load("pkexec-refused-main");
    assert.deepEqual(result.unattributed, []);
    assert.ok(execvePaths(calls).has("/usr/bin/pkexec"));
    assert.deepEqual(result.hostRuns.map((h) => [h.pid, h.root]), [[11235, false]]);
    assert.deepEqual(result.rootOps, []);
  });

  it("the rule itself: tracefs is root's to write beneath its own instances; /proc and sysfs only to read; the user's files never", () => {
    assert.equal(rootMay("open", { path: "/sys/kernel/tracing/instances/about-startup-0-u1000/tracing_on", write: true }).ok, true);
    assert.equal(rootMay("rmdir", { path: "/sys/kernel/tracing/instances/about-startup-0", write: true }).ok, true);
    // Written outside its own instances (issue 38): a global event, another tool's instance.
    assert.equal(rootMay("open", { path: "/sys/kernel/tracing/events/sched/sched_process_exec/enable", write: true }).ok, false);
    assert.equal(rootMay("open", { path: "/sys/kernel/tracing/instances/x/tracing_on", write: true }).ok, false);
    assert.equal(rootMay("open", { path: "/sys/kernel/tracing/trace_pipe", write: false }).ok, true);
    assert.equal(rootMay("mount", { path: "/sys/kernel/tracing", write: true }).ok, true);
    assert.equal(rootMay("open", { path: "/proc/sys/vm/drop_caches", write: true }).ok, false);
    assert.equal(rootMay("open", { path: "/sys/block/vda/queue/read_ahead_kb", write: true }).ok, false);
    // Reads narrowed to what the tracer needs (issue 38): every process's status and task
    // folder, its own files, kpageflags, Yama; never another's environ, memory or maps, nor
    // /proc/kcore, nor sysfs outside tracefs.
    assert.equal(rootMay("open", { path: "/sys/block/vda/queue/read_ahead_kb", write: false }).ok, false);
    assert.equal(rootMay("open", { path: "/proc/4242/status", write: false }).ok, true);
    assert.equal(rootMay("open", { path: "/proc/4242/task", write: false }).ok, true);
    assert.equal(rootMay("open", { path: "/proc/kpageflags", write: false }).ok, true);
    assert.equal(rootMay("open", { path: "/proc/sys/kernel/yama/ptrace_scope", write: false }).ok, true);
    assert.equal(rootMay("open", { path: "/proc/self/maps", write: false }).ok, true);
    assert.equal(rootMay("open", { path: "/proc/77/maps", write: false }, { self: 77 }).ok, true, "its own maps");
    assert.equal(rootMay("open", { path: "/proc/78/maps", write: false }, { self: 77 }).ok, false, "another's maps");
    assert.equal(rootMay("open", { path: "/proc/1/environ", write: false }).ok, false);
    assert.equal(rootMay("open", { path: "/proc/1/mem", write: false }).ok, false);
    assert.equal(rootMay("open", { path: "/proc/kcore", write: false }).ok, false);
    assert.equal(rootMay("chdir", { path: "/home/u", write: false }).ok, false);
    assert.equal(rootMay("exec", { path: "/bin/mount", write: false }).ok, false, "root's part execs nothing");
    assert.equal(rootMay("open", { path: "/etc/shadow", write: false }).ok, false);
    assert.equal(rootMay("open", { path: "/etc/passwd", write: true }).ok, false);
  });

  it("a task no clone in the log explains is reported, not guessed", () => {
    const text = fs.readFileSync(path.join(FIXTURES, "pkexec-refused-main.strace"), "utf8");
    // Without the line that forks Firefox (11369), its lines belong to no known task.
    const cut = text.split("\n").filter((l) => !/= 11369$/.test(l)).join("\n");
    const facts = JSON.parse(fs.readFileSync(path.join(FIXTURES, "pkexec-refused-main.json"), "utf8"));
    const result = analyse(parseLog(cut), {
      roots: facts.roots.map((r) => ({ ...r, creds: creds(r.creds.uid, r.creds.gid, r.creds.groups) })),
      hostImages: new Set(facts.hostImages),
      setuidRoot: new Set(facts.setuidRoot),
    });
    assert.deepEqual(result.unattributed.map((u) => [u.pid, u.calls]), [[11369, 4]]);
  });
});
