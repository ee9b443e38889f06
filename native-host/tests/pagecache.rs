//! The page-cache work on real files: evict makes them cold, every preload method makes them
//! hot, residency sees both, and requests outside the install folder read nothing.

#[path = "support/install_fixture.rs"]
mod fixture;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use about_startup_host::firefox::install;
use about_startup_host::os::beneath::Folder;
use about_startup_host::os::sys;
use about_startup_host::pagecache::problem::FileErrorCode;
use about_startup_host::pagecache::residency::{self, FileReport, ScanOptions, Status};
use about_startup_host::pagecache::{evict, preload};
use about_startup_host::Error;
use fixture::Fixture;

fn scan(install: &Path, files: &[PathBuf]) -> (Vec<FileReport>, residency::Summary) {
    scan_with(install, files, true)
}

/// [`scan`], with or without each file's page map (`ranges`).
fn scan_with(
    install: &Path,
    files: &[PathBuf],
    ranges: bool,
) -> (Vec<FileReport>, residency::Summary) {
    let mut reports = Vec::new();
    let opts = ScanOptions {
        pid: None,
        include_mapped: false,
        image: None,
        ranges,
    };
    let folder = Folder::open(install).unwrap();
    let summary = residency::scan(&folder, files, &opts, &AtomicBool::new(false), &mut |r| {
        reports.push(r.clone());
    })
    .unwrap();
    (reports, summary)
}

/// Resident pages and total pages over `files` (all must be exact: we own them).
fn resident(install: &Path, files: &[PathBuf]) -> (u64, u64) {
    let (reports, _) = scan(install, files);
    reports.iter().fold((0, 0), |(r, p), f| {
        assert_eq!(f.status, Status::Exact, "{f:?}");
        (r + f.resident_pages.unwrap(), p + f.pages)
    })
}

/// The folder the tests' own evicts open beneath: `/` (every real path is beneath it); the
/// confinement to an install folder is tested on its own.
fn slash() -> Folder {
    Folder::open(Path::new("/")).unwrap()
}

/// Evict and check that nothing failed.
fn evict_ok(files: &[PathBuf]) {
    let summary = evict::evict(&slash(), files);
    assert!(
        summary.files.iter().all(|f| f.problem.is_none()),
        "{:?}",
        summary.files
    );
}

fn assert_cold(install: &Path, files: &[PathBuf]) {
    let (r, p) = resident(install, files);
    assert!(
        r * 100 <= p * 5,
        "{r} of {p} pages still resident after evict"
    );
}

/// Pages of `files` brought into the page cache since they were last dropped, and their pages:
/// cached now, or cached and since reclaimed. The look comes after the preload of every file
/// has returned, so by then the first file's pages may have sat idle for seconds: a DAMON
/// kdamond paging out idle cache (CI machines of this kind run one) or memory pressure may have
/// taken them out, which is the machine's doing, not the preload's. Reclaim leaves a shadow
/// entry that `cachestat(2)` counts as evicted; the evicts of these tests
/// (`POSIX_FADV_DONTNEED`) leave none (tests/prefetch.rs checks the kernel does so), so a page
/// no preload read never counts. The files are this test's own (exact for the owner). Without
/// cachestat (Linux < 6.5), mincore's residency alone.
fn brought_in(install: &Path, files: &[PathBuf]) -> (u64, u64) {
    if !sys::cachestat_available() {
        return resident(install, files);
    }
    files.iter().fold((0, 0), |(r, p), path| {
        let f = std::fs::File::open(path).unwrap();
        let len = f.metadata().unwrap().len();
        let c = sys::cachestat(&f, 0, len).unwrap().unwrap();
        (r + c.cached + c.evicted, p + len.div_ceil(4096))
    })
}

fn assert_hot(install: &Path, files: &[PathBuf], what: &str) {
    let (r, p) = brought_in(install, files);
    assert!(
        r * 100 >= p * 95,
        "{what}: only {r} of {p} pages brought in"
    );
}

