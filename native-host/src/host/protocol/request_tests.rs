use super::*;
use crate::host::protocol::Envelope;
use crate::learn::plan;
use crate::pagecache::preload::Method;
use crate::Error;
use serde_json::json;

fn decode(text: &str) -> Result<Request, DecodeError> {
    decode_request(text.as_bytes())
}

fn code_of(text: &str) -> (Option<u64>, ErrorCode) {
    let err = decode(text).unwrap_err();
    (err.id, err.error.code)
}

#[test]
fn hello_decodes() {
    let req = decode(r#"{"id": 1, "command": "hello"}"#).unwrap();
    assert_eq!(
        req,
        Request {
            id: 1,
            command: Command::Hello { browser: None }
        }
    );
}

#[test]
fn unknown_fields_are_ignored() {
    let req = decode(r#"{"id": 1, "command": "hello", "extra": [1, 2]}"#).unwrap();
    assert_eq!(req.command, Command::Hello { browser: None });
    let req = decode(
        r#"{"id": 1, "command": "hello", "browser": {"version": "153.7.0", "build_id": "2026"}}"#,
    )
    .unwrap();
    let Command::Hello {
        browser: Some(hint),
    } = req.command
    else {
        panic!("no hint");
    };
    assert_eq!(hint.build_id.as_deref(), Some("2026"));
    assert_eq!(hint.profile, None);
}

#[test]
fn residency_with_and_without_parameters() {
    let req = decode(r#"{"id": 3, "command": "residency", "files": null, "mapped": true}"#);
    assert_eq!(
        req.unwrap().command,
        Command::Residency {
            files: None,
            mapped: Some(true),
            summary_only: None
        }
    );
    let req = decode(r#"{"id": 3, "command": "residency", "files": ["libxul.so"]}"#);
    assert_eq!(
        req.unwrap().command,
        Command::Residency {
            files: Some(vec!["libxul.so".into()]),
            mapped: None,
            summary_only: None
        }
    );
    let req = decode(r#"{"id": 3, "command": "residency", "files": null, "summary_only": true}"#);
    assert_eq!(
        req.unwrap().command,
        Command::Residency {
            files: None,
            mapped: None,
            summary_only: Some(true)
        }
    );
}

#[test]
fn preload_parameters() {
    let req = decode(
        r#"{"id": 4, "command": "preload", "files": null, "idle": true, "method": "fadvise", "jobs": 2}"#,
    );
    assert_eq!(
        req.unwrap().command,
        Command::Preload {
            files: None,
            idle: Some(true),
            method: Some(Method::Fadvise),
            jobs: Some(2),
            plan: None,
            source: None,
            gap_kib: None,
            cache: None,
        }
    );
    let req = decode(r#"{"id": 4, "command": "preload", "jobs": null}"#).unwrap();
    assert!(matches!(req.command, Command::Preload { jobs: None, .. }));
    let req = decode(
        r#"{"id": 4, "command": "preload", "plan": true, "source": "trace", "gap_kib": 64}"#,
    )
    .unwrap();
    assert!(matches!(
        req.command,
        Command::Preload {
            plan: Some(true),
            source: Some(plan::PlanSource::Trace),
            gap_kib: Some(64),
            ..
        }
    ));
    // plan_status with and without a source; an unknown source is a bad request.
    let req = decode(r#"{"id": 4, "command": "plan_status"}"#).unwrap();
    assert_eq!(req.command, Command::PlanStatus { source: None });
    let req = decode(r#"{"id": 4, "command": "plan_status", "source": "trace_reads"}"#);
    assert_eq!(
        req.unwrap().command,
        Command::PlanStatus {
            source: Some(plan::PlanSource::TraceReads)
        }
    );
    assert!(decode(r#"{"id": 4, "command": "plan_status", "source": "guess"}"#).is_err());
}

#[test]
fn evict_and_cancel() {
    let req = decode(r#"{"id": 5, "command": "evict", "files": ["a"]}"#).unwrap();
    assert_eq!(
        req.command,
        Command::Evict {
            files: Some(vec!["a".into()]),
            cache: None
        }
    );
    let req = decode(r#"{"id": 5, "command": "evict", "cache": "image"}"#).unwrap();
    assert_eq!(
        req.command,
        Command::Evict {
            files: None,
            cache: Some(Cache::Image)
        }
    );
    let req = decode(r#"{"id": 6, "command": "cancel", "target": 4}"#).unwrap();
    assert_eq!(req.command, Command::Cancel { target: 4 });
    let req = decode(r#"{"id": 7, "command": "telemetry", "limit": 3}"#).unwrap();
    assert_eq!(req.command, Command::Telemetry { limit: Some(3) });
    let req = decode(r#"{"id": 8, "command": "telemetry"}"#).unwrap();
    assert_eq!(req.command, Command::Telemetry { limit: None });
    assert!(decode(r#"{"id": 9, "command": "telemetry", "limit": "all"}"#).is_err());
    // desktop: status by default; an unknown action is a bad request, not a guess.
    let req = decode(r#"{"id": 10, "command": "desktop"}"#).unwrap();
    assert_eq!(req.command, Command::Desktop { action: None });
    let req = decode(r#"{"id": 11, "command": "desktop", "action": "enable"}"#).unwrap();
    assert_eq!(
        req.command,
        Command::Desktop {
            action: Some(DesktopAction::Enable)
        }
    );
    let err = decode(r#"{"id": 12, "command": "desktop", "action": "toggle"}"#).unwrap_err();
    assert_eq!(err.error.code, ErrorCode::BadRequest);
}

#[test]
fn relaunch_and_autostart_decode_and_autostart_needs_enable() {
    let req = decode(r#"{"id": 1, "command": "relaunch", "cold": true, "open": "about:startup"}"#)
        .unwrap();
    assert_eq!(
        req.command,
        Command::Relaunch {
            cold: Some(true),
            trace: None,
            open: Some("about:startup".into()),
            timeout_s: None
        }
    );
    let req = decode(r#"{"id": 2, "command": "relaunch_status"}"#).unwrap();
    assert_eq!(req.command, Command::RelaunchStatus);
    let req = decode(r#"{"id": 3, "command": "autostart", "enable": false}"#).unwrap();
    assert_eq!(req.command, Command::Autostart { enable: false });
    let err = decode(r#"{"id": 4, "command": "autostart"}"#).unwrap_err();
    assert_eq!(err.error.code, ErrorCode::BadRequest);
    assert!(decode(r#"{"id": 5, "command": "autostart", "enable": "yes"}"#).is_err());
}

#[test]
fn bench_record_wants_an_object() {
    let req = decode(r#"{"id": 8, "command": "bench_record", "record": {"id": "full-1"}}"#);
    let Command::BenchRecord { record } = req.unwrap().command else {
        panic!("not a bench_record");
    };
    assert_eq!(record["id"], json!("full-1"));
    for text in [
        r#"{"id": 8, "command": "bench_record"}"#,
        r#"{"id": 8, "command": "bench_record", "record": null}"#,
        r#"{"id": 8, "command": "bench_record", "record": [1]}"#,
    ] {
        assert_eq!(code_of(text), (Some(8), ErrorCode::BadRequest), "{text}");
    }
}

#[test]
fn invalid_utf8() {
    let err = decode_request(b"{\"id\": 1, \"command\": \"\xff\"}").unwrap_err();
    assert_eq!((err.id, err.error.code), (None, ErrorCode::BadUtf8));
}

#[test]
fn invalid_json_and_non_objects() {
    for text in [
        "",
        "{",
        "{\"id\": 1,}",
        "nul",
        "[1, 2]",
        "[]",
        "7",
        "\"hello\"",
        "null",
    ] {
        assert_eq!(code_of(text), (None, ErrorCode::BadJson), "{text}");
    }
}

#[test]
fn bad_ids_reply_with_null_id() {
    for text in [
        r#"{"command": "hello"}"#,
        r#"{"id": null, "command": "hello"}"#,
        r#"{"id": "1", "command": "hello"}"#,
        r#"{"id": -1, "command": "hello"}"#,
        r#"{"id": 1.5, "command": "hello"}"#,
        r#"{"id": 1.0, "command": "hello"}"#,
        r#"{"id": 9007199254740992, "command": "hello"}"#,
        r#"{"id": 18446744073709551616, "command": "hello"}"#,
    ] {
        assert_eq!(code_of(text), (None, ErrorCode::BadRequest), "{text}");
    }
    // serde_json itself refuses a number beyond f64: that is not JSON it can represent.
    let huge = r#"{"id": 1e400, "command": "hello"}"#;
    assert_eq!(code_of(huge), (None, ErrorCode::BadJson));
    assert!(decode(r#"{"id": 9007199254740991, "command": "hello"}"#).is_ok());
    assert!(decode(r#"{"id": 0, "command": "hello"}"#).is_ok());
}

#[test]
fn unknown_command_names_it() {
    let err = decode(r#"{"id": 2, "command": "format_disk"}"#).unwrap_err();
    assert_eq!(
        (err.id, err.error.code),
        (Some(2), ErrorCode::UnknownCommand)
    );
    assert_eq!(err.error.params, json!({"command": "format_disk"}));
}

#[test]
fn missing_or_non_string_command_is_bad_request() {
    for text in [
        r#"{"id": 2}"#,
        r#"{"id": 2, "command": 5}"#,
        r#"{"id": 2, "command": null}"#,
    ] {
        assert_eq!(code_of(text), (Some(2), ErrorCode::BadRequest), "{text}");
    }
}

#[test]
fn fields_of_the_wrong_type_are_bad_request() {
    for text in [
        r#"{"id": 3, "command": "residency", "files": 5}"#,
        r#"{"id": 3, "command": "residency", "files": [5]}"#,
        r#"{"id": 3, "command": "residency", "mapped": "yes"}"#,
        r#"{"id": 4, "command": "preload", "jobs": 1000000000000}"#,
        r#"{"id": 4, "command": "preload", "jobs": 0}"#,
        r#"{"id": 4, "command": "preload", "jobs": 17}"#,
        r#"{"id": 4, "command": "preload", "jobs": -1}"#,
        r#"{"id": 4, "command": "preload", "jobs": 2.5}"#,
        r#"{"id": 4, "command": "preload", "method": "mmap"}"#,
        r#"{"id": 6, "command": "cancel"}"#,
        r#"{"id": 6, "command": "cancel", "target": "4"}"#,
        r#"{"id": 5, "command": "evict", "files": []}"#,
        r#"{"id": 5, "command": "evict", "cache": "loop"}"#,
        r#"{"id": 4, "command": "preload", "cache": 1}"#,
    ] {
        let err = decode(text).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::BadRequest, "{text}");
        assert!(err.id.is_some(), "{text}");
        assert!(err.error.params["detail"].is_string(), "{text}");
    }
}

#[test]
fn errors_about_huge_values_stay_small() {
    let huge = "x".repeat(900_000);
    for text in [
        json!({"id": huge, "command": "hello"}),
        json!({"id": 1, "command": huge}),
        json!({"id": 1, "command": "cancel", "target": huge}),
        json!({"id": 1, "command": "residency", "files": [[huge]]}),
    ] {
        let err = decode_request(&serde_json::to_vec(&text).unwrap()).unwrap_err();
        let reply = serde_json::to_vec(&Envelope::error(err.id, err.error)).unwrap();
        assert!(reply.len() < 2000, "{}", reply.len());
    }
}

#[test]
fn errors_that_echo_request_paths_stay_small() {
    // A path the request named, inside a host error (not a decoding error).
    let huge = std::path::PathBuf::from(format!("/{}", "p".repeat(600_000)));
    for error in [
        Error::NoSuchFile { path: huge.clone() },
        Error::OutsideInstallDir {
            path: huge.clone(),
            install_dir: huge.clone(),
        },
    ] {
        let reply = ReplyError::from(&error);
        let bytes = serde_json::to_vec(&Envelope::error(Some(3), reply.clone())).unwrap();
        assert!(bytes.len() < 4000, "{}", bytes.len());
        assert!(reply.message.ends_with('…'), "{}", &reply.message[..50]);
        assert_eq!(reply.code, error.code());
    }
}

/// Issue 29 #5: every number a request gives is bounded; a time in ms that is negative, beyond
/// a day or too large for an f64 (which would read as infinity) is refused with what to send.
#[test]
fn times_in_ms_are_refused_unless_finite_and_within_a_day() {
    for text in [
        r#"{"id": 7, "command": "learn", "session_restored_ms": -1}"#,
        r#"{"id": 7, "command": "learn", "session_restored_ms": 1e300}"#,
        r#"{"id": 8, "command": "trace_summary", "trace": "1-2-3", "axis_end_ms": -0.5}"#,
        r#"{"id": 8, "command": "trace_summary", "trace": "1-2-3", "axis_end_ms": 1e12}"#,
    ] {
        let err = decode(text).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::BadRequest, "{text}");
        assert!(
            err.error.message.contains("a time in ms from 0 to"),
            "{text}: {}",
            err.error.message
        );
    }
    // Beyond f64: serde_json refuses the number itself, never an infinity.
    let err = decode(r#"{"id": 7, "command": "learn", "session_restored_ms": 1e400}"#).unwrap_err();
    assert_eq!(err.error.code, ErrorCode::BadJson, "{:?}", err.error);
    assert_eq!(
        decode(r#"{"id": 7, "command": "learn", "session_restored_ms": 1351.5}"#)
            .unwrap()
            .command,
        Command::Learn {
            session_restored_ms: Some(1351.5)
        }
    );
}

#[test]
fn jobs_detail_names_the_range() {
    let err = decode(r#"{"id": 4, "command": "preload", "jobs": 1000000000000}"#).unwrap_err();
    assert!(
        err.error.message.contains("between 1 and 16"),
        "{}",
        err.error.message
    );
}
