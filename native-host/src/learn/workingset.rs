//! The working set of a Firefox start: which pages of which files the start needed, recorded from
//! the Firefox process tree, kept for the last [`KEEP_STARTS`] starts and merged (union of page
//! ranges) in `$XDG_STATE_HOME/about-startup/working-set.json`.
//!
//! Two sources, and the reply says which were used:
//! - `mapped`: pages the Firefox processes have present in their page tables (pagemap), which
//!   every user can see for their own processes (residency.rs `ProcMaps`);
//! - `resident`: the page cache itself (mincore), unioned in for install files where residency
//!   is exact (root, or a Firefox the user owns) **and** the start really read from storage.
//!   Firefox `readahead`s whole libraries before loading them, so after a cold start the cache
//!   holds what the start read, mapped or not. After a warm start (a full preload, a hot cache)
//!   residency says nothing about the start: it is ignored, or one full preload would teach the
//!   plan "everything".
//!
//! Each file carries its identity (size, mtime, inode, device): a Firefox update changes it, and
//! the plan falls back to a full read of that file until the next `learn`.

use std::collections::BTreeMap;
use std::fs::Metadata;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::firefox::{install, process};
use crate::pagecache::beneath::{Folder, Folders};
use crate::pagecache::residency::ProcMaps;
use crate::pagecache::sys;
use crate::pagecache::view::{pages_of, run_lengths, Viewer};
use crate::Error;

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
/// A start whose process tree read less than this from storage was warm: the cache's content is
/// not evidence of what it needed (a cold ESR 153 start reads ~270 MB, a hot one a few MB).
/// The figure is the tree's `read_bytes`, which counts every read (the profile's too), not only
/// the install folder's: a gate, not a measurement of the install's coldness.
pub const RESIDENT_EVIDENCE_BYTES: u64 = 32 * 1024 * 1024;

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

/// `$XDG_STATE_HOME/about-startup`, or `~/.local/state/about-startup` (XDG Base Directory:
/// a relative XDG_STATE_HOME is invalid and ignored).
pub fn state_dir() -> Result<PathBuf, Error> {
    let from_xdg = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = match from_xdg {
        Some(p) => p,
        None => home()?.join(".local/state"),
    };
    Ok(base.join("about-startup"))
}

/// `$HOME`, which must be absolute.
pub fn home() -> Result<PathBuf, Error> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .ok_or_else(|| {
            Error::io(
                "HOME is not set to an absolute path; set it (or XDG_STATE_HOME)",
                io::Error::from(io::ErrorKind::NotFound),
            )
        })
}

/// Read the state file; a missing file, another version or a corrupt file is an empty state
/// (the next `learn` starts over), so an old or damaged file never stops a preload.
#[must_use]
pub fn load(path: &Path) -> State {
    std::fs::read(path)
        .map(|bytes| parse_state(&bytes))
        .unwrap_or_default()
}

/// A state file's bytes as a [`State`]: another version or anything that does not parse is an
/// empty state. Pure (the fuzz target `state` drives it).
#[must_use]
pub fn parse_state(bytes: &[u8]) -> State {
    serde_json::from_slice::<State>(bytes)
        .ok()
        .filter(|s| s.version == STATE_VERSION)
        .unwrap_or_default()
}

/// Make the state folder `dir` (0700, parents as needed) and check it is safe to write in:
/// a real folder, not a symlink, and, when this process is root, owned by root: root never
/// writes into a folder another user controls (they could swap files under it).
pub fn ensure_state_dir(dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let context = || format!("cannot use the state folder {}", dir.display());
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io(context(), e))?;
    let meta = std::fs::symlink_metadata(dir).map_err(|e| Error::io(context(), e))?;
    let refuse = |why: String| {
        Err(Error::io(
            context(),
            io::Error::new(io::ErrorKind::PermissionDenied, why),
        ))
    };
    if !meta.is_dir() {
        return refuse("it is a symlink or not a folder; remove it".to_owned());
    }
    let euid = crate::pagecache::sys::geteuid();
    if euid == 0 && meta.uid() != 0 {
        return refuse(format!(
            "it belongs to uid {}, and root uses only state folders root owns (set XDG_STATE_HOME to one)",
            meta.uid()
        ));
    }
    Ok(())
}

/// Write `value` as JSON to `path` atomically: a new temporary file with a unique name
/// (O_EXCL, mode 0600) in the same folder, renamed over `path`. A planted `*.tmp` symlink is
/// never followed, and a reader sees the old file or the new one, never half of one.
pub fn save_json(path: &Path, value: &impl Serialize) -> Result<(), Error> {
    let bytes = serde_json::to_vec(value)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e.into()))?;
    write_private(path, &bytes)
}

