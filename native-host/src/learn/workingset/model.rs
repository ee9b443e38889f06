//! The working set's types: what identifies a file, its pages in one start, a start, and the
//! state of kept starts with their merge (union of ranges per file version).

use std::collections::BTreeMap;
use std::fs::Metadata;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::os::beneath::Folders;
use crate::os::sys;

/// The state file's format version; a file of another version is ignored (and replaced).
pub const STATE_VERSION: u32 = 1;
/// Starts kept and merged: enough to cover a start that opened a rarely used dialog or a
/// session with other tabs, few enough that a page no start uses any more soon drops out.
pub const KEEP_STARTS: usize = 5;
/// Install folders whose starts are kept (ESR beside a tarball Nightly, say): more than a person
/// runs, few enough to bound the state file.
pub const KEEP_INSTALLS: usize = 4;
/// The state file's name in the state folder.
pub const STATE_FILE: &str = "working-set.json";

/// What identifies one version of a file: a Firefox update replaces files (new inode, mtime,
/// size), so a recorded range list applies only to the very file it was recorded on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    #[serde(flatten, with = "crate::path_text::path")]
    pub path: PathBuf,
    pub size: u64,
    pub mtime_ns: i64,
    pub ino: u64,
    pub dev: u64,
}

impl Identity {
    #[must_use]
    pub fn of(path: &Path, meta: &Metadata) -> Self {
        Identity {
            path: path.to_path_buf(),
            size: meta.len(),
            mtime_ns: meta.mtime().saturating_mul(1_000_000_000) + meta.mtime_nsec(),
            ino: meta.ino(),
            dev: meta.dev(),
        }
    }

    /// The identity of the file at `path` now (not following a final symlink).
    pub fn current(path: &Path) -> io::Result<Self> {
        let meta = std::fs::symlink_metadata(path)?;
        Ok(Identity::of(path, &meta))
    }

    /// The identity of the file at `path` now, beneath the folder of `folders` that holds it (no
    /// symlink followed at all).
    pub fn current_in(folders: &Folders, path: &Path) -> io::Result<Self> {
        let meta = folders.stat(path)?;
        Ok(Identity::of(path, &meta))
    }
}

/// One file of a start: its identity and the pages the start needed, `[first, count]` in pages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSet {
    #[serde(flatten)]
    pub id: Identity,
    /// Under the install folder (else a system library or font the tree maps).
    pub install: bool,
    /// Whether page-cache residency was unioned in (else pagemap only).
    pub resident: bool,
    pub ranges: Vec<[u64; 2]>,
    /// The pagemap part alone, kept where residency was unioned in (else it is `ranges`): what
    /// the plan would be for a user who cannot see residency (`preload --plan --mapped-only`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapped_ranges: Option<Vec<[u64; 2]>>,
}

impl FileSet {
    #[must_use]
    pub fn pages(&self) -> u64 {
        self.ranges.iter().map(|r| r[1]).sum()
    }

    /// The pages the process tree had mapped.
    #[must_use]
    pub fn mapped(&self) -> &[[u64; 2]] {
        self.mapped_ranges.as_deref().unwrap_or(&self.ranges)
    }
}

/// The record of one start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Start {
    pub at_ms: u64,
    pub pid: i32,
    #[serde(flatten, with = "crate::path_text::install_dir")]
    pub install_dir: PathBuf,
    pub page_size: u64,
    pub files: Vec<FileSet>,
    /// application.ini's BuildID when the start was learned: a plan learned for another build
    /// is stale (learn/plan/status.rs). Absent in starts learned before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_id: Option<String>,
}

/// The state file: `{version: 1, starts: [oldest … newest]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub version: u32,
    pub starts: Vec<Start>,
}

impl Default for State {
    fn default() -> Self {
        State {
            version: STATE_VERSION,
            starts: Vec::new(),
        }
    }
}

impl State {
    /// Add a start, keeping the newest [`KEEP_STARTS`] of its install folder, and the starts of
    /// at most [`KEEP_INSTALLS`] install folders (the least recently learned one goes first).
    /// Starts of different installs are never merged (see [`State::for_install`]): a plan for
    /// one Firefox must not read another's files.
    pub fn push(&mut self, start: Start) {
        let dir = start.install_dir.clone();
        self.starts.push(start);
        let of_dir = self.starts.iter().filter(|s| s.install_dir == dir).count();
        let mut excess = of_dir.saturating_sub(KEEP_STARTS);
        self.starts.retain(|s| {
            let drop = excess > 0 && s.install_dir == dir;
            excess -= usize::from(drop);
            !drop
        });
        loop {
            let mut installs: Vec<&Path> = Vec::new();
            for s in self.starts.iter().rev() {
                if !installs.contains(&s.install_dir.as_path()) {
                    installs.push(&s.install_dir);
                }
            }
            if installs.len() <= KEEP_INSTALLS {
                break;
            }
            let stale = installs[installs.len() - 1].to_path_buf();
            self.starts.retain(|s| s.install_dir != stale);
        }
    }

