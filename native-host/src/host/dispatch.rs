//! Quick commands (`hello`, `firefox`, `cancel`, `bench_record`) answered on the reader's thread; long ones
//! handed to [`super::work`].

use std::io::{self, Write};
use std::sync::Arc;
use std::thread::JoinHandle;

use serde_json::json;

use super::context::Context;
use super::guard::{finish, guarded};
use super::log::log;
use super::shared::Shared;
use super::work::spawn_long;
use crate::firefox::process;
use crate::firefox::served::{self, BrowserHint};
use crate::host::protocol::{
    Command, Envelope, ErrorCode, Hello, LastRelaunch, Relaunching, Reply, ReplyError,
};
use crate::pagecache::residency;
use crate::trace::summary::profile::ProfileContext;
use crate::Error;

/// Answer a quick command (returns the reply) or start a long one (returns `None`: its thread
/// replies). `Err` only when the cancel reply, sent here, cannot be written.
pub(super) fn dispatch<W: Write + Send + 'static>(
    shared: &Arc<Shared<W>>,
    id: u64,
    command: Command,
    workers: &mut Vec<JoinHandle<()>>,
) -> io::Result<Option<Envelope>> {
    let result = match command {
        Command::Hello { browser } => guarded(|| hello(shared, browser.as_ref())),
        Command::Firefox => guarded(|| inspect_firefox(&shared.ctx())),
        Command::BenchRecord { record } => guarded(|| {
            crate::host::bench::write_record(shared.ctx().bench_out.as_deref(), &record)
                .map(Reply::BenchRecord)
        }),
        Command::TraceList => guarded(|| {
            let dir = crate::trace::store::open()?;
            let current = shared
                .ctx()
                .firefox_pid
                .and_then(|pid| crate::trace::store::process_start(pid).map(|t| (pid, t)));
            let mut listing = crate::trace::store::listing(&dir, current);
            // The page's command records a start of the page's own install.
            if let Ok(install) = shared.ctx().install() {
                listing.record_command = crate::trace::store::record_command_for(&install.dir);
            }
            Ok(Reply::TraceList(listing))
        }),
        Command::TraceFetch {
            trace,
            offset,
            redact,
        } => guarded(|| {
            let dir = crate::trace::store::open()?;
            let offset = offset.unwrap_or(0);
            let chunk = if redact == Some(true) {
                let text =
                    lock(&shared.imports).redacted(&trace, || redacted_text(&dir, &trace))?;
                page_of(&trace, &text, offset)
            } else {
                crate::trace::store::fetch(&dir, &trace, offset)
            };
            chunk
                .map(Reply::TraceFetch)
                .map_err(|e| no_such_trace(e, &trace))
        }),
        Command::TraceSummary {
            trace,
            axis_end_ms,
            file,
        } => guarded(|| {
            let opts = crate::trace::summary::Options { axis_end_ms, file };
            // An import is summarized as it is: its profile folder, if it names one, is another
            // machine's (or another time's), so nothing of this machine's is read for it.
            let imported = lock(&shared.imports).get(&trace);
            let summary = match imported {
                Some(t) => {
                    crate::trace::summary::summarize(&t, opts, &ProfileContext::from_files(&t))
                }
                None => {
                    let dir = crate::trace::store::open()?;
                    let t = read_stored(&dir, &trace)?;
                    crate::trace::summary::summarize_here(&t, opts)
                }
            };
            Ok(Reply::TraceSummary(Box::new(summary)))
        }),
        Command::TraceUpload {
            upload,
            offset,
            total,
            data,
        } => guarded(|| {
            lock(&shared.imports)
                .put(upload.as_deref(), offset, total, &data)
                .map(Reply::TraceUpload)
        }),
        Command::TraceProfileFetch { trace, offset } => guarded(|| {
            let state = crate::state::open()?;
            let dir = crate::trace::profiles::page(&crate::trace::profiles::in_state(&state)?)?;
            crate::trace::store::fetch(&dir, &trace, offset.unwrap_or(0))
                .map(Reply::TraceProfileFetch)
                .map_err(|e| match e {
                    crate::Error::Io { source, .. }
                        if source.kind() == std::io::ErrorKind::NotFound =>
                    {
                        ReplyError::new(
                            ErrorCode::NoSuchTrace,
                            format!("no profile of trace {trace}: ask trace_profile first"),
                            json!({ "trace": trace }),
                        )
                    }
                    other => ReplyError::from(other),
                })
        }),
        Command::Relaunch {
            cold,
            trace,
            open,
            timeout_s,
        } => guarded(|| {
            relaunch(
                &shared.ctx(),
                &crate::relaunch::detach::Request {
                    cold: cold.unwrap_or(false),
                    trace: trace.unwrap_or(false),
                    open,
                    timeout_s,
                },
            )
        }),
        Command::RelaunchStatus => guarded(|| {
            let dir = crate::state::locate()?;
            let (last, set_aside) = crate::relaunch::status::read_at_or_set_aside(&dir);
            Ok(Reply::RelaunchStatus(Box::new(LastRelaunch {
                last,
                trace_ready: crate::launch::connect::readiness(),
                note_codes: set_aside.into_iter().collect(),
            })))
        }),
        Command::Autostart { enable } => guarded(|| autostart(enable)),
        Command::Cancel { target } => {
            // Flag and reply under the writer lock, so the cancelled request's final error
            // cannot overtake this ok (docs/PROTOCOL.md promises the ok first).
            shared
                .out
                .send_with(|| finish(id, shared.running.cancel(target).map(Reply::Cancel)))?;
            return Ok(None);
        }
        Command::Residency { .. }
        | Command::Preload { .. }
        | Command::Evict { .. }
        | Command::Learn { .. }
        | Command::PlanStatus { .. }
        | Command::TraceProfile { .. }
        | Command::Telemetry { .. }
        | Command::Desktop { .. } => {
            return Ok(match spawn_long(shared, id, command) {
                Ok(worker) => {
                    workers.push(worker);
                    None
                }
                Err(error) => Some(Envelope::error(Some(id), error)),
            });
        }
        // decode_request never lets Unknown through; answer it anyway rather than panic.
        Command::Unknown => Err(ReplyError::new(
            ErrorCode::UnknownCommand,
            "unknown command",
            json!({ "command": null }),
        )),
    };
    Ok(Some(finish(id, result)))
}