/// Write `bytes` to `path` atomically in a folder [`ensure_state_dir`] accepts (see
/// [`save_json`]); also for the autostart entries in the config folder.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let context = || format!("cannot write {}", path.display());
    ensure_state_dir(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".about-startup-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io(context(), e))?;
    io::Write::write_all(&mut tmp, bytes).map_err(|e| Error::io(context(), e))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| Error::io(context(), e))?;
    tmp.persist(path)
        .map_err(|e| Error::io(context(), e.error))?;
    Ok(())
}

/// Run `f` holding the state folder's lock (`flock` on `.lock` in it, opened without following
/// symlinks), so concurrent `learn`s do not lose each other's read-modify-write.
pub fn with_state_lock<T>(dir: &Path, f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    ensure_state_dir(dir)?;
    let path = dir.join(".lock");
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
    crate::pagecache::sys::flock_exclusive(&lock)
        .map_err(|e| Error::io(format!("cannot lock {}", path.display()), e))?;
    f()
}

/// Files per source, in the reply of `learn`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Sources {
    pub mapped: u64,
    pub resident: u64,
}

/// `learn`'s reply (docs/PROTOCOL.md): where the state went and the merged set's size.
#[derive(Debug, Clone, Serialize)]
pub struct LearnSummary {
    #[serde(flatten, with = "crate::path_text::state_file")]
    pub state_file: PathBuf,
    pub starts_kept: usize,
    /// Files of the merged set with at least one page.
    pub files: u64,
    pub pages: u64,
    pub bytes: u64,
    /// This start's files by source: all had pagemap; `resident` of them had mincore too.
    pub sources: Sources,
}

/// Record the working set of the start of Firefox `pid` (install folder `install_dir`).
pub fn record(pid: i32, install_dir: &Path, cancel: &AtomicBool) -> Result<Start, Error> {
    // In host mode this host is a child of Firefox: its own mappings are not Firefox's.
    let me = i32::try_from(std::process::id()).unwrap_or(-1);
    let mut maps: Vec<ProcMaps> = process::process_tree(pid)
        .into_iter()
        .filter(|&p| p != me || p == pid)
        .filter_map(ProcMaps::read)
        .collect();
    if maps.is_empty() {
        return Err(Error::FirefoxNotFound(format!(
            "cannot read the mappings of process {pid} (exited, or another user's)"
        )));
    }
    let started_cold = process::inspect(pid)
        .ok()
        .and_then(|info| info.io.tree_read_bytes)
        .is_some_and(|b| b >= RESIDENT_EVIDENCE_BYTES);
    // Install files are opened beneath the install folder's descriptor, files mapped from
    // elsewhere (real paths from the kernel) beneath `/`; neither way follows a symlink.
    let folder = Folder::open(install_dir)
        .map_err(|e| Error::io(format!("cannot open {}", install_dir.display()), e))?;
    let slash = Folder::open(Path::new("/")).map_err(|e| Error::io("cannot open /", e))?;
    let root = folder.path().to_path_buf();
    let mut paths = install::list_files(&root)?;
    let mut outside: Vec<PathBuf> = maps
        .iter()
        .flat_map(ProcMaps::mapped_paths)
        .filter(|p| !install::is_inside(&root, p))
        .collect();
    outside.sort();
    outside.dedup();
    paths.extend(outside);

    let viewer = Viewer::current();
    let page = sys::page_size() as u64;
    let mut core = Vec::new();
    let mut out = Vec::new();
    for path in paths {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let install = install::is_inside(&root, &path);
        let opened = if install { &folder } else { &slash }.open_file(&path);
        let Ok((file, meta)) = opened else {
            continue; // vanished or unreadable: nothing to preload there either
        };
        let Ok(pages) = usize::try_from(pages_of(meta.len(), page)) else {
            continue;
        };
        let mut bits = vec![0u8; pages];
        for m in &mut maps {
            // A process that exited meanwhile contributes nothing.
            let _ = m.mark_file(&meta, &path, &mut bits);
        }
        let mut resident = false;
        let mut mapped_ranges = None;
        if install
            && started_cold
            && viewer.sees(&file, &meta, &path)
            && sys::mincore_file(&file, meta.len(), &mut core).is_ok()
        {
            mapped_ranges = Some(run_lengths(bits.iter().map(|b| b & 1 != 0)));
            for (b, c) in bits.iter_mut().zip(&core) {
                *b |= c & 1;
            }
            resident = true;
        }
        let ranges = run_lengths(bits.iter().map(|b| b & 1 != 0));
        // Install files are kept even when untouched (the plan then skips them on purpose);
        // system files only when the tree used them.
        if install || !ranges.is_empty() {
            out.push(FileSet {
                id: Identity::of(&path, &meta),
                install,
                resident,
                ranges,
                mapped_ranges,
            });
        }
    }
    let (_, build_id) = crate::firefox::app_ini::read(&root);
    Ok(Start {
        at_ms: now_ms(),
        pid,
        install_dir: root,
        page_size: page,
        files: out,
        build_id,
    })
}

