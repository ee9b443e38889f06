//! Recording a start's working set from the Firefox process tree (pagemap, and residency after
//! a cold start), and `learn`: record and merge it into the state file.

use crate::learn::workingset::{load_or_set_aside, save, FileSet, Identity, Start, STATE_FILE};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use crate::firefox::{install, process};
use crate::os::beneath::Folder;
use crate::os::sys;
use crate::pagecache::residency::ProcMaps;
use crate::pagecache::view::{pages_of, run_lengths, Viewer};
use crate::state::StateDir;
use crate::Error;

use crate::os::clock::now_ms;

/// A start whose process tree read less than this from storage was warm: the cache's content is
/// not evidence of what it needed (a cold ESR 153 start reads ~270 MB, a hot one a few MB).
/// The figure is the tree's `read_bytes`, which counts every read (the profile's too), not only
/// the install folder's: a gate, not a measurement of the install's coldness.
pub const RESIDENT_EVIDENCE_BYTES: u64 = 32 * 1024 * 1024;

/// Files per source, in the reply of `learn`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Sources {
    /// This start's files: every install file (untouched ones too) and the system files used.
    pub mapped: u64,
    pub resident: u64,
    /// Files with at least one page in the process tree's page tables: what Firefox really
    /// mapped (appended; `mapped` counts the untouched install files too).
    pub mapped_files: u64,
    /// Whether the page cache was used, and if not why, in the words the page shows
    /// (appended): [`ResidentUse`].
    pub resident_use: ResidentUse,
}

/// Whether `learn` used the page cache for this start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResidentUse {
    /// A cold start (the tree read at least [`RESIDENT_EVIDENCE_BYTES`]) with exact residency:
    /// what it brought into the cache was unioned in.
    Used,
    /// The start read less than that from storage: the cache says nothing about what it
    /// needed, so only the mapped pages were learned.
    #[default]
    Warm,
    /// A cold start, but the kernel hides the cache of the install's files from this user.
    Hidden,
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
    /// What a reader must know: a damaged state file set aside before this start was added
    /// (crate::state::aside); empty otherwise (then absent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub note_codes: Vec<crate::note::Note>,
}

