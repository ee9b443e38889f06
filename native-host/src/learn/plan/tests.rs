use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::*;
use crate::learn::workingset;
use crate::learn::workingset::{FileSet, Identity, Start, State};
use crate::os::sys::{self, Extent};
use crate::trace::plan_source::{Traced, TracedFile};
use crate::Error;

/// `plan_status` over a folder with nothing learned: the whole folder, opened beneath the
/// folder the plan holds; files just written are cached, so none is listed as uncached.
#[test]
fn status_without_a_plan_counts_the_folder_and_scans_it_for_uncached_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.so"), [1u8; 5000]).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/b.so"), [2u8; 7000]).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let state = crate::state::StateDir::create_at(tmp.path()).unwrap();
    let s = status(dir.path(), &state).unwrap();
    assert!(!s.learned);
    assert_eq!((s.install_bytes, s.planned_bytes), (12_000, 0));
    assert_eq!(s.uncached_files.map(|u| u.len()), Some(0));
}

#[test]
fn only_real_paths_under_system_folders_are_planned_outside_the_install() {
    assert!(is_system_file(Path::new("/usr/bin/env")));
    for refused in [
        "/etc/shadow",
        "/etc/passwd",
        "/tmp",
        "/proc/self/status",
        "/usr/../etc/passwd",
    ] {
        assert!(!is_system_file(Path::new(refused)), "{refused}");
    }
    // A symlink under /usr (e.g. /usr/lib64 on merged-/usr systems, or lib links) is
    // refused unless it is the real path.
    let dir = tempfile::tempdir().unwrap();
    assert!(!is_system_file(dir.path()));
}

#[test]
fn small_gaps_are_read_large_ones_skipped() {
    let page = 4096;
    // Pages 0-1, 3 (gap of 1 page), 200 (gap of ~780 KiB), last page clipped to the size.
    let ranges = [[0, 2], [3, 1], [200, 1], [300, 5]];
    let size = 302 * page + 10;
    assert_eq!(
        byte_ranges(&ranges, page, size, GAP_BYTES),
        [
            [0, 4 * page],
            [200 * page, page],
            [300 * page, 2 * page + 10]
        ]
    );
    // No gap allowed: only touching ranges join.
    assert_eq!(
        byte_ranges(&[[0, 1], [1, 1], [3, 1]], page, 1 << 20, 0),
        [[0, 2 * page], [3 * page, page]]
    );
    assert_eq!(
        byte_ranges(&[[10, 1]], page, 4096, GAP_BYTES),
        Vec::<[u64; 2]>::new()
    );
}

fn ext(logical: u64, physical: Option<u64>, length: u64) -> Extent {
    Extent {
        logical,
        physical,
        length,
    }
}

#[test]
fn ranges_split_at_extent_boundaries() {
    let extents = [
        ext(0, Some(1000), 100),
        ext(100, Some(50), 100),
        ext(300, None, 10),
    ];
    assert_eq!(
        split_by_extents(50, 200, &extents),
        [(50, 50, Some(1050)), (100, 100, Some(50)), (200, 50, None)]
    );
    assert_eq!(split_by_extents(0, 10, &[]), [(0, 10, None)]);
}

fn read(file: usize, offset: u64, physical: Option<u64>) -> Read {
    Read {
        file,
        offset,
        len: 1,
        physical,
    }
}

#[test]
fn reads_go_in_disk_order_unknown_last() {
    let mut reads = vec![
        read(0, 0, Some(900)),
        read(1, 0, None),
        read(1, 5, Some(100)),
        read(0, 8, Some(500)),
    ];
    assert_eq!(order_reads(&mut reads), Order::Disk);
    let got: Vec<_> = reads.iter().map(|r| (r.file, r.offset)).collect();
    assert_eq!(got, [(1, 5), (0, 8), (0, 0), (1, 0)]);
    let mut no_fiemap = vec![read(1, 3, None), read(0, 9, None), read(0, 1, None)];
    assert_eq!(order_reads(&mut no_fiemap), Order::File);
    let got: Vec<_> = no_fiemap.iter().map(|r| (r.file, r.offset)).collect();
    assert_eq!(got, [(0, 1), (0, 9), (1, 3)]);
}

