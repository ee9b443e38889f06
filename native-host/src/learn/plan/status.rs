//! `plan_status`: what the plan would read, what changed, whether it is stale, what is uncached.

use crate::firefox::install;
use crate::learn::plan::{make, traced_plan, Knobs, PlanSource};
use crate::learn::workingset::{self, Identity};
use crate::os::beneath::Folder;
use crate::os::sys;
use crate::pagecache::view::{pages_of, Viewer};
use crate::state::StateDir;
use crate::trace::plan_source::{self, Pages};
use crate::Error;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// An install file with no page in the cache.
#[derive(Debug, Clone, Serialize)]
pub struct Uncached {
    #[serde(flatten, with = "crate::path_text::path")]
    pub path: PathBuf,
    pub size: u64,
    /// Whether the plan reads it, i.e. the learned starts (or traces) used it: `false` for a file
    /// no start touched (a `vulkantest` probe), which the next start will not read either;
    /// `null` when nothing is learned, so nobody can tell (appended).
    pub planned: Option<bool>,
}

/// `plan_status`'s data (docs/PROTOCOL.md).
#[derive(Debug, Clone, Serialize)]
pub struct PlanStatus {
    pub learned: bool,
    pub starts: usize,
    pub planned_bytes: u64,
    pub planned_files: u64,
    pub install_bytes: u64,
    /// `planned_bytes` split: the part inside the install folder (to set against
    /// `install_bytes`) and the system libraries and fonts outside it.
    pub planned_install_bytes: u64,
    pub planned_system_bytes: u64,
    /// A traced plan: the user's profile in it (its bytes and files, the files Firefox wrote or
    /// replaced since the traces, or why it is left out: learn/plan/profile.rs); `planned_bytes`
    /// is then install + system + `profile.bytes`. Absent for the learned plan (appended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::learn::plan::profile::ProfilePlan>,
    #[serde(flatten, with = "crate::path_text::changed_files")]
    pub changed_files: Vec<PathBuf>,
    /// Changed files left out of `changed_files` to keep the reply bounded.
    #[serde(skip_serializing_if = "crate::pagecache::is_zero")]
    pub changed_files_omitted: u64,
    /// `None` when the kernel hides residency of some install file from this user.
    pub uncached_files: Option<Vec<Uncached>>,
    /// Files left out of `uncached_files` to keep the reply bounded.
    #[serde(skip_serializing_if = "crate::pagecache::is_zero")]
    pub uncached_files_omitted: u64,
    pub autostart: crate::learn::autostart::Status,
    /// Which plan this is (`plan_status`'s `source`).
    pub source: PlanSource,
    /// The install's build now (application.ini's BuildID).
    pub build_id: Option<String>,
    /// The build the newest learned start (or, for a traced source, the newest trace) was of;
    /// `None` where it was not recorded.
    pub learned_build_id: Option<String>,
    /// The plan was learned for another build than the install's now (BuildID differs, or,
    /// for starts without a BuildID, libxul.so is another file): a Firefox update. The learned
    /// plan then reads the changed files whole, and the next start is learned again.
    pub stale: bool,
    /// What a reader must know: `working-set.json` was damaged and set aside by this request, so
    /// nothing is learned, or (a traced source) a stored trace was, so the plan is made without
    /// it (crate::state::aside); absent when empty (appended).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub note_codes: Vec<crate::note::Note>,
}

/// Whether the learned `start` is of another build than `build_id` of the install `root`.
fn start_is_stale(start: &workingset::Start, root: &Path, build_id: Option<&str>) -> bool {
    if let (Some(then), Some(now)) = (start.build_id.as_deref(), build_id) {
        return then != now;
    }
    let libxul = root.join("libxul.so");
    start
        .files
        .iter()
        .find(|f| f.id.path == libxul)
        .is_some_and(|f| Identity::current(&f.id.path).map_or(true, |now| now != f.id))
}

/// What `plan_status` reports for the install folder `install_dir` (the learned plan).
pub fn status(install_dir: &Path, state: &StateDir) -> Result<PlanStatus, Error> {
    status_of(install_dir, state, PlanSource::Learned)
}

