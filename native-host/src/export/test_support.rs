//! What the export's tests share: the recorded cold start's trace, and our disk-read marker
//! schema as both formats must carry it.

use serde_json::{json, Value};

use crate::trace::model::Trace;

/// The trace of a real cold start of ESR 153 (tests/fixtures/profiler/, `launch --cold --trace
/// --firefox-profile`, trimmed to the libraries' reads).
pub(super) fn cold_trace() -> Trace {
    serde_json::from_str(include_str!(
        "../../tests/fixtures/profiler/trace-esr153-cold.json"
    ))
    .unwrap()
}

/// The `AboutStartupDiskRead` schema of a written profile (either format), checked to show in
/// the Profiler's file-I/O timeline.
pub(super) fn disk_read_schema(profile: &Value) -> &Value {
    let read = profile["meta"]["markerSchema"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "AboutStartupDiskRead")
        .expect("our disk-read marker schema");
    assert!(read["display"]
        .as_array()
        .unwrap()
        .contains(&json!("timeline-fileio")));
    read
}