/// A system library this install's start mapped is planned, and `plan_status` counts it
/// apart from the install folder's part (the page says both, not one share of the install).
#[test]
fn plan_status_splits_install_and_system_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let state_tmp = tempfile::tempdir().unwrap();
    let state_dir = crate::state::StateDir::create_at(state_tmp.path()).unwrap();
    let page = sys::page_size() as u64;
    let install_dir = dir.path().canonicalize().unwrap();
    let lib = install_dir.join("libxul.so");
    std::fs::write(&lib, vec![1u8; usize::try_from(10 * page).unwrap()]).unwrap();
    let env = Path::new("/usr/bin/env");
    let mut state = State::default();
    state.push(Start {
        at_ms: 1,
        pid: 1,
        install_dir: install_dir.clone(),
        page_size: page,
        build_id: None,
        files: vec![
            FileSet {
                id: Identity::current(&lib).unwrap(),
                install: true,
                resident: false,
                ranges: vec![[0, 4]],
                mapped_ranges: None,
            },
            FileSet {
                id: Identity::current(env).unwrap(),
                install: false,
                resident: false,
                ranges: vec![[0, 1]],
                mapped_ranges: None,
            },
        ],
    });
    workingset::save(&state_dir, &state).unwrap();
    let status = status(&install_dir, &state_dir).unwrap();
    assert!(status.learned);
    assert_eq!(status.install_bytes, 10 * page);
    assert_eq!(status.planned_install_bytes, 4 * page);
    assert_eq!(status.planned_system_bytes, page);
    assert_eq!(
        status.planned_bytes,
        status.planned_install_bytes + status.planned_system_bytes
    );
}

/// A fake install folder: a learned file read in part, a changed one read whole, a new one
/// read whole, an untouched one skipped; then the plan is read for real.
#[test]
fn plan_reads_learned_ranges_and_whole_changed_files() {
    let dir = tempfile::tempdir().unwrap();
    let page = sys::page_size() as u64;
    let mk = |name: &str, pages: u64| {
        let p = dir.path().canonicalize().unwrap().join(name);
        std::fs::write(&p, vec![1u8; usize::try_from(pages * page).unwrap()]).unwrap();
        p
    };
    let (big, changed, untouched) = (mk("big", 400), mk("changed", 3), mk("untouched", 9));
    let learned = |p: &Path, ranges: Vec<[u64; 2]>| FileSet {
        id: Identity::current(p).unwrap(),
        install: true,
        resident: false,
        ranges,
        mapped_ranges: None,
    };
    let mut state = State::default();
    state.push(Start {
        at_ms: 1,
        pid: 1,
        install_dir: dir.path().into(),
        page_size: page,
        build_id: None,
        files: vec![
            learned(&big, vec![[0, 2], [300, 10]]),
            learned(&changed, vec![[0, 1]]),
            learned(&untouched, vec![]),
        ],
    });
    // Another Firefox's start (a system file it mapped): never part of this install's plan.
    let env = Path::new("/usr/bin/env");
    state.push(Start {
        at_ms: 2,
        pid: 2,
        install_dir: "/opt/other-firefox".into(),
        page_size: page,
        build_id: None,
        files: vec![FileSet {
            install: false,
            ..learned(env, vec![[0, 1]])
        }],
    });
    std::fs::remove_file(&changed).unwrap();
    let changed = mk("changed", 3);
    let new = mk("new", 2);
    let plan = make(&state, dir.path()).unwrap();
    assert_eq!(plan.changed, std::slice::from_ref(&changed));
    assert_eq!(plan.bytes_install, (400 + 3 + 9 + 2) * page);
    assert_eq!(plan.bytes_planned, (2 + 10 + 3 + 2) * page);
    assert_eq!(plan.files, [big, changed, new]);
    let mut events = 0;
    let summary = run(&plan, true, &AtomicBool::new(false), &mut |_| events += 1).unwrap();
    // Files just written are in the page cache, and this user owns them (residency exact):
    // every range is skipped before any read, so the idle run probes nothing (issue 19: a warm
    // `preload --plan --idle` spent 2 s probing to read 0 bytes).
    assert_eq!(summary.bytes_cached, Some(plan.bytes_planned));
    assert_eq!(summary.bytes, 0);
    assert_eq!(summary.pace.map_or(0, |p| p.probed_ms + p.yielded_ms), 0);
    assert_eq!((summary.files, summary.planned), (3, true));
    // All of this plan is of the folder: its part is all of it, set against the folder.
    assert_eq!(summary.bytes_planned_install, Some(plan.bytes_planned));
    assert_eq!(plan.bytes_planned_install(), plan.bytes_planned);
    assert!(summary.errors.is_empty() && events >= 1);
    let knobs = Knobs {
        file_order: true,
        mapped_only: true,
        ..Knobs::default()
    };
    let unsorted = make_with(&state, dir.path(), knobs).unwrap();
    assert_eq!(unsorted.order, Order::File);
    assert_eq!(unsorted.bytes_planned, plan.bytes_planned);
    let err = run(&plan, false, &AtomicBool::new(true), &mut |_| {}).unwrap_err();
    assert!(matches!(err, Error::Cancelled));
}