/// What `plan_status` reports for the plan of `source`.
pub fn status_of(
    install_dir: &Path,
    state_dir: &StateDir,
    source: PlanSource,
) -> Result<PlanStatus, Error> {
    let root = install_dir
        .canonicalize()
        .map_err(|e| Error::io(format!("cannot resolve {}", install_dir.display()), e))?;
    let (_, build_id) = crate::firefox::app_ini::read(&root);
    // "Learned" and the count of starts are this install's, not another Firefox's.
    let (state, set_aside) = workingset::load_or_set_aside(state_dir);
    let state = state.for_install(&root);
    let mut trace_notes = Vec::new();
    let (plan, learned, starts, learned_build_id, stale) = if source == PlanSource::Learned {
        let newest = state.starts.last();
        (
            make(&state, install_dir)?,
            newest.is_some(),
            state.starts.len(),
            newest.and_then(|s| s.build_id.clone()),
            newest.is_some_and(|s| start_is_stale(s, &root, build_id.as_deref())),
        )
    } else {
        let (traces, notes) =
            plan_source::load_reporting(state_dir, &root, crate::trace::store::MAX_TRACES);
        trace_notes = notes;
        let pages = if source == PlanSource::TraceReads {
            Pages::Read
        } else {
            Pages::Used
        };
        let used = plan_source::of_build(&traces, build_id.as_deref(), pages).len();
        let knobs = Knobs {
            source,
            ..Knobs::default()
        };
        let plan = match traced_plan(install_dir, state_dir, knobs) {
            Ok(plan) => plan,
            // Nothing traced for this build: what the install holds, nothing planned.
            Err(_) => make(&workingset::State::default(), install_dir)?,
        };
        (
            plan,
            used > 0,
            used,
            traces.first().and_then(|(_, t)| t.build_id.clone()),
            plan_source::other_build(&traces, build_id.as_deref()).is_some(),
        )
    };
    Ok(PlanStatus {
        source,
        build_id,
        learned_build_id,
        stale,
        learned,
        starts,
        planned_bytes: if learned { plan.bytes_planned } else { 0 },
        planned_files: if learned { plan.files.len() as u64 } else { 0 },
        install_bytes: plan.bytes_install,
        planned_install_bytes: if learned {
            plan.bytes_planned_install()
        } else {
            0
        },
        profile: if learned { plan.profile.clone() } else { None },
        planned_system_bytes: if learned {
            plan.bytes_planned_system
        } else {
            0
        },
        changed_files: plan.changed,
        changed_files_omitted: 0,
        // The install folder the plan holds open: one descriptor for the whole request.
        uncached_files: plan
            .folders
            .first()
            .and_then(uncached)
            .map(|files| tag_planned(files, learned.then_some(&plan.files[..]))),
        uncached_files_omitted: 0,
        autostart: crate::learn::autostart::status(state_dir),
        note_codes: set_aside.into_iter().chain(trace_notes).collect(),
    })
}

/// Each uncached file marked with whether `planned` (the plan's files, `None` when nothing is
/// learned) reads it.
fn tag_planned(mut files: Vec<Uncached>, planned: Option<&[PathBuf]>) -> Vec<Uncached> {
    for file in &mut files {
        file.planned = planned.map(|p| p.contains(&file.path));
    }
    files
}

/// Install files with no resident page, or `None` if residency of any is hidden.
fn uncached(folder: &Folder) -> Option<Vec<Uncached>> {
    let viewer = Viewer::current();
    let page = sys::page_size() as u64;
    let mut core = Vec::new();
    let mut out = Vec::new();
    for path in install::list_files(folder.path()).ok()? {
        let Ok((file, meta)) = folder.open_file(&path) else {
            continue;
        };
        if !viewer.sees(&file, &meta, &path) {
            return None;
        }
        if meta.len() > 0
            && pages_of(meta.len(), page) > 0
            && sys::mincore_file(&file, meta.len(), &mut core).is_ok()
            && core.iter().all(|b| b & 1 == 0)
        {
            out.push(Uncached {
                path,
                size: meta.len(),
                planned: None,
            });
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncached_files_say_whether_the_plan_reads_them() {
        let file = |p: &str| Uncached {
            path: PathBuf::from(p),
            size: 14_000,
            planned: None,
        };
        let plan = [PathBuf::from("/ff/libxul.so")];
        let tagged = tag_planned(
            vec![file("/ff/libxul.so"), file("/ff/vulkantest")],
            Some(&plan),
        );
        let planned: Vec<_> = tagged.iter().map(|f| f.planned).collect();
        assert_eq!(planned, [Some(true), Some(false)]);
        // Nothing learned: nobody can tell.
        assert_eq!(
            tag_planned(vec![file("/ff/vulkantest")], None)[0].planned,
            None
        );
    }
}
