// What a process tree did to files, and with whose credentials, read from an `strace -f -y` log:
// the design test of issue 29 (test.privilege.js, test.restart-trace.js) checks with it that root
// does only what only root can. Pure: the log's text in, facts out; the caller runs strace
// (straceArgs) and looks at the files the log names (which exec'd files are setuid root, which
// libraries the loader maps for the host), and passes those facts in.
//
// Each syscall is attributed to the task that made it, to the program image that task runs (its
// last successful execve) and to its credentials, rebuilt from the log: a task starts with its
// parent's at clone/fork, set*id calls change them as the kernel does, an execve of a setuid-root
// file makes the effective uid 0, and a task in a user namespace it made has no more than its
// creator outside it. A task is *ours* once it execs the host binary, and stays ours with
// everything it starts, until one of them execs a setuid-root program (sudo, pkexec and their
// helpers do their own work: PAM, sudoers, logs); that program's children are its own until one
// of them execs the host again. Each of root's operations also says whether its task had
// confined itself with Landlock by then (landlock_restrict_self, inherited by what it starts).
import path from "node:path";

/** The syscalls recorded: every way to open, create, rename, remove, link, chmod, chown or
 * enter a file, what changes who a task is (fork, exec, set*id, user namespaces), and a task
 * confining itself with Landlock (what its file operations may still reach). */
export const TRACED = [
  "open", "openat", "openat2", "creat", "truncate",
  "execve", "execveat", "chdir", "fchdir",
  "rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir", "mkdir", "mkdirat", "mknod", "mknodat",
  "link", "linkat", "symlink", "symlinkat",
  "chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat",
  "mount", "umount2",
  "clone", "clone3", "fork", "vfork", "unshare",
  "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid", "setfsgid", "setgroups",
  "landlock_restrict_self",
];

/**
 * strace's arguments (before the command, or before `-p PID`) to record into `log`: follow every
 * child (-f), decode descriptors as paths (-y: also `AT_FDCWD</cwd>`), whole paths (-s 4096),
 * no attach/detach chatter (-q; exits are kept, they end a pid's life before it is reused).
 * Not --seccomp-bpf: Debian 12's strace 6.1 sets no_new_privs for it, and sudo and pkexec then
 * refuse to run (strace >= 6.3 sets it only when it must).
 */
export function straceArgs(log) {
  return ["-f", "-q", "-y", "-s", "4096", "-o", log, "-e", `trace=${TRACED.join(",")}`];
}

// ---------------------------------------------------------------------------------------------
// The log's lines.

const LINE = /^(\d+)\s+(.*)$/;
const EXIT = /^\+\+\+ (?:exited with (\d+)|killed by (\w+)(?: \(core dumped\))?|superseded by execve in pid (\d+)) \+\+\+$/;
const RESUMED = /^<\.\.\. ([\w?]+) resumed>(.*)$/;
const UNFINISHED = " <unfinished ...>";

