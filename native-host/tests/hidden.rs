//! The kernel's blind spot, for real: since Linux 5.2 mincore tells a user the page-cache state
//! only of files the user owns or may write, and claims "all resident" for the others. As root,
//! make a root-owned file readable by all, evict it, then run the built binary as `nobody`:
//! the file must be `hidden` with no numbers (never 100%), while root sees it exact and cold, and
//! a file owned by `nobody` in the same folder is exact for `nobody`.

#[path = "support/install_fixture.rs"]
mod fixture;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use about_startup_host::pagecache::evict;
use fixture::Fixture;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_about-startup-host");
const NOBODY: u32 = 65534;

/// `residency --json --firefox <dir>`, as root or as nobody; the parsed `files` list.
fn residency_as(nobody: bool, dir: &Path) -> Vec<Value> {
    let mut cmd = if nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
        c
    } else {
        Command::new(BIN)
    };
    let out = cmd
        .args(["residency", "--json", "--firefox"])
        .arg(dir)
        .output()
        .expect("run the binary");
    assert!(
        out.status.success(),
        "{} (nobody: {nobody}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("--json prints one JSON object");
    json["files"].as_array().expect("files list").clone()
}

fn entry<'a>(files: &'a [Value], path: &Path) -> &'a Value {
    files
        .iter()
        .find(|f| f["path"].as_str() == path.to_str())
        .unwrap_or_else(|| panic!("{} not in {files:?}", path.display()))
}

/// Every folder above `path` must let others through (o+x), or `nobody` cannot run the binary
/// or reach the fixture.
fn assert_reachable_by_others(path: &Path) {
    for dir in path.ancestors().skip(1) {
        let mode = std::fs::metadata(dir).unwrap().permissions().mode();
        assert!(
            mode & 0o001 != 0,
            "{} is not searchable by other users (mode {mode:o}): nobody cannot reach {}",
            dir.display(),
            path.display()
        );
    }
}

#[test]
fn root_owned_file_is_hidden_from_nobody_and_exact_for_root() {
    if about_startup_host::pagecache::sys::geteuid() != 0 {
        eprintln!("SKIPPED: this test needs root (to make a root-owned file and switch to nobody)");
        return;
    }
    let fx = Fixture::new();
    let lib = fx.ff.join("libxul.so");
    let owned = fx.ff.join("browser/omni.ja");
    std::os::unix::fs::chown(&owned, Some(NOBODY), Some(NOBODY)).unwrap();
    assert_reachable_by_others(Path::new(BIN));
    assert_reachable_by_others(&lib);
    let evicted = evict::evict(&[lib.clone(), owned.clone()]);
    assert!(
        evicted.files.iter().all(|f| f.error.is_none()),
        "{evicted:?}"
    );

    let as_root = residency_as(false, &fx.ff);
    let root_view = entry(&as_root, &lib);
    assert_eq!(root_view["status"], "exact", "{root_view}");
    let resident = root_view["resident_pages"].as_u64().unwrap();
    assert!(
        resident * 100 <= 1024 * 5,
        "root sees {resident} of 1024 pages after evict"
    );

    let as_nobody = residency_as(true, &fx.ff);
    let hidden = entry(&as_nobody, &lib);
    assert_eq!(hidden["status"], "hidden", "{hidden}");
    assert!(hidden["resident_pages"].is_null(), "{hidden}");
    assert!(hidden["resident_ranges"].is_null(), "{hidden}");
    assert!(hidden["hidden_reason"]
        .as_str()
        .unwrap()
        .contains("own or can write"));

    // The owner's view is exact, also for an unprivileged user.
    let own = entry(&as_nobody, &owned);
    assert_eq!(own["status"], "exact", "{own}");
    assert!(
        own["resident_pages"].as_u64().unwrap() * 100 <= 256 * 5,
        "{own}"
    );
}
