//! What a running process has mapped, as an ordinary user can see it: /proc/<pid>/maps matched
//! by device and inode, /proc/<pid>/pagemap turned into file pages through each mapping's file
//! offset. A child process stands in for Firefox: this test binary itself, run with only its
//! `mapper_child` entry (ignored in ordinary runs), maps the fixture's libxul.so twice (at file
//! offset 0 and at page 600) and touches a few pages. No other program is needed, so the test
//! runs wherever `cargo test` does.

#[path = "support/install_fixture.rs"]
mod fixture;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;

use about_startup_host::pagecache::evict;
use about_startup_host::pagecache::residency::{self, FileReport, Group, ScanOptions, Status};
use fixture::Fixture;

/// The file the child maps (set only for the child).
const CHILD_FILE: &str = "ABOUT_STARTUP_TEST_MAP_FILE";

/// Not a test: the child process of `pagemap_shows_the_pages_a_process_touched`, started from
/// this same binary with `--ignored --exact mapper_child`.
#[test]
#[ignore = "the child process of pagemap_shows_the_pages_a_process_touched, not a test of its own"]
fn mapper_child() {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    let path = std::env::var_os(CHILD_FILE).expect("started by the pagemap test");
    let file = std::fs::File::open(path).unwrap();
    let len = usize::try_from(file.metadata().unwrap().len()).unwrap();
    let map = |offset: i64, len: usize| -> *const u8 {
        // SAFETY: a fresh shared read-only mapping of a file we hold open; checked for
        // MAP_FAILED before use and only read within `len`.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                offset,
            )
        };
        assert_ne!(p, libc::MAP_FAILED, "{}", std::io::Error::last_os_error());
        p.cast()
    };
    let page = 4096;
    let a = map(0, len);
    let b = map(600 * page as i64, 10 * page);
    // SAFETY: all three offsets lie inside their mappings (libxul.so here is 4 MiB).
    let touched = unsafe {
        [
            std::ptr::read_volatile(a),
            std::ptr::read_volatile(a.add(500 * page)),
            std::ptr::read_volatile(b),
        ]
    };
    std::hint::black_box(touched);
    println!("ready");
    std::io::stdout().flush().unwrap();
    // Keep the mappings until the parent closes our stdin.
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}

/// Kills the child when the test ends, even on a failed assertion.
struct Mapper(Child);

impl Drop for Mapper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_mapper(path: &std::path::Path) -> Mapper {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "mapper_child",
            "--nocapture",
            "--quiet",
        ])
        .env(CHILD_FILE, path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start this test binary as the mapping child");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    // The harness may print its own lines first ("running 1 test"); wait for ours.
    let mut line = String::new();
    while line.trim() != "ready" {
        line.clear();
        assert_ne!(
            out.read_line(&mut line).unwrap(),
            0,
            "the child exited before mapping"
        );
    }
    Mapper(child)
}

fn covers(ranges: &[[u64; 2]], page: u64) -> bool {
    ranges.iter().any(|[s, n]| page >= *s && page < s + n)
}

#[test]
fn pagemap_shows_the_pages_a_process_touched() {
    let fx = Fixture::new();
    let lib = fx.ff.join("libxul.so");
    let child = spawn_mapper(&lib);
    let pid = i32::try_from(child.0.id()).unwrap();

    let mut reports: Vec<FileReport> = Vec::new();
    let opts = ScanOptions {
        pid: Some(pid),
        include_mapped: true,
        image: None,
        ranges: true,
    };
    let summary = residency::scan(
        &fx.folder(),
        &fx.all(),
        &opts,
        &AtomicBool::new(false),
        &mut |r| {
            reports.push(r.clone());
        },
    )
    .unwrap();

    let r = reports.iter().find(|r| r.path == lib).unwrap();
    let mapped = r
        .mapped
        .as_ref()
        .expect("mapped is reported when the pid is known");
    assert_eq!(
        (mapped.source, mapped.pid, mapped.range_unit_pages),
        ("pagemap", pid, 1)
    );
    let ranges = mapped.ranges.as_ref().unwrap();
    // Fault-around may map neighbours of the touched pages, never less than them.
    for page in [0, 500, 600] {
        assert!(covers(ranges, page), "page {page} not in {ranges:?}");
    }
    assert!(mapped.pages >= 3 && mapped.pages < r.pages, "{mapped:?}");
    // Files not mapped by the child: mapped, with zero pages.
    let ini = reports
        .iter()
        .find(|r| r.path.ends_with("application.ini"))
        .unwrap();
    assert_eq!(ini.mapped.as_ref().map(|m| m.pages), Some(0));

    // The child's other mappings (its own binary, libc) form the system group; nothing of the install.
    let system: Vec<_> = reports
        .iter()
        .filter(|r| r.group == Group::System)
        .collect();
    assert!(!system.is_empty());
    assert!(system.iter().all(|r| !r.path.starts_with(&fx.ff)));
    assert!(
        system
            .iter()
            .all(|r| r.mapped.as_ref().is_some_and(|m| m.pages > 0)),
        "{system:?}"
    );
    assert_eq!(summary.groups["system"].files as usize, system.len());
    assert!(summary.groups["install"].mapped_pages >= 3);

    // Eviction leaves the pages the child has mapped.
    let ev = evict::evict(&fx.folder(), std::slice::from_ref(&lib));
    let f = &ev.files[0];
    assert_eq!(f.status, Status::Exact);
    assert!(f.resident_after.unwrap() >= 3, "{f:?}");
    assert_eq!(
        f.note.as_deref(),
        Some(
            "pages mapped by a running process, or written and not yet on disk, stay in the cache"
        )
    );
    assert_eq!(f.note_code, Some("pages_stayed"));
    drop(child);
}

