//! What a residency scan reports: per file (status, resident pages, what Firefox maps) and per group, and what this user may see (capabilities).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::os::sys;
use crate::pagecache::problem::Problem;

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
    #[serde(flatten, with = "crate::path_text::path")]
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
    /// `status: "error"`: what went wrong (`error`, `error_code`, `error_params` on the wire);
    /// boxed, so a `file` event stays small beside the other events.
    #[serde(flatten)]
    pub problem: Option<Box<Problem>>,
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
    /// The resident pages of the exact files: the same number as `exact_resident_pages`, under
    /// the name protocol 1 shipped with. Kept for older extensions; its name reads like a total,
    /// which it is not (issue 19: a popup divided by it as if it were).
    pub exact_pages: u64,
    pub mapped_pages: u64,
    /// Pages of the exact files that are in the page cache.
    pub exact_resident_pages: u64,
    /// All pages of the exact files, cached or not.
    pub exact_total_pages: u64,
    /// Bytes of the exact files in the page cache: each file's resident pages × page size, at
    /// most its size (the last page reaches past the end of the file). "MB cached" everywhere.
    pub exact_cached_bytes: u64,
    /// Size in bytes of the exact files: what `exact_cached_bytes` is a share of.
    pub exact_size: u64,
}

/// The final reply of `residency`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    #[serde(flatten, with = "crate::path_text::install_dir")]
    pub install_dir: PathBuf,
    pub page_size: u64,
    pub groups: std::collections::BTreeMap<&'static str, GroupTotals>,
    pub elapsed_ms: u64,
}

/// Why a file is `hidden` (docs/PROTOCOL.md).
pub const HIDDEN_REASON: &str = crate::note::HIDDEN_NOT_OWNER_EN;

/// A file's ranges must fit its share of the 1 MiB frame: 256 KiB of JSON, at about 20 bytes
/// per `[first, count],` pair, is ~13 000 ranges.
const RANGES_BUDGET_BYTES: usize = 256 * 1024;
const BYTES_PER_RANGE: usize = 20;
pub(crate) const MAX_RANGES: usize = RANGES_BUDGET_BYTES / BYTES_PER_RANGE;

impl GroupTotals {
    pub(super) fn empty() -> Self {
        Self {
            resident_pages: Some(0),
            ..Self::default()
        }
    }

    pub(super) fn add(&mut self, r: &FileReport, page_size: u64) {
        self.files += 1;
        self.size += r.size;
        self.pages += r.pages;
        match r.status {
            Status::Exact => {
                let resident = r.resident_pages.unwrap_or(0);
                self.exact_files += 1;
                self.exact_pages += resident;
                self.exact_resident_pages += resident;
                self.exact_total_pages += r.pages;
                self.exact_cached_bytes += cached_bytes(resident, page_size, r.size);
                self.exact_size += r.size;
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

/// Bytes of a file in the page cache: `resident` pages of `page_size`, at most `size` (the last
/// page reaches past the end of the file). The one rule for "MB cached" (the extension's
/// lib/models/residency.js applies the same to a file's own figures).
#[must_use]
pub fn cached_bytes(resident: u64, page_size: u64, size: u64) -> u64 {
    resident.saturating_mul(page_size).min(size)
}

impl FileReport {
    pub(super) fn new(path: &Path, group: Group) -> Self {
        Self {
            path: path.to_path_buf(),
            group,
            size: 0,
            pages: 0,
            status: Status::Error,
            hidden_reason: None,
            hidden_code: None,
            problem: None,
            resident_pages: None,
            resident_ranges: None,
            range_unit_pages: 1,
            mapped: None,
        }
    }

    pub(super) fn failed(mut self, why: Problem) -> Self {
        self.status = Status::Error;
        self.problem = Some(Box::new(why));
        self.hidden_reason = None;
        self.hidden_code = None;
        self.resident_pages = None;
        self.resident_ranges = None;
        self
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;
    use crate::pagecache::view::{encode, run_lengths};

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
    fn totals_turn_unknown_with_one_hidden_file() {
        let mut t = GroupTotals::empty();
        let mut exact = FileReport::new(Path::new("/a"), Group::Install);
        exact.status = Status::Exact;
        exact.pages = 10;
        exact.size = 10 * 4096 - 100;
        exact.resident_pages = Some(4);
        t.add(&exact, 4096);
        assert_eq!((t.resident_pages, t.exact_pages), (Some(4), 4));
        let mut hidden = FileReport::new(Path::new("/b"), Group::Install);
        hidden.status = Status::Hidden;
        t.add(&hidden, 4096);
        t.add(&exact, 4096);
        assert_eq!(
            (t.resident_pages, t.exact_pages, t.hidden_files),
            (None, 8, 1)
        );
        t.add(
            &FileReport::new(Path::new("/c"), Group::Install).failed(Problem::new(
                crate::pagecache::problem::FileErrorCode::Changed,
                "x",
            )),
            4096,
        );
        assert_eq!((t.files, t.error_files), (4, 1));
    }

    #[test]
    fn totals_name_resident_and_total_pages_apart() {
        // Issue 19: `exact_pages` counts resident pages; the named fields say which is which.
        let mut t = GroupTotals::empty();
        let mut part = FileReport::new(Path::new("/a"), Group::Install);
        part.status = Status::Exact;
        (part.pages, part.size, part.resident_pages) = (10, 10 * 4096, Some(4));
        // A small file, all cached: its last page reaches past its 5000 bytes.
        let mut small = FileReport::new(Path::new("/b"), Group::Install);
        small.status = Status::Exact;
        (small.pages, small.size, small.resident_pages) = (2, 5000, Some(2));
        t.add(&part, 4096);
        t.add(&small, 4096);
        assert_eq!(t.exact_resident_pages, 6);
        assert_eq!(
            t.exact_pages, t.exact_resident_pages,
            "the old name keeps its value"
        );
        assert_eq!(t.exact_total_pages, 12);
        assert_eq!(t.exact_size, 10 * 4096 + 5000);
        assert_eq!(
            t.exact_cached_bytes,
            4 * 4096 + 5000,
            "capped at each file's size"
        );
        let mut hidden = FileReport::new(Path::new("/c"), Group::Install);
        hidden.status = Status::Hidden;
        (hidden.pages, hidden.size) = (7, 7 * 4096);
        t.add(&hidden, 4096);
        assert_eq!(
            (t.exact_total_pages, t.exact_size),
            (12, 10 * 4096 + 5000),
            "hidden files are not exact"
        );
        assert_eq!(t.pages, 19);
    }

    #[test]
    fn a_failed_file_carries_the_english_the_code_and_its_params() {
        let denied = FileReport::new(Path::new("/i/libxul.so"), Group::Install)
            .failed(Problem::open(&io::Error::from_raw_os_error(13)));
        let wire = serde_json::to_value(&denied).unwrap();
        assert_eq!(wire["status"], "error");
        assert_eq!(wire["error_code"], "open_failed");
        assert_eq!(wire["error_params"]["os_error"], 13);
        assert!(wire["error"].as_str().unwrap().starts_with("cannot open: "));
        let fine =
            serde_json::to_value(FileReport::new(Path::new("/i/a"), Group::Install)).unwrap();
        assert!(
            fine.get("error").is_none() && fine.get("error_code").is_none(),
            "{fine}"
        );
    }
}
