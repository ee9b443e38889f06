use super::*;
use crate::firefox::served::Found;
use crate::host::protocol::ErrorCode;
use crate::learn::plan;
use crate::pagecache::residency::Capabilities;
use crate::pagecache::{evict, preload, residency};
use serde_json::json;
use std::path::PathBuf;

fn evict_reply(n: usize, path_len: usize) -> Reply {
    let file = evict::FileResult {
        path: PathBuf::from(format!("/{}", "x".repeat(path_len - 1))),
        pages: 1,
        status: residency::Status::Error,
        resident_before: None,
        resident_after: None,
        note: Some("a note as long as the longest the host writes, give or take".into()),
        note_code: Some(crate::note::EVICTED_HIDDEN),
        problem: Some(crate::pagecache::problem::Problem::open(
            &std::io::Error::from_raw_os_error(13),
        )),
    };
    Reply::Evict(evict::Summary {
        files: vec![file; n],
        files_omitted: 0,
        pages_dropped: 0,
        elapsed_ms: 0,
        cache: crate::pagecache::Cache::Files,
    })
}

fn frame_len(reply: Reply) -> usize {
    serde_json::to_vec(&Envelope::ok(1, reply)).unwrap().len()
}

#[test]
fn long_lists_are_cut_and_counted() {
    let Reply::Evict(s) = evict_reply(1500, 40).bounded() else {
        unreachable!()
    };
    assert_eq!((s.files.len(), s.files_omitted), (MAX_LIST_ENTRIES, 500));
    let Reply::Evict(s) = evict_reply(999, 40).bounded() else {
        unreachable!()
    };
    assert_eq!((s.files.len(), s.files_omitted), (999, 0));
    // Long paths: the byte budget cuts first.
    let Reply::Evict(s) = evict_reply(1500, 4096).bounded() else {
        unreachable!()
    };
    assert_eq!(s.files.len(), MAX_LIST_PATH_BYTES / 4096);
    assert_eq!(s.files_omitted, 1500 - s.files.len() as u64);
}

#[test]
fn bounded_replies_fit_a_frame_even_with_the_longest_paths() {
    for path_len in [40, 255, 4096] {
        let size = frame_len(evict_reply(5000, path_len).bounded());
        assert!(size < crate::framing::MAX_OUTGOING, "{path_len}: {size}");
    }
    let uncached = |n, len: usize| {
        (0..n)
            .map(|_| plan::Uncached {
                path: PathBuf::from("y".repeat(len)),
                size: u64::MAX,
                planned: Some(true),
            })
            .collect::<Vec<_>>()
    };
    for len in [40, 4096] {
        let status = plan::PlanStatus {
            profile: None,
            learned: true,
            starts: 5,
            planned_bytes: 0,
            planned_files: 0,
            install_bytes: 0,
            planned_install_bytes: 0,
            planned_system_bytes: 0,
            changed_files: vec![PathBuf::from("z".repeat(len)); 5000],
            changed_files_omitted: 0,
            uncached_files: Some(uncached(5000, len)),
            uncached_files_omitted: 0,
            autostart: crate::learn::autostart::Status {
                enabled: false,
                kind: None,
                last_run: None,
                note: None,
                damon_pageout: false,
                note_code: None,
            },
            source: plan::PlanSource::Learned,
            build_id: None,
            learned_build_id: None,
            stale: false,
            note_codes: Vec::new(),
        };
        let Reply::PlanStatus(s) = Reply::PlanStatus(Box::new(status)).bounded() else {
            unreachable!()
        };
        assert_eq!(s.changed_files.len() as u64 + s.changed_files_omitted, 5000);
        assert_eq!(
            s.uncached_files.as_ref().unwrap().len() as u64 + s.uncached_files_omitted,
            5000
        );
        assert!(s.uncached_files_omitted > 0);
        let size = frame_len(Reply::PlanStatus(s));
        assert!(size < crate::framing::MAX_OUTGOING, "{len}: {size}");
    }
}

#[test]
fn preload_errors_keep_the_first_ones() {
    let errors = (0..1200)
        .map(|i| preload::FileError {
            path: PathBuf::from(format!("/f/{i}")),
            problem: crate::pagecache::problem::Problem::open(&std::io::Error::from(
                std::io::ErrorKind::NotFound,
            )),
        })
        .collect();
    let summary = preload::Summary {
        errors,
        ..preload::Summary::whole_folder(preload::Method::Read, 1, false)
    };
    let Reply::Preload(s) = Reply::Preload(summary).bounded() else {
        unreachable!()
    };
    assert_eq!((s.errors.len(), s.errors_omitted), (1000, 200));
    // The first ones are kept, in order.
    assert_eq!(s.errors[999].path, PathBuf::from("/f/999"));
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["errors_omitted"], 200);
    let Reply::Evict(s) = evict_reply(3, 40).bounded() else {
        unreachable!()
    };
    let json = serde_json::to_value(&s).unwrap();
    assert!(json.get("files_omitted").is_none(), "{json}");
}

