//! Arbitrary bytes on stdin: the frame reader and the request decoder must never panic, must
//! never allocate beyond a frame's limit, and must keep every reply they lead to serialisable
//! and under Firefox's limit.
#![no_main]

use std::io::Cursor;

use about_startup_host::framing::{read_frame, ReadOutcome, MAX_OUTGOING};
use about_startup_host::host::protocol::{decode_request, Envelope};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The input as a stream of frames, as the host reads stdin.
    let mut stream = Cursor::new(data);
    loop {
        match read_frame(&mut stream).expect("a Cursor never fails") {
            ReadOutcome::Frame(body) => check(&body),
            ReadOutcome::TooLarge { .. } => {}
            ReadOutcome::Eof | ReadOutcome::Truncated => break,
        }
    }
    // The input as one frame body, so the fuzzer reaches the JSON decoder directly.
    check(data);
});

fn check(body: &[u8]) {
    if let Err(bad) = decode_request(body) {
        let reply = serde_json::to_vec(&Envelope::error(bad.id, bad.error)).unwrap();
        // An error reply echoes parts of the request (serde's detail): it must stay small.
        assert!(reply.len() <= MAX_OUTGOING);
    }
}
