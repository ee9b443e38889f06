use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::*;

/// A folder that passes for a Firefox install (application.ini), with `sleep` copied in as its
/// `firefox`: a process of it is a "Firefox" to capture, wait for and start again.
fn fake_install() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("application.ini"),
        "[App]\nName=Firefox\nVersion=153.0\nBuildID=1\n",
    )
    .unwrap();
    let sleep = ["/usr/bin/sleep", "/bin/sleep"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap();
    crate::os::test_support::copy_executable(Path::new(sleep), &dir.path().join("firefox"));
    dir
}

fn spawn(dir: &Path, seconds: &str) -> std::process::Child {
    Command::new(dir.join("firefox"))
        .arg(seconds)
        .env_clear()
        .env("ABOUT_STARTUP_MARKER", "kept")
        .current_dir(dir)
        .spawn()
        .unwrap()
}

/// A "Firefox" of `dir` running `sleep seconds`, and its snapshot once it has started.
fn running(dir: &Path, seconds: &str) -> (std::process::Child, Snapshot) {
    let first = spawn(dir, seconds);
    // Spawning returns after the exec; a moment more for /proc to show the process whole.
    std::thread::sleep(Duration::from_millis(50));
    let snap = capture(i32::try_from(first.id()).unwrap()).unwrap();
    (first, snap)
}

/// A restart of `snap` (`cold` or not, waiting up to `timeout`) with no record and no argument
/// added, and the stages it went through.
fn run_unrecorded(snap: &Snapshot, cold: bool, timeout: Duration) -> (Status, Vec<Stage>) {
    let opts = Options {
        cold,
        timeout,
        open: Vec::new(),
        state_dir: None,
    };
    let mut stages = Vec::new();
    let done = run(snap, &opts, &mut |s| stages.push(s.stage));
    (done, stages)
}

#[test]
fn a_restart_waits_for_the_exit_evicts_and_starts_the_same_command_and_environment() {
    let dir = fake_install();
    let (mut first, snap) = running(dir.path(), "1");
    assert_eq!(snap.install_dir, dir.path().canonicalize().unwrap());
    assert_eq!(snap.argv[1], "1");
    assert_eq!(
        snap.env,
        [(
            OsString::from("ABOUT_STARTUP_MARKER"),
            OsString::from("kept")
        )]
    );
    let state = tempfile::tempdir().unwrap();
    let opts = Options {
        cold: true,
        timeout: Duration::from_secs(10),
        // `sleep 1 5`: the restarted one outlives the early-exit check.
        open: vec!["5".into()],
        state_dir: Some(state.path().to_path_buf()),
    };
    let mut stages = Vec::new();
    // Order, not time (issue 33 #13): when the evict begins, the old process has exited (the
    // kernel's word: not alive, a zombie of this test at most).
    let old = snap.pid;
    let mut old_alive_at_evict = None;
    let done = run(&snap, &opts, &mut |s| {
        stages.push(s.stage);
        if s.stage == Stage::Evicting {
            old_alive_at_evict = Some(proc::alive(old));
        }
    });
    let _ = first.wait();
    assert_eq!(done.stage, Stage::Started, "{done:?}");
    assert_eq!(stages, [Stage::Waiting, Stage::Evicting, Stage::Started]);
    assert_eq!(
        old_alive_at_evict,
        Some(false),
        "evicted while the old one ran"
    );
    assert!(done.waited_ms.is_some(), "{done:?}");
    let evicted = done.evicted.as_ref().unwrap();
    assert_eq!(evicted.files, 2);
    assert_eq!(evicted.failed, 0);
    let new = done.new_pid.unwrap();
    let environ = std::fs::read(format!("/proc/{new}/environ")).unwrap();
    assert_eq!(environ, b"ABOUT_STARTUP_MARKER=kept\0");
    let cmdline = std::fs::read(format!("/proc/{new}/cmdline")).unwrap();
    assert!(cmdline.ends_with(b"\x001\x005\0"), "{cmdline:?}");
    assert_eq!(status::read_at(state.path()), Some(done.clone()));
    // SAFETY: kill is harmless on a pid we started.
    unsafe { libc::kill(new, libc::SIGKILL) };
}

