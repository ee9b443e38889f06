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

fn state(home: &Path) -> std::path::PathBuf {
    home.join(".local/state/about-startup")
}

/// The recorded fixture of a real ESR 153 cold start, stored in `home`'s state folder as the
/// host stores a trace; its id.
fn store_fixture(home: &Path) -> String {
    let trace: about_startup_host::trace::Trace =
        serde_json::from_str(include_str!("fixtures/profiler/trace-esr153-cold.json")).unwrap();
    let dir = about_startup_host::state::StateDir::create_at(&state(home), None).unwrap();
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
