//! Which code and which resources the start read for (issue 21): the faulting instructions the
//! trace names (`code`, each read's `c`) summed into code regions, and the zip entries of
//! omni.ja its reads covered. One home for both: the page, the CLI and the Profiler's export
//! name the same regions the same way.

use std::collections::HashMap;

use serde::Serialize;

use super::files::{entry_rows, short_name, EntryRow};
use crate::trace::code::{block_label, label};
use crate::trace::model::{CodeSite, Read, Trace};

const PAGE: u64 = 4096;

/// The region a fault's code is counted under: its function where the symbol is known, else
/// its library's 64 KiB block (a stripped library has nothing finer), said as such so a block
/// is never taken for an instruction (trace/code.rs `block_label`). `(label, block)`.
#[must_use]
pub fn region(site: &CodeSite) -> (String, bool) {
    if site.symbol.is_some() {
        return (label(site), false);
    }
    (block_label(site, 0x10000), true)
}

/// The code site of read `e`, where the trace has it.
#[must_use]
pub fn site_of<'a>(t: &'a Trace, e: &Read) -> Option<&'a CodeSite> {
    e.c.and_then(|c| t.code.get(c as usize))
}

/// One code region and what its faults read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CodeRow {
    pub label: String,
    /// Counted per 64 KiB block (no symbol).
    pub block: bool,
    pub pages: u64,
    pub bytes: u64,
    pub reads: u64,
    /// The files its faults read, most first: `[name, bytes]` (names as [`short_name`]).
    pub read: Vec<(String, u64)>,
}

/// The code regions whose faults read the most from disk (written files left out: their pages
/// are not reads), at most `limit`; empty where the trace has no fault sites.
#[must_use]
pub fn top_code(t: &Trace, limit: usize) -> Vec<CodeRow> {
    let mut regions: HashMap<String, (CodeRow, HashMap<u32, u64>)> = HashMap::new();
    for e in &t.events {
        let (Some(site), Some(file)) = (site_of(t, e), t.files.get(e.f as usize)) else {
            continue;
        };
        if file.written {
            continue;
        }
        let (label, block) = region(site);
        let (row, files) = regions.entry(label.clone()).or_insert_with(|| {
            (
                CodeRow {
                    label,
                    block,
                    pages: 0,
                    bytes: 0,
                    reads: 0,
                    read: Vec::new(),
                },
                HashMap::new(),
            )
        });
        row.pages += e.n;
        row.bytes += e.n * PAGE;
        row.reads += 1;
        *files.entry(e.f).or_default() += e.n * PAGE;
    }
    let mut rows: Vec<CodeRow> = regions
        .into_values()
        .map(|(mut row, files)| {
            row.read = files
                .into_iter()
                .map(|(f, bytes)| (short_name(&t.files[f as usize].path, &t.install_dir), bytes))
                .collect();
            row.read.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            row
        })
        .collect();
    rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.label.cmp(&b.label)));
    rows.truncate(limit);
    rows
}

/// How many reads carry the instruction that faulted them, and how many were faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Coverage {
    pub with_code: u64,
    pub faults: u64,
}

#[must_use]
pub fn coverage(t: &Trace) -> Coverage {
    Coverage {
        with_code: t.events.iter().filter(|e| e.c.is_some()).count() as u64,
        faults: t.events.iter().filter(|e| e.k == "fault").count() as u64,
    }
}

