//! Firefox's own startup profile beside a recorded start (issue 21), as the user: collect it
//! from the running Firefox without quitting ([`collect`]: milestones and module loads go into
//! the trace), keep it with the stored trace and write the merged profile ([`store`]), and write
//! a profile to a file the user names ([`write_out`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::Value;

use crate::export::{self, Exported};
use crate::firefox::startup_profile::{self, ProfileError};
use crate::note::{self, Note};
use crate::trace::model::Trace;
use crate::trace::{entries, profiles, store as traces};

/// The startup milestones Firefox's profile marks by name (Services.startup.getStartupInfo()'s
/// keys on ESR 153, and the older `firstPaint`).
pub const MILESTONES: [&str; 11] = [
    "main",
    "selectProfile",
    "afterProfileLocked",
    "startupCrashDetectionBegin",
    "createTopLevelWindow",
    "sessionRestoreInit",
    "firstPaint",
    "firstPaint2",
    "sessionRestored",
    "startupCrashDetectionEnd",
    "delayedStartupFinished",
];

fn add_note(trace: &mut Trace, n: Note) {
    eprintln!("about-startup-host: warning: {}", n.english());
    trace.notes.push(n.english());
    trace.note_codes.push(n);
}

/// After the start of Firefox `trace.pid` (this user's) was recorded: collect its profile,
/// learn milestones and module loads into `trace`. A profile that cannot be had becomes a note
/// on the trace (which stands alone then).
pub fn collect(trace: &mut Trace) -> Option<Value> {
    let uid = crate::os::sys::geteuid();
    let home = crate::state::home().unwrap_or_default();
    eprintln!(
        "asking Firefox (pid {}) for its startup profile (SIGUSR2)…",
        trace.pid
    );
    let got = startup_profile::request(trace.pid, &home, startup_profile::WAIT).and_then(|path| {
        let v = startup_profile::read(&path, uid, startup_profile::MAX_BYTES);
        if let Err(e) = startup_profile::remove(&path, uid) {
            eprintln!("about-startup-host: warning: {e}");
        }
        v
    });
    let gecko = match got {
        Ok(g) => g,
        Err(e) => {
            let reason = match e {
                ProfileError::Gone { .. } => "gone",
                ProfileError::NotWritten { .. } => "not_written",
                ProfileError::Truncated { .. } => "truncated",
                ProfileError::Refused { .. } => "refused",
                ProfileError::Io { .. } => "io",
            };
            add_note(
                trace,
                Note::new(note::FIREFOX_PROFILE_MISSING)
                    .with("reason", reason)
                    .with("detail", e.to_string()),
            );
            return None;
        }
    };
    if let Err(e) = export::gecko::check(&gecko, trace) {
        add_note(
            trace,
            Note::new(note::FIREFOX_PROFILE_MISSING)
                .with("reason", "clock")
                .with("detail", e.to_string()),
        );
        return None;
    }
    if let Some(zero) = trace.zero_mono_ns {
        let ms = export::gecko::milestones(&gecko, zero, &MILESTONES);
        if ms.contains_key("sessionRestored") {
            trace.session_restored_reached = Some(true);
        }
        if !ms.is_empty() {
            // Firefox's own profile is the finer source: its figures win over the extension's.
            trace
                .milestones
                .get_or_insert_with(Default::default)
                .extend(ms);
        }
        let loads = export::gecko::module_loads(&gecko, zero);
        let install = trace.install_dir.clone();
        entries::line_up(&mut trace.files, &install, &loads);
    }
    Some(gecko)
}

/// Write the profile to `out` (`-`: stdout): a new uniquely named file beside it (O_EXCL, never
/// a planted symlink), renamed over `out` (which replaces a symlink there, never follows it).
/// As this process's user: a folder they may not write is refused by the kernel.
pub fn write_out(out: &Path, exported: &Exported) -> anyhow::Result<()> {
    if out == Path::new("-") {
        std::io::stdout().lock().write_all(&exported.json)?;
        return Ok(());
    }
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let write = || -> std::io::Result<()> {
        let mut tmp = tempfile::Builder::new()
            .prefix(".profile-")
            .tempfile_in(dir)?;
        tmp.write_all(&exported.json)?;
        tmp.persist(out).map_err(|e| e.error)?;
        Ok(())
    };
    write().with_context(|| format!("write {}", out.display()))
}

/// What [`store`] wrote.
#[derive(Debug)]
pub struct Stored {
    /// Firefox's own profile, kept beside the trace.
    pub gecko: PathBuf,
    /// The merged profile.
    pub merged: PathBuf,
    pub exported: Exported,
    pub took: std::time::Duration,
}

/// After the trace is stored as `id`: keep Firefox's profile beside it and write the merged
/// profile to `out` (default: the profiles folder).
pub fn store(id: &str, trace: &Trace, gecko: Value, out: Option<&Path>) -> anyhow::Result<Stored> {
    let state = crate::state::open()?;
    let dir = profiles::in_state(&state)?;
    let stored = traces::in_state(&state)?;
    let raw = serde_json::to_vec(&gecko)?;
    profiles::save(&dir, id, &raw, &stored)?;
    drop(raw);
    let started = std::time::Instant::now();
    let exported = export::firefox_profiler(trace, Some(gecko), &BTreeMap::new())?;
    let merged = match out {
        Some(p) => {
            write_out(p, &exported)?;
            p.to_path_buf()
        }
        None => {
            let name = profiles::merged_name(id);
            dir.write(&name, &exported.json)?;
            dir.path_of(&name)
        }
    };
    Ok(Stored {
        gecko: dir.path_of(&profiles::gecko_name(id)),
        merged,
        exported,
        took: started.elapsed(),
    })
}