/** Bytes of strace's escapes (\\ \" \n \t \r \v \f \xHH \NNN) as text. */
export function unescape(text) {
  const bytes = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== "\\") {
      bytes.push(...Buffer.from(c, "utf8"));
      continue;
    }
    const n = text[++i];
    const simple = { n: 10, t: 9, r: 13, v: 11, f: 12, "\\": 92, '"': 34 }[n];
    if (simple !== undefined) {
      bytes.push(simple);
    } else if (n === "x") {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (/[0-7]/.test(n)) {
      let digits = n;
      while (digits.length < 3 && /[0-7]/.test(text[i + 1] ?? "")) {
        digits += text[++i];
      }
      bytes.push(parseInt(digits, 8));
    } else {
      bytes.push(...Buffer.from(n ?? "", "utf8"));
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/**
 * `NAME(ARGS) = RET` as {name, args: [raw text of each argument], ret: raw text} or null. The
 * arguments are split at top-level commas: quoted strings, (), [], {} and the `<path>` strace -y
 * puts after a descriptor are kept whole.
 */
export function splitCall(text) {
  const open = text.indexOf("(");
  if (open <= 0) {
    return null;
  }
  const name = text.slice(0, open);
  const args = [];
  let depth = 0;
  let start = open + 1;
  let i = open + 1;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === "\\") i++;
      }
    } else if (c === "<" && /(?:\d|AT_FDCWD)$/.test(text.slice(start, i))) {
      for (i++; i < text.length && text[i] !== ">"; i++) {
        if (text[i] === "\\") i++;
      }
    } else if ("([{".includes(c)) {
      depth++;
    } else if (")]}".includes(c)) {
      if (depth === 0) {
        break;
      }
      depth--;
    } else if (c === "," && depth === 0) {
      args.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (i >= text.length) {
    return null; // cut short (a task killed in the call)
  }
  const last = text.slice(start, i).trim();
  if (last !== "" || args.length > 0) {
    args.push(last);
  }
  const ret = /^\s*=\s*(.*)$/.exec(text.slice(i + 1));
  return { name, args, ret: ret ? ret[1] : null };
}

/** A return value: {value (number, or null for `?`), errno, path (of a returned descriptor)}. */
export function parseReturn(text) {
  if (text === null) {
    return { value: null, errno: null, path: null };
  }
  const m = /^(-?\d+|0x[0-9a-f]+|\?)(?:<((?:\\.|[^>\\])*)>)?(?:\s+(E[A-Z0-9]+)\b)?/.exec(text);
  if (!m) {
    return { value: null, errno: null, path: null };
  }
  const value = m[1] === "?" ? null : Number(m[1]);
  const decorated = m[2] === undefined ? null : unescape(m[2]);
  return { value, errno: m[3] ?? null, path: decorated?.startsWith("/") ? decorated : null };
}

/**
 * The log as calls and exits in order: {seq, pid, kind: "call", name, args, ret, text} (an
 * unfinished call joined with its resumption, at the place it started) or {seq, pid, kind:
 * "exit"} (exited or killed).
 */
export function parseLog(text) {
  const out = [];
  const pending = new Map(); // pid -> the unfinished call's entry
  let seq = 0;
  for (const raw of text.split("\n")) {
    const m = LINE.exec(raw);
    if (!m) {
      continue;
    }
    const pid = Number(m[1]);
    const rest = m[2];
    const exit = EXIT.exec(rest);
    if (exit) {
      if (exit[3]) {
        // A thread's execve took over this (leader's) pid: the call goes on, and the task lives
        // on, as this pid.
        const by = Number(exit[3]);
        const entry = pending.get(by);
        if (entry) {
          pending.delete(by);
          entry.pid = pid;
          pending.set(pid, entry);
        }
        continue;
      }
      out.push({ seq: seq++, pid, kind: "exit", text: raw });
      continue;
    }
    if (rest.startsWith("--- ")) {
      continue; // a signal
    }
    const resumed = RESUMED.exec(rest);
    if (resumed) {
      const entry = pending.get(pid);
      pending.delete(pid);
      if (entry) {
        Object.assign(entry, decode(`${entry.head}${resumed[2]}`), { text: `${entry.text}\n${raw}` });
        delete entry.head;
      } else {
        // Resumed in another pid (a thread's execve, "superseded"): only its name is known.
        out.push({ seq: seq++, pid, kind: "call", name: resumed[1], args: [], ret: parseReturn(null), text: raw });
      }
      continue;
    }
    if (rest.endsWith(UNFINISHED)) {
      const head = rest.slice(0, -UNFINISHED.length);
      const entry = { seq: seq++, pid, kind: "call", name: head.slice(0, head.indexOf("(")), args: [], ret: parseReturn(null), head, text: raw };
      pending.set(pid, entry);
      out.push(entry);
      continue;
    }
    const call = decode(rest);
    if (call.name) {
      out.push({ seq: seq++, pid, kind: "call", ...call, text: raw });
    }
  }
  for (const entry of pending.values()) {
    delete entry.head; // never resumed (killed in the call): arguments as far as they went
  }
  return out;
}

