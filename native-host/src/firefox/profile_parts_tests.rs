//! The parts of real profiles: every file of a fresh ESR 153 profile after one start, and of a
//! profile `scripts/profile/make.mjs --preset small --seed 1` made (its add-ons' ids, names and
//! UUIDs as Firefox wrote them into `extensions.json` and `prefs.js`), listed by `find` into
//! `native-host/tests/fixtures/profile/`.

use super::*;
use crate::firefox::profile_facts::{parse_extensions_json, parse_prefs};

const FRESH: &str = include_str!("../../tests/fixtures/profile/esr153-fresh-paths.txt");
const MADE: &str = include_str!("../../tests/fixtures/profile/made-small-seed1-paths.txt");
const MADE_EXTENSIONS: &str =
    include_str!("../../tests/fixtures/profile/made-small-seed1-extensions.json");
const MADE_PREFS: &str = include_str!("../../tests/fixtures/profile/made-small-seed1-prefs.js.txt");

fn made_addons() -> Addons {
    Addons {
        names: parse_extensions_json(MADE_EXTENSIONS.as_bytes()),
        ids_by_uuid: parse_prefs(MADE_PREFS).uuids,
    }
}

fn parts_of(list: &str, addons: &Addons) -> Vec<(String, Part)> {
    list.lines()
        .map(|rel| (rel.to_owned(), classify(rel, addons)))
        .collect()
}

fn files_of(parts: &[(String, Part)], part: &Part) -> Vec<String> {
    parts
        .iter()
        .filter(|(_, p)| p == part)
        .map(|(rel, _)| rel.clone())
        .collect()
}

#[test]
fn a_fresh_profile_after_one_start() {
    let parts = parts_of(FRESH, &Addons::default());
    assert_eq!(
        files_of(&parts, &Part::Session),
        [
            "sessionCheckpoints.json",
            "sessionstore-backups/recovery.baklz4",
            "sessionstore-backups/recovery.jsonlz4"
        ]
    );
    assert_eq!(
        files_of(&parts, &Part::Places),
        ["places.sqlite", "places.sqlite-wal"]
    );
    assert_eq!(
        files_of(&parts, &Part::Favicons),
        ["favicons.sqlite", "favicons.sqlite-wal"]
    );
    assert_eq!(files_of(&parts, &Part::Cookies), ["cookies.sqlite"]);
    assert_eq!(files_of(&parts, &Part::Prefs), ["prefs.js"]);
    assert_eq!(
        files_of(&parts, &Part::StartupCache),
        [
            "startupCache/scriptCache-child.bin",
            "startupCache/scriptCache.bin",
            "startupCache/startupCache.8.little",
            "startupCache/urlCache.bin",
            "startupCache/webext.sc.lz4"
        ]
    );
    let storage = files_of(&parts, &Part::Storage);
    assert!(
        storage.contains(&"storage.sqlite".to_owned()),
        "{storage:?}"
    );
    assert!(storage.contains(&"storage/ls-archive.sqlite".to_owned()));
    // Firefox's own IndexedDB is no site's storage: clearing sites' data does not touch it.
    assert!(files_of(&parts, &Part::Other)
        .iter()
        .any(|f| f.starts_with("storage/permanent/chrome/idb/")));
    assert!(!storage
        .iter()
        .any(|f| f.starts_with("storage/permanent/chrome/")));
    // No add-on of the user's own in a fresh profile; the rest is "other", never a guess.
    assert!(!parts
        .iter()
        .any(|(_, p)| matches!(p, Part::Extension { .. })));
    for other in [
        "times.json",
        "cert9.db",
        "extensions.json",
        "xulstore.json",
        "cache2/entries/D0F48A0632B6C451791F4257697E861961F06A6F",
    ] {
        if FRESH.lines().any(|l| l == other) {
            assert_eq!(classify(other, &Addons::default()), Part::Other, "{other}");
        }
    }
}

