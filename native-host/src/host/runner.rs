//! The real long commands: confine the requested paths to the install folder, then do the
//! page-cache work of `residency`, `preload` and `evict`, streaming their events.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use super::context::Context;
use super::shared::Emit;
use crate::firefox::install::{self, Install};
use crate::firefox::{process, telemetry};
use crate::host::protocol::{Command, DesktopAction, Event, Reply, ReplyError};
use crate::learn::{plan, workingset};
use crate::os::beneath::Folders;
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
        return Ok(Reply::Telemetry(telemetry::read_archive(
            &profile, limit, cancel,
        )?));
    }
    let install = ctx.install()?;
    match command {
        Command::Residency {
            files,
            mapped,
            summary_only,
        } => {
            let selected = select(install, files.as_deref())?;
            let events = !summary_only.unwrap_or(false);
            let opts = residency::ScanOptions {
                pid: ctx.firefox_pid,
                include_mapped: mapped.unwrap_or(true),
                // A Snap's compressed image, with the whole folder only (like `mapped`).
                image: image_of(install).filter(|_| files.is_none()),
                ranges: events,
            };
            let mut on_file = |report: &residency::FileReport| {
                if events {
                    emit(Event::File(report.clone()));
                }
            };
            let summary = residency::scan(
                &selected.folder,
                &selected.files,
                &opts,
                cancel,
                &mut on_file,
            )?;
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
                let state_dir = crate::state::open()?;
                // A compressed install (a Snap, a packed Firefox): never through the mount, as
                // `preload --plan` (the image's ranges raw, or nothing, and why).
                if let Some(c) = crate::firefox::compressed::detect(
                    &install.dir,
                    crate::learn::pack::image_for(&install.dir).as_deref(),
                ) {
                    return Ok(Reply::Preload(
                        crate::learn::prefetch::image::preload_summary(
                            &install.dir,
                            &state_dir,
                            &c,
                            idle.unwrap_or(false),
                        )?,
                    ));
                }
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
            let (folders, selected, used) =
                select_cache(install, files.as_deref(), cache.unwrap_or_default())?;
            let opts = preload::Options {
                method: method.unwrap_or_default(),
                idle: idle.unwrap_or(false),
                jobs: *jobs,
            };
            let mut summary =
                preload::preload(&folders, &selected, &opts, cancel, &mut on_progress)?;
            summary.cache = used;
            // The next start follows this preload (learn/last_preload.rs): the whole install
            // only, not a few files picked on the page.
            if files.is_none() {
                if let Ok(state) = crate::state::open() {
                    crate::learn::last_preload::write(&state, &install.dir, summary.bytes, false);
                }
            }
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
            let (folders, selected, used) =
                select_cache(install, files.as_deref(), cache.unwrap_or(default))?;
            // evict() cannot be interrupted; honour a cancel that came before it started.
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Cancelled.into());
            }
            let mut summary = evict::evict(&folders, &selected);
            crate::learn::last_preload::forget_here(); // the next start follows no preload
            summary.cache = used;
            Ok(Reply::Evict(summary))
        }
        Command::Learn {
            session_restored_ms,
        } => {
            let pid = ctx
                .firefox_pid
                .ok_or_else(|| Error::FirefoxNotFound("no parent Firefox".into()))?;
            let state_dir = crate::state::open()?;
            // The extension sends `learn` once it recorded this start: a traced launch stops there.
            crate::trace::store::mark_recorded(&state_dir, pid, *session_restored_ms);
            let summary = workingset::learn(pid, &install.dir, &state_dir, cancel)?;
            Ok(Reply::Learn(summary))
        }
        Command::PlanStatus { source } => {
            let state_dir = crate::state::open()?;
            Ok(Reply::PlanStatus(Box::new(plan::status_of(
                &install.dir,
                &state_dir,
                source.unwrap_or_default(),
            )?)))
        }
        Command::TraceProfile { trace } => {
            let state = crate::state::open()?;
            let traces = crate::trace::store::in_state(&state)?;
            let profiles = crate::trace::profiles::in_state(&state)?;
            crate::export::stored(&traces, &profiles, trace)
                .map(|e| Reply::TraceProfile(Box::new(e)))
                .map_err(|e| match e {
                    Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                        ReplyError::new(
                            crate::error::ErrorCode::NoSuchTrace,
                            format!("no stored trace {trace}"),
                            serde_json::json!({ "trace": trace }),
                        )
                    }
                    other => ReplyError::from(other),
                })
        }
        Command::Desktop { action } => desktop(install, action.unwrap_or_default()),
        Command::Hello { .. }
        | Command::Firefox
        | Command::Cancel { .. }
        | Command::BenchRecord { .. }
        | Command::TraceList
        | Command::TraceFetch { .. }
        | Command::TraceSummary { .. }
        | Command::TraceUpload { .. }
        | Command::TraceProfileFetch { .. }
        | Command::Telemetry { .. }
        | Command::Relaunch { .. }
        | Command::RelaunchStatus
        | Command::Autostart { .. }
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

/// The paths of `cache`: the confined files, the loop image, or both (install::with_cache), and
/// the held folders they are opened beneath (install::cache_folders).
fn select_cache(
    install: &Install,
    files: Option<&[PathBuf]>,
    cache: Cache,
) -> Result<(Folders, Vec<PathBuf>, Cache), ReplyError> {
    let (folder, selected) = if cache == Cache::Image {
        (None, Vec::new())
    } else {
        let selection = select(install, files)?;
        (Some(selection.folder), selection.files)
    };
    let (paths, used) =
        install::with_cache(install, selected, files.is_some(), cache).ok_or_else(|| {
            ReplyError::bad_request(if files.is_some() {
                "\"cache\": \"image\" acts on the whole image; leave \"files\" out"
            } else {
                "\"cache\": \"image\": no squashfs image is known behind this install (neither a loop device nor a packed install's squashfuse mount), or its loop device reads the image with direct I/O (never cached)"
            })
        })?;
    Ok((install::cache_folders(folder, &paths), paths, used))
}

