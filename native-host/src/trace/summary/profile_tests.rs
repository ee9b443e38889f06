//! The profile's share, on a trace whose files are a real made profile's (its paths as
//! `make.mjs --preset small --seed 1` wrote them) beside an install's.

use super::*;
use crate::firefox::profile_facts::{parse_extensions_json, parse_prefs};
use crate::firefox::profile_parts::Addons;
use crate::trace::model::tests::fake;
use crate::trace::model::{BlockRequest, FileEntry, Read, TraceProfile};

const DIR: &str = "/home/u/.mozilla/firefox/abcd.default-esr";

fn file(path: &str, written: bool, extent: u64) -> FileEntry {
    let mut f = fake().files[0].clone();
    f.path = path.into();
    f.written = written;
    f.extents = vec![[0, extent, 1 << 20]];
    f
}

fn read(t: f64, f: u32, n: u64, k: &str) -> Read {
    Read {
        t,
        f,
        o: 0,
        n,
        p: 10,
        k: k.into(),
        c: None,
    }
}

fn addons() -> Addons {
    Addons {
        names: parse_extensions_json(include_bytes!(
            "../../../tests/fixtures/profile/made-small-seed1-extensions.json"
        )),
        ids_by_uuid: parse_prefs(include_str!(
            "../../../tests/fixtures/profile/made-small-seed1-prefs.js.txt"
        ))
        .uuids,
    }
}

/// libxul.so (10 pages in two reads, one waited for), places.sqlite (3 pages, waited), the
/// password manager's .xpi (2 pages read ahead) and its IndexedDB (1 page, a fault), the
/// startup cache in the local folder (4 pages, waited), a written session file.
fn trace() -> Trace {
    let mut t = fake();
    t.files = vec![
        file("/ff/libxul.so", false, 1 << 30),
        file(&format!("{DIR}/places.sqlite"), false, 2 << 30),
        file(&format!("{DIR}/extensions/password-manager@synthetic.profile.test.xpi"), false, 3 << 30),
        file(&format!("{DIR}/storage/default/moz-extension+++1ddbe93f-ea47-454e-b21b-196761b9a623^userContextId=4294967295/idb/3647222921wleabcEoxlt-eengsairo.sqlite"), false, 4 << 30),
        file("/home/u/.cache/mozilla/firefox/abcd.default-esr/startupCache/scriptCache.bin", false, 5 << 30),
        file(&format!("{DIR}/sessionstore-backups/recovery.jsonlz4"), true, 6 << 30),
    ];
    t.events = vec![
        read(1.0, 0, 6, "sync"),
        read(2.0, 0, 4, "async"),
        read(3.0, 1, 3, "sync"),
        read(4.0, 2, 2, "async"),
        read(5.0, 3, 1, "fault"),
        read(6.0, 4, 4, "read"),
        read(7.0, 5, 8, "read"),
    ];
    t.block = vec![
        BlockRequest {
            t: 1.0,
            pos: 1 << 30,
            len: 4096,
            lat_ms: Some(3.0),
            p: 10,
        },
        BlockRequest {
            t: 3.0,
            pos: (2 << 30) + 4096,
            len: 4096,
            lat_ms: Some(1.0),
            p: 10,
        },
        BlockRequest {
            t: 3.5,
            pos: 7 << 30,
            len: 4096,
            lat_ms: Some(1.0),
            p: 10,
        },
        BlockRequest {
            t: 3.6,
            pos: 7 << 30,
            len: 4096,
            lat_ms: None,
            p: 10,
        },
    ];
    t
}

fn ctx() -> ProfileContext {
    ProfileContext {
        roots: Some(Roots::of(DIR)),
        dir_from: Some(DirFrom::Recorded),
        facts: Facts {
            addons: addons(),
            session: None,
            problems: vec![],
        },
    }
}

#[test]
fn the_profiles_share_part_by_part_and_of_the_waiting() {
    let t = trace();
    let ctx = ctx();
    let parts = parts_of(&t, &ctx);
    assert_eq!(parts[0], None, "an install file is not the profile's");
    let s = summarize(&t, &ctx, &parts);
    assert_eq!(s.state, ProfileState::Ready);
    // Read from disk: 10 install pages, 3 + 2 + 1 + 4 profile pages; the written file is no read.
    assert_eq!(
        s.bytes,
        Share {
            profile: 10 * 4096,
            total: 20 * 4096
        }
    );
    assert_eq!(
        s.reads,
        Share {
            profile: 4,
            total: 6
        }
    );
    // Waited for: libxul's sync read, places (sync), the IndexedDB fault, the cache's read.
    assert_eq!(
        s.sync_reads,
        Share {
            profile: 3,
            total: 4
        }
    );
    // Block time: 3 ms in libxul, 1 ms in places, 1 ms nowhere known, one without latency.
    assert_eq!(
        s.block_ms,
        Some(Share {
            profile: 1.0,
            total: 5.0
        })
    );
    let pm = Part::Extension {
        id: "password-manager@synthetic.profile.test".into(),
        name: Some("Synthetic Password Manager".into()),
    };
    let labels: Vec<(&str, u64, u64)> = s
        .parts
        .iter()
        .map(|r| (r.label.as_str(), r.bytes, r.files))
        .collect();
    assert_eq!(
        labels,
        [
            ("startup cache", 4 * 4096, 1),
            (
                "add-on Synthetic Password Manager (password-manager@synthetic.profile.test)",
                3 * 4096,
                2
            ),
            ("history and bookmarks (places)", 3 * 4096, 1),
        ]
    );
    assert_eq!(s.parts[1].part, pm);
    assert_eq!(s.parts[1].sync_reads, 1);
}

#[test]
fn without_a_per_file_trace_or_a_profile_the_share_is_not_made_up() {
    let mut t = trace();
    t.source = Source::ProcSampler;
    t.events.clear();
    let s = summarize(&t, &ctx(), &parts_of(&t, &ctx()));
    assert_eq!(s.state, ProfileState::NoPerFileTrace);
    let t = trace();
    let none = ProfileContext::default();
    let s = summarize(&t, &none, &parts_of(&t, &none));
    assert_eq!(s.state, ProfileState::NotFound);
    assert_eq!(s.bytes.profile, 0);
}

#[test]
fn an_exported_trace_keeps_its_parts() {
    let t = trace();
    let parts = parts_of(&t, &ctx());
    let copy = crate::trace::summary::redact::redacted(&t, &parts);
    assert_eq!(copy.profile.as_ref().and_then(|p| p.dir.clone()), None);
    // Summarized elsewhere, with no profile folder at hand, the parts are those it carries.
    let elsewhere = ProfileContext::default();
    assert_eq!(parts_of(&copy, &elsewhere), parts);
    assert_eq!(
        summarize(&copy, &elsewhere, &parts).bytes.profile,
        10 * 4096
    );
    let recorded = Trace {
        profile: Some(TraceProfile {
            dir: Some(DIR.into()),
            parts: None,
        }),
        ..trace()
    };
    assert_eq!(parts_of(&recorded, &ctx()), parts);
}