    /// The starts of one install folder only, as a state of their own.
    #[must_use]
    pub fn for_install(&self, install_dir: &Path) -> State {
        State {
            version: self.version,
            starts: self
                .starts
                .iter()
                .filter(|s| s.install_dir == install_dir)
                .cloned()
                .collect(),
        }
    }

    /// The merged working set: per path, the newest start's identity and the union of the
    /// ranges of every kept start that saw that same identity (older versions of a replaced file
    /// are dropped). Sorted by path.
    #[must_use]
    pub fn merged(&self) -> Vec<FileSet> {
        let mut by_path: BTreeMap<&Path, FileSet> = BTreeMap::new();
        for start in self.starts.iter().rev() {
            for file in &start.files {
                match by_path.get_mut(file.id.path.as_path()) {
                    None => {
                        by_path.insert(&file.id.path, file.clone());
                    }
                    Some(seen) if seen.id == file.id => {
                        if seen.resident || file.resident {
                            seen.mapped_ranges = Some(union(seen.mapped(), file.mapped()));
                        }
                        seen.ranges = union(&seen.ranges, &file.ranges);
                        seen.resident |= file.resident;
                    }
                    Some(_) => {} // an older version of the file: no longer what Firefox reads
                }
            }
        }
        by_path.into_values().collect()
    }

    /// The install folder of the newest start.
    #[must_use]
    pub fn install_dir(&self) -> Option<&Path> {
        self.starts.last().map(|s| s.install_dir.as_path())
    }

    #[must_use]
    pub fn page_size(&self) -> u64 {
        self.starts
            .last()
            .map_or(sys::page_size() as u64, |s| s.page_size)
    }
}

/// Union of two range lists (`[first, count]`), sorted, with overlapping or touching ranges
/// joined. Pure.
#[must_use]
pub fn union(a: &[[u64; 2]], b: &[[u64; 2]]) -> Vec<[u64; 2]> {
    let mut all: Vec<[u64; 2]> = a.iter().chain(b).copied().filter(|r| r[1] > 0).collect();
    all.sort_unstable();
    let mut out: Vec<[u64; 2]> = Vec::with_capacity(all.len());
    for [first, count] in all {
        match out.last_mut() {
            Some(last) if first <= last[0] + last[1] => {
                let end = (last[0] + last[1]).max(first + count);
                last[1] = end - last[0];
            }
            _ => out.push([first, count]),
        }
    }
    out
}