/// `hello`: when the parent is not Firefox and the extension says what it runs in, match that
/// against this user's running Firefox processes first (firefox/served.rs).
fn hello<W>(shared: &Shared<W>, hint: Option<&BrowserHint>) -> Result<Reply, ReplyError> {
    if let Some(hint) = hint.filter(|_| shared.ctx().wants_match()) {
        let procs = served::process_table();
        let mut ctx = shared
            .ctx
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if ctx.wants_match() {
            ctx.match_hint(hint, &procs, crate::os::sys::geteuid());
        }
    }
    let ctx = shared.ctx();
    Ok(Reply::Hello(Hello {
        host_version: crate::HOST_VERSION,
        protocol_version: crate::PROTOCOL_VERSION,
        capabilities: residency::capabilities(),
        firefox_pid: ctx.firefox_pid,
        install_kind: ctx.install.as_ref().ok().map(|i| i.kind.clone()),
        firefox_found: ctx.found.clone(),
        cli: crate::invocation::current(),
    }))
}

/// `relaunch`: start the detached restart of the served Firefox (relaunch/detach.rs). The
/// Firefox must be this host's own (its parent, or the one matched from `hello`).
fn relaunch(ctx: &Context, req: &crate::relaunch::detach::Request) -> Result<Reply, ReplyError> {
    let Some(pid) = ctx.firefox_pid else {
        return Err(ctx.install().err().unwrap_or_else(|| {
            ReplyError::from(Error::FirefoxNotFound("no parent Firefox".into()))
        }));
    };
    if req.trace && !req.cold {
        return Err(ReplyError::bad_request(
            "\"trace\" needs \"cold\": a traced restart is a cold one",
        ));
    }
    if req.timeout_s.is_some_and(|s| !(1..=3600).contains(&s)) {
        return Err(ReplyError::bad_request(
            "\"timeout_s\" must be between 1 and 3600",
        ));
    }
    // Read now, while Firefox runs: a Firefox that cannot be restarted is refused before the
    // extension quits it.
    crate::relaunch::capture(pid)?;
    let helper_pid = crate::relaunch::detach::spawn_helper(pid, req)?;
    log(&format!(
        "restart of Firefox {pid}: helper {helper_pid} waits for it to quit"
    ));
    Ok(Reply::Relaunch(Relaunching {
        helper_pid,
        firefox_pid: pid,
        cold: req.cold,
        trace: req.trace,
    }))
}

