//! Arbitrary bytes as a zip archive's tail and central directory (`omni.ja` in an install
//! folder another user may own, read by a host that may run as root, issue 21). Parsing must
//! never panic, read out of bounds or allocate from a claimed count; every entry it returns
//! must lie inside the data, and the spans must not overlap.
#![no_main]

use about_startup_host::firefox::omni::{entries, entry_at};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(list) = entries(data) {
        let mut end = 0u64;
        for e in &list {
            assert!(e.offset >= end, "spans overlap");
            end = e.offset + e.span;
            assert!(end <= data.len() as u64, "an entry past the end");
            assert_eq!(entry_at(&list, e.offset).map(|i| list[i].offset), Some(e.offset));
        }
    }
});