/// Confinement to the install folder, before anything is opened; the folder's descriptor is
/// held for the request and every file is opened beneath it.
fn select(install: &Install, files: Option<&[PathBuf]>) -> Result<install::Selection, ReplyError> {
    Ok(install::select(&install.dir, files.unwrap_or_default())?)
}

/// `desktop`: the entry's state, after turning it on or off when asked.
fn desktop(install: &Install, action: DesktopAction) -> Result<Reply, ReplyError> {
    use crate::learn::desktop as entry;
    let dirs = entry::Dirs::from_env()?;
    let host = std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .map_err(|e| Error::io("cannot find this program's own path", e))?;
    let host = entry::HostBinary {
        problem: crate::os::binary::user_binary_problem(&host),
        path: host,
    };
    let state = crate::state::open().ok();
    let state = state.as_ref();
    let status = match action {
        DesktopAction::Status => entry::status(&dirs, &install.dir, &host, state),
        DesktopAction::Enable => entry::enable(&dirs, &install.dir, &host, state).map_err(|p| {
            ReplyError::new(
                crate::host::protocol::ErrorCode::DesktopRefused,
                p.message.clone(),
                serde_json::json!({ "reason": p.code, "detail": p.message }),
            )
        })?,
        DesktopAction::Disable => {
            entry::disable(&dirs, &install.dir)
                .map_err(|e| Error::io("cannot remove the desktop entry", e))?;
            entry::status(&dirs, &install.dir, &host, state)
        }
    };
    Ok(Reply::Desktop(Box::new(status)))
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::host::test_support::{request, run_in};

    /// An install folder holding `a.so` and `lib\xff.so`, and the host's context serving it.
    fn odd_install() -> (tempfile::TempDir, PathBuf, Context) {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.so"), [1u8; 5000]).unwrap();
        let odd = tmp
            .path()
            .canonicalize()
            .unwrap()
            .join(OsString::from_vec(b"lib\xff.so".to_vec()));
        std::fs::write(&odd, [2u8; 9000]).unwrap();
        let install = Install {
            dir: tmp.path().canonicalize().unwrap(),
            found_by: "test".into(),
            version: None,
            build_id: None,
            kind: crate::firefox::kind::describe(tmp.path()),
        };
        let mut ctx = Context::without_firefox("test");
        ctx.install = Ok(install);
        (tmp, odd, ctx)
    }

    /// Issue 10 #6 through the real long commands: the residency event of `lib\xff.so` is sent
    /// (with its bytes) and counted once; evict's reply is ok; a request naming the file by its
    /// exact bytes (`files_b64`) reaches it, while its display text alone names no file.
    #[test]
    fn a_file_name_that_is_not_utf8_is_reported_evicted_and_named_by_its_bytes() {
        let (_tmp, odd, ctx) = odd_install();
        let b64 = "bGli/y5zbw==";
        let mut input = request(&json!({"id": 1, "command": "residency", "mapped": false}));
        input.extend(request(&json!({"id": 2, "command": "evict"})));
        input.extend(request(
            &json!({"id": 3, "command": "evict", "files": ["lib\u{fffd}.so"], "files_b64": [b64]}),
        ));
        input.extend(request(
            &json!({"id": 4, "command": "evict", "files": ["lib\u{fffd}.so"]}),
        ));
        let (result, replies) = run_in(ctx, &input, Box::new(run_long));
        result.unwrap();
        let of = |id: u64| -> Vec<&serde_json::Value> {
            replies.iter().filter(|r| r["id"] == json!(id)).collect()
        };

        let residency = of(1);
        let events: Vec<_> = residency
            .iter()
            .filter(|r| r["status"] == "event")
            .collect();
        assert_eq!(events.len(), 2, "{residency:?}");
        let event = events
            .iter()
            .find(|e| e["data"].get("path_b64").is_some())
            .expect("the event of lib\\xff.so");
        assert_eq!(event["data"]["path_b64"], json!(odd_b64(&odd)));
        assert_eq!(event["data"]["status"], json!("exact"));
        let done = residency.last().unwrap();
        assert_eq!(done["status"], json!("ok"));
        assert_eq!(done["data"]["groups"]["install"]["files"], json!(2));

        let evicted = of(2);
        assert_eq!(evicted.len(), 1);
        assert_eq!(evicted[0]["status"], json!("ok"), "{:?}", evicted[0]);
        let files = evicted[0]["data"]["files"].as_array().unwrap();
        assert!(files.iter().all(|f| f["error"].is_null()), "{files:?}");

        let named = of(3);
        assert_eq!(named[0]["status"], json!("ok"), "{:?}", named[0]);
        assert_eq!(
            named[0]["data"]["files"][0]["path_b64"],
            json!(odd_b64(&odd))
        );

        let display_only = of(4);
        assert_eq!(display_only[0]["code"], json!("no_such_file"));
    }

    fn odd_b64(path: &Path) -> String {
        crate::path_text::b64(path).unwrap_or_else(|| panic!("{:?}", path.as_os_str().as_bytes()))
    }
}
