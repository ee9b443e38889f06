//! Root's part, for real: the built binary's `tracer` (root itself's route: this test runs as
//! root and is the tracer's caller), spoken to over its protocol as the user's side does. A
//! process tree is followed while another process reads at the same time: only the tree's
//! reads come back, no physical page frame number does, and the tracer ends (removing its
//! tracefs instances) when its input closes. The refusals need no root.
//!
//! The tests that arm tracefs need root, so they are `#[ignore]`d in ordinary runs (cargo
//! reports them as ignored, never as passed); `npm test` runs them with `--ignored` as root
//! (scripts/test.mjs ROOT_TEST_FILES). The files read are made under /var/tmp (on disk: tmpfs
//! pages cannot be evicted).
//!
//! The tracer allows one session per invoking user. Root's own route (uid 0) would make these
//! tests fail whenever another tracer session of root's runs on the machine (another checkout's
//! root stage, a root `launch --cold --trace`: refused, `InstanceTaken`). So each test is a user
//! of its own, a uid no account has ([`user`]), and reaches the tracer by pkexec's route as
//! pkexec leaves it: the tracer runs as root with `PKEXEC_UID`, its parent a process wholly that
//! user's ([`Tracer::start`]); what it follows runs as that user too ([`as_user`]). Nothing of
//! the tracer changes for the tests.

#[path = "support/executable.rs"]
mod executable;

use std::collections::HashSet;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use about_startup_host::framing::{encode, read_frame, ReadOutcome};
use about_startup_host::os::sys::{self, fadvise, Advice};
use about_startup_host::tracer::protocol::{Ended, Refusal, Reply, Request};

const BIN: &str = env!("CARGO_BIN_EXE_about-startup-host");
/// A hang, not slowness: far beyond what any step takes.
const HUNG: Duration = Duration::from_secs(60);

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// These tests take turns (a flood of execs or 64 MiB of lines beside another test's recording
/// would only slow both), though each is a user of its own.
static SESSION: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    SESSION
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The invoking user of test `n`: a uid of its own that no account has (the tracer needs no
/// account: it checks processes' credentials), so no other session on the machine is theirs.
const fn user(n: u32) -> u32 {
    3_700_000_000 + n
}

/// `program` run as user `uid`, group `uid`, no other group (its arguments to be added):
/// setpriv execs it, so the child's pid is the program's.
fn as_user(uid: u32, program: &str) -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.arg(format!("--reuid={uid}"))
        .arg(format!("--regid={uid}"))
        .args(["--clear-groups", "--", program]);
    cmd
}

