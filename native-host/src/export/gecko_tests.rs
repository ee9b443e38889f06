//! On a real cold start of ESR 153 recorded here with `launch --cold --trace
//! --firefox-profile` (tests/fixtures/profiler/: the trace and Firefox's own profile,
//! trimmed to the libraries' reads and a few dozen markers).
use super::*;
use crate::export::test_support::{cold_trace, disk_read_schema};
use crate::export::view::view;

fn gecko() -> Value {
    serde_json::from_str(include_str!(
        "../../tests/fixtures/profiler/gecko-esr153-cold.json"
    ))
    .unwrap()
}

fn named(thread: &Value, name: &str) -> Vec<(f64, Option<f64>, Value)> {
    let strings = thread["stringTable"].as_array().unwrap();
    thread["markers"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| strings[usize::try_from(r[0].as_u64().unwrap()).unwrap()] == name)
        .map(|r| (r[1].as_f64().unwrap(), r[2].as_f64(), r[5].clone()))
        .collect()
}

#[test]
fn a_real_cold_start_lines_up_with_firefoxs_own_readahead_markers_within_1_ms() {
    let t = cold_trace();
    let mut g = gecko();
    merge(&mut g, &t, &view(&t, &BTreeMap::new())).unwrap();
    let main = &g["threads"][0];
    // Firefox's ReadAheadLib marker spans its readahead(2) of a library; the kernel adds
    // the pages to the cache inside that call, so our "Firefox's own readahead(2)" read of
    // the same file must fall inside it, on one clock, give or take 1 ms.
    let ra = named(main, "ReadAheadLib");
    let ours = named(main, "Disk read");
    let mut checked = 0;
    for (start, end, data) in &ra {
        let lib = data["name"].as_str().unwrap();
        let Some((t0, _, _)) = ours
            .iter()
            .find(|(_, _, d)| d["filename"] == lib && d["how"] == "Firefox's own readahead(2)")
        else {
            continue;
        };
        let end = end.unwrap();
        assert!(
            *t0 >= start - 1.0 && *t0 <= end + 1.0,
            "{lib}: our read at {t0:.3} ms, Firefox's readahead {start:.3}–{end:.3} ms"
        );
        checked += 1;
    }
    assert!(checked >= 8, "{checked} libraries lined up");
}

