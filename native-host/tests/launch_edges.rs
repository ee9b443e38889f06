//! `launch`'s edges as a person meets them (issue 30 #5, #6; issue 29 #5's find_running), run
//! as the built binary on a stand-in install: `application.ini`, a `firefox` that is a shell
//! script playing a start (it writes what Firefox writes in its profile, then sleeps), and a copy
//! of `sleep` standing in for a second Firefox that maps the install's files. No tracer (no
//! `--trace`): /proc is sampled, as for any user.

#[path = "support/executable.rs"]
mod executable;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_about-startup-host");
/// What Firefox ESR 153 writes in `sessionCheckpoints.json` (firefox/checkpoints.rs).
const STARTED: &str = r#"{"profile-after-change":true,"final-ui-startup":true}"#;
const RESTORED: &str =
    r#"{"profile-after-change":true,"final-ui-startup":true,"sessionstore-windows-restored":true}"#;

struct Install {
    tmp: tempfile::TempDir,
    dir: PathBuf,
    /// An empty HOME beside it for the host it runs.
    home: PathBuf,
}

impl Install {
    /// The host run as `args… --firefox <this install>`, then `-- firefox_args…` where there
    /// are any, with the install's HOME.
    fn run(&self, args: &[&str], firefox_args: &[&str]) -> Output {
        let mut all = args.to_vec();
        all.extend(["--firefox", self.dir.to_str().unwrap()]);
        if !firefox_args.is_empty() {
            all.push("--");
            all.extend(firefox_args);
        }
        host(&self.home, &all, &[])
    }

    /// As [`Install::run`], with `env` set for the host and the Firefox it starts.
    fn run_env(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut all = args.to_vec();
        all.extend(["--firefox", self.dir.to_str().unwrap()]);
        host(&self.home, &all, env)
    }

    /// A new folder `name` beside the install (a HOME, a profile).
    fn folder(&self, name: &str) -> PathBuf {
        let dir = self.tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        dir
    }
}

/// `launch --json`'s trace (null if it printed none), with the stand-in Firefox it started ended:
/// the stand-ins sleep on after the start so that only quiet can end the recording.
fn trace_ending_its_firefox(out: &Output) -> Value {
    let trace: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    if let Some(pid) = trace["pid"].as_i64() {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
    trace
}

/// The recording got to the session's restore in `profile`, then ended on quiet.
fn assert_restored_then_quiet(out: &Output, trace: &Value, profile: &Path) {
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(trace["session_restored_reached"], true, "{trace}");
    assert_eq!(trace["ended_by_code"], "quiet", "{trace}");
    assert_eq!(
        trace["profile"]["dir"],
        profile.to_str().unwrap(),
        "{trace}"
    );
}

/// An install folder whose `firefox` runs `script` (sh), with a copy of `sleep` beside it.
fn install(script: &str) -> Install {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("ff");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join("application.ini"),
        "[App]\nName=Firefox\nVersion=153.0\nBuildID=1\n",
    )
    .unwrap();
    let firefox = dir.join("firefox");
    std::fs::write(&firefox, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&firefox, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sleep = ["/usr/bin/sleep", "/bin/sleep"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap();
    executable::copy_executable(Path::new(sleep), &dir.join("firefox-helper"));
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    Install { tmp, dir, home }
}

fn host(home: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    Command::new(BIN)
        .args(args)
        .envs(env.iter().copied())
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("SUDO_UID")
        .env_remove("PKEXEC_UID")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn stored_traces(home: &Path) -> usize {
    std::fs::read_dir(home.join(".local/state/about-startup/traces"))
        .map(|d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".meta.json"))
            })
            .count()
        })
        .unwrap_or(0)
}

/// The helper (a copy of `sleep` in the install) running: it maps a file of the install, as a
/// second Firefox does. Killed on drop.
struct Helper(Child);

