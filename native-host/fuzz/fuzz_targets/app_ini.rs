//! Arbitrary bytes as an install folder's `application.ini` (a folder a user may control, read
//! by root under sudo: issue 20): parsing never panics and what it keeps is of the text.
#![no_main]

use about_startup_host::firefox::app_ini::parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (version, build_id) = parse(&text);
    for v in [version, build_id].into_iter().flatten() {
        assert!(!v.is_empty() && text.contains(v.as_str()));
    }
});