/// Wait until `child` (started by [`as_user`]) is the user's program: setpriv has changed its
/// ids and exec'd it (setpriv is root's for a moment, then undumpable until the exec).
fn became_user(child: &Child, uid: u32) {
    let pid = child.id();
    let ids = |key: &str| {
        let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        text.lines()
            .find_map(|l| {
                l.strip_prefix(key)
                    .map(|v| v.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
            })
            .unwrap_or_default()
    };
    let until = Instant::now() + HUNG;
    loop {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
        let theirs = |key: &str| {
            let v = ids(key);
            v.len() == 4 && v.iter().all(|u| *u == uid.to_string())
        };
        if theirs("Uid:") && theirs("Gid:") && !exe.ends_with("setpriv") {
            return;
        }
        assert!(
            Instant::now() < until,
            "process {pid} did not become uid {uid}'s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// What the user's process (the tracer's parent) runs once it is the user's: it waits for the
/// tracer to end and exits with its status (128 + the signal that ended it), as its caller.
const PARENT: &str = "import os\npid, st = os.waitpid(-1, 0)\nc = os.waitstatus_to_exitcode(st)\nos._exit(c if c >= 0 else 128 - c)";

struct Tracer {
    /// The user's process whose child the tracer is.
    child: Child,
    to: Option<ChildStdin>,
    from: ChildStdout,
}

impl Tracer {
    /// The tracer for user `uid` as pkexec leaves it: root, `PKEXEC_UID`, its parent wholly the
    /// user's. A root shell forks it (waiting until its parent is the user's, then exec'ing the
    /// host) and becomes the user's process itself (setpriv, then [`PARENT`]).
    fn start(uid: u32) -> Tracer {
        // (A shell gives an asynchronous list /dev/null as its stdin: the tracer's is fd 3.)
        let script = r#"exec 3<&0
        (
            want=$(printf 'Uid:\t%s\t%s\t%s\t%s' "$2" "$2" "$2" "$2")
            while [ "$(grep '^Uid:' /proc/$$/status)" != "$want" ]; do sleep 0.01; done
            PKEXEC_UID=$2 exec "$1" tracer <&3 3<&-
        ) &
        exec 3<&-
        exec setpriv --reuid="$2" --regid="$2" --clear-groups -- /usr/bin/python3 -c "$3" </dev/null >/dev/null"#;
        let mut child = Command::new("sh")
            .args(["-c", script, "sh", BIN, &uid.to_string(), PARENT])
            .env_remove("SUDO_UID")
            .env_remove("PKEXEC_UID")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("run the tracer");
        let to = child.stdin.take();
        let from = child.stdout.take().unwrap();
        Tracer { child, to, from }
    }

    /// The tracer's pid (the user's process's one child).
    fn pid(&self) -> u32 {
        let parent = self.child.id();
        let children =
            std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")).unwrap();
        let pids: Vec<u32> = children
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(pids.len(), 1, "the tracer's parent's children: {pids:?}");
        pids[0]
    }

    fn send(&mut self, req: &Request) {
        let body = serde_json::to_vec(req).unwrap();
        self.send_raw(&encode(&body));
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let to = self.to.as_mut().unwrap();
        to.write_all(bytes).unwrap();
        to.flush().unwrap();
    }

    fn next(&mut self) -> Option<Reply> {
        match read_frame(&mut self.from).unwrap() {
            ReadOutcome::Frame(body) => Some(serde_json::from_slice(&body).unwrap()),
            _ => None,
        }
    }

    /// Its first reply is Ready; anything else (another tracer session of root's on the machine
    /// is refused: one per user) fails the test with what the tracer said.
    fn ready(&mut self) {
        match self.next() {
            Some(Reply::Ready { .. }) => {}
            other => panic!("the tracer did not answer Ready: {other:?}"),
        }
    }

    /// Every reply until the tracer's output ends.
    fn rest(&mut self) -> Vec<Reply> {
        std::iter::from_fn(|| self.next()).collect()
    }

    fn wait(&mut self) -> std::process::ExitStatus {
        let until = Instant::now() + HUNG;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(Instant::now() < until, "the tracer did not end");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A folder of this test's own under /var/tmp (on disk: tmpfs pages cannot be evicted), which
/// the test's user may enter and read (its files are made 0644); removed when dropped.
fn private_dir() -> tempfile::TempDir {
    let tmp = tempfile::Builder::new()
        .prefix("about-startup-tracer-")
        .tempdir_in("/var/tmp")
        .unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    tmp
}

/// A file of `mb` MiB of this test's, on disk, evicted.
fn cold_file(dir: &Path, name: &str, mb: usize) -> std::path::PathBuf {
    let path = dir.join(name);
    let mut data = vec![0u8; mb << 20];
    for (i, b) in data.iter_mut().enumerate() {
        *b = (i * 7 + name.len()) as u8;
    }
    std::fs::write(&path, &data).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    f.sync_all().unwrap();
    fadvise(&f, 0, 0, Advice::DontNeed).unwrap();
    path
}

/// Pages of `path` (this test's own file) brought into the page cache since it was dropped:
/// cached, or cached and since reclaimed (cachestat's evicted count; the drop by
/// `POSIX_FADV_DONTNEED` leaves none). Without cachestat (Linux < 6.5), the pages cached.
fn brought_in(path: &Path) -> u64 {
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len();
    if sys::cachestat_available() {
        let c = sys::cachestat(&f, 0, len).unwrap().unwrap();
        return c.cached + c.evicted;
    }
    let mut core = Vec::new();
    sys::mincore_file(&f, len, &mut core).unwrap();
    core.iter().filter(|b| *b & 1 != 0).count() as u64
}

/// Every instance the tracer made is gone: it tears down on every way out.
fn assert_removed(made: &[std::path::PathBuf]) {
    for dir in made {
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}

/// A process of user `uid`'s to follow, ended when the test ends, however it ends.
struct Sleeper(std::process::Child);

impl Sleeper {
    fn start(uid: u32) -> Self {
        let sleeper = as_user(uid, "sleep").arg("30").spawn().unwrap();
        became_user(&sleeper, uid);
        Sleeper(sleeper)
    }

    fn pid(&self) -> i32 {
        i32::try_from(self.0.id()).unwrap()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The tracefs instances tracer `pid` holds open now (read from its descriptors).
fn instances_of(pid: u32) -> Vec<std::path::PathBuf> {
    let base = Path::new("/sys/kernel/tracing/instances");
    let mut out: Vec<std::path::PathBuf> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|t| {
            let rest = t.strip_prefix(base).ok()?;
            Some(base.join(rest.components().next()?))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A field of `/proc/<pid>/status` (`CapEff`, `NoNewPrivs`, `State`).
fn status_field(pid: u32, key: &str) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}:")))
        .unwrap()
        .trim()
        .to_owned()
}

/// `dev MAJ:MIN ino HEX` as mm_filemap_add_to_page_cache prints a file.
fn file_key(path: &Path) -> String {
    let m = std::fs::metadata(path).unwrap();
    let dev = m.dev();
    format!(
        "dev {}:{} ino {:x} ",
        libc::major(dev),
        libc::minor(dev),
        m.ino()
    )
}

/// The physical frames holding `path`'s pages now (root reads them from /proc/self/pagemap of a
/// mapping of the file): what must never be handed over.
fn frames_of(path: &Path) -> HashSet<u64> {
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    // SAFETY: a read-only shared mapping of a file we keep open; only touched to fault pages in.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            std::os::fd::AsRawFd::as_raw_fd(&f),
            0,
        )
    };
    assert_ne!(addr, libc::MAP_FAILED);
    let page = 4096usize;
    let mut out = HashSet::new();
    let mut pagemap = std::fs::File::open("/proc/self/pagemap").unwrap();
    for i in 0..len / page {
        // SAFETY: within the mapping.
        let _ = unsafe { std::ptr::read_volatile((addr as *const u8).add(i * page)) };
        let mut word = [0u8; 8];
        std::io::Seek::seek(
            &mut pagemap,
            std::io::SeekFrom::Start(((addr as usize / page + i) * 8) as u64),
        )
        .unwrap();
        pagemap.read_exact(&mut word).unwrap();
        let w = u64::from_ne_bytes(word);
        if w >> 63 == 1 {
            out.insert(w & ((1 << 55) - 1));
        }
    }
    // SAFETY: unmapping what was mapped above.
    unsafe { libc::munmap(addr, len) };
    out
}

#[test]
#[ignore = "needs root: arms tracefs through the tracer; npm test runs it with --ignored as root"]
fn only_the_followed_tree_is_handed_over_without_page_frames_and_it_ends_on_eof() {
    assert!(is_root(), "run as root (npm test's root-only stage)");
    let _turn = turn();
    let uid = user(1);
    let tmp = private_dir();
    let ours = cold_file(tmp.path(), "ours.bin", 8);
    let theirs = cold_file(tmp.path(), "theirs.bin", 8);
    // Another process reads its file, evicted each time, from before the trace until after it.
    let stop = tmp.path().join("stop");
    let mut other = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import os, sys\nwhile not os.path.exists(sys.argv[2]):\n    fd = os.open(sys.argv[1], os.O_RDONLY)\n    os.read(fd, 8 << 20)\n    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)\n    os.close(fd)",
        ])
        .arg(&theirs)
        .arg(&stop)
        .spawn()
        .unwrap();
    let mut tracer = Tracer::start(uid);
    tracer.ready();
    // The tree waits for a byte on its stdin, then reads its file (through a child: followed
    // too); another process reads another file at the same time. The child, `cat`, then reads
    // its stdin until the test closes it, after Stop: the tracer looks at every exec of the tree
    // before it hands the exec'd program's lines over and drops them where the program is gone
    // by then (fail closed: it can no longer tell whose it was), and on a loaded machine a `cat`
    // that ended at once was gone before the tracer looked.
    let mut tree = as_user(uid, "sh")
        .args(["-c", "read go; cat \"$1\" - > /dev/null", "sh"])
        .arg(&ours)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    became_user(&tree, uid);
    let pid = i32::try_from(tree.id()).unwrap();
    tracer.send(&Request::Follow { pid, faults: false });
    assert_eq!(tracer.next(), Some(Reply::Armed), "not armed");
    let made = instances_of(tracer.pid());
    assert_eq!(made.len(), 3, "{made:?}");
    let mut input = tree.stdin.take().unwrap();
    input.write_all(b"go\n").unwrap();
    let until = Instant::now() + HUNG;
    while brought_in(&ours) < 2048 {
        assert!(Instant::now() < until, "the tree did not read its file");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    tracer.send(&Request::Stop {});
    let replies = tracer.rest();
    drop(input);
    assert!(tree.wait().unwrap().success());
    let lines: Vec<&String> = replies
        .iter()
        .flat_map(|r| match r {
            Reply::Lines { lines, .. } => lines.iter().collect(),
            _ => Vec::new(),
        })
        .collect();
    std::fs::write(&stop, "").unwrap();
    assert!(other.wait().unwrap().success());
    assert!(
        matches!(
            replies.last(),
            Some(Reply::Done {
                ended: Ended::Stop,
                lost_events: 0,
            })
        ),
        "{:?}",
        replies.last()
    );
    assert!(tracer.wait().success());
    // The tree's reads came, the other process's did not.
    let (ours_key, theirs_key) = (file_key(&ours), file_key(&theirs));
    // Pages added: each line a folio of 2^order pages.
    let pages = |key: &str| -> u64 {
        lines
            .iter()
            .filter(|l| l.contains(key))
            .map(|l| {
                let order: u32 = l.rsplit("order=").next().unwrap().trim().parse().unwrap();
                1u64 << order
            })
            .sum()
    };
    assert_eq!(
        pages(&ours_key),
        2048,
        "every page of the tree's 8 MiB file"
    );
    assert_eq!(
        pages(&theirs_key),
        0,
        "the other process's reads were handed over"
    );
    // No frame the pages now live in is handed over: each is a token (1, 2, …), and flags come
    // back by token, only where the frame still shows a page of the page cache (on an LRU
    // list, not anonymous).
    let tokens: Vec<(u64, u64)> = replies
        .iter()
        .flat_map(|r| match r {
            Reply::PageFlags { flags } => flags.clone(),
            _ => Vec::new(),
        })
        .collect();
    let real = frames_of(&ours);
    assert!(!real.is_empty());
    let max_token = lines.len() as u64;
    for pfn in real.iter().filter(|p| **p > max_token) {
        let text = format!("pfn=0x{pfn:x} ");
        assert!(
            !lines.iter().any(|l| l.contains(&text)),
            "frame {pfn:#x} handed over"
        );
    }
    assert!(!tokens.is_empty(), "flags come back by token");
    for (token, word) in &tokens {
        assert!(*token <= max_token);
        assert_eq!(
            word & (1 << 5 | 1 << 12),
            1 << 5,
            "token {token}: {word:#x}"
        );
    }
    // Its instances are gone.
    assert_removed(&made);
}

#[test]
#[ignore = "needs root: arms tracefs through the tracer; npm test runs it with --ignored as root"]
fn it_ends_and_removes_its_instances_when_its_caller_goes_away() {
    assert!(is_root(), "run as root (npm test's root-only stage)");
    let _turn = turn();
    let uid = user(2);
    let mut tracer = Tracer::start(uid);
    tracer.ready();
    let made = instances_of(tracer.pid());
    assert_eq!(made.len(), 3, "armed: {made:?}");
    let sleeper = Sleeper::start(uid);
    tracer.send(&Request::Follow {
        pid: sleeper.pid(),
        faults: true,
    });
    assert_eq!(tracer.next(), Some(Reply::Armed));
    drop(tracer.to.take()); // the caller goes away
    assert!(tracer.wait().success());
    assert_removed(&made);
}

#[test]
#[ignore = "needs root: arms tracefs through the tracer; npm test runs it with --ignored as root"]
fn another_users_process_and_anything_but_a_request_are_refused() {
    assert!(is_root(), "run as root (npm test's root-only stage)");
    let _turn = turn();
    let uid = user(3);
    // A process of nobody's is not wholly the user's.
    let mut nobody = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "sleep",
            "30",
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let mut tracer = Tracer::start(uid);
    tracer.ready();
    tracer.send(&Request::Follow {
        pid: i32::try_from(nobody.id()).unwrap(),
        faults: false,
    });
    let replies = tracer.rest();
    assert!(
        matches!(
            replies.first(),
            Some(Reply::Refused {
                code: Refusal::NotYours,
                ..
            })
        ),
        "{replies:?}"
    );
    assert!(tracer.wait().success());
    let _ = nobody.kill();
    let _ = nobody.wait();
    // A request of another protocol: refused, and the session ends.
    let mut tracer = Tracer::start(uid);
    tracer.ready();
    let made = instances_of(tracer.pid());
    tracer.send_raw(&encode(
        br#"{"type":"follow","pid":1,"faults":false,"path":"/etc/shadow"}"#,
    ));
    let replies = tracer.rest();
    assert!(
        matches!(
            replies.first(),
            Some(Reply::Refused {
                code: Refusal::Malformed,
                ..
            })
        ),
        "{replies:?}"
    );
    assert!(tracer.wait().success());
    assert_removed(&made);
}

/// Every line handed over in `replies`.
fn handed_over(replies: &[Reply]) -> Vec<String> {
    replies
        .iter()
        .flat_map(|r| match r {
            Reply::Lines { lines, .. } => lines.clone(),
            _ => Vec::new(),
        })
        .collect()
}

fn signal(pid: u32, signal: libc::c_int) {
    // SAFETY: kill with the pid of a tracer this test started (its parent, ours, reaps it).
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0);
}

/// Follow `sh -c script` as user `uid` (it waits for a line on its stdin first), let it run to
/// its end, stop; every reply.
fn trace_script(uid: u32, script: &str) -> Vec<Reply> {
    let mut tracer = Tracer::start(uid);
    tracer.ready();
    let mut tree = as_user(uid, "sh")
        .args(["-c", &format!("read go; {script}")])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    became_user(&tree, uid);
    let pid = i32::try_from(tree.id()).unwrap();
    tracer.send(&Request::Follow { pid, faults: false });
    assert_eq!(tracer.next(), Some(Reply::Armed));
    tree.stdin.take().unwrap().write_all(b"go\n").unwrap();
    tree.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    tracer.send(&Request::Stop {});
    let replies = tracer.rest();
    assert!(tracer.wait().success());
    replies
}

/// Evict a file of the system's (on disk: it is read back from there).
fn evict(path: &Path) {
    let f = std::fs::File::open(path).unwrap();
    fadvise(&f, 0, 0, Advice::DontNeed).unwrap();
}

#[test]
#[ignore = "needs root: arms tracefs through the tracer; npm test runs it with --ignored as root"]
fn a_setgid_program_of_the_tree_is_not_handed_over_among_a_flood_of_execs() {
    assert!(is_root(), "run as root (npm test's root-only stage)");
    let _turn = turn();
    let uid = user(4);
    // A setgid program of the tree reads a file as a group the invoking user does not have: a
    // private copy of `cat`, setgid to group shadow (42), and a private file readable by that
    // group only. Both are the test's own, so no other process on the machine (sudo reads
    // /etc/shadow, chage's file) can cache the page between the evict and the read. The same read
    // by plain `cat`, as the user while the file is open to everyone, is the control: had the
    // tracer handed the setgid program's lines over, the file's page would be there.
    let tmp = private_dir();
    let secret = cold_file(tmp.path(), "secret", 1);
    std::os::unix::fs::chown(&secret, Some(0), Some(42)).unwrap();
    let sgcat = tmp.path().join("sgcat");
    executable::copy_executable(Path::new("/bin/cat"), &sgcat);
    std::os::unix::fs::chown(&sgcat, Some(0), Some(42)).unwrap();
    std::fs::set_permissions(&sgcat, std::fs::Permissions::from_mode(0o2755)).unwrap();
    let key = file_key(&secret);
    // The control reads with the shell's own `read`, not a program it execs: a short-lived
    // `cat` can be gone before the tracer looks at its exec, and its lines are then dropped
    // (fail closed; the control failed so on a loaded machine).
    let control = handed_over(&trace_script(
        uid,
        &format!("read -r line < {}", secret.display()),
    ));
    assert!(control.iter().any(|l| l.contains(&key)), "the control read");
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o640)).unwrap();
    evict(&secret);
    // Among 2,000 short execs of the tree (the exec instance fills faster than it is read, or
    // not: either way no line of the setgid program comes).
    let replies = trace_script(
        uid,
        &format!(
            "i=0; while [ $i -lt 2000 ]; do /bin/true; i=$((i+1)); done & {} {} > /dev/null; wait",
            sgcat.display(),
            secret.display()
        ),
    );
    let lines = handed_over(&replies);
    assert!(
        !lines.iter().any(|l| l.contains(&key)),
        "a setgid program's read of a file of its group handed over"
    );
    match replies.last() {
        Some(Reply::Done {
            ended: Ended::Stop, ..
        }) => assert!(!lines.is_empty(), "the rest of the tree is handed over"),
        Some(Reply::Done {
            ended: Ended::Lost,
            lost_events,
        }) => assert!(*lost_events > 0, "it says what was lost"),
        other => panic!("{other:?}"),
    }
}

#[test]
#[ignore = "needs root: arms tracefs through the tracer; npm test runs it with --ignored as root"]
fn a_reader_that_stops_reading_holds_up_neither_sigterm_nor_the_teardown() {
    assert!(is_root(), "run as root (npm test's root-only stage)");
    let _turn = turn();
    let uid = user(5);
    let tmp = private_dir();
    let big = cold_file(tmp.path(), "big.bin", 64);
    let mut tracer = Tracer::start(uid);
    tracer.ready();
    let made = instances_of(tracer.pid());
    let mut tree = as_user(uid, "sh")
        .args(["-c", "read go; cat \"$1\" > /dev/null", "sh"])
        .arg(&big)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    became_user(&tree, uid);
    let pid = i32::try_from(tree.id()).unwrap();
    tracer.send(&Request::Follow { pid, faults: true });
    assert_eq!(tracer.next(), Some(Reply::Armed));
    // 16k pages of lines, megabytes: far more than the pipe holds, and nobody reads them.
    tree.stdin.take().unwrap().write_all(b"go\n").unwrap();
    assert!(tree.wait().unwrap().success());
    std::thread::sleep(Duration::from_millis(500));
    signal(tracer.pid(), libc::SIGTERM);
    assert!(tracer.wait().success());
    assert_removed(&made);
}

#[test]
#[ignore = "needs root: arms tracefs through the tracer; npm test runs it with --ignored as root"]
fn the_terminals_signals_are_ignored_or_end_it_and_it_keeps_no_capability() {
    assert!(is_root(), "run as root (npm test's root-only stage)");
    let _turn = turn();
    let uid = user(6);
    let mut tracer = Tracer::start(uid);
    tracer.ready();
    let id = tracer.pid();
    let made = instances_of(id);
    // Armed and confined: root without a capability, no new privileges.
    assert_eq!(status_field(id, "CapEff"), "0000000000000000");
    assert_eq!(status_field(id, "CapPrm"), "0000000000000000");
    assert_eq!(status_field(id, "NoNewPrivs"), "1");
    // …and held to its allow-list of system calls (seccomp's filter mode, tracer/syscalls.rs).
    assert_eq!(status_field(id, "Seccomp"), "2");
    let sleeper = Sleeper::start(uid);
    tracer.send(&Request::Follow {
        pid: sleeper.pid(),
        faults: false,
    });
    assert_eq!(tracer.next(), Some(Reply::Armed));
    // Every thread, the session's reader among them, is held to it.
    let tasks: Vec<_> = std::fs::read_dir(format!("/proc/{id}/task"))
        .unwrap()
        .map(|t| std::fs::read_to_string(t.unwrap().path().join("status")).unwrap())
        .collect();
    assert!(tasks.len() >= 2, "{tasks:?}");
    for status in &tasks {
        assert!(status.lines().any(|l| l == "Seccomp:\t2"), "{status}");
    }
    // ^C, ^\, ^Z and a background job's reads and writes: ignored.
    for sig in [
        libc::SIGINT,
        libc::SIGQUIT,
        libc::SIGTSTP,
        libc::SIGTTIN,
        libc::SIGTTOU,
    ] {
        signal(id, sig);
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(tracer.child.try_wait().unwrap().is_none(), "it died");
    let state = status_field(id, "State");
    assert!(!state.starts_with('T'), "stopped: {state}");
    assert!(made.iter().all(|d| d.is_dir()));
    // A hang-up: it ends, saying so, and removes its instances.
    signal(id, libc::SIGHUP);
    let replies = tracer.rest();
    assert!(
        matches!(
            replies.last(),
            Some(Reply::Done {
                ended: Ended::Signal,
                ..
            })
        ),
        "{:?}",
        replies.last()
    );
    assert!(tracer.wait().success());
    assert_removed(&made);
}

#[test]
#[ignore = "needs root: arms tracefs through the tracer; npm test runs it with --ignored as root"]
fn one_session_per_user_and_what_a_killed_tracer_left_goes_at_the_next_start() {
    assert!(is_root(), "run as root (npm test's root-only stage)");
    let _turn = turn();
    let uid = user(7);
    let mut first = Tracer::start(uid);
    first.ready();
    let made = instances_of(first.pid());
    // A second session of the same user: refused while the first runs.
    let mut second = Tracer::start(uid);
    let replies = second.rest();
    assert!(
        matches!(
            replies.first(),
            Some(Reply::Refused {
                code: Refusal::InstanceTaken,
                ..
            })
        ),
        "{replies:?}"
    );
    assert!(second.wait().success());
    assert!(
        made.iter().all(|d| d.is_dir()),
        "the first's instances stay"
    );
    // The first, armed, killed with no teardown: its instances stay armed…
    let sleeper = Sleeper::start(uid);
    first.send(&Request::Follow {
        pid: sleeper.pid(),
        faults: false,
    });
    assert_eq!(first.next(), Some(Reply::Armed));
    signal(first.pid(), libc::SIGKILL);
    first.wait();
    let on = |dir: &Path| std::fs::read_to_string(dir.join("tracing_on")).unwrap_or_default();
    assert!(made.iter().all(|d| on(d).trim() == "1"), "left armed");
    // …until the next start removes them (it may make new ones of the same names: off).
    let mut next = Tracer::start(uid);
    next.ready();
    assert!(
        made.iter().all(|d| on(d).trim() != "1"),
        "a dead tracer's instances still armed"
    );
    drop(next.to.take());
    assert!(next.wait().success());
    assert_removed(&made);
}

#[test]
#[ignore = "needs root: it makes processes of nobody's and reads their /proc"]
fn follow_is_for_what_the_user_could_ptrace() {
    assert!(is_root(), "run as root (npm test's root-only stage)");
    use about_startup_host::tracer::who::traceable;
    let nobody = |code: &str| {
        Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "/usr/bin/python3",
                "-c",
                code,
            ])
            .spawn()
            .unwrap()
    };
    // ssh-agent's way: undumpable (PR_SET_DUMPABLE 0), and an ordinary process beside it.
    let agent =
        nobody("import ctypes, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); time.sleep(30)");
    let plain = nobody("import time; time.sleep(30)");
    let owner = |pid: u32| std::fs::metadata(format!("/proc/{pid}/status")).map(|m| m.uid());
    let ready = Instant::now() + HUNG;
    while owner(agent.id()).ok() != Some(0) || owner(plain.id()).ok() != Some(65534) {
        assert!(Instant::now() < ready, "the two processes did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let me = i32::try_from(std::process::id()).unwrap();
    let (a, p) = (
        i32::try_from(agent.id()).unwrap(),
        i32::try_from(plain.id()).unwrap(),
    );
    assert!(traceable(p, 65534, me, 0));
    assert!(!traceable(a, 65534, me, 0), "an undumpable process");
    // Yama 1: only a descendant of the process that asked; 2 and 3: no one but root.
    assert!(
        traceable(p, 65534, me, 1),
        "setpriv's child is this test's descendant"
    );
    assert!(!traceable(p, 65534, 1_999_999, 1));
    assert!(!traceable(p, 65534, me, 2));
    assert!(traceable(a, 0, me, 3), "root itself may");
    for mut c in [agent, plain] {
        let _ = c.kill();
        let _ = c.wait();
    }
}

/// No root needed: what pkexec could be asked to run besides `tracer` alone is refused before
/// anything happens (the polkit action pins `tracer`, the host checks it too).
#[test]
fn under_pkexec_only_the_tracer_alone_runs() {
    for args in [
        &["tracer", "x"][..],
        &["launch", "--cold", "--trace"],
        &["residency"],
    ] {
        let out = Command::new(BIN)
            .args(args)
            .env("PKEXEC_UID", "65534")
            .env_remove("SUDO_UID")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if is_root() || args[0] == "tracer" {
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(stderr.contains("tracer"), "{args:?}: {stderr}");
            assert!(out.stdout.is_empty(), "{args:?}");
        }
    }
}
