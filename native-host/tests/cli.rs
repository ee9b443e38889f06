//! The CLI's own verbs (install, uninstall, manifest, usage), run as a user would, with `HOME`
//! pointed at a temporary folder. Residency, preload and evict are tested with the kernel code.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

fn host(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_about-startup-host"))
        .args(args)
        .env("HOME", home)
        .output()
        .expect("run the host binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn manifest_in(home: &Path) -> std::path::PathBuf {
    home.join(".mozilla/native-messaging-hosts/about_startup.json")
}

fn check_manifest(manifest: &Value, extension_id: &str) {
    assert_eq!(manifest["name"], "about_startup");
    assert_eq!(manifest["type"], "stdio");
    assert_eq!(manifest["allowed_extensions"], json!([extension_id]));
    let path = Path::new(manifest["path"].as_str().expect("path is a string"));
    assert!(path.is_absolute(), "{}", path.display());
    assert!(path.is_file(), "{} does not exist", path.display());
    assert_eq!(
        path,
        Path::new(env!("CARGO_BIN_EXE_about-startup-host"))
            .canonicalize()
            .unwrap()
    );
}

#[test]
fn install_writes_the_manifest_under_home_and_uninstall_removes_it() {
    let home = tempfile::tempdir().unwrap();
    let out = host(home.path(), &["install"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let manifest = manifest_in(home.path());
    assert!(
        text(&out.stdout).contains(&manifest.display().to_string()),
        "says where it wrote"
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    check_manifest(&written, "about-startup@startup-lab.dev");

    let out = host(home.path(), &["uninstall"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("removed"));
    assert!(!manifest.exists());

    // Again: not an error, but it says so.
    let out = host(home.path(), &["uninstall"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("not installed"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn install_with_another_extension_id_replaces_the_manifest() {
    let home = tempfile::tempdir().unwrap();
    assert!(host(home.path(), &["install"]).status.success());
    let out = host(
        home.path(),
        &["install", "--extension-id", "other@example.org"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written: Value =
        serde_json::from_slice(&std::fs::read(manifest_in(home.path())).unwrap()).unwrap();
    check_manifest(&written, "other@example.org");
}

#[test]
fn install_refuses_an_id_firefox_would_never_match() {
    let home = tempfile::tempdir().unwrap();
    let out = host(home.path(), &["install", "--extension-id", "not an id"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("gecko.id"),
        "{}",
        text(&out.stderr)
    );
    assert!(!manifest_in(home.path()).exists());
}

#[test]
fn manifest_prints_without_installing() {
    let home = tempfile::tempdir().unwrap();
    let out = host(
        home.path(),
        &[
            "manifest",
            "--extension-id",
            "{01234567-89ab-cdef-0123-456789abcdef}",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    check_manifest(&printed, "{01234567-89ab-cdef-0123-456789abcdef}");
    assert!(!home.path().join(".mozilla").exists());
}

#[test]
fn help_lists_the_commands_with_examples() {
    let home = tempfile::tempdir().unwrap();
    let out = host(home.path(), &["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for word in [
        "residency",
        "preload",
        "evict",
        "install",
        "uninstall",
        "manifest",
        "Examples:",
    ] {
        assert!(help.contains(word), "--help lacks {word}:\n{help}");
    }
    for command in ["residency", "preload", "evict", "install"] {
        assert!(
            host(home.path(), &[command, "--help"]).status.success(),
            "{command} --help"
        );
    }
    assert!(host(home.path(), &["--version"]).status.success());
}

#[test]
fn usage_errors_exit_2() {
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["frobnicate"][..],
        &[],
        &["preload", "--jobs", "0"],
        &["preload", "--method", "mmap"],
    ] {
        let out = host(home.path(), args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_json_argument_alone_is_not_host_mode() {
    // Host mode needs the manifest path *and* the extension id, as Firefox passes them.
    let home = tempfile::tempdir().unwrap();
    let out = host(home.path(), &["x.json"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn learn_refuses_a_pid_that_is_not_firefox() {
    let home = tempfile::tempdir().unwrap();
    let me = std::process::id().to_string();
    let out = host(home.path(), &["learn", "--pid", &me]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("is not Firefox"), "{err}");
    assert!(
        !home
            .path()
            .join(".local/state/about-startup/working-set.json")
            .exists(),
        "nothing was learned"
    );
}

/// Issue 10 #6: `residency --json` and `evict --json` over an install folder holding
/// `lib\xff.so` print whole JSON that parses and gives the exact bytes back; the table shows the
/// name lossily.
#[test]
fn json_output_carries_a_file_name_that_is_not_utf8() {
    use std::ffi::OsString;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let home = tempfile::tempdir().unwrap();
    let ff = home.path().join("ff");
    std::fs::create_dir(&ff).unwrap();
    std::fs::write(
        ff.join("application.ini"),
        "[App]\nVendor=Mozilla\nName=Firefox\nVersion=153.7.0\nBuildID=20261103151912\n",
    )
    .unwrap();
    let odd = ff
        .canonicalize()
        .unwrap()
        .join(OsString::from_vec(b"lib\xff.so".to_vec()));
    std::fs::write(&odd, [7u8; 10_000]).unwrap();
    let dir = ff.to_str().unwrap();
    for verb in ["residency", "evict"] {
        let out = host(home.path(), &[verb, "--firefox", dir, "--json"]);
        assert!(out.status.success(), "{verb}: {}", text(&out.stderr));
        let v: Value = serde_json::from_str(&text(&out.stdout))
            .unwrap_or_else(|e| panic!("{verb} --json is not whole JSON: {e}"));
        let files = v["files"].as_array().unwrap();
        assert_eq!(files.len(), 2, "{v}");
        let f = files
            .iter()
            .find(|f| f.get("path_b64").is_some())
            .unwrap_or_else(|| panic!("{verb}: no path_b64 in {v}"));
        assert!(f["error"].is_null(), "{f}");
        let back = about_startup_host::path_text::from_text(
            f["path"].as_str().unwrap().to_owned(),
            f["path_b64"].as_str(),
        )
        .unwrap();
        assert_eq!(back.as_os_str().as_bytes(), odd.as_os_str().as_bytes());
    }
    let out = host(home.path(), &["residency", "--firefox", dir]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("lib\u{fffd}.so"),
        "{}",
        text(&out.stdout)
    );
}