function decode(text) {
  const call = splitCall(text);
  if (!call) {
    return { name: text.slice(0, Math.max(0, text.indexOf("("))), args: [], ret: parseReturn(null) };
  }
  return { name: call.name, args: call.args, ret: parseReturn(call.ret) };
}

// ---------------------------------------------------------------------------------------------
// Arguments.

/** A quoted string argument's text, or null. */
function str(arg) {
  const m = /^"((?:\\.|[^"\\])*)"/.exec(arg ?? "");
  return m ? unescape(m[1]) : null;
}

/** The path behind a descriptor argument (`3</p>`, `AT_FDCWD</cwd>`), `cwd` for a bare
 * AT_FDCWD, null for what is no file (a socket, a pipe) or not known. */
function fdPath(arg, cwd) {
  const m = /^(?:\d+|AT_FDCWD)<((?:\\.|[^>\\])*)>$/.exec(arg ?? "");
  if (m) {
    const p = unescape(m[1]);
    return p.startsWith("/") ? p.replace(/ \(deleted\)$/, "") : null;
  }
  return arg === "AT_FDCWD" ? cwd : null;
}

/** `p` (absolute, or relative to `dir`) without `.`, `..` or doubled slashes; null if unknown. */
export function resolvePath(dir, p) {
  if (p === null || p === undefined) {
    return null;
  }
  if (p.startsWith("/")) {
    return path.posix.normalize(p);
  }
  if (!dir) {
    return null;
  }
  return path.posix.normalize(p === "" ? dir : `${dir}/${p}`);
}

const WRITE_FLAGS = /\b(?:O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND|O_TMPFILE)\b/;

/** The number of a uid/gid argument (-1: unchanged). */
function id(arg) {
  const n = Number(arg);
  return Number.isInteger(n) ? n : -1;
}

/**
 * What a file syscall touches: [{path, write}] and its kind ("open", "exec", "chdir", "change",
 * "mount"), with `cwd` for paths relative to the current folder. Null for other syscalls.
 */