#[test]
fn envelopes_serialise_as_documented() {
    let ok = serde_json::to_value(Envelope::ok(7, Reply::Cancel(Cancelled { target: 4 })));
    assert_eq!(
        ok.unwrap(),
        json!({"id": 7, "status": "ok", "data": {"target": 4}})
    );

    let err = ReplyError::new(ErrorCode::Cancelled, "preload 4 was cancelled", json!({}));
    let err = serde_json::to_value(Envelope::error(Some(4), err)).unwrap();
    assert_eq!(
        err,
        json!({"id": 4, "status": "error", "code": "cancelled",
               "message": "preload 4 was cancelled", "params": {}})
    );

    let ev = serde_json::to_value(Envelope::event(7, Event::Progress(progress()))).unwrap();
    assert_eq!(
        ev,
        json!({"id": 7, "status": "event", "event": "progress", "data": {
            "bytes_done": 1, "bytes_total": 2, "files_done": 0, "files_total": 1,
            "current_file": null}})
    );

    let null_id = serde_json::to_string(&Envelope::error(None, ReplyError::bad_request("x")));
    assert!(null_id
        .unwrap()
        .starts_with(r#"{"id":null,"status":"error""#));
}

fn progress() -> preload::Progress {
    preload::Progress {
        bytes_done: 1,
        bytes_total: 2,
        files_done: 0,
        files_total: 1,
        current_file: None,
    }
}

/// The bytes on the wire, key order included: `data` holds the command's object with no
/// variant name around it, and an event's name sits beside its `data`.
#[test]
fn typed_replies_and_events_keep_the_wire_shape() {
    let hello = Reply::Hello(Hello {
        host_version: "0.1.0",
        protocol_version: 1,
        capabilities: Capabilities {
            kernel: "6.18.44".into(),
            euid: 1000,
            root: false,
            mincore_exact: "owned_or_writable",
            cachestat: true,
        },
        firefox_pid: Some(4242),
        install_kind: None,
        firefox_found: FirefoxFound {
            how: Found::Parent,
            detail: None,
            candidates: None,
            pids: Vec::new(),
        },
        cli: crate::invocation::Invocation {
            plain: "about-startup-host".into(),
            as_root: "sudo about-startup-host".into(),
            on_path: true,
        },
    });
    assert_eq!(
        serde_json::to_string(&Envelope::ok(1, hello)).unwrap(),
        r#"{"id":1,"status":"ok","data":{"host_version":"0.1.0","protocol_version":1,"#.to_owned()
            + r#""kernel":"6.18.44","euid":1000,"root":false,"#
            + r#""mincore_exact":"owned_or_writable","cachestat":true,"firefox_pid":4242,"#
            + r#""install_kind":null,"firefox_found":{"how":"parent","detail":null,"#
            + r#""candidates":null,"pids":[]},"cli":{"command":"about-startup-host","#
            + r#""root_command":"sudo about-startup-host","on_path":true}}}"#
    );
    let cancel = Envelope::ok(6, Reply::Cancel(Cancelled { target: 4 }));
    assert_eq!(
        serde_json::to_string(&cancel).unwrap(),
        r#"{"id":6,"status":"ok","data":{"target":4}}"#
    );
    let event = Envelope::event(4, Event::Progress(progress()));
    assert_eq!(
        serde_json::to_string(&event).unwrap(),
        r#"{"id":4,"status":"event","event":"progress","data":{"bytes_done":1,"#.to_owned()
            + r#""bytes_total":2,"files_done":0,"files_total":1,"current_file":null}}"#
    );
    assert!(!event.is_final() && cancel.is_final());
}

#[test]
fn error_codes_are_snake_case() {
    let codes = serde_json::to_value([
        ErrorCode::OutsideInstallDir,
        ErrorCode::ReplyTooLarge,
        ErrorCode::NotBenchmarking,
    ]);
    assert_eq!(
        codes.unwrap(),
        json!(["outside_install_dir", "reply_too_large", "not_benchmarking"])
    );
}
