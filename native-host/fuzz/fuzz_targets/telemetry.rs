//! Arbitrary bytes as a profile's archived Telemetry ping (`*.main.jsonlz4`): a file another
//! program writes, in a folder its user (or anything running as them) can edit. Decoding must
//! never panic or allocate beyond its cap, and whatever decodes must parse without panicking.
//! Both the raw bytes and a mozlz4 header in front of them are tried, so the LZ4 block decoder
//! sees arbitrary blocks and the JSON parser sees arbitrary text.
#![no_main]

use about_startup_host::firefox::telemetry::{decode_mozlz4, parse_main_ping, MAGIC};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(json) = decode_mozlz4(data) {
        let _ = parse_main_ping(&json, "f");
    }
    let _ = parse_main_ping(data, "f");
    if let Some((size, block)) = data.split_first_chunk::<2>() {
        let mut framed = MAGIC.to_vec();
        framed.extend_from_slice(&u32::from(u16::from_le_bytes(*size)).to_le_bytes());
        framed.extend_from_slice(block);
        if let Ok(json) = decode_mozlz4(&framed) {
            let _ = parse_main_ping(&json, "f");
        }
    }
});