/// Paths of `files` whose identity differs from the file now at that path (or that vanished).
#[must_use]
pub fn changed_files(files: &[FileSet]) -> Vec<PathBuf> {
    files
        .iter()
        .filter(|f| Identity::current(&f.id.path).map_or(true, |now| now != f.id))
        .map(|f| f.id.path.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::workingset::{load, save};
    use crate::state::StateDir;

    fn id(path: &str, ino: u64) -> Identity {
        Identity {
            path: path.into(),
            size: 4096 * 100,
            mtime_ns: 1,
            ino,
            dev: 1,
        }
    }

    fn file(path: &str, ino: u64, ranges: &[[u64; 2]]) -> FileSet {
        FileSet {
            id: id(path, ino),
            install: true,
            resident: false,
            ranges: ranges.to_vec(),
            mapped_ranges: None,
        }
    }

    fn start(at_ms: u64, files: Vec<FileSet>) -> Start {
        Start {
            at_ms,
            pid: 1,
            install_dir: "/ff".into(),
            page_size: 4096,
            files,
            build_id: None,
        }
    }

    #[test]
    fn union_joins_overlapping_and_touching_ranges() {
        assert_eq!(union(&[], &[]), Vec::<[u64; 2]>::new());
        assert_eq!(union(&[[0, 2]], &[[2, 3]]), [[0, 5]]);
        assert_eq!(union(&[[0, 2], [10, 1]], &[[1, 4]]), [[0, 5], [10, 1]]);
        assert_eq!(union(&[[5, 10]], &[[6, 2], [0, 0]]), [[5, 10]]);
        assert_eq!(union(&[[8, 1]], &[[0, 1]]), [[0, 1], [8, 1]]);
    }

    #[test]
    fn merge_unions_starts_and_keeps_five() {
        let mut state = State::default();
        for i in 0..7 {
            state.push(start(i, vec![file("/ff/libxul.so", 1, &[[i * 10, 2]])]));
        }
        assert_eq!(state.starts.len(), KEEP_STARTS);
        assert_eq!(state.starts[0].at_ms, 2, "the oldest were dropped");
        let merged = state.merged();
        assert_eq!(merged.len(), 1);
        assert_eq!(
            merged[0].ranges,
            [[20, 2], [30, 2], [40, 2], [50, 2], [60, 2]]
        );
    }

    #[test]
    fn installs_are_kept_and_merged_apart() {
        let at = |dir: &str, ms: u64, path: &str| Start {
            install_dir: dir.into(),
            ..start(ms, vec![file(path, 1, &[[ms, 1]])])
        };
        let mut state = State::default();
        for i in 0..6 {
            state.push(at("/ff", i, "/ff/libxul.so"));
            state.push(at("/nightly", 100 + i, "/nightly/libxul.so"));
        }
        // Five of each: one install's starts do not push out the other's.
        let ff = state.for_install(Path::new("/ff"));
        let nightly = state.for_install(Path::new("/nightly"));
        assert_eq!(
            (ff.starts.len(), nightly.starts.len()),
            (KEEP_STARTS, KEEP_STARTS)
        );
        let paths = |s: &State| {
            s.merged()
                .into_iter()
                .map(|f| f.id.path)
                .collect::<Vec<_>>()
        };
        assert_eq!(paths(&ff), [PathBuf::from("/ff/libxul.so")]);
        assert_eq!(paths(&nightly), [PathBuf::from("/nightly/libxul.so")]);
        // At most KEEP_INSTALLS installs: the one learned least recently goes.
        for (n, dir) in ["/a", "/b", "/c"].into_iter().enumerate() {
            state.push(at(dir, 1000 + n as u64, &format!("{dir}/libxul.so")));
        }
        assert!(
            state.for_install(Path::new("/ff")).starts.is_empty(),
            "the oldest install dropped"
        );
        assert_eq!(
            state.for_install(Path::new("/nightly")).starts.len(),
            KEEP_STARTS
        );
    }

    #[test]
    fn merge_keeps_the_mapped_part_apart_from_residency() {
        let mut state = State::default();
        let mut cold = file("/ff/libxul.so", 1, &[[0, 100]]);
        cold.resident = true;
        cold.mapped_ranges = Some(vec![[0, 10]]);
        state.push(start(1, vec![cold]));
        state.push(start(2, vec![file("/ff/libxul.so", 1, &[[50, 5]])]));
        let merged = state.merged();
        assert_eq!(merged[0].ranges, [[0, 100]]);
        assert_eq!(merged[0].mapped(), [[0, 10], [50, 5]]);
        assert!(merged[0].resident);
        // Without residency anywhere the mapped part is the ranges themselves.
        let mut plain = State::default();
        plain.push(start(1, vec![file("/ff/a", 1, &[[0, 1]])]));
        plain.push(start(2, vec![file("/ff/a", 1, &[[4, 1]])]));
        assert_eq!(plain.merged()[0].mapped_ranges, None);
        assert_eq!(plain.merged()[0].mapped(), [[0, 1], [4, 1]]);
    }

    #[test]
    fn merge_drops_ranges_of_a_replaced_file() {
        let mut state = State::default();
        state.push(start(1, vec![file("/ff/libxul.so", 1, &[[0, 50]])]));
        state.push(start(
            2,
            vec![
                file("/ff/libxul.so", 2, &[[60, 5]]),
                file("/ff/omni.ja", 3, &[]),
            ],
        ));
        let merged = state.merged();
        assert_eq!(merged.len(), 2);
        assert_eq!(
            (merged[0].id.ino, merged[0].ranges.clone()),
            (2, vec![[60, 5]])
        );
        assert_eq!(merged[1].pages(), 0);
    }

    #[test]
    fn identity_change_is_detected_on_real_files() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, [1u8; 100]).unwrap();
        std::fs::write(&b, [1u8; 100]).unwrap();
        let set = |p: &Path| FileSet {
            id: Identity::current(p).unwrap(),
            install: true,
            resident: false,
            ranges: vec![[0, 1]],
            mapped_ranges: None,
        };
        let files = vec![set(&a), set(&b), {
            let mut gone = set(&a);
            gone.id.path = dir.path().join("gone");
            gone
        }];
        assert_eq!(changed_files(&files[..2]), Vec::<PathBuf>::new());
        // An update replaces the file: new inode (and here a new size).
        std::fs::remove_file(&b).unwrap();
        std::fs::write(&b, [2u8; 200]).unwrap();
        assert_eq!(changed_files(&files), [b, dir.path().join("gone")]);
    }

    #[test]
    fn state_round_trips_and_bad_files_are_empty() {
        let dir = tempfile::tempdir().unwrap();
        let folder = StateDir::create_at(&dir.path().join("sub")).unwrap();
        let path = folder.path_of(STATE_FILE);
        assert_eq!(load(&folder), State::default());
        let mut state = State::default();
        state.push(start(5, vec![file("/ff/a", 1, &[[0, 3]])]));
        save(&folder, &state).unwrap();
        assert_eq!(load(&folder), state);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(r#"{"version":1,"starts":[{"#), "{text}");
        std::fs::write(&path, r#"{"version": 2, "starts": []}"#).unwrap();
        assert_eq!(load(&folder), State::default());
        std::fs::write(&path, "{").unwrap();
        assert_eq!(load(&folder), State::default());
    }
}
