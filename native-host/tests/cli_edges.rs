//! The CLI's edges a newcomer meets (issue 30 #9, #10, #14), run as a user would: the built
//! binary with `HOME` pointed at a temporary folder, what it prints and its exit status.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn host(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_about-startup-host"))
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .expect("run the host binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `note: ` lines of `said` other than the DAMON one, which a command may print on any
/// machine that runs a kdamond with a pageout scheme: the machine's state, not the command's.
fn notes_but_damon(said: &str) -> Vec<&str> {
    let damon = format!(
        "note: {}",
        about_startup_host::note::Note::new(about_startup_host::note::DAMON_PAGEOUT).english()
    );
    said.lines()
        .filter(|l| l.contains("note: ") && l.trim() != damon)
        .collect()
}

fn state(home: &Path) -> std::path::PathBuf {
    home.join(".local/state/about-startup")
}

/// The recorded fixture of a real ESR 153 cold start, stored in `home`'s state folder as the
/// host stores a trace; its id.
fn store_fixture(home: &Path) -> String {
    let trace: about_startup_host::trace::Trace =
        serde_json::from_str(include_str!("fixtures/profiler/trace-esr153-cold.json")).unwrap();
    let dir = about_startup_host::state::StateDir::create_at(&state(home)).unwrap();
    let traces = about_startup_host::trace::store::in_state(&dir).unwrap();
    about_startup_host::trace::store::save(&traces, &trace)
        .unwrap()
        .0
}

#[test]
fn trace_list_and_show_find_a_stored_trace_without_ls() {
    let home = tempfile::tempdir().unwrap();
    let empty = host(home.path(), &["trace", "list"]);
    assert!(empty.status.success(), "{}", text(&empty.stderr));
    assert!(
        text(&empty.stdout).starts_with("no stored trace in "),
        "{}",
        text(&empty.stdout)
    );

    let id = store_fixture(home.path());
    let out = host(home.path(), &["trace", "list", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listing["traces"][0]["id"], id.as_str());
    // The fixture's own figures (`jq '.pid, .firefox_version, .traced_read_bytes'`).
    assert_eq!(listing["traces"][0]["pid"], 24493);
    assert_eq!(listing["traces"][0]["traced_read_bytes"], 29_437_952);
    let table = host(home.path(), &["trace", "list"]);
    let table = text(&table.stdout);
    assert!(table.contains(&id), "{table}");
    assert!(
        table.contains("29.4 MB") && table.contains("153."),
        "{table}"
    );
    assert!(table.contains("trace show ID"), "{table}");

    let shown = host(home.path(), &["trace", "show", &id, "--json"]);
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    let trace: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(trace["pid"], 24493);
    assert_eq!(trace["events"].as_array().unwrap().len(), 26);
    let human = text(&host(home.path(), &["trace", "show", &id]).stdout);
    assert!(human.contains("FILE READ FROM DISK"), "{human}");
    assert!(human.contains("libxul.so"), "{human}");

    // A wrong id, for show and for export: the error points at `trace list`, not at `ls`.
    for args in [
        ["trace", "show", "1-2-3"].as_slice(),
        ["trace", "export", "1-2-3"].as_slice(),
    ] {
        let out = host(home.path(), args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains("no stored trace 1-2-3"), "{err}");
        assert!(err.contains("trace list` lists them"), "{err}");
        assert!(!err.contains("`ls`"), "{err}");
    }
}

#[test]
fn trace_export_json_to_stdout_is_a_usage_error_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let id = store_fixture(home.path());
    let out = host(home.path(), &["trace", "export", &id, "--json", "-o", "-"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "nothing on stdout");
    let err = text(&out.stderr);
    assert!(err.contains("-o FILE"), "{err}");
    // Each alone still works: the profile on stdout, or the summary beside a file.
    let profile = host(home.path(), &["trace", "export", &id, "-o", "-"]);
    assert!(profile.status.success(), "{}", text(&profile.stderr));
    let v: Value = serde_json::from_slice(&profile.stdout).expect("stdout is the profile alone");
    assert!(v["meta"].is_object());
    let file = home.path().join("p.json");
    let summary = host(
        home.path(),
        &[
            "trace",
            "export",
            &id,
            "--json",
            "-o",
            file.to_str().unwrap(),
        ],
    );
    assert!(summary.status.success(), "{}", text(&summary.stderr));
    let s: Value = serde_json::from_slice(&summary.stdout).unwrap();
    assert_eq!(s["kind"], "trace");
}

#[path = "support/install_fixture.rs"]
mod install_fixture;

#[test]
fn plan_with_nothing_learned_counts_no_file_as_one_the_starts_read() {
    let home = tempfile::tempdir().unwrap();
    let fx = install_fixture::Fixture::new();
    let ff = fx.ff.to_str().unwrap();
    // Every file of the fake install out of the cache (they are ours, so the kernel tells).
    let evicted = host(home.path(), &["evict", "--firefox", ff]);
    assert!(evicted.status.success(), "{}", text(&evicted.stderr));
    let out = host(home.path(), &["plan", "--firefox", ff]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("plan: nothing learned yet"), "{said}");
    assert!(
        !said.contains("the starts read"),
        "no start was learned: {said}"
    );
    assert!(
        said.contains("which ones a start needs is known once a start is learned"),
        "{said}"
    );
    // libxul.so (4 MiB) is among them: the count is of files of the folder, not of a plan.
    let json: Value =
        serde_json::from_slice(&host(home.path(), &["plan", "--firefox", ff, "--json"]).stdout)
            .unwrap();
    assert_eq!(json["learned"], false);
    let uncached = json["uncached_files"].as_array().unwrap();
    assert!(
        uncached
            .iter()
            .any(|f| f["path"].as_str().unwrap().ends_with("/libxul.so") && f["planned"].is_null()),
        "{json}"
    );
    assert!(
        said.contains(&format!("uncached files of Firefox: {} (", uncached.len())),
        "{said}"
    );
}

#[test]
fn telemetry_of_a_folder_that_is_not_a_profile_says_so_and_fails() {
    let home = tempfile::tempdir().unwrap();
    let not_profile = tempfile::tempdir().unwrap();
    let dir = not_profile.path().to_str().unwrap();
    let out = host(home.path(), &["telemetry", "--profile", dir]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("is not a Firefox profile"), "{err}");
    assert!(out.stdout.is_empty(), "no 'no Telemetry archive' line");
    // With --json: the error as JSON on stdout too.
    let out = host(home.path(), &["telemetry", "--profile", dir, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).expect("a JSON error on stdout");
    assert_eq!(v["status"], "error");
    assert_eq!(v["code"], "profile_not_found");
    assert!(v["message"]
        .as_str()
        .unwrap()
        .contains("is not a Firefox profile"));

    // A profile Firefox ran with (it writes compatibility.ini at every start) but whose
    // Telemetry archive is off: not an error, and it says why there is nothing.
    std::fs::write(
        not_profile.path().join("compatibility.ini"),
        "[Compatibility]\n",
    )
    .unwrap();
    let out = host(home.path(), &["telemetry", "--profile", dir]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("no Telemetry archive"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_json_command_that_fails_prints_a_json_error_on_stdout() {
    // HOME a regular file: no command can make its folders there, root or not.
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("file");
    std::fs::write(&home, b"").unwrap();
    for args in [
        ["autostart", "enable", "--json"].as_slice(),
        ["autostart", "disable", "--json"].as_slice(),
        ["trace", "list", "--json"].as_slice(),
        ["residency", "--json", "--firefox", "/nonexistent"].as_slice(),
    ] {
        let out = host(&home, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{args:?}: stdout is not JSON ({e}): {}", text(&out.stdout))
        });
        assert_eq!(v["status"], "error", "{args:?}");
        assert!(!v["message"].as_str().unwrap().is_empty(), "{args:?}");
        // The person still reads it on stderr.
        assert!(
            text(&out.stderr).contains("about-startup-host: error: "),
            "{args:?}"
        );
    }
    // Without --json, stdout stays empty on failure.
    let out = host(&home, &["autostart", "enable"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
}

/// The names in the state folder that start with `prefix`.
fn names_with(home: &Path, prefix: &str) -> Vec<String> {
    std::fs::read_dir(state(home))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

#[test]
fn a_damaged_state_file_is_set_aside_whole_and_said_in_the_cli() {
    let home = tempfile::tempdir().unwrap();
    let fx = install_fixture::Fixture::new();
    let ff = fx.ff.to_str().unwrap();
    std::fs::create_dir_all(state(home.path())).unwrap();
    let damaged = b"{\"version\": 1, \"cut sh";
    for (file, args) in [
        ("working-set.json", ["plan", "--firefox", ff].as_slice()),
        ("relaunch.json", ["relaunch", "--status"].as_slice()),
        (
            "last-prefetch.json",
            ["desktop", "status", "--firefox", ff].as_slice(),
        ),
    ] {
        std::fs::write(state(home.path()).join(file), damaged).unwrap();
        let out = host(home.path(), args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let said = text(&out.stdout);
        let aside = names_with(home.path(), &format!("{file}.corrupt."));
        assert_eq!(
            aside.len(),
            1,
            "{file}: set aside once, under one name: {aside:?}"
        );
        assert!(
            said.contains(&format!("note: {file} in ")) && said.contains(&aside[0]),
            "{args:?} says where {file} went: {said}"
        );
        // Kept as it was, not deleted; its old name is free for a fresh file.
        assert_eq!(
            std::fs::read(state(home.path()).join(&aside[0])).unwrap(),
            damaged
        );
        assert!(!state(home.path()).join(file).exists());
        // Said once: the next run has nothing to set aside. The one note it may still print
        // is the machine's, not the state's: `desktop status` names a running DAMON kdamond
        // (CI machines of this kind run one from boot), and nothing else.
        let again = text(&host(home.path(), args).stdout);
        assert_eq!(notes_but_damon(&again), Vec::<&str>::new(), "{again}");
    }
    // The plan's JSON carries it as a note the page words.
    std::fs::write(state(home.path()).join("working-set.json"), b"\xff\xfe").unwrap();
    let out = host(home.path(), &["plan", "--firefox", ff, "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["learned"], false);
    assert_eq!(v["note_codes"][0]["code"], "state_file_set_aside");
    assert_eq!(v["note_codes"][0]["params"]["file"], "working-set.json");
    assert_eq!(
        names_with(home.path(), "working-set.json.corrupt.").len(),
        2
    );
}
