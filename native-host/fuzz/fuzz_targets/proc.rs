//! Arbitrary bytes as every /proc text `os::proc` parses: a process chooses its command line,
//! environment, name (in stat and status) and the names of the files it maps, and root reads
//! them for the user it acts for. None of the parsers may panic, and what they give back keeps
//! the promises their callers rely on.
#![no_main]

use std::os::unix::ffi::OsStrExt;

use about_startup_host::os::proc::maps::parse_maps_line;
use about_startup_host::os::proc::parse::{
    environ_var, parse_btime, parse_environ, parse_io_read_bytes, parse_stat, parse_status,
    split_nul,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for line in data.split(|b| *b == b'\n') {
        let _ = parse_maps_line(line);
    }
    let _ = parse_stat(data);
    let _ = parse_io_read_bytes(data);
    let _ = parse_btime(&String::from_utf8_lossy(data));
    let _ = parse_status(data);
    for field in split_nul(data) {
        assert!(!field.is_empty() && !field.as_bytes().contains(&0));
    }
    for (name, value) in parse_environ(data) {
        assert!(!name.is_empty() && !name.as_bytes().contains(&b'='));
        assert!(!value.as_bytes().contains(&0));
    }
    if let Some(v) = environ_var(data, b"XDG_STATE_HOME") {
        assert!(!v.contains(&0));
    }
});
