//! Page-cache residency, page by page (mincore), with the kernel's blind spot made explicit:
//! since Linux 5.2 mincore reports every page resident for files the caller neither owns nor may
//! write, so those files are `hidden`, never 100%.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::Serialize;

use crate::pagecache::maps::{parse_maps_line, MapsLine};
use crate::pagecache::sys;
use crate::pagecache::view::{count_resident, encode, open_error, open_regular, pages_of, Viewer};
use crate::Error;

/// What this host can measure for this user (part of `hello`).
#[derive(Debug, Clone, Serialize)]
pub struct Capabilities {
    pub kernel: String,
    pub euid: u32,
    pub root: bool,
    /// "all" or "owned_or_writable".
    pub mincore_exact: &'static str,
    pub cachestat: bool,
}

#[must_use]
pub fn capabilities() -> Capabilities {
    let euid = sys::geteuid();
    Capabilities {
        kernel: sys::kernel_release(),
        euid,
        root: euid == 0,
        mincore_exact: if sys::has_cap_fowner() && sys::user_namespace().is_none() {
            "all"
        } else {
            "owned_or_writable"
        },
        cachestat: sys::cachestat_available(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// Under the install folder.
    Install,
    /// Mapped by Firefox from elsewhere (system libraries, fonts).
    System,
    /// The compressed image behind a loop-mounted (squashfs, Snap) install folder: a second
    /// cache, apart from the decompressed file pages (firefox/kind.rs).
    Image,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Exact,
    Hidden,
    Error,
}

/// Pages of a file the running Firefox has mapped in (what an ordinary user *can* see).
#[derive(Debug, Clone, Serialize)]
pub struct Mapped {
    /// "pagemap" or "smaps".
    pub source: &'static str,
    pub pid: i32,
    pub pages: u64,
    pub ranges: Option<Vec<[u64; 2]>>,
    pub range_unit_pages: u64,
}

/// One `file` event (docs/PROTOCOL.md, `residency`).
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub path: PathBuf,
    pub group: Group,
    pub size: u64,
    pub pages: u64,
    pub status: Status,
    /// English, for the CLI and older extensions; `hidden_code` is what to word (crate::note).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden_code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub resident_pages: Option<u64>,
    pub resident_ranges: Option<Vec<[u64; 2]>>,
    pub range_unit_pages: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapped: Option<Mapped>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct GroupTotals {
    pub files: u64,
    pub size: u64,
    pub pages: u64,
    pub exact_files: u64,
    pub hidden_files: u64,
    pub error_files: u64,
    /// `None` as soon as one file of the group is hidden.
    pub resident_pages: Option<u64>,
    pub exact_pages: u64,
    pub mapped_pages: u64,
}

/// The final reply of `residency`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub install_dir: PathBuf,
    pub page_size: u64,
    pub groups: std::collections::BTreeMap<&'static str, GroupTotals>,
    pub elapsed_ms: u64,
}

pub struct ScanOptions {
    /// The Firefox process whose mappings are reported (and whose system libraries are scanned).
    pub pid: Option<i32>,
    /// Also scan files `pid` maps from outside the install folder.
    pub include_mapped: bool,
    /// The image behind the install folder's loop device, scanned as the `image` group.
    pub image: Option<PathBuf>,
}

/// Scan `files` (already confined by `install::select`) and, if asked, the files `opts.pid` maps
/// from elsewhere. Calls `on_file` once per file, in order; checks `cancel` between files.
pub fn scan(
    install_dir: &Path,
    files: &[PathBuf],
    opts: &ScanOptions,
    cancel: &AtomicBool,
    on_file: &mut dyn FnMut(&FileReport),
) -> Result<Summary, Error> {
    let started = Instant::now();
    let root = install_dir
        .canonicalize()
        .unwrap_or_else(|_| install_dir.to_path_buf());
    let mut scanner = Scanner::new(opts.pid);
    let mut install = GroupTotals::empty();
    for path in files {
        check(cancel)?;
        let report = scanner.scan_file(path, Group::Install);
        install.add(&report);
        on_file(&report);
    }
    let mut groups = BTreeMap::from([("install", install)]);
    if let Some(image) = &opts.image {
        check(cancel)?;
        let report = scanner.scan_file(image, Group::Image);
        let mut totals = GroupTotals::empty();
        totals.add(&report);
        on_file(&report);
        groups.insert("image", totals);
    }
    let outside = match (&scanner.maps, opts.include_mapped) {
        (Some(maps), true) => maps.files_outside(&root),
        _ => Vec::new(),
    };
    if !outside.is_empty() {
        let mut system = GroupTotals::empty();
        for path in &outside {
            check(cancel)?;
            let report = scanner.scan_file(path, Group::System);
            system.add(&report);
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

/// Why a file is `hidden` (docs/PROTOCOL.md).
pub const HIDDEN_REASON: &str = crate::note::HIDDEN_NOT_OWNER_EN;

/// Message of a file replaced or rewritten during the scan.
const CHANGED: &str = "changed while scanned (Firefox updated?)";
const VANISHED: &str = "vanished while scanned (Firefox updated?)";

/// A file's ranges must fit its share of the 1 MiB frame: 256 KiB of JSON, at about 20 bytes
/// per `[first, count],` pair, is ~13 000 ranges.
const RANGES_BUDGET_BYTES: usize = 256 * 1024;
const BYTES_PER_RANGE: usize = 20;
pub(crate) const MAX_RANGES: usize = RANGES_BUDGET_BYTES / BYTES_PER_RANGE;

/// pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst). Bit 61 tells a page of the
/// file (page cache) from an anonymous copy-on-write copy in a private mapping (relocated data),
/// which is not page cache at all. Bit 62 (swapped) is never set for page-cache pages.
const PM_PRESENT: u64 = 1 << 63;
const PM_FILE: u64 = 1 << 61;

impl GroupTotals {
    fn empty() -> Self {
        Self {
            resident_pages: Some(0),
            ..Self::default()
        }
    }

    fn add(&mut self, r: &FileReport) {
        self.files += 1;
        self.size += r.size;
        self.pages += r.pages;
        match r.status {
            Status::Exact => {
                let resident = r.resident_pages.unwrap_or(0);
                self.exact_files += 1;
                self.exact_pages += resident;
                self.resident_pages = self.resident_pages.map(|n| n + resident);
            }
            // A sum of exact and unknown is unknown.
            Status::Hidden => {
                self.hidden_files += 1;
                self.resident_pages = None;
            }
            Status::Error => self.error_files += 1,
        }
        self.mapped_pages += r.mapped.as_ref().map_or(0, |m| m.pages);
    }
}

impl FileReport {
    fn new(path: &Path, group: Group) -> Self {
        Self {
            path: path.to_path_buf(),
            group,
            size: 0,
            pages: 0,
            status: Status::Error,
            hidden_reason: None,
            hidden_code: None,
            error: None,
            resident_pages: None,
            resident_ranges: None,
            range_unit_pages: 1,
            mapped: None,
        }
    }

    fn failed(mut self, why: String) -> Self {
        self.status = Status::Error;
        self.error = Some(why);
        self.hidden_reason = None;
        self.hidden_code = None;
        self.resident_pages = None;
        self.resident_ranges = None;
        self
    }
}

/// The file was rewritten (size or mtime) or replaced (inode) while we looked at it.
fn changed(file: &File, before: &Metadata, path: &Path) -> Option<&'static str> {
    let Ok(now) = file.metadata() else {
        return Some(CHANGED);
    };
    if now.len() != before.len()
        || now.mtime() != before.mtime()
        || now.mtime_nsec() != before.mtime_nsec()
    {
        return Some(CHANGED);
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some(VANISHED),
        Err(_) => Some(CHANGED),
        Ok(m) if m.ino() != before.ino() || m.dev() != before.dev() => Some(CHANGED),
        Ok(_) => None,
    }
}

/// Scans files one after the other, reusing its buffers (one mincore vector for every file).
struct Scanner {
    viewer: Viewer,
    page: u64,
    core: Vec<u8>,
    maps: Option<ProcMaps>,
}

impl Scanner {
    fn new(pid: Option<i32>) -> Self {
        Self {
            viewer: Viewer::current(),
            page: sys::page_size() as u64,
            core: Vec::new(),
            maps: pid.and_then(ProcMaps::read),
        }
    }

    fn scan_file(&mut self, path: &Path, group: Group) -> FileReport {
        let report = FileReport::new(path, group);
        let (file, before) = match open_regular(path) {
            Ok(opened) => opened,
            Err(e) => return report.failed(open_error(&e)),
        };
        let mut report = FileReport {
            size: before.len(),
            pages: pages_of(before.len(), self.page),
            ..report
        };
        if let Some(maps) = self.maps.as_mut() {
            report.mapped = Some(maps.mapped(&before, path, report.pages));
        }
        if self.viewer.sees(&file, &before, path) {
            if let Err(e) = sys::mincore_file(&file, before.len(), &mut self.core) {
                return report.failed(format!("mincore failed: {e}"));
            }
            let (ranges, unit) = encode(&self.core, MAX_RANGES);
            report.status = Status::Exact;
            report.resident_pages = Some(count_resident(&self.core));
            report.resident_ranges = Some(ranges);
            report.range_unit_pages = unit;
        } else {
            // Never call mincore here: its answer would be "all resident".
            report.status = Status::Hidden;
            report.hidden_reason = Some(HIDDEN_REASON.to_owned());
            report.hidden_code = Some(crate::note::HIDDEN_NOT_OWNER);
        }
        match changed(&file, &before, path) {
            Some(why) => report.failed(why.to_owned()),
            None => report,
        }
    }
}

/// The file mappings of a process, with what is needed to tell which pages it has in memory.
/// Shared with `workingset`, which unions the present pages of a whole process tree.
pub(crate) struct ProcMaps {
    pid: i32,
    /// File-backed mappings only.
    lines: Vec<MapsLine>,
    /// /proc/<pid>/pagemap, or `None` where it cannot be opened (then `rss_kb` is used).
    pagemap: Option<File>,
    /// Rss in kB per mapping start address, from /proc/<pid>/smaps (fallback only).
    rss_kb: HashMap<u64, u64>,
    page: u64,
    buf: Vec<u8>,
    bits: Vec<u8>,
}

/// pagemap is read in slices of this many entries (8 bytes each) to bound the buffer.
const PAGEMAP_CHUNK_ENTRIES: u64 = 64 * 1024;

impl ProcMaps {
    /// `None` when the maps are unreadable (another user's process, or it exited).
    pub(crate) fn read(pid: i32) -> Option<Self> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
        let lines = text
            .lines()
            .filter_map(parse_maps_line)
            .filter(|l| l.inode != 0 && l.path.is_some())
            .collect();
        let pagemap = File::open(format!("/proc/{pid}/pagemap")).ok();
        let rss_kb = if pagemap.is_none() {
            std::fs::read_to_string(format!("/proc/{pid}/smaps"))
                .map(|s| parse_smaps_rss(&s))
                .unwrap_or_default()
        } else {
            HashMap::new()
        };
        Some(Self {
            pid,
            lines,
            pagemap,
            rss_kb,
            page: sys::page_size() as u64,
            buf: Vec::new(),
            bits: Vec::new(),
        })
    }

    /// Mappings of the inode `meta` describes: device and inode must match (a path can be
    /// replaced; the mapping keeps the old inode). Where the device numbers differ (overlayfs
    /// shows the lower layer's device in maps) the same inode under the same path also counts.
    fn of_file<'a>(
        &'a self,
        meta: &Metadata,
        path: &'a Path,
    ) -> impl Iterator<Item = &'a MapsLine> {
        let (major, minor) = sys::dev_major_minor(meta.dev());
        let ino = meta.ino();
        let path = path.to_str();
        self.lines.iter().filter(move |l| {
            l.inode == ino && ((l.major, l.minor) == (major, minor) || l.path.as_deref() == path)
        })
    }

    fn mapped(&mut self, meta: &Metadata, path: &Path, pages: u64) -> Mapped {
        let lines: Vec<MapsLine> = self.of_file(meta, path).cloned().collect();
        if self.pagemap.is_some() {
            if let Some(mapped) = self.pagemap_pages(&lines, pages) {
                return mapped;
            }
        }
        let kb: u64 = lines.iter().filter_map(|l| self.rss_kb.get(&l.start)).sum();
        Mapped {
            source: "smaps",
            pid: self.pid,
            pages: (kb * 1024 / self.page).min(pages),
            ranges: None,
            range_unit_pages: 1,
        }
    }

    /// Union over the mappings of the file pages present in the process's page tables.
    fn pagemap_pages(&mut self, lines: &[MapsLine], pages: u64) -> Option<Mapped> {
        let pages_usize = usize::try_from(pages).ok()?;
        let mut bits = std::mem::take(&mut self.bits);
        bits.clear();
        bits.resize(pages_usize, 0);
        let marked = lines
            .iter()
            .try_for_each(|l| self.mark_present(l, &mut bits));
        self.bits = bits;
        marked?;
        let (ranges, unit) = encode(&self.bits, MAX_RANGES);
        Some(Mapped {
            source: "pagemap",
            pid: self.pid,
            pages: count_resident(&self.bits),
            ranges: Some(ranges),
            range_unit_pages: unit,
        })
    }

    /// Set `bits[page]` (one byte per page of the file `meta` describes) for every page this
    /// process has present in its page tables, over all its mappings of the file. `None` when
    /// pagemap cannot be read (then nothing is known, not "nothing present").
    pub(crate) fn mark_file(
        &mut self,
        meta: &Metadata,
        path: &Path,
        bits: &mut [u8],
    ) -> Option<()> {
        self.pagemap.as_ref()?;
        let lines: Vec<MapsLine> = self.of_file(meta, path).cloned().collect();
        lines.iter().try_for_each(|l| self.mark_present(l, bits))
    }

    /// Files this process maps (one path per inode, pseudo files skipped), inside or outside
    /// any folder.
    pub(crate) fn mapped_paths(&self) -> Vec<PathBuf> {
        let mut seen = HashSet::new();
        self.lines
            .iter()
            .filter(|l| seen.insert((l.major, l.minor, l.inode)))
            .filter_map(|l| l.path.as_deref())
            .filter(|p| is_real_file_path(p))
            .map(PathBuf::from)
            .collect()
    }

    /// Set `bits[file_page]` for each page of mapping `l` that is present and a file page.
    fn mark_present(&mut self, l: &MapsLine, bits: &mut [u8]) -> Option<()> {
        let pages = bits.len() as u64;
        let pagemap = self.pagemap.as_ref()?;
        let first_vpage = l.start / self.page;
        let total = (l.end - l.start) / self.page;
        let first_fpage = l.offset / self.page;
        let mut done = 0u64;
        while done < total {
            let n = (total - done).min(PAGEMAP_CHUNK_ENTRIES);
            self.buf.resize(usize::try_from(n * 8).ok()?, 0);
            pagemap
                .read_exact_at(&mut self.buf, (first_vpage + done) * 8)
                .ok()?;
            for (i, entry) in self.buf.chunks_exact(8).enumerate() {
                let e = u64::from_ne_bytes(entry.try_into().ok()?);
                let fpage = first_fpage + done + i as u64;
                if e & PM_PRESENT != 0 && e & PM_FILE != 0 && fpage < pages {
                    bits[usize::try_from(fpage).ok()?] = 1;
                }
            }
            done += n;
        }
        Some(())
    }

    /// Files mapped from outside `root`, one path per inode, sorted; pseudo files skipped.
    fn files_outside(&self, root: &Path) -> Vec<PathBuf> {
        let mut seen = HashSet::new();
        let mut out: Vec<PathBuf> = self
            .lines
            .iter()
            .filter(|l| seen.insert((l.major, l.minor, l.inode)))
            .filter_map(|l| l.path.as_deref())
            .filter(|p| is_real_file_path(p))
            .map(PathBuf::from)
            // Component-wise, like `firefox::install::is_inside`: firefox-esr2 is not inside firefox-esr.
            .filter(|p| !p.starts_with(root))
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// A maps path naming a file one can open: not `[heap]`, not a memfd or SysV segment, not a
/// device, not a file deleted since it was mapped.
fn is_real_file_path(p: &str) -> bool {
    p.starts_with('/')
        && !p.ends_with(" (deleted)")
        && !p.contains("memfd:")
        && !["/dev/", "/proc/", "/sys/"]
            .iter()
            .any(|d| p.starts_with(d))
}

/// `Rss:` in kB per mapping start of a /proc/<pid>/smaps text.
fn parse_smaps_rss(text: &str) -> HashMap<u64, u64> {
    let mut out = HashMap::new();
    let mut current: Option<u64> = None;
    for line in text.lines() {
        if let Some(kb) = line.strip_prefix("Rss:") {
            let kb = kb.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
            if let Some(start) = current {
                *out.entry(start).or_insert(0) += kb;
            }
        } else if let Some(m) = parse_maps_line(line) {
            current = Some(m.start);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pagecache::view::run_lengths;

    #[test]
    fn run_lengths_of_bitmaps() {
        let r = |v: &[u8]| run_lengths(v.iter().map(|b| b & 1 != 0));
        assert_eq!(r(&[]), Vec::<[u64; 2]>::new());
        assert_eq!(r(&[0, 0]), Vec::<[u64; 2]>::new());
        assert_eq!(r(&[1, 1, 1]), [[0, 3]]);
        assert_eq!(r(&[0, 1, 1, 0, 1]), [[1, 2], [4, 1]]);
        // Only bit 0 means resident; mincore may set other bits in future kernels.
        assert_eq!(r(&[2, 3, 0x80]), [[1, 1]]);
    }

    #[test]
    fn encode_keeps_exact_ranges_under_budget() {
        let bits = [1u8, 0, 1, 1, 0, 0, 0, 1];
        assert_eq!(encode(&bits, 10), (vec![[0, 1], [2, 2], [7, 1]], 1));
        assert_eq!(encode(&[], 10), (vec![], 1));
    }

    #[test]
    fn encode_coarsens_to_a_power_of_two() {
        // Every other page resident: n/2 ranges at unit 1, one range at unit 2.
        let bits: Vec<u8> = (0..100_000).map(|i| u8::from(i % 2 == 0)).collect();
        let (ranges, unit) = encode(&bits, MAX_RANGES);
        assert_eq!((ranges, unit), (vec![[0, 50_000]], 2));
        // Sparse pattern: one resident page every 3 pages over 1M pages needs unit 64 or so.
        let bits: Vec<u8> = (0..1_000_000)
            .map(|i| u8::from(i % 3 == 0 && i % 1000 < 500))
            .collect();
        let (ranges, unit) = encode(&bits, MAX_RANGES);
        assert!(ranges.len() <= MAX_RANGES && unit.is_power_of_two() && unit > 1);
        let json = serde_json::to_string(&ranges).unwrap();
        assert!(json.len() <= RANGES_BUDGET_BYTES, "{}", json.len());
        // A unit is resident if any page is: ranges cover every resident page.
        let covered = |page: u64| {
            ranges
                .iter()
                .any(|[s, n]| page / unit >= *s && page / unit < s + n)
        };
        assert!((0..1_000_000u64)
            .filter(|i| bits[*i as usize] == 1)
            .all(covered));
    }

    #[test]
    fn worst_case_fits_budget() {
        // Alternating pages of a 180 MB libxul.so: 22 000 ranges of one page at unit 1.
        let bits: Vec<u8> = (0..45_000).map(|i| u8::from(i % 2 == 0)).collect();
        let (ranges, _) = encode(&bits, MAX_RANGES);
        assert!(serde_json::to_string(&ranges).unwrap().len() <= RANGES_BUDGET_BYTES);
    }

    #[test]
    fn pseudo_paths_are_skipped() {
        assert!(is_real_file_path(
            "/usr/lib/x86_64-linux-gnu/libgtk-3.so.0.2406.32"
        ));
        assert!(is_real_file_path("/usr/share/fonts/a b.ttf"));
        for p in [
            "[heap]",
            "[vdso]",
            "/memfd:mozilla-ipc (deleted)",
            "/dev/dri/renderD128",
            "/tmp/x (deleted)",
            "/SYSV00000000 (deleted)",
            "anon_inode:[perf]",
        ] {
            assert!(!is_real_file_path(p), "{p}");
        }
    }

    #[test]
    fn smaps_rss_per_mapping() {
        let text = "7f00-7f10 r--p 00000000 fe:00 12 /usr/lib/a.so\nSize: 64 kB\nRss:  8 kB\n\
                    Pss: 8 kB\n7f10-7f20 r-xp 00010000 fe:00 12 /usr/lib/a.so\nRss: 12 kB\n";
        let rss = parse_smaps_rss(text);
        assert_eq!(rss.get(&0x7f00), Some(&8));
        assert_eq!(rss.get(&0x7f10), Some(&12));
    }

    #[test]
    fn totals_turn_unknown_with_one_hidden_file() {
        let mut t = GroupTotals::empty();
        let mut exact = FileReport::new(Path::new("/a"), Group::Install);
        exact.status = Status::Exact;
        exact.pages = 10;
        exact.resident_pages = Some(4);
        t.add(&exact);
        assert_eq!((t.resident_pages, t.exact_pages), (Some(4), 4));
        let mut hidden = FileReport::new(Path::new("/b"), Group::Install);
        hidden.status = Status::Hidden;
        t.add(&hidden);
        t.add(&exact);
        assert_eq!(
            (t.resident_pages, t.exact_pages, t.hidden_files),
            (None, 8, 1)
        );
        t.add(&FileReport::new(Path::new("/c"), Group::Install).failed("x".into()));
        assert_eq!((t.files, t.error_files), (4, 1));
    }

    #[test]
    fn own_process_mappings_are_seen_through_pagemap() {
        // This test binary maps itself; its pages of code are present.
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let mut maps = ProcMaps::read(std::process::id() as i32).unwrap();
        let (_, meta) = open_regular(&exe).unwrap();
        let pages = pages_of(meta.len(), maps.page);
        let mapped = maps.mapped(&meta, &exe, pages);
        assert_eq!(mapped.source, "pagemap");
        assert!(mapped.pages > 0 && mapped.pages <= pages, "{mapped:?}");
        assert!(maps.files_outside(Path::new("/nonexistent")).contains(&exe));
    }
}