/// Record the start of `pid` and merge it into the state file in `state_dir`.
pub fn learn(
    pid: i32,
    install_dir: &Path,
    state_dir: &Path,
    cancel: &AtomicBool,
) -> Result<LearnSummary, Error> {
    let start = record(pid, install_dir, cancel)?;
    let sources = Sources {
        mapped: start.files.len() as u64,
        resident: start.files.iter().filter(|f| f.resident).count() as u64,
    };
    let state_file = state_dir.join(STATE_FILE);
    let install = start.install_dir.clone();
    let state = with_state_lock(state_dir, || {
        let mut state = load(&state_file);
        state.push(start);
        save_json(&state_file, &state)?;
        Ok(state.for_install(&install))
    })?;
    let merged = state.merged();
    let pages: u64 = merged.iter().map(FileSet::pages).sum();
    Ok(LearnSummary {
        state_file,
        starts_kept: state.starts.len(),
        files: merged.iter().filter(|f| f.pages() > 0).count() as u64,
        pages,
        bytes: pages * state.page_size(),
        sources,
    })
}

/// Milliseconds since the epoch.
#[must_use]
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_json_replaces_the_file_and_leaves_no_temporary_one() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("state/x.json");
        save_json(&path, &serde_json::json!({"n": 1})).unwrap();
        save_json(&path, &serde_json::json!({"n": 2})).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), r#"{"n":2}"#);
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["x.json"]);
    }

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
    fn writes_replace_a_planted_symlink_instead_of_following_it() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        ensure_state_dir(&state).unwrap();
        // What the old code wrote through: the fixed temp name, and the file itself.
        std::os::unix::fs::symlink(&victim, state.join("working-set.json.tmp")).unwrap();
        std::os::unix::fs::symlink(&victim, state.join(STATE_FILE)).unwrap();
        save_json(&state.join(STATE_FILE), &State::default()).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let meta = std::fs::symlink_metadata(state.join(STATE_FILE)).unwrap();
        assert!(meta.is_file(), "the state file is a new regular file");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&state).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    }

    #[test]
    fn a_state_folder_that_is_a_symlink_or_another_users_is_refused_as_root() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = ensure_state_dir(&link).unwrap_err();
        assert!(err.to_string().contains("symlink"), "{err}");
        std::os::unix::fs::chown(&real, Some(65534), Some(65534)).ok();
        let owned_by_other = std::fs::metadata(&real).map(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid() != crate::pagecache::sys::geteuid()
        });
        if crate::pagecache::sys::geteuid() == 0 {
            assert!(owned_by_other.unwrap(), "root could chown it");
            let err = ensure_state_dir(&real).unwrap_err();
            assert!(err.to_string().contains("belongs to uid 65534"), "{err}");
        } else {
            // An ordinary user's own folder is theirs to use.
            ensure_state_dir(&real).unwrap();
        }
    }

    #[test]
    fn concurrent_read_modify_writes_under_the_lock_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().to_path_buf();
        let counter = state.join("count.json");
        save_json(&counter, &0u64).unwrap();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (state, counter) = (state.clone(), counter.clone());
                std::thread::spawn(move || {
                    for _ in 0..25 {
                        with_state_lock(&state, || {
                            let n: u64 =
                                serde_json::from_slice(&std::fs::read(&counter).unwrap()).unwrap();
                            std::thread::yield_now();
                            save_json(&counter, &(n + 1))
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let n: u64 = serde_json::from_slice(&std::fs::read(&counter).unwrap()).unwrap();
        assert_eq!(n, 100);
    }

    #[test]
    fn state_round_trips_and_bad_files_are_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join(STATE_FILE);
        assert_eq!(load(&path), State::default());
        let mut state = State::default();
        state.push(start(5, vec![file("/ff/a", 1, &[[0, 3]])]));
        save_json(&path, &state).unwrap();
        assert_eq!(load(&path), state);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(r#"{"version":1,"starts":[{"#), "{text}");
        std::fs::write(&path, r#"{"version": 2, "starts": []}"#).unwrap();
        assert_eq!(load(&path), State::default());
        std::fs::write(&path, "{").unwrap();
        assert_eq!(load(&path), State::default());
    }

    /// The real thing on this test process's own tree: its executable is mapped, so the record
    /// has pages of it, and `learn` writes a state file with them.
    #[test]
    fn learns_from_a_real_process() {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let folder = exe.parent().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let pid = i32::try_from(std::process::id()).unwrap();
        let summary = learn(pid, folder, dir.path(), &AtomicBool::new(false)).unwrap();
        assert_eq!(summary.starts_kept, 1);
        assert!(
            summary.pages > 0 && summary.sources.mapped > 0,
            "{summary:?}"
        );
        let state = load(&summary.state_file);
        let me = state
            .merged()
            .into_iter()
            .find(|f| f.id.path == exe)
            .expect("the test binary is in the set");
        assert!(me.install && me.pages() > 0);
        assert!(state.merged().iter().any(|f| !f.install), "libc is mapped");
    }
}
