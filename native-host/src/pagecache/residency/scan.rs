//! The residency scan: the install's files, the loop image and what Firefox maps from elsewhere,
//! each opened beneath its folder, mincore where the answer is exact, `hidden` where it is not,
//! and a file that changed while scanned reported as such.

use crate::os::beneath::Folder;
use crate::os::sys;
use crate::pagecache::problem::{FileErrorCode, Problem};
use crate::pagecache::residency::{
    FileReport, Group, GroupTotals, ProcMaps, Status, Summary, HIDDEN_REASON, MAX_RANGES,
};
use crate::pagecache::view::{count_resident, encode, pages_of, Viewer};
use crate::Error;
use std::collections::BTreeMap;
use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub struct ScanOptions {
    /// The Firefox process whose mappings are reported (and whose system libraries are scanned).
    pub pid: Option<i32>,
    /// Also scan files `pid` maps from outside the install folder.
    pub include_mapped: bool,
    /// The image behind the install folder's loop device, scanned as the `image` group.
    pub image: Option<PathBuf>,
    /// Encode each file's page maps (`resident_ranges`, `mapped.ranges`). Off when only the
    /// totals are wanted (`summary_only`): the counts stay exact, the ranges are `None`.
    pub ranges: bool,
}

/// Scan `files` (already confined by `install::select`, opened beneath `install`) and, if asked,
/// the files `opts.pid` maps from elsewhere (real paths from the kernel, opened beneath `/`
/// without following any symlink). Calls `on_file` once per file, in order; checks `cancel`
/// between files.
pub fn scan(
    install: &Folder,
    files: &[PathBuf],
    opts: &ScanOptions,
    cancel: &AtomicBool,
    on_file: &mut dyn FnMut(&FileReport),
) -> Result<Summary, Error> {
    let started = Instant::now();
    let root = install.path().to_path_buf();
    let mut scanner = Scanner::new(opts.pid, opts.ranges);
    let mut totals = GroupTotals::empty();
    for path in files {
        check(cancel)?;
        let report = scanner.scan_file(install, path, Group::Install);
        totals.add(&report, scanner.page);
        on_file(&report);
    }
    let mut groups = BTreeMap::from([("install", totals)]);
    if let Some(image) = &opts.image {
        check(cancel)?;
        // The loop image (a path from the kernel) is opened beneath its own folder, held the
        // same way as the install folder.
        let report = match image.parent().map(Folder::open) {
            Some(Ok(folder)) => scanner.scan_file(&folder, image, Group::Image),
            Some(Err(e)) => FileReport::new(image, Group::Image).failed(Problem::open(&e)),
            None => FileReport::new(image, Group::Image)
                .failed(Problem::new(FileErrorCode::OpenFailed, "no folder")),
        };
        let mut totals = GroupTotals::empty();
        totals.add(&report, scanner.page);
        on_file(&report);
        groups.insert("image", totals);
    }
    let outside = match (&scanner.maps, opts.include_mapped) {
        (Some(maps), true) => maps.files_outside(&root),
        _ => Vec::new(),
    };
    if !outside.is_empty() {
        let slash = Folder::open(Path::new("/")).map_err(|e| Error::io("cannot open /", e))?;
        let mut system = GroupTotals::empty();
        for path in &outside {
            check(cancel)?;
            let report = scanner.scan_file(&slash, path, Group::System);
            system.add(&report, scanner.page);
            on_file(&report);
        }
        groups.insert("system", system);
    }
    Ok(Summary {
        install_dir: root,
        page_size: scanner.page,
        groups,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

fn check(cancel: &AtomicBool) -> Result<(), Error> {
    if cancel.load(Ordering::Relaxed) {
        return Err(Error::Cancelled);
    }
    Ok(())
}

/// A file replaced or rewritten during the scan.
fn changed_while_scanned() -> Problem {
    Problem::new(
        FileErrorCode::Changed,
        "changed while scanned (Firefox updated?)",
    )
}

/// A file removed during the scan.
fn vanished_while_scanned() -> Problem {
    Problem::new(
        FileErrorCode::Vanished,
        "vanished while scanned (Firefox updated?)",
    )
}

/// The file was rewritten (size or mtime) or replaced (inode) while we looked at it.
fn changed(file: &File, before: &Metadata, folder: &Folder, path: &Path) -> Option<Problem> {
    let Ok(now) = file.metadata() else {
        return Some(changed_while_scanned());
    };
    if now.len() != before.len()
        || now.mtime() != before.mtime()
        || now.mtime_nsec() != before.mtime_nsec()
    {
        return Some(changed_while_scanned());
    }
    match folder.stat(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some(vanished_while_scanned()),
        Err(_) => Some(changed_while_scanned()),
        Ok(m) if m.ino() != before.ino() || m.dev() != before.dev() => {
            Some(changed_while_scanned())
        }
        Ok(_) => None,
    }
}

/// Scans files one after the other, reusing its buffers (one mincore vector for every file).
struct Scanner {
    viewer: Viewer,
    page: u64,
    core: Vec<u8>,
    maps: Option<ProcMaps>,
    ranges: bool,
    /// cachestat(2) is tried first; off once it fails (old kernel, seccomp, EPERM).
    cachestat: bool,
}

impl Scanner {
    fn new(pid: Option<i32>, ranges: bool) -> Self {
        Self {
            viewer: Viewer::current(),
            page: sys::page_size() as u64,
            core: Vec::new(),
            maps: pid.and_then(ProcMaps::read),
            ranges,
            cachestat: true,
        }
    }

    /// Fill `core` with one byte per page (bit 0: resident). A file wholly in the cache or
    /// wholly out of it (the usual hot and cold cases) is answered by one cachestat(2) call;
    /// mincore, one page-cache lookup per page, only runs for files partly resident. This is
    /// what keeps the scan at vmtouch's speed (docs/benchmarks.md) with the same page map.
    fn resident_map(&mut self, file: &File, len: u64, pages: u64) -> io::Result<()> {
        if self.cachestat {
            match sys::cached_pages(file, len) {
                Ok(Some(n)) if n == 0 || n == pages => {
                    let fill = u8::from(n != 0);
                    self.core.clear();
                    self.core
                        .resize(usize::try_from(pages).unwrap_or(usize::MAX), fill);
                    return Ok(());
                }
                Ok(Some(_)) => {}
                // Gone from this kernel (seccomp) or refused: mincore decides alone.
                Ok(None) | Err(_) => self.cachestat = false,
            }
        }
        sys::mincore_file(file, len, &mut self.core)
    }

    fn scan_file(&mut self, folder: &Folder, path: &Path, group: Group) -> FileReport {
        let report = FileReport::new(path, group);
        let (file, before) = match folder.open_file(path) {
            Ok(opened) => opened,
            Err(e) => return report.failed(Problem::open(&e)),
        };
        let mut report = FileReport {
            size: before.len(),
            pages: pages_of(before.len(), self.page),
            ..report
        };
        if let Some(maps) = self.maps.as_mut() {
            report.mapped = Some(maps.mapped(&before, path, report.pages, self.ranges));
        }
        if self.viewer.sees(&file, &before, path) {
            if let Err(e) = self.resident_map(&file, before.len(), report.pages) {
                return report.failed(Problem::io(
                    FileErrorCode::MincoreFailed,
                    format!("mincore failed: {e}"),
                    &e,
                ));
            }
            report.status = Status::Exact;
            report.resident_pages = Some(count_resident(&self.core));
            if self.ranges {
                let (ranges, unit) = encode(&self.core, MAX_RANGES);
                report.resident_ranges = Some(ranges);
                report.range_unit_pages = unit;
            }
        } else {
            // Never call mincore here: its answer would be "all resident".
            report.status = Status::Hidden;
            report.hidden_reason = Some(HIDDEN_REASON.to_owned());
            report.hidden_code = Some(crate::note::HIDDEN_NOT_OWNER);
        }
        match changed(&file, &before, folder, path) {
            Some(why) => report.failed(why),
            None => report,
        }
    }
}