/// A fake install folder (application.ini, libxul.so, omni.ja) in a temporary folder.
fn fake_install(build: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    set_build(&root, build);
    std::fs::write(root.join("libxul.so"), vec![1u8; 64 * 4096]).unwrap();
    std::fs::write(root.join("omni.ja"), vec![2u8; 16 * 4096]).unwrap();
    (dir, root)
}

fn set_build(root: &Path, build: &str) {
    std::fs::write(
        root.join("application.ini"),
        format!("[App]\nVersion=153.0\nBuildID={build}\n"),
    )
    .unwrap();
}

/// An update as a package manager does it: new files renamed over the old ones.
fn replace(path: &Path, bytes: usize) {
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, vec![3u8; bytes]).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn learned_start(root: &Path, build: Option<&str>) -> Start {
    let set = |name: &str, ranges: Vec<[u64; 2]>| FileSet {
        id: Identity::current(&root.join(name)).unwrap(),
        install: true,
        resident: false,
        ranges,
        mapped_ranges: None,
    };
    Start {
        at_ms: 1,
        pid: 1,
        install_dir: root.to_path_buf(),
        page_size: 4096,
        files: vec![set("libxul.so", vec![[0, 2]]), set("omni.ja", vec![[1, 1]])],
        build_id: build.map(str::to_owned),
    }
}

#[test]
fn an_update_makes_the_plan_stale_and_the_new_build_is_read_not_the_old_ranges() {
    let (_dir, root) = fake_install("20260101000000");
    let state_tmp = tempfile::tempdir().unwrap();
    let state_dir = crate::state::StateDir::create_at(state_tmp.path()).unwrap();
    let mut state = State::default();
    state.push(learned_start(&root, Some("20260101000000")));
    workingset::save(&state_dir, &state).unwrap();
    let before = status(&root, &state_dir).unwrap();
    assert!(before.learned && !before.stale);
    assert_eq!(before.learned_build_id.as_deref(), Some("20260101000000"));
    // application.ini was never learned: read whole, like any file a start did not show.
    let ini = || {
        std::fs::metadata(root.join("application.ini"))
            .unwrap()
            .len()
    };
    assert_eq!(before.planned_bytes, 2 * 4096 + 4096 + ini());

    // Firefox is updated: a new BuildID and a new libxul.so (another inode, another size).
    set_build(&root, "20260202000000");
    replace(&root.join("libxul.so"), 80 * 4096);
    let after = status(&root, &state_dir).unwrap();
    assert!(after.stale, "{after:?}");
    assert_eq!(after.build_id.as_deref(), Some("20260202000000"));
    assert_eq!(after.learned_build_id.as_deref(), Some("20260101000000"));
    assert_eq!(after.changed_files, [root.join("libxul.so")]);
    // The preload reads the new libxul.so whole (not the two pages learned of the old one)
    // and still only the learned page of the unchanged omni.ja.
    let plan = make(&state, &root).unwrap();
    let xul = plan
        .files
        .iter()
        .position(|p| p.ends_with("libxul.so"))
        .unwrap();
    let xul_bytes: u64 = plan
        .reads
        .iter()
        .filter(|r| r.file == xul)
        .map(|r| r.len)
        .sum();
    assert_eq!(xul_bytes, 80 * 4096);
    assert_eq!(plan.bytes_planned, 80 * 4096 + 4096 + ini());

    // The next start is learned for the new build: no longer stale.
    state.push(learned_start(&root, Some("20260202000000")));
    workingset::save(&state_dir, &state).unwrap();
    let relearned = status(&root, &state_dir).unwrap();
    assert!(!relearned.stale && relearned.changed_files.is_empty());

    // A start learned before BuildIDs were recorded: libxul.so replaced also means stale.
    let mut old = State::default();
    old.push(learned_start(&root, None));
    workingset::save(&state_dir, &old).unwrap();
    assert!(!status(&root, &state_dir).unwrap().stale);
    replace(&root.join("libxul.so"), 81 * 4096);
    assert!(status(&root, &state_dir).unwrap().stale);
}

