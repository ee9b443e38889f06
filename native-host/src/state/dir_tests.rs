//! Tests of [`StateDir`]. Those of root's own folders run as root with the files planted by an
//! ordinary user (uid 65534 through `setpriv`), as issue 20's review did.

use std::os::unix::fs::{symlink, PermissionsExt};
use std::process::Command;

use super::*;

const NOBODY: u32 = 65534;

fn is_root() -> bool {
    crate::os::sys::geteuid() == 0
}

/// Run `args` as uid 65534 (the ordinary user planting files).
pub(crate) fn as_nobody(args: &[&str]) {
    let status = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .args(args)
        .status()
        .expect("setpriv runs");
    assert!(status.success(), "as nobody: {args:?}");
}

/// tmp (0755, root's) / home (nobody's): what an ordinary user's home looks like to root.
pub(crate) fn user_home() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(NOBODY), Some(NOBODY)).unwrap();
    (tmp, home)
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn writes_replace_the_file_atomically_and_leave_no_temporary_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = StateDir::create_at(&tmp.path().join("a/b/state")).unwrap();
    dir.write("x.json", br#"{"n":1}"#).unwrap();
    dir.write("x.json", br#"{"n":2}"#).unwrap();
    assert_eq!(dir.read("x.json", 100).unwrap().unwrap(), br#"{"n":2}"#);
    assert_eq!(names_in(dir.path()), ["x.json"]);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(dir.path()), 0o700);
    assert_eq!(mode(&tmp.path().join("a")), 0o700);
    assert_eq!(mode(&dir.path_of("x.json")), 0o600);
    assert_eq!(dir.read("missing", 100).unwrap(), None);
    assert!(dir.remove("x.json").unwrap());
    assert!(!dir.remove("x.json").unwrap());
}

#[test]
fn a_symlink_at_a_name_is_replaced_or_refused_never_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = StateDir::create_at(&tmp.path().join("state")).unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    symlink(&victim, dir.path_of("working-set.json")).unwrap();
    symlink(&victim, dir.path_of(".lock")).unwrap();
    let err = dir.read("working-set.json", 100).unwrap_err();
    assert!(err.to_string().contains("symlink"), "{err}");
    assert!(dir.lock().unwrap_err().to_string().contains("symlink"));
    dir.write("working-set.json", b"{}").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(dir.path_of("working-set.json"))
        .unwrap()
        .is_file());
    // remove takes the link away, not what it points at.
    assert!(dir.remove(".lock").unwrap());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    for bad in ["../victim", "a/b", "..", ".", ""] {
        assert!(dir.write(bad, b"x").is_err(), "{bad}");
        assert!(dir.remove(bad).is_err(), "{bad}");
        assert!(dir.read(bad, 10).is_err(), "{bad}");
    }
}

#[test]
fn reads_are_bounded_and_refuse_fifos_devices_and_hard_links() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = StateDir::create_at(&tmp.path().join("state")).unwrap();
    crate::os::mkfifo(&dir.path_of("fifo.meta.json"));
    let (tx, rx) = std::sync::mpsc::channel();
    let d = dir.clone();
    std::thread::spawn(move || tx.send(d.read("fifo.meta.json", 100).map(|_| ())));
    let err = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("a FIFO blocked the read")
        .unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
    symlink("/dev/zero", dir.path_of("zero.meta.json")).unwrap();
    assert!(dir.read("zero.meta.json", 100).is_err());
    dir.write("big", &[b'x'; 101]).unwrap();
    let err = dir.read("big", 100).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
    dir.write("one", b"1").unwrap();
    std::fs::hard_link(dir.path_of("one"), tmp.path().join("other-name")).unwrap();
    let err = dir.read("one", 100).unwrap_err();
    assert!(err.to_string().contains("hard links"), "{err}");
}

#[test]
fn a_state_folder_that_is_a_symlink_or_writable_by_others_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = tmp.path().join("link");
    symlink(&real, &link).unwrap();
    // The state folder itself a symlink: its real path is used only if it is ours, and a
    // folder swapped for a symlink later is not followed (the held descriptor stays).
    let made = StateDir::create_at(&link.join("sub"));
    assert!(
        made.is_ok(),
        "a symlinked parent (~/.local elsewhere) is followed once"
    );
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = StateDir::create_at(&real).unwrap_err();
    assert!(err.to_string().contains("others can write"), "{err}");
    let dir = StateDir::create_at(&tmp.path().join("state")).unwrap();
    symlink(&real, dir.path_of("traces")).unwrap();
    let err = dir.sub("traces", true).unwrap_err();
    assert!(err.to_string().contains("symlink"), "{err}");
}

#[test]
fn the_held_folder_is_the_one_checked_even_if_swapped_later() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state");
    let dir = StateDir::create_at(&path).unwrap();
    std::fs::rename(&path, tmp.path().join("moved")).unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    symlink(&elsewhere, &path).unwrap();
    dir.write("x", b"1").unwrap();
    assert!(tmp.path().join("moved/x").is_file());
    assert!(!elsewhere.join("x").exists());
}

#[test]
fn concurrent_read_modify_writes_under_the_lock_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = StateDir::create_at(tmp.path()).unwrap();
    dir.write("count", b"0").unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                for _ in 0..25 {
                    let _lock = dir.lock().unwrap();
                    let n: u64 = String::from_utf8(dir.read("count", 100).unwrap().unwrap())
                        .unwrap()
                        .parse()
                        .unwrap();
                    std::thread::yield_now();
                    dir.write("count", (n + 1).to_string().as_bytes()).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(dir.read("count", 100).unwrap().unwrap(), b"100");
}

#[test]
#[ignore = "needs root (a folder of uid 65534 planted through setpriv): the root-only stage runs it"]
fn root_uses_only_state_folders_it_owns_for_itself() {
    assert!(is_root(), "needs root: run with --ignored as root");
    let (_tmp, home) = user_home();
    let theirs = home.join("state");
    as_nobody(&["mkdir", "-m", "0700", theirs.to_str().unwrap()]);
    let err = StateDir::create_at(&theirs).unwrap_err();
    assert!(err.to_string().contains("belongs to uid 65534"), "{err}");
}
