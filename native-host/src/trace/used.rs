//! Which of the pages a traced start read from disk were then used: the kernel's per-page flags
//! (`/proc/kpageflags`, root) for the page frames the trace recorded (`pfn=` of
//! `mm_filemap_add_to_page_cache`), read when the recording ends, while Firefox still runs.
//!
//! Checked on this kernel (6.18): a buffered `read()` sets REFERENCED on every page it copies;
//! a page fault maps the page (MMAP) without REFERENCED; unmapping a touched page (a process
//! exiting) sets REFERENCED; a page the kernel's readahead brought in that nobody read or mapped
//! has none of REFERENCED, ACTIVE and MMAP. Fault-around (64 KiB around a fault) maps pages that
//! were already in the cache, so a few untouched neighbours of a fault count as used: the same
//! inflation pagemap has, bounded by the fault-around window. Idle-page tracking would tell
//! touched from mapped, but `/sys/kernel/mm/page_idle` is not built into this kernel.
//!
//! A frame that is no longer a file page (the page was evicted and the frame reused: ANON,
//! BUDDY, SLAB, or absent) is counted as `gone`, never as used.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;

use procfs_core::PhysicalPageFlags as F;

/// Where the flags live (8 bytes per page frame, indexed by pfn).
pub const KPAGEFLAGS: &str = "/proc/kpageflags";

/// One folio the trace saw entering the page cache for a file of the trace (`f` indexes
/// `Trace::files`), `n` pages from page `index`, its first frame `pfn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageIn {
    pub f: u32,
    pub index: u64,
    pub n: u64,
    pub pfn: u64,
}

/// What a frame's flags say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Read or mapped after it came in.
    Used,
    /// Still a file page, never read nor mapped: readahead nobody needed (so far).
    Unused,
    /// Not a file page any more (evicted and reused), or no flags: unknown.
    Gone,
}

/// Classify one frame's flags. Pure.
#[must_use]
pub fn classify(flags: Option<u64>) -> Use {
    let Some(bits) = flags else {
        return Use::Gone;
    };
    let f = F::from_bits_retain(bits);
    if f.intersects(F::ANON | F::BUDDY | F::SLAB | F::NOPAGE | F::PGTABLE | F::OFFLINE)
        || !f.contains(F::UPTODATE)
    {
        return Use::Gone;
    }
    if f.intersects(F::REFERENCED | F::ACTIVE | F::MMAP) {
        Use::Used
    } else {
        Use::Unused
    }
}

/// Per file (index into `Trace::files`): the used page ranges `[first, count]`, sorted and
/// joined; and the page counts by kind. `flags_of(pfn)` reads one frame's flags (the real
/// reader is [`KPageFlags::get`]; tests pass a map). A large folio's flags are its head's.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Classified {
    pub used: HashMap<u32, Vec<[u64; 2]>>,
    pub used_pages: u64,
    pub unused_pages: u64,
    pub gone_pages: u64,
}

/// Classify every page of `pages`. Pure apart from `flags_of`.
pub fn used_ranges(pages: &[PageIn], flags_of: &mut dyn FnMut(u64) -> Option<u64>) -> Classified {
    let mut out = Classified::default();
    let mut per_file: HashMap<u32, Vec<[u64; 2]>> = HashMap::new();
    for p in pages {
        match classify(flags_of(p.pfn)) {
            Use::Used => {
                out.used_pages += p.n;
                per_file.entry(p.f).or_default().push([p.index, p.n]);
            }
            Use::Unused => out.unused_pages += p.n,
            Use::Gone => out.gone_pages += p.n,
        }
    }
    for (f, mut ranges) in per_file {
        out.used.insert(f, join(&mut ranges));
    }
    out
}

/// Whether the dynamic loader writes to the pages of an ELF section of this name: relocated
/// data (`.data.rel.ro` is written once, then made read-only), the GOT, `.data`, the init and
/// fini arrays, `.dynamic`, TLS templates. A page of such a section is read from the file and
/// then copied to a private page on the first write: the page-cache page itself is never
/// mapped nor copied by `read()`, so its flags say "unused" although the start needed it.
/// Seen on ESR 153's libxul.so at 128 KiB readahead: 6.6 MB of `.data.rel.ro` and `.data`
/// read before `main`, none of it "used".
#[must_use]
pub fn written_by_the_loader(section: &str) -> bool {
    section.starts_with(".data")
        || section.starts_with(".tdata")
        || matches!(
            section,
            ".got" | ".got.plt" | ".init_array" | ".fini_array" | ".preinit_array" | ".dynamic"
        )
}