/// `autostart`: the CLI's `autostart enable|disable`, then its status.
fn autostart(enable: bool) -> Result<Reply, ReplyError> {
    use crate::learn::autostart as a;
    let failed = |e: anyhow::Error| {
        ReplyError::new(
            ErrorCode::IoError,
            format!("{e:#}"),
            json!({ "detail": format!("{e:#}") }),
        )
    };
    let dirs = a::Dirs::from_env().map_err(failed)?;
    if enable {
        let binary = crate::os::binary::host_binary().map_err(failed)?;
        a::enable(&dirs, &binary, &a::systemctl).map_err(failed)?;
    } else {
        a::disable(&dirs, &a::systemctl).map_err(failed)?;
    }
    Ok(Reply::Autostart(a::status_in(&dirs)))
}

fn inspect_firefox(ctx: &Context) -> Result<Reply, ReplyError> {
    let Some(pid) = ctx.firefox_pid else {
        // Same error as the commands that need the install folder.
        return Err(ctx.install().err().unwrap_or_else(|| {
            ReplyError::from(Error::FirefoxNotFound("no parent Firefox".into()))
        }));
    };
    let mut info = process::inspect(pid)?;
    // Best effort: no state folder, no record, or a record of another start is "not prefetched".
    let state = crate::state::open().ok();
    info.prefetched = state.as_ref().and_then(|state| {
        crate::learn::prefetch::record::read(state)
            .and_then(|last| last.for_start(info.pid, info.started_at_ms))
    });
    // Same: the preload this start followed, claimed by it (learn/last_preload.rs).
    let install_dir = info.install_dir.to_string_lossy().into_owned();
    let boot_id = crate::os::proc::boot_id();
    info.preloaded = state.as_ref().and_then(|state| {
        crate::learn::last_preload::claim(
            state,
            &crate::learn::last_preload::Start {
                pid: info.pid,
                started_at_ms: info.started_at_ms,
                install_dir: &install_dir,
                build_id: info.build_id.as_deref(),
                boot_id: boot_id.as_deref(),
            },
        )
    });
    Ok(Reply::Firefox(info))
}

/// The lock, even if a panicking command poisoned it (the imports stay whole: each change is
/// one assignment).
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Stored trace `id`; a damaged one is set aside (trace/store.rs `read_or_set_aside`) and the
/// error says so, with the note, rather than "no stored trace".
fn read_stored(
    dir: &crate::state::StateDir,
    id: &str,
) -> Result<crate::trace::model::Trace, ReplyError> {
    match crate::trace::store::read_or_set_aside(dir, id) {
        (Some(t), _) => Ok(t),
        (None, Some(note)) => Err(ReplyError::new(
            ErrorCode::NoSuchTrace,
            crate::trace::store::unread_error(dir, id, Some(&note)),
            json!({ "trace": id, "set_aside": note }),
        )),
        (None, None) => Err(no_such_trace_error(id)),
    }
}

fn no_such_trace_error(trace: &str) -> ReplyError {
    ReplyError::new(
        ErrorCode::NoSuchTrace,
        format!("no stored trace {trace}"),
        json!({ "trace": trace }),
    )
}

/// A missing trace is `no_such_trace`; any other failure as it is.
fn no_such_trace(e: Error, trace: &str) -> ReplyError {
    match e {
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            no_such_trace_error(trace)
        }
        other => ReplyError::from(other),
    }
}

/// Stored trace `id` as it may leave the machine (trace/summary/redact.rs), as JSON text.
fn redacted_text(dir: &crate::state::StateDir, id: &str) -> Result<Vec<u8>, ReplyError> {
    let t = read_stored(dir, id)?;
    let ctx = ProfileContext::locate(&t);
    let parts = crate::trace::summary::profile::parts_of(&t, &ctx);
    let copy = crate::trace::summary::redact::redacted(&t, &parts);
    serde_json::to_vec(&copy).map_err(|e| ReplyError::internal(&e.to_string()))
}