#[test]
fn evict_then_each_preload_method_fills_the_cache() {
    let fx = Fixture::new();
    let all = fx.all();
    for method in [
        preload::Method::Read,
        preload::Method::Readahead,
        preload::Method::Fadvise,
        preload::Method::Auto,
    ] {
        let ev = evict::evict(&fx.folder(), &all);
        assert!(ev
            .files
            .iter()
            .all(|f| f.status == Status::Exact && f.problem.is_none()));
        assert_cold(&fx.ff, &all);
        for jobs in [Some(1), Some(3)] {
            let mut last = None;
            let opts = preload::Options {
                method,
                idle: false,
                jobs,
            };
            let summary = preload::preload(
                &fx.folder(),
                &all,
                &opts,
                &AtomicBool::new(false),
                &mut |p| {
                    last = Some(p.clone());
                },
            )
            .unwrap();
            assert!(summary.errors.is_empty(), "{:?}", summary.errors);
            assert_eq!(summary.files as usize, all.len());
            let last = last.unwrap();
            assert_eq!(last.bytes_done, last.bytes_total);
            assert_hot(&fx.ff, &all, &format!("{method:?} jobs {jobs:?}"));
            evict_ok(&all);
        }
    }
}

#[test]
fn evict_reports_before_and_after() {
    let fx = Fixture::new();
    let lib = fx.ff.join("libxul.so");
    preload::preload(
        &fx.folder(),
        std::slice::from_ref(&lib),
        &preload::Options::default(),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let summary = evict::evict(&fx.folder(), &[lib.clone(), fx.ff.join("gone")]);
    let f = &summary.files[0];
    assert_eq!((f.status, f.pages), (Status::Exact, 1024));
    assert_eq!(f.resident_before, Some(1024));
    assert!(f.resident_after.unwrap() <= 50, "{f:?}");
    assert!(summary.pages_dropped >= 974);
    assert_eq!(summary.files[1].status, Status::Error);
    let gone = summary.files[1].problem.as_ref().unwrap();
    assert_eq!(gone.error_code, FileErrorCode::Vanished);
    assert!(gone.error.contains("vanished"), "{gone:?}");
}

#[test]
fn residency_is_exact_for_the_owner_with_ranges_and_totals() {
    let fx = Fixture::new();
    let lib = fx.ff.join("libxul.so");
    evict_ok(std::slice::from_ref(&lib));
    // Bring in pages [0, 100) and [300, 400) only.
    let f = std::fs::File::open(&lib).unwrap();
    let mut buf = vec![0u8; 100 * 4096];
    std::os::unix::fs::FileExt::read_exact_at(&f, &mut buf, 0).unwrap();
    std::os::unix::fs::FileExt::read_exact_at(&f, &mut buf, 300 * 4096).unwrap();
    let (reports, summary) = scan(&fx.ff, &fx.all());
    let r = reports.iter().find(|r| r.path == lib).unwrap();
    assert_eq!(r.status, Status::Exact);
    assert_eq!(r.range_unit_pages, 1);
    assert!(r.hidden_reason.is_none() && r.hidden_code.is_none() && r.mapped.is_none());
    // Readahead may bring a few pages past what was read; the ranges start where we read.
    let ranges = r.resident_ranges.as_ref().unwrap();
    assert_eq!(ranges[0][0], 0);
    assert!(
        ranges.iter().any(|[s, n]| *s <= 300 && s + n >= 400),
        "{ranges:?}"
    );
    assert!(r.resident_pages.unwrap() >= 200 && r.resident_pages.unwrap() < 1024);
    let install = &summary.groups["install"];
    assert_eq!(install.files as usize, reports.len());
    assert_eq!(install.exact_files, install.files);
    assert_eq!(install.resident_pages, Some(install.exact_pages));
    assert!(!summary.groups.contains_key("system"));
    assert_eq!(summary.page_size, 4096);
    let empty = reports.iter().find(|r| r.path.ends_with("empty")).unwrap();
    assert_eq!((empty.pages, empty.resident_pages), (0, Some(0)));
    // Totals only (`summary_only`): the same counts, no page maps made.
    let (bare, bare_summary) = scan_with(&fx.ff, &fx.all(), false);
    let b = bare.iter().find(|r| r.path == lib).unwrap();
    assert_eq!(
        (b.status, b.resident_pages),
        (Status::Exact, r.resident_pages)
    );
    assert_eq!((b.resident_ranges.as_ref(), b.range_unit_pages), (None, 1));
    assert_eq!(
        bare_summary.groups["install"].exact_pages,
        install.exact_pages
    );
}

#[test]
fn a_vanished_file_is_a_per_file_error() {
    let fx = Fixture::new();
    let gone = fx.ff.join("dependentlibs.list");
    let all = fx.all();
    std::fs::remove_file(&gone).unwrap();
    let (reports, summary) = scan(&fx.ff, &all);
    let r = reports.iter().find(|r| r.path == gone).unwrap();
    assert_eq!(r.status, Status::Error);
    let problem = r.problem.as_ref().unwrap();
    assert_eq!(problem.error_code, FileErrorCode::Vanished);
    assert!(problem.error.contains("vanished"), "{r:?}");
    assert_eq!(summary.groups["install"].error_files, 1);
    assert_eq!(reports.len(), all.len());
}

#[test]
fn cancel_stops_a_scan() {
    let fx = Fixture::new();
    let opts = ScanOptions {
        pid: None,
        include_mapped: false,
        image: None,
        ranges: true,
    };
    let err = residency::scan(
        &fx.folder(),
        &fx.all(),
        &opts,
        &AtomicBool::new(true),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(err, Error::Cancelled));
}

#[test]
fn requests_outside_the_folder_are_refused_and_read_nothing() {
    let fx = Fixture::new();
    evict_ok(std::slice::from_ref(&fx.outside));
    assert_cold(
        fx.outside.parent().unwrap(),
        std::slice::from_ref(&fx.outside),
    );
    let sibling = fx.ff.with_file_name("ff2").join("outside.bin");
    for bad in [
        vec![PathBuf::from("escape")],
        vec![PathBuf::from("browser/chrome/outside.bin")],
        vec![
            PathBuf::from("libxul.so"),
            PathBuf::from("../ff2/outside.bin"),
        ],
        vec![sibling],
    ] {
        match install::select(&fx.ff, &bad).map(|s| s.files) {
            Err(Error::OutsideInstallDir { path, install_dir }) => {
                assert_eq!(path, fx.outside);
                assert_eq!(install_dir, fx.ff);
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    // The whole folder does not reach through its symlinks either.
    let all = fx.all();
    assert!(all.iter().all(|p| p.starts_with(&fx.ff)), "{all:?}");
    preload::preload(
        &fx.folder(),
        &all,
        &preload::Options::default(),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    scan(&fx.ff, &all);
    assert_cold(
        fx.outside.parent().unwrap(),
        std::slice::from_ref(&fx.outside),
    );
}

#[test]
fn cancel_from_progress_ends_a_preload() {
    let fx = Fixture::new();
    let all = fx.all();
    evict_ok(&all);
    let cancel = AtomicBool::new(false);
    let mut calls = 0;
    let opts = preload::Options {
        method: preload::Method::Read,
        idle: true,
        jobs: Some(1),
    };
    let err = preload::preload(&fx.folder(), &all, &opts, &cancel, &mut |_| {
        calls += 1;
        cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    })
    .unwrap_err();
    assert!(matches!(err, Error::Cancelled), "{err}");
    assert!(calls >= 1);
}

/// Issue 10 #4, at the level of a request: the files are selected while `browser` is a folder;
/// then `browser` is swapped for a symlink to a folder outside holding a file of the same name.
/// Preload and evict open beneath the held install folder: the outside file is refused (a
/// per-file error saying so), never read, and the rest of the request goes on.
#[test]
fn a_folder_swapped_for_a_symlink_after_selection_is_refused_per_file() {
    let fx = Fixture::new();
    let decoy = fx.outside.with_file_name("omni.ja");
    fixture::write_file(&decoy, 1 << 20);
    evict_ok(std::slice::from_ref(&decoy));
    let selected = install::select(&fx.ff, &[]).unwrap();
    let omni = fx.ff.join("browser/omni.ja");
    assert!(selected.files.contains(&omni));
    std::fs::rename(fx.ff.join("browser"), fx.root.path().join("browser.moved")).unwrap();
    std::os::unix::fs::symlink("../ff2", fx.ff.join("browser")).unwrap();

    let summary = preload::preload(
        &selected.folder,
        &selected.files,
        &preload::Options::default(),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let refused: Vec<_> = summary.errors.iter().map(|e| &e.path).collect();
    assert_eq!(refused, [&omni], "{:?}", summary.errors);
    let problem = &summary.errors[0].problem;
    assert_eq!(problem.error_code, FileErrorCode::Escaped);
    assert!(problem.error.starts_with("refused: "), "{problem:?}");
    assert_eq!(summary.files as usize, selected.files.len() - 1);
    assert_cold(decoy.parent().unwrap(), std::slice::from_ref(&decoy));

    let evicted = evict::evict(&selected.folder, &selected.files);
    let f = evicted.files.iter().find(|f| f.path == omni).unwrap();
    assert_eq!(f.status, Status::Error);
    let problem = f.problem.as_ref().unwrap();
    assert_eq!(problem.error_code, FileErrorCode::Escaped);
    assert!(problem.error.starts_with("refused: "), "{f:?}");
}
