//! The real long commands: confine the requested paths to the install folder, then do the
//! page-cache work of `residency`, `preload` and `evict`, streaming their events.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Context, Emit};
use crate::firefox::install::{self, Install};
use crate::host::protocol::{Command, Event, Reply, ReplyError};
use crate::learn::{plan, workingset};
use crate::pagecache::{evict, preload, residency};
use crate::Error;

/// The real work of `residency`, `preload` and `evict`: confine the paths first, then run. The
/// final reply's lists are bounded ([`Reply::bounded`]) so it always fits a frame.
pub fn run_long(
    ctx: &Context,
    command: &Command,
    cancel: &AtomicBool,
    emit: &mut Emit<'_>,
) -> Result<Reply, ReplyError> {
    run(ctx, command, cancel, emit).map(Reply::bounded)
}

fn run(
    ctx: &Context,
    command: &Command,
    cancel: &AtomicBool,
    emit: &mut Emit<'_>,
) -> Result<Reply, ReplyError> {
    let install = ctx.install()?;
    match command {
        Command::Residency { files, mapped } => {
            let selected = select(install, files.as_deref())?;
            let opts = residency::ScanOptions {
                pid: ctx.firefox_pid,
                include_mapped: mapped.unwrap_or(true),
            };
            let mut on_file = |report: &residency::FileReport| emit(Event::File(report.clone()));
            let summary = residency::scan(&install.dir, &selected, &opts, cancel, &mut on_file)?;
            Ok(Reply::Residency(summary))
        }
        Command::Preload {
            files,
            idle,
            method,
            jobs,
            plan,
            source,
            gap_kib,
        } => {
            let mut on_progress =
                |progress: &preload::Progress| emit(Event::Progress(progress.clone()));
            if plan.unwrap_or(false) {
                // The plan covers the whole folder (and the system files it learned).
                if files.is_some() {
                    return Err(ReplyError::bad_request(
                        "\"files\" and \"plan\": true do not go together; the plan chooses the files",
                    ));
                }
                let state_dir = workingset::state_dir()?;
                let summary = plan::preload_planned(
                    &install.dir,
                    &state_dir,
                    idle.unwrap_or(false),
                    plan::Knobs {
                        source: source.unwrap_or_default(),
                        gap: gap_kib.map(|k| k.saturating_mul(1024)),
                        ..plan::Knobs::default()
                    },
                    cancel,
                    &mut on_progress,
                )?;
                return Ok(Reply::Preload(summary));
            }
            let selected = select(install, files.as_deref())?;
            let opts = preload::Options {
                method: method.unwrap_or_default(),
                idle: idle.unwrap_or(false),
                jobs: *jobs,
            };
            let summary = preload::preload(&selected, &opts, cancel, &mut on_progress)?;
            Ok(Reply::Preload(summary))
        }
        Command::Evict { files } => {
            let selected = select(install, files.as_deref())?;
            // evict() cannot be interrupted; honour a cancel that came before it started.
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Cancelled.into());
            }
            Ok(Reply::Evict(evict::evict(&selected)))
        }
        Command::Learn => {
            let pid = ctx
                .firefox_pid
                .ok_or_else(|| Error::FirefoxNotFound("no parent Firefox".into()))?;
            let state_dir = workingset::state_dir()?;
            // The extension sends `learn` once it recorded this start: a traced launch stops there.
            crate::trace::store::mark_recorded(&state_dir, pid);
            let summary = workingset::learn(pid, &install.dir, &state_dir, cancel)?;
            Ok(Reply::Learn(summary))
        }
        Command::PlanStatus { source } => {
            let state_dir = workingset::state_dir()?;
            Ok(Reply::PlanStatus(Box::new(plan::status_of(
                &install.dir,
                &state_dir,
                source.unwrap_or_default(),
            )?)))
        }
        Command::Hello
        | Command::Firefox
        | Command::Cancel { .. }
        | Command::BenchRecord { .. }
        | Command::TraceList
        | Command::TraceFetch { .. }
        | Command::Unknown => Err(ReplyError::internal(&format!(
            "{} is not a long command",
            command.name()
        ))),
    }
}

/// Confinement to the install folder, before anything is opened.
fn select(install: &Install, files: Option<&[PathBuf]>) -> Result<Vec<PathBuf>, ReplyError> {
    Ok(install::select(&install.dir, files.unwrap_or_default())?)
}