/// Issue 10 #6: a file whose name is not UTF-8 (`lib\xff.so`) in the install folder, mapped by
/// the stand-in Firefox. Residency reports it (an event, counted once in the totals, its JSON
/// carrying the exact bytes), and `learn` stores it so that the plan reads it back.
#[test]
fn a_file_name_that_is_not_utf8_is_scanned_learned_and_planned() {
    use about_startup_host::learn::{plan, workingset};
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let fx = Fixture::new();
    let odd = fx
        .ff
        .join(std::ffi::OsString::from_vec(b"lib\xff.so".to_vec()));
    fixture::write_file(&odd, 4 << 20);
    let child = spawn_mapper(&odd);
    let pid = i32::try_from(child.0.id()).unwrap();

    let mut reports: Vec<FileReport> = Vec::new();
    let opts = ScanOptions {
        pid: Some(pid),
        include_mapped: false,
        image: None,
        ranges: true,
    };
    let selected = about_startup_host::firefox::install::select(&fx.ff, &[]).unwrap();
    let summary = residency::scan(
        &selected.folder,
        &selected.files,
        &opts,
        &AtomicBool::new(false),
        &mut |r| reports.push(r.clone()),
    )
    .unwrap();
    let r = reports
        .iter()
        .find(|r| r.path == odd)
        .expect("an event for the file");
    assert_eq!(r.status, Status::Exact);
    assert!(r.mapped.as_ref().is_some_and(|m| m.pages >= 3), "{r:?}");
    assert_eq!(summary.groups["install"].files as usize, reports.len());
    let json = serde_json::to_string(r).unwrap();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["path"], odd.to_string_lossy().as_ref());
    let bytes = about_startup_host::path_text::from_text(
        value["path"].as_str().unwrap().to_owned(),
        value["path_b64"].as_str(),
    )
    .unwrap();
    assert_eq!(bytes.as_os_str().as_bytes(), odd.as_os_str().as_bytes());

    let state_tmp = tempfile::tempdir().unwrap();
    let state_dir = about_startup_host::state::StateDir::create_at(state_tmp.path()).unwrap();
    let learned = workingset::learn(pid, &fx.ff, &state_dir, &AtomicBool::new(false))
        .expect("learn stores a name that is not UTF-8");
    let text = std::fs::read_to_string(&learned.state_file).unwrap();
    assert!(
        text.contains("\"path_b64\":\"L"),
        "the state file keeps the bytes"
    );
    let state = workingset::load(&state_dir);
    let set = state
        .merged()
        .into_iter()
        .find(|f| f.id.path == odd)
        .expect("the state file reads back the exact path");
    assert!(set.pages() >= 3, "{set:?}");
    let planned = plan::make(&state, &fx.ff).unwrap();
    assert!(planned.files.contains(&odd), "{:?}", planned.files);
    assert!(
        planned.changed.is_empty(),
        "nothing changed since learned: {:?}",
        planned.changed
    );
    assert!(
        planned.bytes_planned < planned.bytes_install,
        "the learned ranges, not whole files: {} of {}",
        planned.bytes_planned,
        planned.bytes_install
    );
    let run = plan::run(&planned, false, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    drop(child);
}
