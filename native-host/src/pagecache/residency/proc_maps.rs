//! The file mappings of a process and which of their pages it has present: pagemap where it can
//! be read, else the Rss of `/proc/<pid>/smaps`; also the paths it maps (pseudo files skipped).

use crate::os::proc::maps::{parse_maps_line, MapsLine};
use crate::os::{proc, sys};
use crate::pagecache::residency::{Mapped, MAX_RANGES};
use crate::pagecache::view::{count_resident, encode};
use std::collections::{HashMap, HashSet};
use std::fs::{File, Metadata};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst). Bit 61 tells a page of the
/// file (page cache) from an anonymous copy-on-write copy in a private mapping (relocated data),
/// which is not page cache at all. Bit 62 (swapped) is never set for page-cache pages.
const PM_PRESENT: u64 = 1 << 63;
const PM_FILE: u64 = 1 << 61;

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
        // Bytes, not a String: one mapped file whose name is not UTF-8 must not lose them all.
        let text = proc::read_maps(pid).ok()?;
        let lines = text
            .split(|b| *b == b'\n')
            .filter_map(parse_maps_line)
            .filter(|l| l.inode != 0 && l.path.is_some())
            .collect();
        let pagemap = proc::open(pid, "pagemap").ok();
        let rss_kb = if pagemap.is_none() {
            proc::read_lines(pid, "smaps", proc::MAX_SMAPS_BYTES)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
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
        self.lines.iter().filter(move |l| {
            l.inode == ino
                && ((l.major, l.minor) == (major, minor) || l.path.as_deref() == Some(path))
        })
    }

    /// The pages of the file this process has mapped in; with `ranges`, also which ones.
    pub(super) fn mapped(
        &mut self,
        meta: &Metadata,
        path: &Path,
        pages: u64,
        ranges: bool,
    ) -> Mapped {
        let lines: Vec<MapsLine> = self.of_file(meta, path).cloned().collect();
        if self.pagemap.is_some() {
            if let Some(mapped) = self.pagemap_pages(&lines, pages, ranges) {
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
    fn pagemap_pages(&mut self, lines: &[MapsLine], pages: u64, ranges: bool) -> Option<Mapped> {
        let pages_usize = usize::try_from(pages).ok()?;
        let mut bits = std::mem::take(&mut self.bits);
        bits.clear();
        bits.resize(pages_usize, 0);
        let marked = lines
            .iter()
            .try_for_each(|l| self.mark_present(l, &mut bits));
        self.bits = bits;
        marked?;
        let (ranges, unit) = if ranges {
            let (encoded, unit) = encode(&self.bits, MAX_RANGES);
            (Some(encoded), unit)
        } else {
            (None, 1)
        };
        Some(Mapped {
            source: "pagemap",
            pid: self.pid,
            pages: count_resident(&self.bits),
            ranges,
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
            .map(Path::to_path_buf)
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
    pub(super) fn files_outside(&self, root: &Path) -> Vec<PathBuf> {
        let mut seen = HashSet::new();
        let mut out: Vec<PathBuf> = self
            .lines
            .iter()
            .filter(|l| seen.insert((l.major, l.minor, l.inode)))
            .filter_map(|l| l.path.as_deref())
            .filter(|p| is_real_file_path(p))
            .map(Path::to_path_buf)
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
fn is_real_file_path(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let b = p.as_os_str().as_bytes();
    b.starts_with(b"/")
        && !b.ends_with(b" (deleted)")
        && !b.windows(6).any(|w| w == b"memfd:")
        && ![&b"/dev/"[..], b"/proc/", b"/sys/"]
            .iter()
            .any(|d| b.starts_with(d))
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
        } else if let Some(m) = parse_maps_line(line.as_bytes()) {
            current = Some(m.start);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::beneath::Folder;
    use crate::pagecache::view::pages_of;

    #[test]
    fn pseudo_paths_are_skipped() {
        assert!(is_real_file_path(Path::new(
            "/usr/lib/x86_64-linux-gnu/libgtk-3.so.0.2406.32"
        )));
        assert!(is_real_file_path(Path::new("/usr/share/fonts/a b.ttf")));
        for p in [
            "[heap]",
            "[vdso]",
            "/memfd:mozilla-ipc (deleted)",
            "/dev/dri/renderD128",
            "/tmp/x (deleted)",
            "/SYSV00000000 (deleted)",
            "anon_inode:[perf]",
        ] {
            assert!(!is_real_file_path(Path::new(p)), "{p}");
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
    fn own_process_mappings_are_seen_through_pagemap() {
        // This test binary maps itself; its pages of code are present.
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let mut maps = ProcMaps::read(std::process::id() as i32).unwrap();
        let (_, meta) = Folder::open(Path::new("/"))
            .unwrap()
            .open_file(&exe)
            .unwrap();
        let pages = pages_of(meta.len(), maps.page);
        let mapped = maps.mapped(&meta, &exe, pages, true);
        assert_eq!(mapped.source, "pagemap");
        assert!(mapped.pages > 0 && mapped.pages <= pages, "{mapped:?}");
        assert!(mapped.ranges.is_some());
        // Totals only: a count (it may have grown since), no page map.
        let count = maps.mapped(&meta, &exe, pages, false);
        assert!(count.pages > 0 && count.ranges.is_none(), "{count:?}");
        assert!(maps.files_outside(Path::new("/nonexistent")).contains(&exe));
    }
}
