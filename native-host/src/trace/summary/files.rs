//! The per-file table and the agreement line: what each file gave the start, and how the
//! trace's bytes compare with the kernel's own count of the tree (`/proc/<pid>/io` read_bytes).

use serde::Serialize;

use crate::firefox::profile_parts::Part;
use crate::trace::model::{EntryRead, Trace};

/// Traced bytes against the tree's `read_bytes`, and what a reader must weigh them with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    pub traced_bytes: u64,
    /// `/proc` read_bytes of the tree; `None` where unknown (or 0: nothing to compare with).
    pub tree_read_bytes: Option<u64>,
    /// traced / tree, where both are known.
    pub ratio: Option<f64>,
    pub lost_events: u64,
    /// Bytes that entered the cache because the start wrote them (not disk reads).
    pub written_bytes: u64,
    /// Files read from disk (written ones left out).
    pub read_files: usize,
}

/// The agreement of `t`.
#[must_use]
pub fn agreement(t: &Trace) -> Agreement {
    let tree = t.tree_read_bytes.filter(|b| *b > 0);
    Agreement {
        traced_bytes: t.traced_read_bytes,
        tree_read_bytes: tree,
        #[allow(clippy::cast_precision_loss)] // a ratio of byte counts
        ratio: tree.map(|tree| t.traced_read_bytes as f64 / tree as f64),
        lost_events: t.lost_events,
        written_bytes: t.written_bytes,
        read_files: t.files.iter().filter(|f| !f.written).count(),
    }
}

/// One row of the per-file table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileRow {
    /// The file's index in the trace's `files` (what reads point at).
    pub index: u32,
    pub path: String,
    pub bytes_read: u64,
    /// Of the file's size, where known, at most 1.
    pub share: Option<f64>,
    pub requests: u64,
    pub first_ms: f64,
    pub last_ms: f64,
    /// Created or written during the start: its pages are not disk reads.
    pub written: bool,
    /// The profile's part it belongs to, for a file of the start's profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<Part>,
    /// For a zip archive (omni.ja): the entries its reads covered, most read first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries: Option<Entries>,
}

/// An archive's entries: how many its reads covered, and the most read of them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entries {
    pub count: usize,
    pub rows: Vec<EntryRow>,
}

/// One entry of an archive, as the page and the CLI show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntryRow {
    /// The archive, as [`short_name`] names it: "omni.ja", "browser/omni.ja".
    pub archive: String,
    pub name: String,
    pub bytes_read: u64,
    pub size: u64,
    pub first_ms: f64,
    /// The module Firefox evaluated from it then, and when (its own profile's markers).
    pub module: Option<String>,
    pub module_ms: Option<f64>,
}

/// How many entries an archive's row carries (the rest are counted).
pub const ENTRY_ROWS: usize = 100;

/// The entries of `entries` (one archive's), most read first, at most `limit`.
#[must_use]
pub fn entry_rows(archive: &str, entries: &[EntryRead], limit: usize) -> Vec<EntryRow> {
    let mut sorted: Vec<&EntryRead> = entries.iter().collect();
    sorted.sort_by(|a, b| b.bytes_read.cmp(&a.bytes_read).then(a.name.cmp(&b.name)));
    sorted
        .into_iter()
        .take(limit)
        .map(|e| EntryRow {
            archive: archive.to_owned(),
            name: e.name.clone(),
            bytes_read: e.bytes_read,
            size: e.len,
            first_ms: e.first_ms,
            module: e.module.clone(),
            module_ms: e.module_ms,
        })
        .collect()
}

/// A file as a person tells it apart: inside the install folder its path there ("omni.ja",
/// "browser/omni.ja"), else its whole path.
#[must_use]
pub fn short_name(path: &str, install_dir: &str) -> String {
    if install_dir.is_empty() {
        return path.to_owned();
    }
    path.strip_prefix(install_dir)
        .and_then(|p| p.strip_prefix('/'))
        .filter(|p| !p.is_empty())
        .unwrap_or(path)
        .to_owned()
}

/// Every file of `t`, by bytes read (most first, then by path); `parts[i]` is file `i`'s
/// profile part.
#[must_use]
pub fn file_rows(t: &Trace, parts: &[Option<Part>]) -> Vec<FileRow> {
    let mut rows: Vec<FileRow> = t
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| FileRow {
            index: u32::try_from(i).unwrap_or(u32::MAX),
            path: f.path.clone(),
            bytes_read: f.bytes_read,
            #[allow(clippy::cast_precision_loss)] // a share of the file
            share: f
                .size
                .filter(|s| *s > 0)
                .map(|s| (f.bytes_read as f64 / s as f64).min(1.0)),
            requests: f.requests,
            first_ms: f.first_ms,
            last_ms: f.last_ms,
            written: f.written,
            part: parts.get(i).cloned().flatten(),
            entries: f.entries.as_ref().map(|e| Entries {
                count: e.len(),
                rows: entry_rows(&short_name(&f.path, &t.install_dir), e, ENTRY_ROWS),
            }),
        })
        .collect();
    rows.sort_by(|a, b| b.bytes_read.cmp(&a.bytes_read).then(a.path.cmp(&b.path)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::model::tests::fake;

    #[test]
    fn rows_by_bytes_with_the_share_of_each_file() {
        let t = fake();
        let rows = file_rows(&t, &[]);
        assert_eq!(rows[0].path, "/ff/libxul.so");
        // 12,288 of 40,960 bytes.
        assert_eq!(rows[0].share, Some(0.3));
        assert_eq!(
            rows.iter().find(|r| r.path == "/ff/omni.ja").unwrap().share,
            None,
            "size unknown"
        );
        assert!(rows.iter().any(|r| r.written));
        assert_eq!(rows[0].index, 0);
    }

    #[test]
    fn agreement_is_traced_over_tree() {
        let mut t = fake();
        t.tree_read_bytes = Some(20480);
        let a = agreement(&t);
        assert_eq!(a.ratio, Some(0.8));
        assert_eq!(a.read_files, 2);
        t.tree_read_bytes = Some(0);
        assert_eq!(
            agreement(&t).ratio,
            None,
            "nothing to compare with is not 0% or infinite"
        );
    }

    #[test]
    fn names_inside_the_install_are_relative() {
        assert_eq!(
            short_name("/opt/ff/browser/omni.ja", "/opt/ff"),
            "browser/omni.ja"
        );
        assert_eq!(
            short_name("/opt/ffx/omni.ja", "/opt/ff"),
            "/opt/ffx/omni.ja"
        );
        assert_eq!(
            short_name("/usr/lib/x86_64-linux-gnu/libc.so.6", "/opt/ff"),
            "/usr/lib/x86_64-linux-gnu/libc.so.6"
        );
        assert_eq!(short_name("/a", ""), "/a");
    }
}
