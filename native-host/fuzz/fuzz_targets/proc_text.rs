//! Arbitrary bytes as the /proc texts whose names and contents other processes choose: a
//! maps line (file names a process maps), mountinfo (mount points), a `/proc/<pid>/status`
//! and an environment block (read by root for the user it acts for). None may panic. (The
//! `proc` target fuzzes every parser of `os::proc`; this one keeps its corpus.)
#![no_main]

use std::path::Path;

use about_startup_host::firefox::mount::{mount_of, parse_mountinfo};
use about_startup_host::os::proc::maps::parse_maps_line;
use about_startup_host::os::proc::parse::{environ_var, parse_status};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for line in data.split(|b| *b == b'\n') {
        let _ = parse_maps_line(line);
    }
    let text = String::from_utf8_lossy(data);
    let mounts = parse_mountinfo(&text);
    let _ = mount_of(&mounts, Path::new("/usr/lib/firefox-esr/libxul.so"));
    let _ = parse_status(data);
    if let Some(v) = environ_var(data, b"XDG_STATE_HOME") {
        assert!(!v.contains(&0));
    }
});
