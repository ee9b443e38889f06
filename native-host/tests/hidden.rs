//! The kernel's blind spot, for real: since Linux 5.2 mincore tells a user the page-cache state
//! only of files the user owns or may write, and claims "all resident" for the others. As root,
//! make a root-owned file readable by all, evict it, then run the built binary as `nobody`:
//! the file must be `hidden` with no numbers (never 100%), while root sees it exact and cold, and
//! a file owned by `nobody` in the same folder is exact for `nobody`.
//!
//! It needs root, so it is `#[ignore]`d in ordinary runs (cargo reports it as ignored, never as
//! passed); `npm test` runs it with `--ignored` when it is root, as CI is. The checkout may sit in
//! a folder `nobody` cannot search (Debian 12 homes and /root are 0700), so the test stages the
//! binary and the fixture under /var/tmp (on disk: tmpfs pages cannot be evicted), which it
//! opens up to other users.

#[path = "support/executable.rs"]
mod executable;
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
/// Where the staged binary and fixture go: sticky and world-searchable on every Linux (FHS),
/// and on disk rather than tmpfs on most.
const REACHABLE: &str = "/var/tmp";

/// `residency --json --firefox <dir>`, as root or as nobody; the parsed `files` list.
fn residency_as(nobody: bool, bin: &Path, dir: &Path) -> Vec<Value> {
    residency_with(if nobody { As::Nobody } else { As::Root }, bin, dir)
}

enum As {
    Root,
    Nobody,
    /// "root" of a user namespace made by nobody (`unshare -Ur`): CAP_FOWNER there, but the
    /// host's root is not mapped in it, as in a rootless container.
    NamespaceRoot,
}

fn residency_with(who: As, bin: &Path, dir: &Path) -> Vec<Value> {
    let nobody = !matches!(who, As::Root);
    let mut cmd = if nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        if matches!(who, As::NamespaceRoot) {
            c.args(["unshare", "--user", "--map-root-user"]);
        }
        c.arg(bin);
        c
    } else {
        Command::new(bin)
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
#[ignore = "needs root (a root-owned file, setpriv to nobody): npm test runs it with --ignored as root"]
fn root_owned_file_is_hidden_from_nobody_and_exact_for_root() {
    assert_eq!(
        about_startup_host::os::sys::geteuid(),
        0,
        "this test needs root: it makes a root-owned file and switches to nobody"
    );
    let fx = Fixture::new_in(Path::new(REACHABLE));
    // A copy of the binary beside the fixture, reachable whatever folder the checkout is in.
    let bin = fx.root.path().join("about-startup-host");
    executable::copy_executable(Path::new(BIN), &bin);
    let lib = fx.ff.join("libxul.so");
    let owned = fx.ff.join("browser/omni.ja");
    std::os::unix::fs::chown(&owned, Some(NOBODY), Some(NOBODY)).unwrap();
    assert_reachable_by_others(&bin);
    assert_reachable_by_others(&lib);
    let evicted = evict::evict(&fx.folder(), &[lib.clone(), owned.clone()]);
    assert!(
        evicted.files.iter().all(|f| f.problem.is_none()),
        "{evicted:?}"
    );

    let as_root = residency_as(false, &bin, &fx.ff);
    let root_view = entry(&as_root, &lib);
    assert_eq!(root_view["status"], "exact", "{root_view}");
    let resident = root_view["resident_pages"].as_u64().unwrap();
    assert!(
        resident * 100 <= 1024 * 5,
        "root sees {resident} of 1024 pages after evict"
    );

    let as_nobody = residency_as(true, &bin, &fx.ff);
    let hidden = entry(&as_nobody, &lib);
    assert_eq!(hidden["status"], "hidden", "{hidden}");
    assert!(hidden["resident_pages"].is_null(), "{hidden}");
    assert!(hidden["resident_ranges"].is_null(), "{hidden}");
    assert!(hidden["hidden_reason"]
        .as_str()
        .unwrap()
        .contains("own or can write"));
    // the code the extension words (the English above is for the CLI and older extensions)
    assert_eq!(hidden["hidden_code"], "hidden_not_owner", "{hidden}");

    // Root of a user namespace (CAP_FOWNER inside it) does not see a file whose owner is not
    // mapped there: the kernel says "all resident", the host says hidden.
    let in_ns = residency_with(As::NamespaceRoot, &bin, &fx.ff);
    let ns_view = entry(&in_ns, &lib);
    assert_eq!(ns_view["status"], "hidden", "{ns_view}");
    assert!(ns_view["resident_pages"].is_null(), "{ns_view}");

    // The owner's view is exact, also for an unprivileged user.
    let own = entry(&as_nobody, &owned);
    assert_eq!(own["status"], "exact", "{own}");
    assert!(
        own["resident_pages"].as_u64().unwrap() * 100 <= 256 * 5,
        "{own}"
    );
}