export function fileOp(call, cwd) {
  const a = call.args;
  const at = (dirArg, pathArg) => {
    const p = str(pathArg);
    return p !== null && p.startsWith("/") ? resolvePath(null, p) : resolvePath(fdPath(dirArg, cwd), p);
  };
  const rel = (pathArg) => resolvePath(cwd, str(pathArg));
  const change = (...paths) => ({ kind: "change", paths: paths.map((p) => ({ path: p, write: true })) });
  switch (call.name) {
    case "open":
    case "openat":
    case "openat2":
    case "creat": {
      const requested = call.name === "open" || call.name === "creat" ? rel(a[0]) : at(a[0], a[1]);
      const flags = call.name === "creat" ? "O_CREAT|O_WRONLY|O_TRUNC" : call.name === "openat2" ? (/flags=([^,}]*)/.exec(a[2] ?? "")?.[1] ?? "") : (call.name === "open" ? a[1] : a[2]) ?? "";
      const write = WRITE_FLAGS.test(flags);
      const pathOnly = /\bO_PATH\b/.test(flags) && !write;
      const paths = [{ path: requested, write, pathOnly }];
      if (call.ret.path && call.ret.path !== requested) {
        paths.push({ path: call.ret.path, write, pathOnly, opened: true }); // where it led (a symlink's target)
      }
      return { kind: "open", paths };
    }
    case "truncate":
      return change(rel(a[0]));
    case "execve":
      return { kind: "exec", paths: [{ path: rel(a[0]), write: false }] };
    case "execveat":
      return { kind: "exec", paths: [{ path: at(a[0], a[1]), write: false }] };
    case "chdir":
      return { kind: "chdir", paths: [{ path: rel(a[0]), write: false }] };
    case "fchdir":
      return { kind: "chdir", paths: [{ path: fdPath(a[0], cwd), write: false }] };
    case "rename":
    case "link":
      return change(rel(a[0]), rel(a[1]));
    case "renameat":
    case "renameat2":
    case "linkat":
      return change(at(a[0], a[1]), at(a[2], a[3]));
    case "unlink":
    case "rmdir":
    case "mkdir":
    case "mknod":
    case "chmod":
    case "chown":
    case "lchown":
      return change(rel(a[0]));
    case "unlinkat":
    case "mkdirat":
    case "mknodat":
    case "fchmodat":
    case "fchownat":
      return change(at(a[0], a[1]));
    case "symlink":
      return change(rel(a[1]));
    case "symlinkat":
      return change(at(a[1], a[2]));
    case "fchmod":
    case "fchown":
      return change(fdPath(a[0], cwd));
    case "mount":
      return { kind: "mount", paths: [{ path: rel(a[1]), write: true }] };
    case "umount2":
      return { kind: "mount", paths: [{ path: rel(a[0]), write: true }] };
    default:
      return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Where root may touch files.

/** tracefs, where the privileged part arms its instances, and their names' beginning
 * (native-host/src/tracer/arm.rs PREFIX): the only folders there root may write beneath. */
const TRACEFS = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
const INSTANCE_PREFIX = "about-startup-";
/** The C library's name service (the invoking user's groups, read before dropping to them under
 * sudo): nsswitch.conf, the files it names, and the folders systemd's NSS module looks in for
 * user records. World-readable system files no user can change; read only. The folders are the
 * list Debian 12's libnss_systemd.so.2 (systemd 252, built for a split /usr) carries, in its
 * order (`strings -n 3 libnss_systemd.so.2 | grep userdb$`), after the Varlink socket folder. */
export const NAME_SERVICE = ["/etc/nsswitch.conf", "/etc/passwd", "/etc/group"];
export const NAME_SERVICE_DIRS = ["/run/systemd/userdb", "/etc/userdb", "/run/userdb", "/run/host/userdb", "/usr/local/lib/userdb", "/usr/lib/userdb", "/lib/userdb"];

const under = (p, dir) => p === dir || p.startsWith(`${dir}/`);
/** A folder above a name-service path ("/", "/etc", "/run/systemd"…): opened O_PATH on the way. */
const aboveNameService = (p) => [...NAME_SERVICE, ...NAME_SERVICE_DIRS].some((n) => p === "/" || n.startsWith(`${p}/`));

/**
 * The /proc files root's part may read (issue 38): the listing of processes and each one's
 * `status`, `stat` and `task` folder (the tree is found from every process's parent: the tracer
 * reads no more of another process), anything of its own (`self`, its own pid: the C library
 * and Rust's runtime read `maps`), `/proc/kpageflags`, Yama's `ptrace_scope` and
 * `cap_last_cap` (capability code reads it). Never another
 * process's `environ`, `mem`, `maps`, `cmdline`, nor `/proc/kcore` and the like.
 */
function procRootMayRead(p, self) {
  if (["/proc", "/proc/kpageflags", "/proc/sys/kernel/yama/ptrace_scope", "/proc/sys/kernel/cap_last_cap"].includes(p)) {
    return true;
  }
  const own = /^\/proc\/(self|thread-self)(\/|$)/.test(p) || (self !== null && under(p, `/proc/${self}`));
  return own || /^\/proc\/\d+\/(status|stat|task(\/\d+(\/status)?)?)$/.test(p);
}

/**
 * Whether root may touch `path` this way, and the area it falls in: tracefs (read; write only
 * beneath its own instances, `instances/about-startup-*`, or mount it), /proc (read: only what
 * `procRootMayRead` lists; `self` is the task's pid), no other sysfs, /dev/null, the name service (read; the folders above it O_PATH),
 * `/etc/ld.so.cache` (read), the loader's own libraries (`loaderFiles`, read, and only while the
 * loader maps them: `loading`, see analyse), entering "/" (chdir). Everything else is the user's
 * business or nobody's. `kind` is fileOp's.
 */
export function rootMay(kind, { path: p, write, pathOnly = false }, { loaderFiles = new Set(), loading = false, self = null } = {}) {
  if (p === null) {
    return { ok: false, area: "unknown path" };
  }
  if (kind === "exec") {
    return { ok: false, area: "exec" }; // root's part execs nothing
  }
  if (TRACEFS.some((d) => under(p, d))) {
    // Written only beneath the tracer's own instances (issue 38: a global event's `enable`
    // written by root passed before), or mounted where it is absent.
    const own = TRACEFS.some((d) => p.startsWith(`${d}/instances/${INSTANCE_PREFIX}`));
    return { ok: !write || own || (kind === "mount" && TRACEFS.includes(p)), area: "tracefs" };
  }
  if (kind === "chdir") {
    return { ok: p === "/" || under(p, "/proc") || under(p, "/sys"), area: "chdir" };
  }
  if (under(p, "/proc")) {
    return { ok: !write && procRootMayRead(p, self), area: "proc" };
  }
  if (under(p, "/sys")) {
    // Root's part reads nothing of sysfs but tracefs (above).
    return { ok: false, area: "sysfs" };
  }
  if (p === "/dev/null") {
    return { ok: true, area: "device" };
  }
  if (p === "/etc/ld.so.cache") {
    return { ok: !write, area: "loader" };
  }
  if (loaderFiles.has(p)) {
    // The same file opened later is the host reading a library someone maps (fault sites).
    return loading ? { ok: !write, area: "loader" } : { ok: false, area: "library" };
  }
  if (NAME_SERVICE.includes(p) || NAME_SERVICE_DIRS.some((d) => under(p, d)) || (pathOnly && aboveNameService(p))) {
    return { ok: !write, area: "name service" };
  }
  return { ok: false, area: "other" };
}

// ---------------------------------------------------------------------------------------------
// Tasks and credentials.

/** Credentials: real, effective, saved and filesystem uid and gid, supplementary groups. */
export function creds(uid, gid = uid, groups = [gid]) {
  return { ruid: uid, euid: uid, suid: uid, fsuid: uid, rgid: gid, egid: gid, sgid: gid, fsgid: gid, groups: [...groups] };
}

/** Whether file access is checked as root: the effective or filesystem uid 0 outside any user
 * namespace the task made (inside one, it has its creator's rights outside, no more). */
export function isRoot(task) {
  if (task.nsOuterEuid !== null) {
    return task.nsOuterEuid === 0;
  }
  return task.creds.euid === 0 || task.creds.fsuid === 0;
}

/** The kernel's set*id rules, applied to `c` for a successful `name(args)`. Pure. */
export function applySetId(c, name, args, returned) {
  if (name === "setgroups") {
    const groups = (/\[([^\]]*)\]/.exec(args[1] ?? "")?.[1] ?? "").split(",").map((g) => g.trim()).filter(Boolean).map(Number);
    return returned === 0 ? { ...c, groups } : c;
  }
  // The uid calls and the gid calls follow the same rules, each on its own four ids.
  const m = /^set(|re|res|fs)(u|g)id$/.exec(name);
  if (!m) {
    return c;
  }
  const [kind, u] = [m[1], m[2]];
  const [r, e, sv, fs] = ["r", "e", "s", "fs"].map((k) => `${k}${u}id`);
  const next = { ...c, groups: [...c.groups] };
  const privileged = c.euid === 0; // CAP_SETUID/CAP_SETGID: root's, in the initial namespace
  const [a, b, s] = args.map(id);
  if (kind === "fs") {
    // Returns the old id whether or not it changed: it changes when allowed.
    if (privileged || [c[r], c[e], c[sv], c[fs]].includes(a)) next[fs] = a;
    return next;
  }
  if (kind === "") {
    if (privileged) {
      next[r] = next[sv] = a;
    }
    next[e] = a;
  } else {
    if (a !== -1) next[r] = a;
    if (b !== -1) next[e] = b;
    if (kind === "res" && s !== -1) next[sv] = s;
    if (kind === "re" && (a !== -1 || (b !== -1 && b !== c[r]))) next[sv] = next[e];
  }
  next[fs] = next[e];
  return returned === 0 ? next : c;
}