/// Record the working set of the start of Firefox `pid` (install folder `install_dir`).
pub fn record(
    pid: i32,
    install_dir: &Path,
    cancel: &AtomicBool,
) -> Result<(Start, ResidentUse), Error> {
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
    let mut hidden = false;
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
        let sees = install && started_cold && viewer.sees(&file, &meta, &path);
        hidden |= install && started_cold && !sees;
        if sees && sys::mincore_file(&file, meta.len(), &mut core).is_ok() {
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
    let used = if !started_cold {
        ResidentUse::Warm
    } else if hidden {
        ResidentUse::Hidden
    } else {
        ResidentUse::Used
    };
    Ok((
        Start {
            at_ms: now_ms(),
            pid,
            install_dir: root,
            page_size: page,
            files: out,
            build_id,
        },
        used,
    ))
}

/// Record the start of `pid` and merge it into the state file in `state`.
pub fn learn(
    pid: i32,
    install_dir: &Path,
    state: &StateDir,
    cancel: &AtomicBool,
) -> Result<LearnSummary, Error> {
    let (start, resident_use) = record(pid, install_dir, cancel)?;
    let sources = Sources {
        mapped: start.files.len() as u64,
        resident: start.files.iter().filter(|f| f.resident).count() as u64,
        mapped_files: start
            .files
            .iter()
            .filter(|f| f.mapped().iter().any(|r| r[1] > 0))
            .count() as u64,
        resident_use,
    };
    let state_file = state.path_of(STATE_FILE);
    let install = start.install_dir.clone();
    let (state, set_aside) = {
        let _lock = state.lock()?;
        // A damaged file is set aside before the new one replaces it: never written over.
        let (mut kept, set_aside) = load_or_set_aside(state);
        kept.push(start);
        save(state, &kept)?;
        (kept.for_install(&install), set_aside)
    };
    let merged = state.merged();
    let pages: u64 = merged.iter().map(FileSet::pages).sum();
    Ok(LearnSummary {
        state_file,
        starts_kept: state.starts.len(),
        files: merged.iter().filter(|f| f.pages() > 0).count() as u64,
        pages,
        bytes: pages * state.page_size(),
        sources,
        note_codes: set_aside.into_iter().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A damaged working-set.json is set aside before `learn` writes the new one, never written
    /// over, and the reply says so (issue 30 #10).
    #[test]
    fn learn_sets_a_damaged_state_file_aside_before_writing_its_own() {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(STATE_FILE), b"{\"starts\": [{\"cut").unwrap();
        let state = StateDir::create_at(dir.path()).unwrap();
        let pid = i32::try_from(std::process::id()).unwrap();
        let summary = learn(pid, exe.parent().unwrap(), &state, &AtomicBool::new(false)).unwrap();
        assert_eq!(summary.starts_kept, 1);
        assert_eq!(summary.note_codes.len(), 1, "{summary:?}");
        let moved = summary.note_codes[0].params["moved_to"].as_str().unwrap();
        assert_eq!(
            std::fs::read(dir.path().join(moved)).unwrap(),
            b"{\"starts\": [{\"cut"
        );
        assert_eq!(crate::learn::workingset::load(&state).starts.len(), 1);
    }

    /// The real thing on a real process: a `sleep` started from a folder of this test's own
    /// (a copy of the system's `sleep` in a temporary "install"), so its executable is mapped,
    /// the record has pages of it, and `learn` writes a state file with them. Not this test
    /// process: its tree read from storage whatever the other tests and the machine made it
    /// read (a build beside it evicts and re-reads), so whether its start counts as warm was
    /// the machine's call. A `sleep`'s tree reads less than [`RESIDENT_EVIDENCE_BYTES`] in
    /// every state of the cache, because every file it maps together is smaller (checked
    /// below): warm, whatever the machine does, and only the mapped pages are learned.
    #[test]
    fn learns_from_a_real_process() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("install");
        std::fs::create_dir(&folder).unwrap();
        let exe = folder.join("sleep");
        let system_sleep = ["/usr/bin/sleep", "/bin/sleep"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("a sleep binary");
        crate::os::test_support::copy_executable(Path::new(system_sleep), &exe);
        let mut child = spawn_copied(&exe);
        let pid = i32::try_from(child.id()).unwrap();
        let state = StateDir::create_at(&dir.path().join("state")).unwrap();
        let learned = learn(pid, &folder, &state, &AtomicBool::new(false));
        // What it maps, while it runs: the bound that makes its start warm in every state.
        let mapped_bytes: u64 = ProcMaps::read(pid)
            .expect("the child's maps")
            .mapped_paths()
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        child.kill().unwrap();
        child.wait().unwrap();
        let summary = learned.unwrap();
        assert!(
            mapped_bytes > 0 && mapped_bytes < RESIDENT_EVIDENCE_BYTES,
            "the child's files ({mapped_bytes} B) cannot add up to a cold start's reads"
        );
        assert_eq!(summary.starts_kept, 1);
        assert!(
            summary.pages > 0 && summary.sources.mapped > 0,
            "{summary:?}"
        );
        assert!(
            summary.sources.mapped_files > 0
                && summary.sources.mapped_files <= summary.sources.mapped
        );
        assert_eq!(summary.sources.resident_use, ResidentUse::Warm);
        assert_eq!(
            summary.state_file,
            dir.path().join("state").join(STATE_FILE)
        );
        let state = crate::learn::workingset::load(&state);
        let merged = state.merged();
        let me = merged
            .iter()
            .find(|f| f.id.path == exe.canonicalize().unwrap())
            .expect("the copied sleep is in the set");
        assert!(me.install && me.pages() > 0);
        assert!(merged.iter().any(|f| !f.install), "libc is mapped");
        // Warm: the pages learned are the mapped ones, not what the cache holds.
        assert!(merged.iter().all(|f| !f.resident), "{merged:?}");
    }

    /// Start `exe` (`sleep 30`, no environment): copied by copy_executable, so no fork of
    /// another test's thread holds it open for writing (ETXTBSY).
    fn spawn_copied(exe: &Path) -> std::process::Child {
        std::process::Command::new(exe)
            .arg("30")
            .env_clear()
            .stdin(std::process::Stdio::null())
            .spawn()
            .unwrap()
    }
}
