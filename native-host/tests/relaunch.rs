//! `relaunch` and the privileged step of the traced restart, run as the built binary: the
//! refusals that need no Firefox (docs/design/pkexec.md). The checks of a request itself are unit
//! tests beside the code (src/relaunch/request_tests.rs).

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

#[test]
fn the_privileged_step_refuses_to_act_for_nobody_in_particular() {
    // Not under pkexec or sudo: root would be acting for itself, and starting Firefox as root.
    let home = tempfile::tempdir().unwrap();
    let out = host(
        home.path(),
        &["launch", "--cold", "--trace", "--relaunch"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("never starts Firefox as root"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_privileged_step_needs_the_users_own_request() {
    // PKEXEC_UID names a user (nobody) who asked for nothing: no request in their state folder.
    let home = tempfile::tempdir().unwrap();
    let out = host(
        home.path(),
        &["launch", "--cold", "--trace", "--relaunch"],
        &[("PKEXEC_UID", "65534")],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert!(stderr.contains("no restart request"), "{stderr}");
    } else {
        // Without root PKEXEC_UID means nothing: the same refusal as above.
        assert!(stderr.contains("never starts Firefox as root"), "{stderr}");
    }
    // And it cannot be combined with a Firefox of the caller's choosing.
    let out = host(
        home.path(),
        &[
            "launch",
            "--cold",
            "--trace",
            "--relaunch",
            "--firefox",
            "/tmp",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "a usage error");
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