#[test]
fn a_made_profile_names_each_add_on_by_its_name_and_id() {
    let addons = made_addons();
    assert_eq!(
        addons
            .names
            .get("dark-mode@synthetic.profile.test")
            .map(String::as_str),
        Some("Synthetic Dark Mode")
    );
    let parts = parts_of(MADE, &addons);
    let pm = Part::Extension {
        id: "password-manager@synthetic.profile.test".into(),
        name: Some("Synthetic Password Manager".into()),
    };
    // The .xpi and its IndexedDB (storage/default/moz-extension+++<its uuid>…).
    let files = files_of(&parts, &pm);
    assert_eq!(files.len(), 4, "{files:?}");
    assert!(files.contains(&"extensions/password-manager@synthetic.profile.test.xpi".to_owned()));
    assert!(
        files
            .iter()
            .filter(|f| f.starts_with(
                "storage/default/moz-extension+++1ddbe93f-ea47-454e-b21b-196761b9a623^"
            ))
            .count()
            == 3
    );
    let extensions: std::collections::BTreeSet<String> = parts
        .iter()
        .filter_map(|(_, p)| match p {
            Part::Extension { id, name } => {
                Some(format!("{id}={}", name.as_deref().unwrap_or("?")))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        extensions.into_iter().collect::<Vec<_>>(),
        [
            "content-blocker@synthetic.profile.test=Synthetic Content Blocker",
            "dark-mode@synthetic.profile.test=Synthetic Dark Mode",
            "password-manager@synthetic.profile.test=Synthetic Password Manager"
        ]
    );
    assert_eq!(
        files_of(&parts, &Part::Session),
        [
            "sessionCheckpoints.json",
            "sessionstore-backups/previous.jsonlz4",
            "sessionstore-backups/recovery.jsonlz4",
            "sessionstore-backups/upgrade.jsonlz4-20261103151912",
            "sessionstore.jsonlz4"
        ]
    );
    assert_eq!(files_of(&parts, &Part::StartupCache).len(), 8);
    // Firefox's own IndexedDB is neither an add-on's nor a site's.
    assert!(files_of(&parts, &Part::Other)
        .iter()
        .any(|f| f.starts_with("storage/permanent/chrome/")));
}

#[test]
fn an_add_on_the_profile_does_not_name_keeps_its_id() {
    let part = classify("extensions/unknown@x.xpi", &Addons::default());
    assert_eq!(
        part,
        Part::Extension {
            id: "unknown@x".into(),
            name: None
        }
    );
    assert_eq!(part.label(), "add-on unknown@x");
    assert_eq!(
        classify("browser-extension-data/a@b/storage.js", &made_addons()),
        Part::Extension {
            id: "a@b".into(),
            name: None
        }
    );
    // An add-on storage folder whose UUID the prefs do not map is storage, not a made-up add-on.
    assert_eq!(
        classify("storage/default/moz-extension+++00000000-0000-0000-0000-000000000000^userContextId=4294967295/idb/x.sqlite", &made_addons()),
        Part::Storage
    );
    assert_eq!(classify("extensions", &Addons::default()), Part::Other);
    // A database's name is matched whole: "places.sqlite-wal" is places, "placesX" is not.
    assert_eq!(classify("placesX.sqlite", &Addons::default()), Part::Other);
}

#[test]
fn roots_include_the_local_folder_of_a_profile_under_dot_mozilla() {
    let r = Roots::of("/home/a/.mozilla/firefox/abcd.default-esr");
    assert_eq!(
        r.local.as_deref(),
        Some("/home/a/.cache/mozilla/firefox/abcd.default-esr")
    );
    assert_eq!(
        r.relative("/home/a/.cache/mozilla/firefox/abcd.default-esr/startupCache/scriptCache.bin"),
        Some("startupCache/scriptCache.bin")
    );
    assert_eq!(
        r.relative("/home/a/.mozilla/firefox/abcd.default-esr/places.sqlite"),
        Some("places.sqlite")
    );
    assert_eq!(
        r.relative("/home/a/.mozilla/firefox/abcd.default-esr2/places.sqlite"),
        None
    );
    assert_eq!(
        r.relative("/home/a/.mozilla/firefox/abcd.default-esr"),
        None
    );
    // -profile DIR: the folder is its own local folder.
    assert_eq!(Roots::of("/tmp/p/").local, None);
    assert_eq!(
        Roots::of("/tmp/p/").relative("/tmp/p/prefs.js"),
        Some("prefs.js")
    );
}

#[test]
fn the_profile_folder_is_found_from_the_files_a_start_touched() {
    let paths: Vec<String> = FRESH
        .lines()
        .map(|rel| format!("/tmp/p/{rel}"))
        .chain([
            "/usr/lib/firefox-esr/libxul.so".to_owned(),
            "/usr/lib/firefox-esr/omni.ja".to_owned(),
        ])
        .collect();
    assert_eq!(
        infer_dir(paths.iter().map(String::as_str)).as_deref(),
        Some("/tmp/p")
    );
    // Two marker files are needed: one prefs.js elsewhere does not make a profile.
    assert_eq!(
        infer_dir(["/etc/firefox-esr/prefs.js", "/usr/lib/libc.so.6"]),
        None
    );
    // The session's backup folder speaks for its parent.
    assert_eq!(
        infer_dir([
            "/p/sessionstore-backups/recovery.jsonlz4",
            "/p/places.sqlite-wal",
            "/p/prefs.js"
        ])
        .as_deref(),
        Some("/p")
    );
}
