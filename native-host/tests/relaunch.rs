//! `relaunch`, run as the built binary: the refusals that need no Firefox, and that the old
//! privileged step of the traced restart is gone (docs/design/privilege.md).

use std::path::Path;
use std::process::{Command, Output};

fn host(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_about-startup-host"));
    cmd.args(args)
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("SUDO_UID")
        .env_remove("PKEXEC_UID");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run the host binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `launch --relaunch` was root's side of the traced restart (it read a request the user wrote
/// and started their Firefox as root's child). The restart now runs the launch pipeline as the
/// user, and root only traces (docs/design/privilege.md): the option is gone, and under pkexec
/// nothing but `tracer` runs.
#[test]
fn the_old_privileged_step_is_gone() {
    let home = tempfile::tempdir().unwrap();
    let out = host(
        home.path(),
        &["launch", "--cold", "--trace", "--relaunch"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(
        text(&out.stderr).contains("--relaunch"),
        "{}",
        text(&out.stderr)
    );
}

/// The same under pkexec (root, `PKEXEC_UID` set): nothing but `tracer` runs, and nothing is
/// made in the home folder.
#[test]
#[ignore = "needs root (pkexec's side: root with PKEXEC_UID): the root-only stage runs it"]
fn under_pkexec_only_the_tracer_runs() {
    assert!(
        rustix::process::geteuid().is_root(),
        "needs root: run with --ignored as root"
    );
    let home = tempfile::tempdir().unwrap();
    let out = host(
        home.path(),
        &["launch", "--cold", "--trace", "--relaunch"],
        &[("PKEXEC_UID", "65534")],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("tracer"),
        "{}",
        text(&out.stderr)
    );
    assert!(!home.path().join(".local").exists(), "nothing was made");
}

#[test]
fn relaunch_of_a_process_that_is_not_firefox_is_refused_and_recorded() {
    let home = tempfile::tempdir().unwrap();
    let me = std::process::id().to_string();
    let out = host(home.path(), &["relaunch", "--cold", "--pid", &me], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let out = host(home.path(), &["relaunch", "--status", "--json"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let last: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(last["stage"], "failed");
    assert_eq!(last["error"]["code"], "capture_failed");
    let human = host(home.path(), &["relaunch", "--status"], &[]);
    assert!(
        text(&human.stdout).contains("failed:"),
        "{}",
        text(&human.stdout)
    );
}

#[test]
fn relaunch_status_without_a_record_is_null() {
    let home = tempfile::tempdir().unwrap();
    let out = host(home.path(), &["relaunch", "--status", "--json"], &[]);
    assert!(out.status.success());
    assert_eq!(text(&out.stdout).trim(), "null");
}
