//! A traced start stored the way `launch --trace` stores one, for the tests of what reads a
//! trace (the prefetch, the compressed install's image prefetch, what packing would save): a
//! file's entry with its used pages, a read event, a whole trace of an install, and saving it in
//! a state folder.

#![allow(dead_code)] // each test file uses part of it

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use about_startup_host::state::StateDir;
use about_startup_host::trace::model::{FileEntry, Read, Source, Trace, UseCounts, TRACE_VERSION};
use about_startup_host::trace::store;

/// The fixture's build (its application.ini).
pub const BUILD: &str = "20261103151912";

/// `path`'s entry as it is on disk now, with its `used` page ranges (`[first page, pages]`).
pub fn file(path: &Path, used: Vec<[u64; 2]>) -> FileEntry {
    let meta = std::fs::metadata(path).unwrap();
    FileEntry {
        path: path.to_str().unwrap().into(),
        path_b64: None,
        resolved: true,
        dev: "0:0".into(),
        ino: meta.ino(),
        size: Some(meta.len()),
        mtime_ns: Some(meta.mtime() * 1_000_000_000 + meta.mtime_nsec()),
        bytes_read: 0,
        requests: 0,
        first_ms: 0.0,
        last_ms: 0.0,
        written: false,
        sections: vec![],
        extents: vec![],
        used: Some(used),
        entries: None,
    }
}

/// A read of `n` pages at page `o` of file `f`, at `t` ms, of kind `k` (`sync`, `forced`, …).
pub fn read(t: f64, f: u32, o: u64, n: u64, k: &str) -> Read {
    Read {
        t,
        f,
        o,
        n,
        p: 1,
        k: k.into(),
        c: None,
    }
}

/// A tracefs trace of a cold start of the Firefox in `install_dir` (build [`BUILD`]).
pub fn trace(install_dir: &Path, files: Vec<FileEntry>, events: Vec<Read>) -> Trace {
    Trace {
        version: TRACE_VERSION,
        source: Source::Tracefs,
        field_sources: BTreeMap::new(),
        pid: 1,
        process_start_ticks: 1,
        install_dir: install_dir.to_str().unwrap().into(),
        install_dir_b64: None,
        firefox_version: Some("153.7.0".into()),
        build_id: Some(BUILD.into()),
        recorded_at_ms: 1,
        zero: "fork".into(),
        zero_mono_ns: None,
        attached_ms: 0.0,
        ended_ms: 100.0,
        ended_by: "quiet".into(),
        ended_by_code: None,
        lost_events: 0,
        tree_read_bytes: None,
        traced_read_bytes: 0,
        written_bytes: 0,
        processes: vec![],
        files,
        events,
        block: vec![],
        samples: vec![],
        notes: vec![],
        note_codes: vec![],
        use_counts: Some(UseCounts::default()),
        code: vec![],
        milestones: None,
        profile: None,
        session_restored_reached: None,
    }
}

/// Store `trace` in `<state>/about-startup/traces` as `launch --trace` would.
pub fn save(state: &Path, trace: &Trace) {
    let state = StateDir::create_at(&state.join("about-startup")).unwrap();
    let traces = state.sub(store::FOLDER, true).unwrap().unwrap();
    store::save(&traces, trace).unwrap();
}