#[test]
fn a_traced_plan_reads_used_ranges_whole_changed_files_and_skips_untraced_ones() {
    let (_dir, root) = fake_install("B1");
    std::fs::write(root.join("untraced.so"), vec![0u8; 4096]).unwrap();
    let traced_file = |name: &str, ranges: Vec<[u64; 2]>| {
        let meta = std::fs::metadata(root.join(name)).unwrap();
        TracedFile {
            path: root.join(name),
            ino: std::os::unix::fs::MetadataExt::ino(&meta),
            size: Some(meta.len()),
            mtime_ns: None,
            ranges,
        }
    };
    let traced = Traced {
        // libxul: pages 0-1, 4 (gap of 2 pages), 40; omni.ja: page 3.
        files: vec![
            traced_file("libxul.so", vec![[0, 2], [4, 1], [40, 1]]),
            traced_file("omni.ja", vec![[3, 1]]),
        ],
        recorded: vec![(0, 40, 1), (1, 3, 1), (0, 0, 2), (0, 4, 1)],
        trace_ids: vec!["t".into()],
    };
    let knobs = |gap: u64| Knobs {
        source: PlanSource::Trace,
        gap: Some(gap),
        ..Knobs::default()
    };
    let exact = make_traced(&traced, &root, knobs(0)).unwrap();
    assert_eq!(exact.bytes_planned, 5 * 4096);
    assert!(!exact.files.iter().any(|p| p.ends_with("untraced.so")));
    // An 8 KiB gap is read through, the 35-page one is not.
    let joined = make_traced(&traced, &root, knobs(8192)).unwrap();
    assert_eq!(joined.bytes_planned, 7 * 4096);
    // The replay in recorded order keeps the trace's order.
    let replay = make_traced(
        &traced,
        &root,
        Knobs {
            source: PlanSource::TraceReads,
            gap: Some(0),
            recorded_order: true,
            ..Knobs::default()
        },
    )
    .unwrap();
    assert_eq!(replay.order, Order::Recorded);
    let seq: Vec<_> = replay
        .reads
        .iter()
        .map(|r| {
            (
                replay.files[r.file].file_name().unwrap().to_owned(),
                r.offset,
            )
        })
        .collect();
    let name = |n: &str| std::ffi::OsString::from(n);
    assert_eq!(
        seq,
        [
            (name("libxul.so"), 40 * 4096),
            (name("omni.ja"), 3 * 4096),
            (name("libxul.so"), 0),
            (name("libxul.so"), 4 * 4096)
        ]
    );
    // omni.ja replaced since the trace: read whole, reported as changed.
    replace(&root.join("omni.ja"), 20 * 4096);
    let after = make_traced(&traced, &root, knobs(0)).unwrap();
    assert_eq!(after.changed, [root.join("omni.ja")]);
    assert_eq!(after.bytes_planned, 4 * 4096 + 20 * 4096);
}