impl Helper {
    fn start(dir: &Path) -> Helper {
        // Copied by copy_executable, so no fork of another test's thread holds it open for
        // writing (exec failed once with ETXTBSY in a full cargo test under load).
        let child = Command::new(dir.join("firefox-helper"))
            .arg("300")
            .spawn()
            .unwrap();
        // Running once /proc/<pid>/exe is the copy (after the exec).
        let pid = child.id();
        let exe = dir.join("firefox-helper");
        for _ in 0..1000 {
            if std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e == exe) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Helper(child)
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Issue 30 #5: ESR 153 does not create a missing `-profile` folder, it waits for ever on an
/// invisible dialog. `launch` refuses before anything is evicted or started, naming the folder.
#[test]
fn a_missing_profile_folder_is_refused_up_front() {
    let ff = install("touch \"$HOME/started\"; exec sleep 30");
    let missing = ff.tmp.path().join("no-such-profile");
    let out = ff.run(
        &["launch", "--cold"],
        &["--headless", "-profile", missing.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains(&format!(
            "profile folder {} does not exist",
            missing.display()
        )) && said.contains("mkdir -p"),
        "{said}"
    );
    assert!(!ff.home.join("started").exists(), "Firefox was started");
    assert_eq!(stored_traces(&ff.home), 0);
}

/// Issue 30 #5: a start that got to its profile (its checkpoints written) and never restored the
/// session is said so and not stored as a start; the trace is still printed, with its note.
#[test]
fn a_start_that_never_restores_its_session_is_not_stored() {
    let ff = install(&format!(
        "printf '%s' '{STARTED}' > \"$2/sessionCheckpoints.json\"; sleep 2; exit 0"
    ));
    let profile = ff.folder("profile");
    let launch = |json: bool| {
        let args: &[&str] = if json {
            &["launch", "--json"]
        } else {
            &["launch"]
        };
        ff.run(args, &["-profile", profile.to_str().unwrap()])
    };
    // The report, with the note naming the profile, then the error.
    let out = launch(false);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("never reached sessionRestored"),
        "{}",
        text(&out.stderr)
    );
    let report = text(&out.stdout);
    assert!(
        report.contains(&format!(
            "Firefox never reached sessionRestored while it was recorded (the checkpoints in its profile {}",
            profile.display()
        )),
        "{report}"
    );
    // --json: one JSON object, the error, saying the same.
    let out = launch(true);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let error: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(error["status"], "error");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("never reached sessionRestored"),
        "{error}"
    );
    assert_eq!(stored_traces(&ff.home), 0, "not stored as a start");
}

/// The profile's test of `test.profiler.js` on a loaded machine: Firefox read nothing for more
/// than the 3 s of quiet before it restored its session, and the recording ended there. While the
/// checkpoints say the start is under way, quiet does not end it: here the stand-in reads
/// nothing for 4 s, then restores; the trace must know it got there, and is stored.
#[test]
fn quiet_before_the_session_is_restored_does_not_end_the_start() {
    let ff = install(&format!(
        "printf '%s' '{STARTED}' > \"$2/sessionCheckpoints.json\"; sleep 4; printf '%s' '{RESTORED}' > \"$2/sessionCheckpoints.json\"; exec sleep 30"
    ));
    let profile = ff.folder("profile");
    let out = ff.run(
        &["launch", "--json"],
        &["-profile", profile.to_str().unwrap()],
    );
    let trace = trace_ending_its_firefox(&out);
    assert_restored_then_quiet(&out, &trace, &profile);
    assert_eq!(stored_traces(&ff.home), 1);
}

/// The same on a machine more loaded still (test.profiler.js as nobody, under load): the start
/// read nothing and had written no checkpoint yet when 3 s of quiet were over. With its profile
/// folder known, quiet does not end it before the first checkpoint: here the stand-in writes
/// nothing for 4 s, then restores at once; the trace must know it got there.
#[test]
fn quiet_before_the_first_checkpoint_does_not_end_the_start() {
    let ff = install(&format!(
        "sleep 4; printf '%s' '{RESTORED}' > \"$2/sessionCheckpoints.json\"; exec sleep 30"
    ));
    let profile = ff.folder("profile");
    let out = ff.run(
        &["launch", "--json"],
        &["-profile", profile.to_str().unwrap()],
    );
    let trace = trace_ending_its_firefox(&out);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(trace["session_restored_reached"], true, "{trace}");
    assert_eq!(trace["ended_by_code"], "quiet", "{trace}");
    assert_eq!(stored_traces(&ff.home), 1);
}

/// CI, 29 Nov: Firefox started without `-profile` holds its startup lock,
/// `$TMPDIR/<remoting name>/.parentlock`, and that folder was taken for its profile; no
/// checkpoint ever comes there, so quiet never ended the recording. Here the stand-in holds only
/// such a lock and reads nothing: quiet ends the recording (before the change it waited for
/// the stand-in to exit, 60 s on), and the trace names no profile.
#[test]
fn firefoxs_startup_lock_is_not_its_profile() {
    let ff = install(
        "mkdir -p \"$TMPDIR/firefox\"; exec 3>\"$TMPDIR/firefox/.parentlock\"; exec sleep 60",
    );
    let temp = ff.folder("run");
    let out = ff.run_env(&["launch", "--json"], &[("TMPDIR", &temp)]);
    let trace = trace_ending_its_firefox(&out);
    assert!(
        temp.join("firefox/.parentlock").exists(),
        "the lock was made"
    );
    assert_eq!(trace["ended_by_code"], "quiet", "{trace}");
    assert!(trace["profile"].is_null(), "{trace}");
}

/// The same start with its profile locked too (no `-profile`: found from the locks it holds),
/// the startup lock on the lower descriptor: the profile's lock is the one taken, and quiet
/// waits for the first checkpoint there (4 s of nothing, then restored at once).
#[test]
fn the_profile_is_the_lock_beside_the_startup_lock() {
    let ff = install("");
    let temp = ff.folder("run");
    let profile = ff.folder("profile");
    std::fs::write(
        ff.dir.join("firefox"),
        format!(
            "#!/bin/sh\nmkdir -p \"$TMPDIR/firefox\"; exec 3>\"$TMPDIR/firefox/.parentlock\"; \
             exec 4>\"{p}/.parentlock\"; sleep 4; \
             printf '%s' '{RESTORED}' > \"{p}/sessionCheckpoints.json\"; exec sleep 60\n",
            p = profile.display()
        ),
    )
    .unwrap();
    let out = ff.run_env(&["launch", "--json"], &[("TMPDIR", &temp)]);
    let trace = trace_ending_its_firefox(&out);
    assert_restored_then_quiet(&out, &trace, &profile);
}

/// Issue 30 #6: `launch --cold` while another process maps the install's files said "(cold)"
/// and recorded a start that was not. It names what stayed and the process that holds it, on
/// stderr and in the trace's notes.
#[test]
fn a_cold_launch_while_another_process_maps_the_install_says_who_holds_it() {
    let ff = install("exit 0");
    let helper = Helper::start(&ff.dir);
    let out = ff.run(&["launch", "--cold", "--json"], &[]);
    let helper_pid = helper.pid();
    drop(helper);
    let said = text(&out.stderr);
    assert!(said.contains("not a cold start"), "{said}");
    assert!(said.contains(&format!("pid {helper_pid}")), "{said}");
    let trace: Value = serde_json::from_slice(&out.stdout).expect("the trace is printed");
    let held = trace["note_codes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["code"] == "cold_held")
        .unwrap_or_else(|| panic!("no cold_held note: {trace}"))
        .clone();
    let exe = ff.dir.join("firefox-helper");
    assert!(
        held["params"]["processes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["pid"] == helper_pid && p["exe"] == exe.to_str().unwrap()),
        "{held}"
    );
    // This user owns the files: what stayed is exact, and the mapped copy is among it.
    assert!(held["params"]["bytes"].as_u64().unwrap() > 0, "{held}");
    assert!(
        held["params"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == exe.to_str().unwrap()),
        "{held}"
    );
}

/// Without another process, a cold launch carries no such note.
#[test]
fn a_cold_launch_alone_is_cold() {
    let ff = install("exit 0");
    // Pages written and not yet on disk stay in the cache too: the new files are synced first.
    assert!(Command::new("sync")
        .arg("-f")
        .arg(&ff.dir)
        .status()
        .unwrap()
        .success());
    let out = ff.run(&["launch", "--cold", "--json"], &[]);
    let trace: Value = serde_json::from_slice(&out.stdout).expect("the trace is printed");
    assert!(
        !trace["note_codes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["code"] == "cold_held"),
        "{trace}"
    );
}

/// `residency --firefox DIR` while an older Firefox of another install runs: the running one of
/// DIR is found (its mapped pages shown), not the oldest of all dropped as "not this install".
#[test]
fn residency_of_one_install_finds_its_firefox_beside_an_older_one_of_another() {
    let older = install("exit 0");
    let this = install("exit 0");
    // Each helper is that install's "Firefox": named firefox*, application.ini beside it.
    for ff in [&older, &this] {
        std::fs::rename(ff.dir.join("firefox"), ff.dir.join("launcher.sh")).unwrap();
        std::fs::rename(ff.dir.join("firefox-helper"), ff.dir.join("firefox")).unwrap();
    }
    let start = |dir: &Path| {
        let child = Command::new(dir.join("firefox"))
            .arg("300")
            .spawn()
            .unwrap();
        let exe = dir.join("firefox");
        for _ in 0..1000 {
            if std::fs::read_link(format!("/proc/{}/exe", child.id())).is_ok_and(|e| e == exe) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Helper(child)
    };
    let _older = start(&older.dir);
    let mine = start(&this.dir);
    let out = this.run(&["residency", "--json"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let firefox = this.dir.join("firefox");
    let entry = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == firefox.to_str().unwrap())
        .unwrap_or_else(|| panic!("no row for {}: {report}", firefox.display()))
        .clone();
    assert!(
        entry["mapped"]["pages"].as_u64().is_some_and(|p| p > 0),
        "the running Firefox {} of this install maps its executable: {entry}",
        mine.pid()
    );
}

/// Issue 39 #3: `launch --cold --trace` with no display: Firefox said why and exited 1 after
/// 300 ms; the command returned 0, showed nothing of Firefox's message, said "firefox exited
/// (exit code ?)" beside "exit status: 1", and stored the trace, which then fed the plan. A
/// failed Firefox is a failed command: non-zero, Firefox's own words shown (its standard error
/// goes to a file the host reads back), nothing stored.
#[test]
fn a_firefox_that_fails_fails_the_command_with_its_own_message_and_is_not_stored() {
    let ff = install("echo 'Error: no DISPLAY environment variable specified' >&2; exit 1");
    for json in [false, true] {
        let args: &[&str] = if json {
            &["launch", "--cold", "--json"]
        } else {
            &["launch", "--cold"]
        };
        let out = Command::new(BIN)
            .args(args)
            .args(["--firefox", ff.dir.to_str().unwrap()])
            .env("HOME", &ff.home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("SUDO_UID")
            .env_remove("PKEXEC_UID")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("MOZ_HEADLESS")
            .output()
            .unwrap();
        let said = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(
            said.contains("Firefox said:\nError: no DISPLAY environment variable specified"),
            "Firefox's own message: {said}"
        );
        assert!(said.contains("exited with exit status 1"), "{said}");
        assert!(said.contains("no display"), "{said}");
        assert!(!said.contains("exit code ?"), "{said}");
        if json {
            let error: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
            assert_eq!(error["status"], "error", "{error}");
        }
    }
    assert_eq!(stored_traces(&ff.home), 0, "not stored as a start");
}

/// `launch` without `--firefox`, as a user types it, on the machine where it picked another
/// e2e run's Firefox copy in /var/tmp: it started the install of the oldest running Firefox,
/// not the one the user starts by name. It starts PATH's Firefox (the desktop entry's and the
/// terminal's), says which and how it was found, whatever other install runs; plain and
/// `--prefetch` alike.
#[test]
fn launch_without_firefox_starts_paths_firefox_not_a_running_copy_and_says_which() {
    // The running copy: its "Firefox" (a copy of sleep named firefox, application.ini beside
    // it) runs, as another session's Firefox does; its launcher would say it was started.
    let copy = install("echo copy > \"$HOME/launched\"; exit 1");
    std::fs::rename(copy.dir.join("firefox"), copy.dir.join("launcher.sh")).unwrap();
    std::fs::rename(copy.dir.join("firefox-helper"), copy.dir.join("firefox")).unwrap();
    let running = Command::new(copy.dir.join("firefox"))
        .arg("300")
        .spawn()
        .unwrap();
    let exe = copy.dir.join("firefox");
    for _ in 0..1000 {
        if std::fs::read_link(format!("/proc/{}/exe", running.id())).is_ok_and(|e| e == exe) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _running = Helper(running);
    // The user's Firefox: `firefox` on PATH, a symlink into its install folder (as Debian's
    // /usr/bin/firefox-esr is). Its script notes it was started and exits 1 at once (a failed
    // start ends the traced launch without waiting).
    let mine = install("echo mine > \"$HOME/launched\"; echo \"$*\" >> \"$HOME/launched\"; exit 1");
    let bin = mine.folder("bin");
    std::os::unix::fs::symlink(mine.dir.join("firefox"), bin.join("firefox")).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let run = |args: &[&str]| {
        let _ = std::fs::remove_file(mine.home.join("launched"));
        Command::new(BIN)
            .args(args)
            .env("HOME", &mine.home)
            .env("PATH", &path)
            .env_remove("XDG_STATE_HOME")
            .env_remove("SUDO_UID")
            .env_remove("PKEXEC_UID")
            .output()
            .unwrap()
    };
    for args in [
        &["launch", "--", "--headless", "--new-window"][..],
        &["launch", "--prefetch", "--", "--headless", "--new-window"][..],
    ] {
        let out = run(args);
        let said = text(&out.stderr);
        let launched = std::fs::read_to_string(mine.home.join("launched")).unwrap_or_default();
        assert_eq!(
            launched,
            "mine\n--headless --new-window\n",
            "{args:?} started the user's Firefox (PATH's), not the running copy {}: {said}",
            copy.dir.display()
        );
        assert!(
            said.contains(&format!(
                "starting {} (the installed Firefox, found by PATH: firefox;",
                mine.dir.join("firefox").display()
            )),
            "{args:?} says which Firefox it starts and how it was found: {said}"
        );
    }
}
