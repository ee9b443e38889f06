//! The real long commands: confine the requested paths to the install folder, then do the
//! page-cache work of `residency`, `preload` and `evict`, streaming their events.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Context, Emit};
use crate::firefox::install::{self, Install};
use crate::firefox::{process, telemetry};
use crate::host::protocol::{Command, Event, Reply, ReplyError};
use crate::learn::{plan, workingset};
use crate::pagecache::{evict, preload, residency, Cache};
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
    if let Command::Telemetry { limit } = command {
        // Needs the profile, not the install folder.
        let pid = ctx
            .firefox_pid
            .ok_or_else(|| Error::FirefoxNotFound("no parent Firefox".into()))?;
        let profile = process::profile_dir(pid).ok_or_else(|| {
            Error::ProfileNotFound(format!("Firefox {pid} holds no profile lock open"))
        })?;
        let limit = limit.unwrap_or(telemetry::DEFAULT_SESSIONS);
        return Ok(Reply::Telemetry(telemetry::read_archive(&profile, limit)));
    }
    let install = ctx.install()?;
    match command {
        Command::Residency { files, mapped } => {
            let selected = select(install, files.as_deref())?;
            let opts = residency::ScanOptions {
                pid: ctx.firefox_pid,
                include_mapped: mapped.unwrap_or(true),
                // A Snap's compressed image, with the whole folder only (like `mapped`).
                image: image_of(install).filter(|_| files.is_none()),
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
            cache,
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
                if cache.is_some_and(|c| c != Cache::Files) {
                    return Err(ReplyError::bad_request(
                        "\"plan\": true reads the planned files only; leave \"cache\" out or send \"files\"",
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
            let (selected, used) =
                select_cache(install, files.as_deref(), cache.unwrap_or_default())?;
            let opts = preload::Options {
                method: method.unwrap_or_default(),
                idle: idle.unwrap_or(false),
                jobs: *jobs,
            };
            let mut summary = preload::preload(&selected, &opts, cancel, &mut on_progress)?;
            summary.cache = used;
            Ok(Reply::Preload(summary))
        }
        Command::Evict { files, cache } => {
            // A cold start of a squashfs install needs both caches dropped: the whole folder's
            // evict drops the image too; named files drop only their own pages.
            let default = if files.is_none() {
                Cache::All
            } else {
                Cache::Files
            };
            let (selected, used) =
                select_cache(install, files.as_deref(), cache.unwrap_or(default))?;
            // evict() cannot be interrupted; honour a cancel that came before it started.
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Cancelled.into());
            }
            let mut summary = evict::evict(&selected);
            summary.cache = used;
            Ok(Reply::Evict(summary))
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
        Command::Hello { .. }
        | Command::Firefox
        | Command::Cancel { .. }
        | Command::BenchRecord { .. }
        | Command::TraceList
        | Command::TraceFetch { .. }
        | Command::Telemetry { .. }
        | Command::Unknown => Err(ReplyError::internal(&format!(
            "{} is not a long command",
            command.name()
        ))),
    }
}

/// The image behind the install folder's loop device (a squashfs install), if any.
fn image_of(install: &Install) -> Option<PathBuf> {
    install.kind.image.as_ref().map(|i| i.image.clone())
}

/// The paths of `cache`: the confined files, the loop image, or both (install::with_cache).
fn select_cache(
    install: &Install,
    files: Option<&[PathBuf]>,
    cache: Cache,
) -> Result<(Vec<PathBuf>, Cache), ReplyError> {
    let selected = if cache == Cache::Image {
        Vec::new()
    } else {
        select(install, files)?
    };
    install::with_cache(install, selected, files.is_some(), cache).ok_or_else(|| {
        ReplyError::bad_request(if files.is_some() {
            "\"cache\": \"image\" acts on the whole image; leave \"files\" out"
        } else {
            "\"cache\": \"image\": this install is not on a loop device (no squashfs image), or its loop device reads the image with direct I/O (never cached)"
        })
    })
}

/// Confinement to the install folder, before anything is opened.
fn select(install: &Install, files: Option<&[PathBuf]>) -> Result<Vec<PathBuf>, ReplyError> {
    Ok(install::select(&install.dir, files.unwrap_or_default())?)
}