#[test]
fn merged_markers_schemas_counters_and_milestones_sit_on_the_parents_main_thread() {
    let t = cold_trace();
    let mut g = gecko();
    let before = g["threads"][0]["markers"]["data"].as_array().unwrap().len();
    let ms = BTreeMap::from([("sessionRestored".to_owned(), 5139.5)]);
    let v = view(&t, &ms);
    merge(&mut g, &t, &v).unwrap();
    let main = &g["threads"][0];
    let ours = our_markers(main);
    // The fixture's counts, by hand and by `jq '[.events[] | .p] | group_by(.) | map(length)'`:
    // 21 reads by the parent (24493), 3 by the socket process (24568), 2 by the RDD process
    // (24598); no file was written. Firefox's profile has the parent and, in `processes`, the
    // RDD process (`jq '[.processes[].threads[0].pid]' gecko-esr153-cold.json`).
    assert_eq!(ours.len(), 21 + 2, "21 reads, one milestone, the summary");
    assert_eq!(
        main["markers"]["data"].as_array().unwrap().len(),
        before + ours.len()
    );
    let all_threads = g["threads"].as_array().unwrap().iter().chain(
        g["processes"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["threads"].as_array().unwrap()),
    );
    let bytes: u64 = all_threads
        .flat_map(our_markers)
        .filter_map(|d| d.get("size")?.as_u64())
        .sum();
    assert_eq!(
        bytes, t.traced_read_bytes,
        "the markers add up to the trace"
    );
    let read = disk_read_schema(&g);
    assert_eq!(read["data"][0]["format"], "file-path");
    // Issue 39 #7: the milestones have their own category, not the disk's.
    let categories: Vec<&str> = g["meta"]["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        categories[categories.len() - 2..],
        ["Disk I/O (kernel)", "Startup milestones"]
    );
    // Our markers by their schema (Firefox's own sessionRestored marker is Firefox's "Other").
    let category_of = |schema: &str| {
        let rows: Vec<&str> = main["markers"]["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r[5]["type"] == schema)
            .map(|r| categories[usize::try_from(r[4].as_u64().unwrap()).unwrap()])
            .collect();
        rows
    };
    assert_eq!(
        category_of(crate::export::schema::MILESTONE.name),
        ["Startup milestones"]
    );
    let reads = category_of(crate::export::schema::DISK_READ.name);
    assert!(reads.len() == 21 && reads.iter().all(|c| *c == "Disk I/O (kernel)"));
    // One track per file group the fixture's files fall in (firefox-esr, nine other libraries,
    // libxul.so, omni.ja), each named, none in the category the Profiler labels "Bandwidth"
    // whatever the name (test.profiler.js reads the names back with the Profiler's loader).
    let mut counters: Vec<(&str, &str)> = g["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["category"].as_str().unwrap()))
        .collect();
    counters.sort_unstable();
    assert_eq!(
        counters,
        [
            ("Disk reads: libxul.so", "Bytes read from disk"),
            ("Disk reads: omni.ja", "Bytes read from disk"),
            ("Disk reads: other install files", "Bytes read from disk"),
            ("Disk reads: other libraries", "Bytes read from disk"),
        ]
    );
    // The first read (pages 4-140 of firefox-esr) lasts from its block request's issue to its
    // completion: `jq '.block[1]'` is t 1.338 ms, lat_ms 0.647, at exactly its disk bytes
    // (trace/disk_time.rs's test says how they line up). Reads without a request stay at the
    // moment their pages entered the cache, and say the disk time is unknown.
    let reads = named(main, "Disk read");
    let first = reads
        .iter()
        .find(|(_, _, d)| d["filename"] == "/usr/lib/firefox-esr/firefox-esr")
        .unwrap();
    assert!(
        (first.0 - (1.338 + off_parent(&t, &g))).abs() < 1e-6,
        "{first:?}"
    );
    assert!(
        (first.1.unwrap() - (1.985 + off_parent(&t, &g))).abs() < 1e-6,
        "{first:?}"
    );
    assert!(
        first.2["disk"].as_str().unwrap().starts_with("0.647 ms"),
        "{first:?}"
    );
    let unknown = reads
        .iter()
        .filter(|(s, e, d)| Some(*s) == *e && d["disk"].as_str().unwrap().starts_with("unknown"))
        .count();
    assert_eq!(
        unknown, 20,
        "the parent's other 20 reads have no block request in the fixture"
    );
    // The milestone sits at its trace time plus the clock offset.
    let off = offset_ms(t.zero_mono_ns.unwrap(), mono(&g["meta"]).unwrap());
    let m = named(main, "sessionRestored");
    assert!(m.iter().any(|(s, e, d)| e.is_none()
        && d["type"] == "AboutStartupMilestone"
        && (s - (5139.5 + off)).abs() < 1e-6));
    // The recording's start moves back to the kernel's first read (the Profiler shows
    // nothing before it).
    let first = crate::export::view::earliest(&v)
        .unwrap()
        .min(t.attached_ms.max(0.0))
        + off;
    assert!(g["meta"]["profilingStartTime"].as_f64().unwrap() <= first + 1e-9);
    // A child process's reads sit on its own GeckoMain, on its own clock.
    let child = &g["processes"][0];
    assert_eq!(child["threads"][0]["pid"], 24598);
    let on_child = our_markers(&child["threads"][0]);
    assert_eq!(on_child.len(), 2, "the RDD process's 2 reads");
    let child_off = offset_ms(t.zero_mono_ns.unwrap(), mono(&child["meta"]).unwrap());
    // Its first read entered the cache at 4334.071 ms (`jq '[.events[] | select(.p == 24598)][0].t'`).
    let first = named(&child["threads"][0], "Disk read")[0].0;
    assert!((first - (4334.071 + child_off)).abs() < 1e-6);
    // Processes the profile lacks get a thread of their own, in the parent's list.
    let own: Vec<_> = g["threads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] == "Disk reads (kernel)")
        .collect();
    assert_eq!(
        own.len(),
        1,
        "the socket process (24568), which Firefox's profile lacks"
    );
    assert_eq!(own[0]["pid"], 24568);
    assert_eq!(
        own[0]["processName"], "Firefox socket process (not in Firefox's profile)",
        "named by what it is"
    );
    assert_eq!(our_markers(own[0]).len(), 3);
    // Module loads and milestones read back on the trace's axis.
    let loads = module_loads(&gecko(), t.zero_mono_ns.unwrap());
    assert!(loads.iter().all(|(u, _)| !u.is_empty()) && !loads.is_empty());
    let got = milestones(&gecko(), t.zero_mono_ns.unwrap(), &["sessionRestored"]);
    assert!(got["sessionRestored"] > 1000.0, "{got:?}");
}

/// The parent's clock offset: the trace's zero to Firefox's profile's.
fn off_parent(t: &Trace, g: &Value) -> f64 {
    offset_ms(t.zero_mono_ns.unwrap(), mono(&g["meta"]).unwrap())
}

#[test]
fn another_start_an_old_clock_or_not_a_gecko_profile_is_refused() {
    let mut t = cold_trace();
    t.pid += 1;
    assert!(matches!(
        check(&gecko(), &t),
        Err(ExportError::OtherProcess { .. })
    ));
    let mut t = cold_trace();
    t.zero_mono_ns = Some(t.zero_mono_ns.unwrap() + 3_600_000_000_000);
    assert!(
        matches!(check(&gecko(), &t), Err(ExportError::OtherProcess { .. })),
        "an hour apart"
    );
    let mut t = cold_trace();
    t.zero_mono_ns = None;
    assert!(matches!(check(&gecko(), &t), Err(ExportError::OldClock)));
    let mut g = gecko();
    g["meta"]["version"] = json!(99);
    assert!(matches!(
        check(&g, &cold_trace()),
        Err(ExportError::NotGecko(_))
    ));
    assert!(matches!(
        check(&json!({"a": 1}), &cold_trace()),
        Err(ExportError::NotGecko(_))
    ));
}

/// Firefox's own `TimingDistribution::start`/`::stop` markers of one hot start of ESR 153.8
/// (MOZ_PROFILER_STARTUP, the benchmark's costly add-on installed, FOG's test port -1), copied
/// from its GeckoMain: the unlabeled `extension_startup` of every add-on (timers 1–9), and the
/// per-add-on ones of the costly add-on and webcompat. The page's figure for the costly add-on
/// in that start was 1,447.6 ms (Glean's sample).
const RECORDED_ADDON_MARKERS: &str = r#"[
["TimingDistribution::start", 1212.633294, {"id": "extension_startup", "timer_id": 1}],
["TimingDistribution::start", 1222.36205, {"id": "extension_startup", "timer_id": 2}],
["TimingDistribution::start", 1222.658856, {"id": "extension_startup_by_addonid", "label": "costly-startup@bench.startup-lab.dev", "timer_id": 1}],
["TimingDistribution::start", 1232.118225, {"id": "extension_startup_by_addonid", "label": "webcompat@mozilla.org", "timer_id": 1}],
["TimingDistribution::stop", 2670.239756, {"id": "extension_startup_by_addonid", "label": "costly-startup@bench.startup-lab.dev", "timer_id": 1}],
["TimingDistribution::stop", 2673.128583, {"id": "extension_startup", "timer_id": 2}],
["TimingDistribution::stop", 2759.766647, {"id": "extension_startup", "timer_id": 1}],
["TimingDistribution::stop", 2812.176744, {"id": "extension_startup_by_addonid", "label": "webcompat@mozilla.org", "timer_id": 1}],
["TimingDistribution::start", 4261.881949, {"id": "background_page_load_by_addonid", "label": "costly-startup@bench.startup-lab.dev", "timer_id": 1}],
["TimingDistribution::start", 4270.534081, {"id": "background_page_load_by_addonid", "label": "webcompat@mozilla.org", "timer_id": 1}],
["TimingDistribution::stop", 7582.848026, {"id": "background_page_load_by_addonid", "label": "costly-startup@bench.startup-lab.dev", "timer_id": 1}]
]"#;

/// The fixture's parent GeckoMain with the recorded markers added as Firefox writes them: the
/// name, `cat`, `id` and `label` as indexes into the thread's string table.
fn with_addon_markers(g: &mut Value) {
    let main = &mut g["threads"][0];
    let rows: Vec<Value> = serde_json::from_str(RECORDED_ADDON_MARKERS).unwrap();
    for row in rows {
        let name = push_str(main, row[0].as_str().unwrap());
        let cat = push_str(main, "extensions.timing");
        let id = push_str(main, row[2]["id"].as_str().unwrap());
        let mut data =
            json!({"type": "TimingDist", "cat": cat, "id": id, "timer_id": row[2]["timer_id"]});
        if let Some(label) = row[2]["label"].as_str() {
            data["label"] = json!(push_str(main, label));
        }
        push_marker(main, name, row[1].as_f64().unwrap(), None, 0, data);
    }
}

#[test]
fn each_addons_startup_is_a_span_on_the_parents_main_thread_paired_from_firefoxs_own_markers() {
    let t = cold_trace();
    let mut g = gecko();
    with_addon_markers(&mut g);
    let spans = addon_spans(&g["threads"][0]);
    let got: Vec<(&str, &str, f64)> = spans
        .iter()
        .map(|s| {
            (
                s.addon.as_str(),
                s.what,
                ((s.end - s.start) * 10.0).round() / 10.0,
            )
        })
        .collect();
    // Paired by add-on and timer, never across add-ons; the unlabeled totals are not add-ons;
    // webcompat's background page had not stopped when the profile was written: no span.
    assert_eq!(
        got,
        [
            ("costly-startup@bench.startup-lab.dev", "startup", 1447.6),
            ("webcompat@mozilla.org", "startup", 1580.1),
            (
                "costly-startup@bench.startup-lab.dev",
                "background page load",
                3321.0
            ),
        ]
    );
    merge(&mut g, &t, &view(&t, &BTreeMap::new())).unwrap();
    let main = &g["threads"][0];
    let ours: Vec<_> = named(main, "Add-on startup: costly-startup@bench.startup-lab.dev");
    assert_eq!(ours.len(), 1);
    let (start, end, data) = &ours[0];
    // On Firefox's own clock: the very times of its markers, no offset.
    assert_eq!((*start, *end), (1222.658856, Some(2670.239756)));
    assert_eq!(data["type"], schema::ADDON_SPAN.name);
    assert_eq!(
        data["metric"],
        "extensions.timing.extension_startup_by_addonid"
    );
    assert!(g["meta"]["markerSchema"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["name"] == schema::ADDON_SPAN.name));
}
