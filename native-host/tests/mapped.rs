//! What a running process has mapped, as an ordinary user can see it: /proc/<pid>/maps matched
//! by device and inode, /proc/<pid>/pagemap turned into file pages through each mapping's file
//! offset. A small Python child stands in for Firefox: it maps the fixture's libxul.so twice
//! (at file offset 0 and at page 600) and touches a few pages.

#[path = "support/install_fixture.rs"]
mod fixture;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;

use about_startup_host::pagecache::evict;
use about_startup_host::pagecache::residency::{self, FileReport, Group, ScanOptions, Status};
use fixture::Fixture;

const CHILD: &str = r"
import mmap, sys
f = open(sys.argv[1], 'rb')
a = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
b = mmap.mmap(f.fileno(), 10 * 4096, prot=mmap.PROT_READ, offset=600 * 4096)
a[0]; a[500 * 4096]; b[0]
print('ready', flush=True)
sys.stdin.read()
";

/// Kills the child when the test ends, even on a failed assertion.
struct Mapper(Child);

impl Drop for Mapper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_mapper(path: &std::path::Path) -> Option<Mapper> {
    let child = Command::new("python3")
        .args(["-c", CHILD])
        .arg(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("SKIPPED: python3 is not available to map a file in a child process");
        return None;
    };
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    Some(Mapper(child))
}

fn covers(ranges: &[[u64; 2]], page: u64) -> bool {
    ranges.iter().any(|[s, n]| page >= *s && page < s + n)
}

#[test]
fn pagemap_shows_the_pages_a_process_touched() {
    let fx = Fixture::new();
    let lib = fx.ff.join("libxul.so");
    let Some(child) = spawn_mapper(&lib) else {
        return;
    };
    let pid = i32::try_from(child.0.id()).unwrap();

    let mut reports: Vec<FileReport> = Vec::new();
    let opts = ScanOptions {
        pid: Some(pid),
        include_mapped: true,
    };
    let summary = residency::scan(
        &fx.ff,
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

    // The child's other mappings (python, libc) form the system group; nothing of the install.
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
    let ev = evict::evict(std::slice::from_ref(&lib));
    let f = &ev.files[0];
    assert_eq!(f.status, Status::Exact);
    assert!(f.resident_after.unwrap() >= 3, "{f:?}");
    assert_eq!(
        f.note.as_deref(),
        Some(
            "pages mapped by a running process, or written and not yet on disk, stay in the cache"
        )
    );
    drop(child);
}
