//! Arbitrary bytes as the state folder's `last-run.json` (a folder its user can edit, read by
//! `plan_status` and `autostart status`): parsing never panics and gives whole numbers back.
#![no_main]

use about_startup_host::learn::last_run::parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(last) = parse(data) {
        let _ = serde_json::to_vec(&last).unwrap();
    }
});