#[test]
fn a_firefox_that_does_not_quit_in_time_is_recorded_and_nothing_is_started() {
    let dir = fake_install();
    let (mut first, snap) = running(dir.path(), "30");
    let pid = snap.pid;
    let state = tempfile::tempdir().unwrap();
    let opts = Options {
        cold: true,
        timeout: Duration::from_millis(300),
        open: Vec::new(),
        state_dir: Some(state.path().to_path_buf()),
    };
    let done = run(&snap, &opts, &mut |_| {});
    let _ = first.kill();
    let _ = first.wait();
    assert_eq!(done.stage, Stage::Failed);
    let error = done.error.unwrap();
    assert_eq!(error.code, status::FIREFOX_DID_NOT_QUIT);
    assert_eq!(error.params["pids"], serde_json::json!([pid]));
    assert!(done.evicted.is_none() && done.new_pid.is_none());
}

#[test]
fn a_start_that_exits_at_once_is_a_launch_failure() {
    let dir = fake_install();
    let (mut first, snap) = running(dir.path(), "0.2");
    let (done, stages) = run_unrecorded(&snap, false, Duration::from_secs(5));
    let _ = first.wait();
    assert_eq!(stages, [Stage::Waiting, Stage::Started, Stage::Failed]);
    assert_eq!(done.stage, Stage::Failed);
    assert_eq!(done.error.unwrap().code, status::LAUNCH_FAILED);
    assert!(done.evicted.is_none(), "not cold: nothing evicted");
}

/// Issue 30 #5: `npm start`'s temporary profile is removed when that Firefox ends, and a
/// restart on it waited for ever on an invisible dialog. Refused after the quit, naming it.
#[test]
fn a_profile_gone_after_the_quit_is_refused_and_nothing_is_started() {
    let dir = fake_install();
    let profile = tempfile::tempdir().unwrap();
    let (mut first, mut snap) = running(dir.path(), "0.3");
    snap.profile = Some(profile.path().to_path_buf());
    let gone = profile.path().to_path_buf();
    drop(profile);
    let (done, stages) = run_unrecorded(&snap, true, Duration::from_secs(10));
    let _ = first.wait();
    assert_eq!(stages, [Stage::Waiting, Stage::Failed]);
    let error = done.error.unwrap();
    assert_eq!(error.code, status::LAUNCH_FAILED);
    assert!(
        error.message.contains(&gone.display().to_string()),
        "{}",
        error.message
    );
    assert!(done.evicted.is_none() && done.new_pid.is_none());
}

/// Issue 30 #7: a working folder the user cannot enter (here: gone) is replaced by one they
/// can, and the record says so, naming it.
#[test]
fn a_working_folder_that_cannot_be_entered_falls_back_to_home_and_says_so() {
    let dir = fake_install();
    let home = tempfile::tempdir().unwrap();
    let gone = tempfile::tempdir().unwrap();
    let (mut first, mut snap) = running(dir.path(), "30");
    let _ = first.kill();
    let _ = first.wait();
    snap.cwd = Some(gone.path().to_path_buf());
    snap.env = vec![("HOME".into(), home.path().as_os_str().to_owned())];
    assert_eq!(working_folder(&snap), (gone.path().to_path_buf(), None));
    let wanted = gone.path().to_path_buf();
    drop(gone);
    let (cwd, said) = working_folder(&snap);
    assert_eq!(cwd, home.path());
    let said = said.unwrap();
    assert!(
        said.contains(&wanted.display().to_string())
            && said.contains(&home.path().display().to_string()),
        "{said}"
    );
}

#[test]
fn capture_refuses_a_process_that_is_not_firefox() {
    let me = i32::try_from(std::process::id()).unwrap();
    assert!(capture(me).is_err());
}