/// The pages `[first, count]` (4 KiB, as tracefs counts them) of a file's sections the loader
/// writes to (see [`written_by_the_loader`]), sorted and joined. Pure.
#[must_use]
pub fn loader_written_pages(sections: &[crate::trace::model::Section]) -> Vec<[u64; 2]> {
    let mut ranges: Vec<[u64; 2]> = sections
        .iter()
        .filter(|s| s.size > 0 && written_by_the_loader(&s.name))
        .map(|s| {
            let first = s.offset / 4096;
            [first, (s.offset + s.size).div_ceil(4096) - first]
        })
        .collect();
    join(&mut ranges)
}

/// Sort page ranges and join overlapping or touching ones. Pure.
#[must_use]
pub fn join(ranges: &mut [[u64; 2]]) -> Vec<[u64; 2]> {
    ranges.sort_unstable();
    let mut out: Vec<[u64; 2]> = Vec::new();
    for &[first, count] in ranges.iter() {
        match out.last_mut() {
            Some(last) if first <= last[0] + last[1] => {
                last[1] = (first + count).max(last[0] + last[1]) - last[0];
            }
            _ => out.push([first, count]),
        }
    }
    out
}

/// `/proc/kpageflags`, open once, read frame by frame.
pub struct KPageFlags(File);

impl KPageFlags {
    /// Open the flags file (root only; `EPERM`/`EACCES` otherwise).
    pub fn open() -> std::io::Result<Self> {
        crate::os::proc::open_system("kpageflags").map(KPageFlags)
    }

    /// The flags of frame `pfn`, or `None` past the end or on an error.
    #[must_use]
    pub fn get(&self, pfn: u64) -> Option<u64> {
        let mut b = [0u8; 8];
        let at = pfn.checked_mul(8)?;
        match self.0.read_at(&mut b, at) {
            Ok(8) => Some(u64::from_ne_bytes(b)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE_PAGE: u64 = F::UPTODATE.bits() | F::LRU.bits();

    #[test]
    fn flags_tell_used_unused_and_gone() {
        assert_eq!(classify(Some(FILE_PAGE)), Use::Unused);
        assert_eq!(classify(Some(FILE_PAGE | F::REFERENCED.bits())), Use::Used);
        assert_eq!(classify(Some(FILE_PAGE | F::ACTIVE.bits())), Use::Used);
        assert_eq!(classify(Some(FILE_PAGE | F::MMAP.bits())), Use::Used);
        // Evicted and reused by an anonymous mapping, or free: not this page any more.
        assert_eq!(
            classify(Some(FILE_PAGE | F::ANON.bits() | F::MMAP.bits())),
            Use::Gone
        );
        assert_eq!(classify(Some(F::BUDDY.bits())), Use::Gone);
        assert_eq!(classify(Some(0)), Use::Gone);
        assert_eq!(classify(None), Use::Gone);
    }

    #[test]
    fn used_pages_become_joined_ranges_per_file() {
        let page = |f, index, n, pfn| PageIn { f, index, n, pfn };
        let pages = [
            page(0, 0, 4, 100), // a used folio of 4 pages
            page(0, 4, 1, 104), // readahead, never touched
            page(0, 5, 1, 105), // used: joins nothing (page 4 is between)
            page(0, 6, 2, 106), // used: touches 5
            page(1, 9, 1, 200), // frame reused since
            page(1, 3, 1, 201), // used, other file
        ];
        let flags: HashMap<u64, u64> = [
            (100, FILE_PAGE | F::MMAP.bits()),
            (104, FILE_PAGE),
            (105, FILE_PAGE | F::REFERENCED.bits()),
            (106, FILE_PAGE | F::ACTIVE.bits() | F::REFERENCED.bits()),
            (200, F::ANON.bits() | F::UPTODATE.bits()),
            (201, FILE_PAGE | F::REFERENCED.bits()),
        ]
        .into();
        let mut reads = 0;
        let c = used_ranges(&pages, &mut |pfn| {
            reads += 1;
            flags.get(&pfn).copied()
        });
        assert_eq!(reads, pages.len(), "one lookup per folio (its head)");
        assert_eq!(c.used[&0], [[0, 4], [5, 3]]);
        assert_eq!(c.used[&1], [[3, 1]]);
        assert_eq!((c.used_pages, c.unused_pages, c.gone_pages), (8, 1, 1));
    }

    #[test]
    fn join_merges_overlaps_and_neighbours() {
        assert_eq!(
            join(&mut [[10, 2], [0, 3], [2, 2], [12, 1], [20, 1]]),
            [[0, 4], [10, 3], [20, 1]]
        );
        assert_eq!(join(&mut []), Vec::<[u64; 2]>::new());
    }
}
