//! Arbitrary bytes as lines of the tracer's tracefs instances (event text with task names a
//! user chooses) and of their `per_cpu/*/stats`, and as a request to the tracer: the tracer's
//! filter and the user side's parser never panic, a forwarded line never carries a page frame
//! the filter did not give a token, and no request but the two of the protocol decodes.
#![no_main]

use about_startup_host::trace::event::{lost_in_line, parse_line};
use about_startup_host::tracer::arm::parse_lost;
use about_startup_host::tracer::filter::Filter;
use about_startup_host::tracer::protocol::{decode, Request};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let _ = parse_line(line);
        let _ = lost_in_line(line);
    }
    let _ = parse_lost(&text);
    let mut filter = Filter::new(&[1, 2, 3]);
    let lines: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
    filter.exec_lines(&lines, &mut |pid| pid % 2 == 0);
    for line in &lines {
        filter.system_line(line);
        let _ = filter.tree_line(line);
    }
    let _ = filter.matched_completions();
    if let Ok(req) = decode(data) {
        assert!(matches!(req, Request::Follow { .. } | Request::Stop {}));
    }
});
