//! Arbitrary bytes as the traced restart's `relaunch-request.json` (written by a user, read by
//! root under pkexec: docs/design/pkexec.md) and as the restart record `relaunch.json` (read by
//! the page's host): parsing never panics, and what parses writes back to what parses the same.
#![no_main]

use about_startup_host::relaunch::{request, status};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(req) = request::parse(data) {
        let again = serde_json::to_vec(&req).unwrap();
        assert_eq!(request::parse(&again), Some(req));
    }
    if let Some(record) = status::parse(data) {
        let again = serde_json::to_vec(&record).unwrap();
        assert!(status::parse(&again).is_some());
    }
});
