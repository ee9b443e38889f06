//! `desktop enable|status|disable` through the built binary, in a throwaway HOME with its own
//! XDG folders: a system applications folder holding Debian's entry for a fake Firefox, a user
//! folder that starts empty. The entry written must run Firefox through this very binary, and
//! disable must leave the system's entry byte for byte as it was.

#[path = "support/executable.rs"]
mod executable;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_about-startup-host");

/// A copy of the binary where no other user can replace it (a fresh 0755 folder of this user
/// in the system's temporary folder, root's sticky /tmp above it), whatever folder the
/// checkout is in: the entry is then written, never refused (issue 33 #8: under a folder others
/// could write, the test checked the refusal instead and passed without the feature). The
/// refusal has its own test (learn/desktop/tests.rs).
fn staged_binary() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("desktop-host-")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = dir.path().join("about-startup-host");
    executable::copy_executable(Path::new(BIN), &bin);
    let bin = bin.canonicalize().unwrap();
    (dir, bin)
}

fn host(bin: &Path, root: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .env("HOME", root.join("home"))
        .env("XDG_DATA_HOME", root.join("home/.local/share"))
        .env("XDG_DATA_DIRS", root.join("usr/share"))
        .env("XDG_STATE_HOME", root.join("state"))
        .output()
        .unwrap()
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn enable_status_disable_through_the_binary() {
    let (_staged, bin) = staged_binary();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = dir.path().canonicalize().unwrap();
    let ff = root.join("ff");
    std::fs::create_dir_all(&ff).unwrap();
    std::fs::write(
        ff.join("application.ini"),
        "[App]\nVersion=153.7.0\nBuildID=20261103151912\n",
    )
    .unwrap();
    let binary = ff.join("firefox-esr");
    std::fs::write(&binary, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let apps = root.join("usr/share/applications");
    std::fs::create_dir_all(&apps).unwrap();
    let system = apps.join("firefox-esr.desktop");
    let text = format!(
        "[Desktop Entry]\nName=Firefox ESR\nExec={} %u\nIcon=firefox-esr\nMimeType=text/html;\n",
        binary.display()
    );
    std::fs::write(&system, &text).unwrap();
    let ff_arg = ff.to_str().unwrap();

    let status = json(&host(
        &bin,
        &root,
        &["desktop", "status", "--json", "--firefox", ff_arg],
    ));
    assert_eq!(status["enabled"], false);
    assert_eq!(status["system_entry"], system.to_str().unwrap());
    assert_eq!(
        status["prefetch"]["fallback"]["code"], "no_trace",
        "{status}"
    );
    let entry = root.join("home/.local/share/applications/firefox-esr.desktop");
    assert_eq!(status["entry"], entry.to_str().unwrap());

    assert!(status["problem"].is_null(), "{status}");
    let enabled = json(&host(
        &bin,
        &root,
        &["desktop", "enable", "--json", "--firefox", ff_arg],
    ));
    assert_eq!(
        (enabled["enabled"].as_bool(), enabled["outdated"].as_bool()),
        (Some(true), Some(false))
    );
    let written = std::fs::read_to_string(&entry).unwrap();
    assert!(
        written.contains(&format!(
            "\nExec={} launch --prefetch --firefox {} -- %u\n",
            bin.display(),
            binary.display()
        )),
        "{written}"
    );
    assert!(
        written.contains("\nIcon=firefox-esr\n") && written.contains("\nMimeType=text/html;\n")
    );

    let disabled = json(&host(
        &bin,
        &root,
        &["desktop", "disable", "--json", "--firefox", ff_arg],
    ));
    assert_eq!(
        disabled["removed"],
        serde_json::json!([entry.to_str().unwrap()])
    );
    assert!(!entry.exists());
    assert_eq!(
        std::fs::read_to_string(&system).unwrap(),
        text,
        "the system entry is untouched"
    );
    let human = host(&bin, &root, &["desktop", "status", "--firefox", ff_arg]);
    let said = String::from_utf8_lossy(&human.stdout);
    assert!(
        said.contains("desktop launch through the prefetch: off"),
        "{said}"
    );
    assert!(
        said.contains("no stored trace of this Firefox, and nothing learned yet"),
        "{said}"
    );
}