/// The page of `text` from `offset`, as `trace_fetch` pages a stored trace.
fn page_of(id: &str, text: &[u8], offset: u64) -> Result<crate::trace::store::Chunk, Error> {
    let total = text.len() as u64;
    let start = usize::try_from(offset.min(total)).unwrap_or(text.len());
    let end = (start + crate::trace::store::CHUNK).min(text.len());
    crate::trace::store::chunk(id, &text[start..end], start as u64, total)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::host::test_support::{codes, no_firefox, request, run, run_in};
    use crate::host::{run_long, Context};

    #[test]
    fn without_firefox_long_commands_and_firefox_reply_firefox_not_found() {
        let mut input = Vec::new();
        for (id, command) in [
            (1, "residency"),
            (2, "preload"),
            (3, "evict"),
            (4, "firefox"),
            (5, "telemetry"),
            (6, "relaunch"),
        ] {
            input.extend(request(&json!({"id": id, "command": command})));
        }
        let (result, mut replies) = run(&input, Box::new(run_long));
        result.unwrap();
        replies.sort_by_key(|r| r["id"].as_u64());
        let expected: Vec<_> = (1..=6)
            .map(|id| (json!(id), json!("firefox_not_found")))
            .collect();
        assert_eq!(codes(&replies), expected);
    }

    #[test]
    fn trace_fetch_of_an_unknown_or_malformed_id_is_no_such_trace() {
        let mut input =
            request(&json!({"id": 1, "command": "trace_fetch", "trace": "../../etc/passwd"}));
        input.extend(request(
            &json!({"id": 2, "command": "trace_fetch", "trace": "0-0-0", "offset": 5}),
        ));
        let (result, mut replies) = run(&input, Box::new(run_long));
        result.unwrap();
        replies.sort_by_key(|r| r["id"].as_u64());
        assert_eq!(
            codes(&replies),
            vec![
                (json!(1), json!("no_such_trace")),
                (json!(2), json!("no_such_trace"))
            ]
        );
    }

    #[test]
    fn an_uploaded_trace_is_summarized_and_an_unknown_one_is_no_such_trace() {
        let text = serde_json::to_string(&crate::trace::model::tests::fake()).unwrap();
        let (a, b) = text.split_at(text.len() / 2);
        let total = text.len();
        let mut input = request(
            &json!({"id": 1, "command": "trace_upload", "offset": 0, "total": total, "data": a}),
        );
        input.extend(request(&json!({"id": 2, "command": "trace_upload", "upload": "upload-1", "offset": a.len(), "total": total, "data": b})));
        input.extend(request(
            &json!({"id": 3, "command": "trace_summary", "trace": "upload-1", "axis_end_ms": 50.0}),
        ));
        input.extend(request(
            &json!({"id": 4, "command": "trace_summary", "trace": "upload-9"}),
        ));
        let (result, replies) = run(&input, Box::new(run_long));
        result.unwrap();
        assert_eq!(replies[1]["data"]["complete"], json!(true), "{replies:?}");
        let summary = &replies[2]["data"];
        // fake(): 3 files, the last read at 95 ms; 4 pages read from disk, one page written.
        assert_eq!(summary["files"].as_array().unwrap().len(), 3, "{summary}");
        assert_eq!(summary["span_ms"], json!(95.0));
        assert_eq!(summary["read_over_time"]["total"], json!(4 * 4096));
        assert_eq!(summary["pattern"]["path"], json!("/ff/libxul.so"));
        assert_eq!(
            codes(&replies[3..]),
            vec![(json!(4), json!("no_such_trace"))]
        );
    }

    #[test]
    fn bench_record_is_refused_outside_a_benchmark() {
        let input = request(&json!({"id": 1, "command": "bench_record", "record": {"id": "x"}}));
        let (result, replies) = run(&input, Box::new(run_long));
        result.unwrap();
        assert_eq!(codes(&replies), vec![(json!(1), json!("not_benchmarking"))]);
    }

    #[test]
    fn bench_record_writes_the_record_where_the_benchmark_said() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("start.json");
        let ctx = Context {
            bench_out: Some(out.clone()),
            ..no_firefox()
        };
        let record = json!({"id": "full-1", "milestones": {"sessionRestored": 1905}});
        let input = request(&json!({"id": 2, "command": "bench_record", "record": record}));
        let (result, replies) = run_in(ctx, &input, Box::new(run_long));
        result.unwrap();
        assert_eq!(
            replies,
            vec![json!({"id": 2, "status": "ok", "data": {"path": out}})]
        );
        let written: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(written, record);
    }
}
