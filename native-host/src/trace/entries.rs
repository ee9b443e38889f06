//! Which of omni.ja's entries each start read (issue 21): the reads of a zip archive (a file
//! named `*.ja`) laid over the entries of its central directory (crate::firefox::omni). Pure over
//! the entry list, so the tests feed a small archive.

use super::model::{EntryRead, FileEntry, Read};
use crate::firefox::omni::{entry_at, Entry};

/// Whether `path` is an archive whose entries are worth naming (omni.ja, browser/omni.ja).
#[must_use]
pub fn is_archive(path: &str) -> bool {
    path.ends_with(".ja")
}

/// The entries of file `f` that `events` covered, with the bytes read from each and when the
/// first came in; most bytes first.
#[must_use]
pub fn entries_read(f: u32, events: &[Read], entries: &[Entry]) -> Vec<EntryRead> {
    let mut out: Vec<Option<EntryRead>> = vec![None; entries.len()];
    for e in events.iter().filter(|e| e.f == f) {
        let (from, to) = (e.o * 4096, (e.o + e.n) * 4096);
        let mut at = from;
        while at < to {
            let Some(i) = entry_at(entries, at).or_else(|| {
                // A gap (the local headers' padding, the directory): skip to the next entry.
                let next = entries.partition_point(|x| x.offset <= at);
                entries.get(next).filter(|x| x.offset < to).map(|_| next)
            }) else {
                break;
            };
            let entry = &entries[i];
            let start = at.max(entry.offset);
            let end = to.min(entry.offset + entry.span);
            let slot = out[i].get_or_insert_with(|| EntryRead {
                name: entry.name.clone(),
                offset: entry.offset,
                len: entry.span,
                bytes_read: 0,
                first_ms: e.t,
            });
            slot.bytes_read += end.saturating_sub(start);
            slot.first_ms = slot.first_ms.min(e.t);
            at = end.max(at + 1);
        }
    }
    let mut read: Vec<EntryRead> = out.into_iter().flatten().collect();
    read.sort_by(|a, b| b.bytes_read.cmp(&a.bytes_read).then(a.offset.cmp(&b.offset)));
    read
}

/// Fill `entries` of every archive among `files` from the archive on disk (bounded parse); an
/// archive that cannot be parsed keeps none and is named in the returned list with the reason.
pub fn fill(files: &mut [FileEntry], events: &[Read]) -> Vec<(String, String)> {
    let mut problems = Vec::new();
    for (i, file) in files.iter_mut().enumerate() {
        if !file.resolved || file.written || !is_archive(&file.path) {
            continue;
        }
        match crate::firefox::omni::entries_of(std::path::Path::new(&file.path)) {
            Ok(entries) => {
                let f = u32::try_from(i).unwrap_or(u32::MAX);
                file.entries = Some(entries_read(f, events, &entries));
            }
            Err(e) => problems.push((file.path.clone(), e.to_string())),
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::firefox::omni::{entries, tests::zip};

    fn read(t: f64, f: u32, o: u64, n: u64) -> Read {
        Read {
            t,
            f,
            o,
            n,
            p: 1,
            k: "fault".into(),
            c: None,
        }
    }

    #[test]
    fn reads_are_laid_over_entries() {
        // a.js fills most of page 0, big.bin pages 0..3, c.js the rest.
        let data = zip(&[("a.js", &[1; 4000]), ("big.bin", &[2; 3 * 4096]), ("c.js", b"c")]);
        let e = entries(&data).unwrap();
        let events = [read(5.0, 0, 0, 1), read(9.0, 0, 3, 1), read(1.0, 1, 0, 9)];
        let got = entries_read(0, &events, &e);
        let names: Vec<_> = got.iter().map(|r| (r.name.as_str(), r.bytes_read)).collect();
        // Page 0: a.js whole (4034 bytes) and the first 62 of big.bin (4034..16359); page 3
        // (12288..16384): big.bin's last 4071 bytes and the first 25 of c.js.
        assert_eq!((e[0].span, e[1].offset + e[1].span), (4034, 16359));
        assert_eq!(names, [("big.bin", 62 + 4071), ("a.js", 4034), ("c.js", 25)]);
        assert!((got.iter().find(|r| r.name == "big.bin").unwrap().first_ms - 5.0).abs() < 1e-9);
        assert!((got[2].first_ms - 9.0).abs() < 1e-9);
        // Another file's reads do not count.
        assert!(entries_read(2, &events, &e).is_empty());
    }

    #[test]
    fn only_archives() {
        assert!(is_archive("/usr/lib/firefox-esr/browser/omni.ja"));
        assert!(!is_archive("/usr/lib/firefox-esr/libxul.so"));
    }
}
