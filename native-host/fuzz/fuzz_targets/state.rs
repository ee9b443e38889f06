//! Arbitrary bytes as the files the host reads back from its state folder: the working set
//! (`working-set.json`, which `plan` and `preload --plan` trust) and what is derived from it.
//! Parsing must never panic, and a parsed state must merge and plan ranges without panicking
//! (a state file is written by the host but lives in a folder its user can edit).
#![no_main]

use about_startup_host::learn::plan::byte_ranges;
use about_startup_host::learn::workingset::parse_state;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let state = parse_state(data);
    for file in state.merged() {
        let ranges = file.ranges.clone();
        // Page size and gap as the host uses them; sizes as the state claims.
        let _ = byte_ranges(&ranges, 4096, file.id.size, 256 * 1024);
        let _ = file.pages();
    }
});
