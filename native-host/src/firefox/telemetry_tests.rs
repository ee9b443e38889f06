//! The tests of telemetry.rs: main pings parsed and bounded, the archive walked.

use super::*;
use crate::firefox::mozlz4::tests::mozlz4;

const PING: &str = r#"{"type":"main","id":"p1","creationDate":"2026-11-23T09:10:00.000Z",
    "application":{"version":"153.7.0","displayVersion":"153.7.0esr","buildId":"20261101000000","channel":"esr"},
    "payload":{"info":{"reason":"shutdown","sessionId":"s1","sessionStartDate":"2026-11-23T09:00:00.0+00:00"},
    "simpleMeasurements":{"totalTime":12,"uptime":0,"activeTicks":3,"startupSessionRestoreReadBytes":9,"main":52,"sessionRestored":1351,"firstPaint":900,
    "debuggerAttached":0,"maximalNumberOfConcurrentThreads":40,"js":{"setup":1}}}}"#;

#[test]
fn a_main_ping_gives_its_milestones_and_nothing_else() {
    let s = parse_main_ping(PING.as_bytes(), "datareporting/archived/x").unwrap();
    assert_eq!(
        s.milestones,
        BTreeMap::from([
            ("firstPaint".into(), 900),
            ("main".into(), 52),
            ("sessionRestored".into(), 1351)
        ])
    );
    assert_eq!(s.reason.as_deref(), Some("shutdown"));
    assert_eq!(s.written, Written::SessionEnd);
    assert_eq!(s.version.as_deref(), Some("153.7.0esr"));
    assert_eq!(s.build_id.as_deref(), Some("20261101000000"));
    assert_eq!(s.session_id.as_deref(), Some("s1"));
    let event = PING.replace(r#""type":"main""#, r#""type":"event""#);
    assert_eq!(parse_main_ping(event.as_bytes(), "f"), None);
    assert_eq!(
        parse_main_ping(br#"{"type":"main","payload":{}}"#, "f"),
        None
    );
    assert_eq!(parse_main_ping(b"not json", "f"), None);
}

/// Issue 39 #6: an `environment-change` ping is written mid-session; the page filed it under
/// "Session ended". Its row says when it was written, as the CLI's does, from one definition.
#[test]
fn a_mid_session_ping_is_labelled_mid_session_not_session_ended() {
    let mid = PING.replace(r#""reason":"shutdown""#, r#""reason":"environment-change""#);
    let s = parse_main_ping(mid.as_bytes(), "f").unwrap();
    assert_eq!(s.written, Written::MidSession);
    assert_eq!(
        serde_json::to_value(&s).unwrap()["written"],
        serde_json::json!("mid_session")
    );
    assert_eq!(
        written_words(s.written, s.reason.as_deref()),
        "mid-session (environment-change)"
    );
    assert_eq!(written(Some("daily")), Written::MidSession);
    assert_eq!(written(Some("aborted-session")), Written::Aborted);
    assert_eq!(written(Some("shutdown")), Written::SessionEnd);
    assert_eq!(written(Some("something new")), Written::Unknown);
    assert_eq!(written(None), Written::Unknown);
}

#[test]
fn the_archive_is_read_newest_first_one_session_each_and_bad_files_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let month = dir.path().join("datareporting/archived/2026-11");
    std::fs::create_dir_all(&month).unwrap();
    let ping = |id: &str, session: &str, restored: u64| {
        PING.replace(r#""id":"p1""#, &format!(r#""id":"{id}""#))
            .replace(
                r#""sessionId":"s1""#,
                &format!(r#""sessionId":"{session}""#),
            )
            .replace("1351", &restored.to_string())
    };
    std::fs::write(
        month.join("1000.a.main.jsonlz4"),
        mozlz4(ping("a", "old", 5000).as_bytes()),
    )
    .unwrap();
    std::fs::write(
        month.join("2000.b.main.jsonlz4"),
        mozlz4(ping("b", "new", 700).as_bytes()),
    )
    .unwrap();
    // an earlier ping of the same session (e.g. at midnight): the newer one wins
    std::fs::write(
        month.join("1500.c.main.jsonlz4"),
        mozlz4(ping("c", "new", 1).as_bytes()),
    )
    .unwrap();
    std::fs::write(month.join("3000.d.main.jsonlz4"), b"garbage").unwrap();
    std::fs::write(month.join("4000.e.event.jsonlz4"), mozlz4(b"{}")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", month.join("5000.f.main.jsonlz4")).unwrap();

    let archive = read_archive(dir.path(), 10, &AtomicBool::new(false)).unwrap();
    assert!(archive.archive_found);
    let got: Vec<(&str, u64)> = archive
        .sessions
        .iter()
        .map(|s| (s.ping_id.as_str(), s.milestones["sessionRestored"]))
        .collect();
    assert_eq!(got, [("b", 700), ("a", 5000)]);
    assert_eq!(
        archive.skipped_count, 1,
        "the garbage file; the symlink is not even opened"
    );
    assert!(archive.skipped[0][0].ends_with("3000.d.main.jsonlz4"));
    assert_eq!(
        archive.sessions[0].file,
        "datareporting/archived/2026-11/2000.b.main.jsonlz4"
    );

    let one = read_archive(dir.path(), 1, &AtomicBool::new(false)).unwrap();
    assert_eq!(one.sessions.len(), 1);

    let none = read_archive(&dir.path().join("nope"), 10, &AtomicBool::new(false)).unwrap();
    assert!(!none.archive_found);
    assert!(none.sessions.is_empty());
}

/// Issue 20 #6: one ping with a 3 MB `id` made the reply too large for a frame; a profile
/// full of large pings took a minute, and the walk ignored cancel.
#[test]
fn oversized_fields_are_left_out_the_budget_stops_the_walk_and_cancel_is_heard() {
    let dir = tempfile::tempdir().unwrap();
    let month = dir.path().join("datareporting/archived/2026-11");
    std::fs::create_dir_all(&month).unwrap();
    let huge_id = PING.replace(
        r#""id":"p1""#,
        &format!(r#""id":"{}""#, "x".repeat(1_500_000)),
    );
    // (1.5 MB here: this test's encoder stores literals, and 2 MiB is the compressed bound.)
    let many = (0..100)
        .map(|i| format!(r#""m{i}":{i}"#))
        .collect::<Vec<_>>()
        .join(",");
    let long_key = format!(r#""{}":1,"#, "k".repeat(100));
    let crowded = PING.replace(r#""main":52"#, &format!(r#"{long_key}{many},"main":52"#));
    std::fs::write(
        month.join("1000.a.main.jsonlz4"),
        mozlz4(huge_id.as_bytes()),
    )
    .unwrap();
    std::fs::write(
        month.join("2000.b.main.jsonlz4"),
        mozlz4(crowded.as_bytes()),
    )
    .unwrap();
    let archive = read_archive(dir.path(), 10, &AtomicBool::new(false)).unwrap();
    let reply = serde_json::to_vec(&archive).unwrap();
    assert!(reply.len() < 64 * 1024, "{} bytes", reply.len());
    assert_eq!(
        archive.sessions.len(),
        1,
        "one session: both pings are of session s1"
    );
    let s = &archive.sessions[0];
    assert!(s.milestones.len() <= MAX_MILESTONES);
    assert!(s.milestones.keys().all(|k| k.len() <= MAX_MILESTONE_NAME));
    let other = read_archive(dir.path(), 10, &AtomicBool::new(false)).unwrap();
    assert_eq!(other.sessions[0].ping_id, "p1");
    // The huge id alone: the session is kept, its id is not.
    std::fs::remove_file(month.join("2000.b.main.jsonlz4")).unwrap();
    let only = read_archive(dir.path(), 10, &AtomicBool::new(false)).unwrap();
    assert_eq!(only.sessions.len(), 1, "{:?}", only.skipped);
    assert_eq!(only.sessions[0].ping_id, "");
    assert_eq!(only.sessions[0].milestones["sessionRestored"], 1351);
    // A budget spent stops the walk and says how much was left.
    for i in 0..5 {
        std::fs::write(
            month.join(format!("{}.z.main.jsonlz4", 3000 + i)),
            mozlz4(
                PING.replace(r#""sessionId":"s1""#, &format!(r#""sessionId":"z{i}""#))
                    .as_bytes(),
            ),
        )
        .unwrap();
    }
    let within =
        read_archive_within(dir.path(), 10, &AtomicBool::new(false), PING.len() * 2).unwrap();
    assert_eq!(within.sessions.len(), 2);
    assert_eq!(within.skipped_count, 4);
    assert!(
        within.skipped[0][1].contains("budget"),
        "{:?}",
        within.skipped
    );
    let cancelled = read_archive(dir.path(), 10, &AtomicBool::new(true));
    assert!(matches!(cancelled, Err(crate::Error::Cancelled)));
}