const FORKS = new Set(["clone", "clone3", "fork", "vfork"]);
const SET_IDS = new Set(["setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid", "setfsgid", "setgroups"]);

/**
 * Analyses a parsed log (parseLog). Options:
 * - roots: [{pid, creds, image, ours, cwd, confined}] the tasks the log starts with (the command strace
 *   ran, or each thread strace attached to with -p);
 * - hostImages: Set of paths of the host binary (a task that execs one is ours);
 * - setuidRoot: Set of paths of setuid-root programs among those exec'd (execvePaths);
 * - loaderFiles: Set of the libraries the loader maps for the host (ldd) and the name service's
 *   modules with theirs (rootMay: allowed only while the loader maps them).
 * Returns {rootOps, violations, hostRuns, unattributed, tasks}: every file operation an ours
 * task made with root's credentials (each with `ok`, its area, whether the task was confined
 * by Landlock then, and the log text); those not
 * allowed; each task that exec'd a host image (pid, argv text, whether it ever had root's
 * credentials); the pids whose lines no clone in the log explains.
 */
export function analyse(calls, { roots, hostImages = new Set(), setuidRoot = new Set(), loaderFiles = new Set() }) {
  // Each pid's life (a generation) ends at its exit; a pid reused later is another task.
  const lives = new Map(); // pid -> [[entries...], ...]
  for (const e of calls) {
    const list = lives.get(e.pid) ?? lives.set(e.pid, [[]]).get(e.pid);
    list.at(-1).push(e);
    if (e.kind === "exit") {
      list.push([]);
    }
  }
  const bound = new Map(); // pid -> number of lives bound to a task so far
  const take = (pid) => {
    const n = bound.get(pid) ?? 0;
    bound.set(pid, n + 1);
    return lives.get(pid)?.[n] ?? [];
  };

  const rootOps = [];
  const hostRuns = [];
  const tasks = [];
  const queue = [];
  for (const r of roots) {
    queue.push({ pid: r.pid, creds: r.creds, image: r.image ?? null, ours: Boolean(r.ours), cwd: r.cwd ?? null, nsOuterEuid: null, confined: Boolean(r.confined), loading: false, entries: take(r.pid) });
  }
  while (queue.length > 0) {
    const task = queue.shift();
    tasks.push(task);
    let hostRun = null;
    for (const e of task.entries) {
      if (e.kind !== "call") {
        continue;
      }
      const ok = e.ret.value !== null && e.ret.value >= 0;
      // What the task touches, with the credentials it has while it does.
      const op = fileOp(e, task.cwd);
      if (op) {
        // The loader maps a program's libraries right after its execve, each after
        // /etc/ld.so.cache (also for a later dlopen: the name service's modules); the same
        // file opened at another time is not the loader's.
        const mays = op.paths.map((p) => rootMay(op.kind, p, { loaderFiles, loading: task.loading, self: task.pid }));
        if (task.ours && isRoot(task)) {
          op.paths.forEach((p, i) => {
            rootOps.push({ pid: task.pid, image: task.image, syscall: e.name, kind: op.kind, path: p.path, write: p.write, ok: mays[i].ok, area: mays[i].area, failed: !ok, confined: task.confined, text: e.text });
          });
        }
        task.loading = op.kind === "open" && mays.every((m) => m.area === "loader");
      }
      const cwdHint = /^(?:AT_FDCWD)<((?:\\.|[^>\\])*)>$/.exec(e.args[0] ?? "");
      if (cwdHint) {
        task.cwd = unescape(cwdHint[1]);
      }
      if (!ok) {
        continue;
      }
      if (e.name === "chdir" || e.name === "fchdir") {
        task.cwd = op.paths[0].path ?? task.cwd;
      } else if (e.name === "execve" || e.name === "execveat") {
        const image = op.paths[0].path;
        task.image = image;
        task.loading = true;
        if (hostImages.has(image)) {
          task.ours = true;
        } else if (setuidRoot.has(image)) {
          task.ours = false; // sudo's, pkexec's own work
        }
        if (setuidRoot.has(image) && task.nsOuterEuid === null) {
          task.creds = { ...task.creds, euid: 0, suid: 0, fsuid: 0 };
        } else {
          task.creds = { ...task.creds, suid: task.creds.euid };
        }
        hostRun = hostImages.has(image) ? { pid: task.pid, image, argv: e.args[1] ?? "", root: isRoot(task), text: e.text } : null;
        if (hostRun) {
          hostRuns.push(hostRun);
        }
      } else if (SET_IDS.has(e.name)) {
        task.creds = applySetId(task.creds, e.name, e.args, e.ret.value === null ? null : 0);
        if (hostRun && isRoot(task)) {
          hostRun.root = true;
        }
      } else if (e.name === "landlock_restrict_self") {
        // Landlock confines the calling thread, and what it starts from then on (a clone copies
        // its creator's domain); threads started before keep none.
        task.confined = true;
      } else if (e.name === "unshare" && /CLONE_NEWUSER/.test(e.args[0] ?? "") && task.nsOuterEuid === null) {
        task.nsOuterEuid = task.creds.euid;
      } else if (FORKS.has(e.name)) {
        const child = e.ret.value;
        const flags = e.args[e.name === "clone3" ? 0 : 1] ?? e.args.join(",");
        queue.push({
          pid: child,
          creds: { ...task.creds, groups: [...task.creds.groups] },
          image: task.image,
          ours: task.ours,
          cwd: task.cwd,
          nsOuterEuid: task.nsOuterEuid ?? (/CLONE_NEWUSER/.test(flags) ? task.creds.euid : null),
          confined: task.confined,
          loading: false,
          entries: take(child),
        });
      }
    }
  }
  const unattributed = [];
  for (const [pid, list] of lives) {
    const used = bound.get(pid) ?? 0;
    for (const life of list.slice(used)) {
      const calls = life.filter((e) => e.kind === "call");
      if (calls.length > 0) {
        unattributed.push({ pid, calls: calls.length, first: calls[0].text });
      }
    }
  }
  return { rootOps, violations: rootOps.filter((o) => !o.ok), hostRuns, unattributed, tasks };
}

/** Every path a task exec'd successfully (to find which are setuid root). */
export function execvePaths(calls) {
  const out = new Set();
  for (const e of calls) {
    if (e.kind === "call" && (e.name === "execve" || e.name === "execveat") && e.ret.value === 0) {
      const op = fileOp(e, null);
      if (op?.paths[0].path) {
        out.add(op.paths[0].path);
      }
    }
  }
  return out;
}

/** One line per violation (at most `limit`), for an assertion message. */
export function describe(violations, limit = 25) {
  const lines = violations.slice(0, limit).map((v) => `${v.pid} ${v.image ?? "?"}: ${v.syscall} ${v.path}${v.write ? " (write)" : ""} [${v.area}]`);
  if (violations.length > limit) {
    lines.push(`… and ${violations.length - limit} more`);
  }
  return lines.join("\n");
}

/** Root's operations counted by area, e.g. {tracefs: 120, proc: 80}. */
export function byArea(ops) {
  const out = {};
  for (const o of ops) {
    out[o.area] = (out[o.area] ?? 0) + 1;
  }
  return out;
}
