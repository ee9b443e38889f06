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
                module: None,
                module_ms: None,
            });
            slot.bytes_read += end.saturating_sub(start);
            slot.first_ms = slot.first_ms.min(e.t);
            at = end.max(at + 1);
        }
    }
    let mut read: Vec<EntryRead> = out.into_iter().flatten().collect();
    read.sort_by(|a, b| {
        b.bytes_read
            .cmp(&a.bytes_read)
            .then(a.offset.cmp(&b.offset))
    });
    read
}

/// The entries of archive `files[f]`, open as `file`, that `events` covered (bounded parse).
pub fn of_archive(
    f: u32,
    events: &[Read],
    file: &std::fs::File,
) -> Result<Vec<EntryRead>, crate::firefox::omni::ZipError> {
    crate::firefox::omni::entries_of(file).map(|entries| entries_read(f, events, &entries))
}

/// The entry name a module URL is loaded from in the archive `archive` (its path inside the
/// install folder: `omni.ja` or `browser/omni.ja`): `resource://gre/X` is the GRE archive's `X`,
/// `resource:///X` and `resource://app/X` the browser archive's; other URLs (chrome://,
/// moz-src:///, other resource hosts) by the end of the entry's name: their last two path
/// components, or for `chrome://PKG/content/X` the packed `content/PKG/X`.
#[must_use]
pub fn candidates(url: &str, archive: &str) -> (Option<String>, String) {
    let exact = if archive == "omni.ja" {
        url.strip_prefix("resource://gre/")
    } else {
        url.strip_prefix("resource:///")
            .or_else(|| url.strip_prefix("resource://app/"))
    };
    // chrome://PKG/content/X is packed as …/content/PKG/X.
    if let Some((pkg, rest)) = url
        .strip_prefix("chrome://")
        .and_then(|r| r.split_once("/content/"))
    {
        return (exact.map(str::to_owned), format!("content/{pkg}/{rest}"));
    }
    let path = url.split_once("://").map_or(url, |(_, rest)| rest);
    let parts: Vec<&str> = path.rsplit('/').take(2).collect();
    let tail = parts.into_iter().rev().collect::<Vec<_>>().join("/");
    (exact.map(str::to_owned), tail)
}

/// Line the entries read up with the module loads of Firefox's own profile (`loads`: URL and ms
/// since the process start, in time order): each entry gets the first module loaded from it.
pub fn line_up(files: &mut [FileEntry], install_dir: &str, loads: &[(String, f64)]) {
    for file in files.iter_mut() {
        let archive = file
            .path
            .strip_prefix(install_dir)
            .map_or(file.path.as_str(), |p| p.trim_start_matches('/'))
            .to_owned();
        let Some(entries) = file.entries.as_mut() else {
            continue;
        };
        for (url, t) in loads {
            let (exact, tail) = candidates(url, &archive);
            let hit = entries.iter_mut().find(|e| match &exact {
                Some(name) => &e.name == name,
                None => e.name == tail || e.name.ends_with(&format!("/{tail}")),
            });
            if let Some(e) = hit.filter(|e| e.module.is_none()) {
                e.module = Some(url.clone());
                e.module_ms = Some(*t);
            }
        }
    }
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
        let data = zip(&[
            ("a.js", &[1; 4000]),
            ("big.bin", &[2; 3 * 4096]),
            ("c.js", b"c"),
        ]);
        let e = entries(&data).unwrap();
        let events = [read(5.0, 0, 0, 1), read(9.0, 0, 3, 1), read(1.0, 1, 0, 9)];
        let got = entries_read(0, &events, &e);
        let names: Vec<_> = got
            .iter()
            .map(|r| (r.name.as_str(), r.bytes_read))
            .collect();
        // Page 0: a.js whole (4034 bytes) and the first 62 of big.bin (4034..16359); page 3
        // (12288..16384): big.bin's last 4071 bytes and the first 25 of c.js.
        assert_eq!((e[0].span, e[1].offset + e[1].span), (4034, 16359));
        assert_eq!(
            names,
            [("big.bin", 62 + 4071), ("a.js", 4034), ("c.js", 25)]
        );
        assert!((got.iter().find(|r| r.name == "big.bin").unwrap().first_ms - 5.0).abs() < 1e-9);
        assert!((got[2].first_ms - 9.0).abs() < 1e-9);
        // Another file's reads do not count.
        assert!(entries_read(2, &events, &e).is_empty());
    }

    #[test]
    fn module_loads_are_lined_up_with_the_entries_read() {
        let entry = |name: &str| EntryRead {
            name: name.into(),
            offset: 0,
            len: 1,
            bytes_read: 1,
            first_ms: 1.0,
            module: None,
            module_ms: None,
        };
        let mut files = vec![
            FileEntry {
                entries: Some(vec![entry("modules/AppConstants.sys.mjs")]),
                ..crate::trace::model::tests::fake().files[2].clone()
            },
            FileEntry {
                path: "/ff/browser/omni.ja".into(),
                entries: Some(vec![
                    entry("modules/sessionstore/SessionStartup.sys.mjs"),
                    entry("chrome/browser/content/browser/browser.js"),
                ]),
                ..crate::trace::model::tests::fake().files[2].clone()
            },
        ];
        let loads = [
            (
                "resource://gre/modules/AppConstants.sys.mjs".to_owned(),
                5.0,
            ),
            (
                "resource:///modules/sessionstore/SessionStartup.sys.mjs".to_owned(),
                7.0,
            ),
            (
                "resource://gre/modules/AppConstants.sys.mjs".to_owned(),
                9.0,
            ),
            ("chrome://browser/content/browser.js".to_owned(), 11.0),
        ];
        line_up(&mut files, "/ff", &loads);
        let got = |f: usize, i: usize| {
            let e = &files[f].entries.as_ref().unwrap()[i];
            (e.module.clone(), e.module_ms)
        };
        assert_eq!(
            got(0, 0),
            (Some(loads[0].0.clone()), Some(5.0)),
            "the first load counts"
        );
        assert_eq!(got(1, 0), (Some(loads[1].0.clone()), Some(7.0)));
        // chrome://browser/content/browser.js: packed as …/content/browser/browser.js.
        assert_eq!(got(1, 1), (Some(loads[3].0.clone()), Some(11.0)));
    }

    #[test]
    fn only_archives() {
        assert!(is_archive("/usr/lib/firefox-esr/browser/omni.ja"));
        assert!(!is_archive("/usr/lib/firefox-esr/libxul.so"));
    }
}
