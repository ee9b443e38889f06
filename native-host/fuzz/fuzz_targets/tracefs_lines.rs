//! Arbitrary bytes as lines of a tracefs instance's `trace_pipe` (event text with file and task
//! names others choose) and of its `per_cpu/*/stats`: parsing never panics.
#![no_main]

use about_startup_host::trace::event::{lost_in_line, parse_line};
use about_startup_host::trace::tracefs::parse_lost;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let _ = parse_line(line);
        let _ = lost_in_line(line);
    }
    let _ = parse_lost(&text);
});
