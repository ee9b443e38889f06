//! Arbitrary bytes as the restart record `relaunch.json` (written by the user's detached
//! `relaunch`, read by the page's host): parsing never panics, and what parses writes back to
//! what parses the same.
#![no_main]

use about_startup_host::relaunch::status;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(record) = status::parse(data) {
        let again = serde_json::to_vec(&record).unwrap();
        assert!(status::parse(&again).is_some());
    }
});
