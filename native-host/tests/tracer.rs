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

use std::collections::HashSet;
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use about_startup_host::framing::{encode, read_frame, ReadOutcome};
use about_startup_host::os::sys::{fadvise, Advice};
use about_startup_host::tracer::protocol::{Ended, Refusal, Reply, Request};

const BIN: &str = env!("CARGO_BIN_EXE_about-startup-host");
/// A hang, not slowness: far beyond what any step takes.
const HUNG: Duration = Duration::from_secs(60);

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

struct Tracer {
    child: Child,
    to: Option<ChildStdin>,
    from: ChildStdout,
}

impl Tracer {
    fn start(env: &[(&str, &str)]) -> Tracer {
        let mut cmd = Command::new(BIN);
        cmd.arg("tracer")
            .env_remove("SUDO_UID")
            .env_remove("PKEXEC_UID")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("run the tracer");
        let to = child.stdin.take();
        let from = child.stdout.take().unwrap();
        Tracer { child, to, from }
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

/// A file of `mb` MiB of this test's, on disk, evicted.
fn cold_file(dir: &Path, name: &str, mb: usize) -> std::path::PathBuf {
    let path = dir.join(name);
    let mut data = vec![0u8; mb << 20];
    for (i, b) in data.iter_mut().enumerate() {
        *b = (i * 7 + name.len()) as u8;
    }
    std::fs::write(&path, &data).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    f.sync_all().unwrap();
    fadvise(&f, 0, 0, Advice::DontNeed).unwrap();
    path
}

/// The instances the tracer `pid` makes.
fn instances_of(pid: u32) -> Vec<std::path::PathBuf> {
    let base = Path::new("/sys/kernel/tracing/instances");
    [
        format!("about-startup-{pid}"),
        format!("about-startup-{pid}-system"),
    ]
    .into_iter()
    .map(|n| base.join(n))
    .collect()
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
    let tmp = tempfile::Builder::new()
        .prefix("about-startup-tracer-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let ours = cold_file(tmp.path(), "ours.bin", 8);
    let theirs = cold_file(tmp.path(), "theirs.bin", 8);
    let mut tracer = Tracer::start(&[]);
    assert!(
        matches!(tracer.next(), Some(Reply::Ready { .. })),
        "no Ready"
    );
    // The tree waits for a byte on its stdin, then reads its file (through a child: followed
    // too); another process reads another file at the same time.
    let mut tree = Command::new("sh")
        .args(["-c", "read go; cat \"$1\" > /dev/null", "sh"])
        .arg(&ours)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = i32::try_from(tree.id()).unwrap();
    tracer.send(&Request::Follow { pid, faults: false });
    assert_eq!(tracer.next(), Some(Reply::Armed), "not armed");
    let mut other = Command::new("sh")
        .args(["-c", "sleep 0.2; cat \"$1\" > /dev/null", "sh"])
        .arg(&theirs)
        .spawn()
        .unwrap();
    tree.stdin.take().unwrap().write_all(b"go\n").unwrap();
    assert!(tree.wait().unwrap().success());
    assert!(other.wait().unwrap().success());
    std::thread::sleep(Duration::from_millis(300));
    tracer.send(&Request::Stop {});
    let replies = tracer.rest();
    let lines: Vec<&String> = replies
        .iter()
        .flat_map(|r| match r {
            Reply::Lines { lines, .. } => lines.iter().collect(),
            _ => Vec::new(),
        })
        .collect();
    let tokens: Vec<(u64, u64)> = replies
        .iter()
        .flat_map(|r| match r {
            Reply::PageFlags { flags } => flags.clone(),
            _ => Vec::new(),
        })
        .collect();
    assert!(matches!(
        replies.last(),
        Some(Reply::Done {
            ended: Ended::Stop,
            ..
        })
    ));
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
    // back by token.
    let real = frames_of(&ours);
    assert!(!real.is_empty());
    let max_token = tokens.iter().map(|(t, _)| *t).max().unwrap_or(0);
    assert!(max_token as usize <= lines.len());
    for pfn in real.iter().filter(|p| **p > max_token) {
        let text = format!("pfn=0x{pfn:x} ");
        assert!(
            !lines.iter().any(|l| l.contains(&text)),
            "frame {pfn:#x} handed over"
        );
    }
    assert!(!tokens.is_empty(), "flags come back by token");
    // Its instances are gone.
    for dir in instances_of(tracer.child.id()) {
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}

#[test]
#[ignore = "needs root: arms tracefs through the tracer; npm test runs it with --ignored as root"]
fn it_ends_and_removes_its_instances_when_its_caller_goes_away() {
    assert!(is_root(), "run as root (npm test's root-only stage)");
    let mut tracer = Tracer::start(&[]);
    assert!(matches!(tracer.next(), Some(Reply::Ready { .. })));
    let made = instances_of(tracer.child.id());
    assert!(made.iter().all(|d| d.is_dir()), "armed: {made:?}");
    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    tracer.send(&Request::Follow {
        pid: i32::try_from(sleeper.id()).unwrap(),
        faults: true,
    });
    assert_eq!(tracer.next(), Some(Reply::Armed));
    drop(tracer.to.take()); // the caller goes away
    assert!(tracer.wait().success());
    for dir in made {
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

#[test]
#[ignore = "needs root: arms tracefs through the tracer; npm test runs it with --ignored as root"]
fn another_users_process_and_anything_but_a_request_are_refused() {
    assert!(is_root(), "run as root (npm test's root-only stage)");
    // Root's own route works for uid 0: a process of nobody's is not wholly root's.
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
    let mut tracer = Tracer::start(&[]);
    assert!(matches!(tracer.next(), Some(Reply::Ready { .. })));
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
    let mut tracer = Tracer::start(&[]);
    assert!(matches!(tracer.next(), Some(Reply::Ready { .. })));
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
    for dir in instances_of(tracer.child.id()) {
        assert!(!dir.exists(), "{} left behind", dir.display());
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
