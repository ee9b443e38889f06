//! `timeout` and service managers stop the host with one SIGTERM (issue 20): a `launch --trace`
//! ends on the first signal after storing what it has, and at once on a second. Run as an
//! ordinary user (uid 65534 through setpriv, so the recording is /proc sampling and touches no
//! tracefs), on a stand-in Firefox that only sleeps.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const NOBODY: &str = "65534";

struct Stage {
    _tmp: tempfile::TempDir,
    host: std::path::PathBuf,
    ff: std::path::PathBuf,
    home: std::path::PathBuf,
}

fn stage() -> Option<Stage> {
    if rustix::process::geteuid().as_raw() != 0 {
        eprintln!("needs root to switch to uid 65534: skipped");
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let ff = tmp.path().join("ff");
    std::fs::create_dir(&ff).unwrap();
    std::fs::write(
        ff.join("application.ini"),
        "[App]\nVersion=1.0\nBuildID=1\n",
    )
    .unwrap();
    let firefox = ff.join("firefox");
    std::fs::write(&firefox, "#!/bin/sh\nexec sleep 20\n").unwrap();
    std::fs::set_permissions(&firefox, std::fs::Permissions::from_mode(0o755)).unwrap();
    let host = tmp.path().join("about-startup-host");
    std::fs::copy(env!("CARGO_BIN_EXE_about-startup-host"), &host).unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(65534), Some(65534)).unwrap();
    Some(Stage {
        _tmp: tmp,
        host,
        ff,
        home,
    })
}

fn launch(s: &Stage) -> Child {
    Command::new("setpriv")
        .args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            "env",
        ])
        .arg(format!("HOME={}", s.home.display()))
        .arg(&s.host)
        .args([
            "launch",
            "--trace",
            "--json",
            "--seconds",
            "30",
            "--firefox",
        ])
        .arg(&s.ff)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn term(child: &Child) {
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
}

/// Wait up to `limit`; `None` if it is still running (then it is killed).
fn wait_for(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// The stand-in Firefox the host started (and leaves running, as it does a real one).
fn stop_firefox(stdout: &str) {
    if let Ok(trace) = serde_json::from_str::<serde_json::Value>(stdout) {
        if let Some(pid) = trace["pid"].as_i64() {
            if let Some(pid) = rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

fn wait_until_recording(s: &Stage) {
    // The recording has begun once the traces folder exists (made before Firefox starts).
    let traces = s.home.join(".local/state/about-startup/traces");
    let start = Instant::now();
    while !traces.is_dir() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
}

/// Issue 20 #3 with it: a FIFO among the meta files hung the store's listing after the
/// recording, where the flag the signal sets is not looked at, so `timeout`'s one SIGTERM
/// never ended it.
#[test]
fn one_sigterm_ends_a_recording_and_keeps_what_it_has() {
    let Some(s) = stage() else { return };
    let traces = s.home.join(".local/state/about-startup/traces");
    let status = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "sh",
            "-c",
        ])
        .arg(format!(
            "mkdir -p -m 0700 '{0}' && mkfifo '{0}/0-0-0.meta.json'",
            traces.display()
        ))
        .status()
        .unwrap();
    assert!(status.success());
    let mut child = launch(&s);
    std::thread::sleep(Duration::from_millis(1500));
    term(&child);
    let status = wait_for(&mut child, Duration::from_secs(15));
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    stop_firefox(&out);
    assert!(
        status.is_some(),
        "one SIGTERM did not end the host within 15 s"
    );
    let trace: serde_json::Value = serde_json::from_str(&out).expect("the trace is printed");
    assert_eq!(trace["ended_by"], "interrupted");
    let stored = std::fs::read_dir(s.home.join(".local/state/about-startup/traces"))
        .unwrap()
        .filter(|e| {
            let e = e.as_ref().unwrap();
            e.file_type().unwrap().is_file()
                && e.file_name().to_string_lossy().ends_with(".meta.json")
        })
        .count();
    assert_eq!(stored, 1, "what it had is stored");
}

#[test]
fn a_second_sigterm_ends_the_host_at_once() {
    let Some(s) = stage() else { return };
    let mut child = launch(&s);
    wait_until_recording(&s);
    term(&child);
    term(&child);
    let status = wait_for(&mut child, Duration::from_secs(5));
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    stop_firefox(&out);
    let status = status.expect("two SIGTERMs did not end the host within 5 s");
    // Either the second signal ended it (130), or the first had already finished the run.
    assert!(status.code() == Some(130) || status.success(), "{status:?}");
}