/// The entries this start read the most, across its archives, at most `limit`.
#[must_use]
pub fn top_entries(t: &Trace, limit: usize) -> Vec<EntryRow> {
    let mut rows: Vec<EntryRow> = t
        .files
        .iter()
        .filter_map(|f| Some((f, f.entries.as_ref()?)))
        .flat_map(|(f, entries)| entry_rows(&short_name(&f.path, &t.install_dir), entries, limit))
        .collect();
    rows.sort_by(|a, b| b.bytes_read.cmp(&a.bytes_read).then(a.name.cmp(&b.name)));
    rows.truncate(limit);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real trace of an ESR 153 cold start, trimmed (tests/fixtures/profiler/).
    fn real() -> Trace {
        serde_json::from_str(include_str!(
            "../../../tests/fixtures/profiler/trace-esr153-cold.json"
        ))
        .unwrap()
    }

    #[test]
    fn a_faulting_instruction_is_its_function_else_its_64_kib_block() {
        let site = |offset, section: Option<&str>, symbol: Option<&str>| CodeSite {
            lib: "/usr/lib/firefox-esr/libxul.so".into(),
            offset,
            address: None,
            section: section.map(Into::into),
            symbol: symbol.map(Into::into),
        };
        // A trace of an older host has no address: the file offset's block, said as such.
        assert_eq!(
            region(&site(66_907_760, Some(".text"), None)),
            (
                "libxul.so file offset 0x3fc0000–0x3fcffff (64 KiB block)".to_owned(),
                true
            )
        );
        // Debian's libxul.so of ESR 153 (readelf -SW): .init at address 0x33640d0, file offset
        // 0x33630d0; a fault in it is counted in the block of its address.
        let init = CodeSite {
            address: Some(0x0336_40d4),
            ..site(0x0336_30d4, Some(".init"), None)
        };
        assert_eq!(
            region(&init),
            (
                "libxul.so 0x3360000–0x336ffff (64 KiB block)".to_owned(),
                true
            )
        );
        assert_eq!(
            region(&site(58_276, Some(".text"), Some("_dl_relocate_object"))),
            ("libxul.so _dl_relocate_object".to_owned(), false)
        );
    }

    #[test]
    fn the_code_that_faulted_in_the_most_from_a_real_start() {
        let t = real();
        let rows = top_code(&t, 10);
        // Two sites with the same symbol are one region: the four reads their faults caused
        // (84, 251, 147 and 1,001 pages in the file's reads).
        assert_eq!(rows[0].label, "ld-linux-x86-64.so.2 memset");
        assert_eq!(rows[0].pages, 84 + 251 + 147 + 1001);
        assert_eq!(rows[0].reads, 4);
        let libs: Vec<&str> = rows[0]
            .read
            .iter()
            .map(|(n, _)| n.rsplit('/').next().unwrap())
            .collect();
        assert_eq!(
            libs,
            [
                "libmozavcodec.so",
                "libfreeblpriv3.so",
                "libmozavutil.so",
                "libsoftokn3.so"
            ]
        );
        assert_eq!(
            rows[1].label,
            "libxul.so file offset 0x3fc0000–0x3fcffff (64 KiB block)"
        );
        assert!(rows[1].block);
        assert_eq!(rows[1].read, [("omni.ja".to_owned(), 694 * 4096)]);
        // Every read with a site, of a file read (not written), is counted once.
        let counted: u64 = top_code(&t, usize::MAX).iter().map(|r| r.reads).sum();
        let with_site = t
            .events
            .iter()
            .filter(|e| e.c.is_some() && !t.files[e.f as usize].written)
            .count();
        assert_eq!(counted, with_site as u64);
        assert_eq!(
            coverage(&t).with_code,
            t.events.iter().filter(|e| e.c.is_some()).count() as u64
        );
    }

    #[test]
    fn no_fault_sites_no_regions() {
        let mut t = real();
        t.code.clear();
        assert!(top_code(&t, 10).is_empty());
        // A `c` past the table (a damaged file) is skipped, not a panic.
        let mut t = real();
        t.code.truncate(1);
        t.events = vec![Read {
            t: 1.0,
            f: 0,
            o: 0,
            n: 1,
            p: 1,
            k: "fault".into(),
            c: Some(9),
        }];
        assert!(top_code(&t, 10).is_empty());
    }

    #[test]
    fn the_entries_read_the_most_across_archives() {
        let t = real();
        let rows = top_entries(&t, 3);
        assert_eq!(rows[0].archive, "omni.ja");
        assert_eq!(rows[0].name, "chrome/pdfjs/content/build/pdf.worker.mjs");
        assert_eq!(rows[0].bytes_read, 2_193_944);
        assert_eq!(rows[0].first_ms, 7770.324);
        assert_eq!(
            rows[0].module, None,
            "this trace was not merged with a Firefox profile"
        );
        assert_eq!(rows[1].name, "modules/translations/cld-worker.js.mem");
    }
}
