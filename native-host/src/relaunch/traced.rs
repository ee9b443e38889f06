//! "Restart cold and trace", all of it as the user (docs/design/privilege.md): wait for Firefox
//! to quit, reach root's tracer (pkexec asks for the password in the desktop's own dialog;
//! only the package's root-owned host, polkit action `dev.startup-lab.about-startup.trace`),
//! evict, and start Firefox again through the launch pipeline (launch/traced.rs), which has the
//! tracer follow it. Root starts nothing and touches none of the user's files. When the tracer
//! cannot be had, Firefox is restarted cold all the same, untraced, and the record says why and
//! which command to run.

use serde_json::json;

use super::status::{Failure, Stage, Status, LAUNCH_FAILED, TRACE_FAILED};
use super::{begin, evict, evict_and_start, fail, record, wait_step, Options, Snapshot};
use crate::launch::connect;
use crate::launch::traced::{self, Cold, Spec, Tracer};
use crate::os::held::Program;
use crate::trace::record::{Stop, QUIET_MS};

/// The record of a trace that could not be had; Firefox is then restarted untraced.
fn trace_failure(reason: &str, detail: String, install: &std::path::Path) -> Failure {
    // As this user runs it (the host's path where its bare name is not on PATH), for the
    // install restarted: the command the page offered (trace_list's record_command).
    let command = crate::trace::store::record_command_for(install);
    let what = match reason {
        "not_restored" | "not_stored" | "firefox_failed" => "the trace was not stored",
        _ => "the trace was not recorded",
    };
    Failure {
        code: TRACE_FAILED.to_owned(),
        message: format!(
            "{what} ({reason}): {detail}; Firefox was restarted cold without it. In a terminal: \
             {command}"
        ),
        params: json!({ "reason": reason, "detail": detail, "command": command }),
    }
}

/// The whole traced restart of `snap` (always cold).
pub fn run(snap: &Snapshot, opts: &Options, progress: &mut dyn FnMut(&Status)) -> Status {
    let opts = Options {
        cold: true,
        ..opts.clone()
    };
    let mut status = begin(snap, true, true);
    record(&opts, &mut status, progress);
    if !wait_step(snap, &opts, &mut status, progress)
        || !super::profile_step(snap, &opts, &mut status, progress)
    {
        return status;
    }
    status.stage = Stage::Tracing;
    record(&opts, &mut status, progress);
    let link = match connect::connect() {
        Ok(link) => link,
        Err(no) => {
            status.error = Some(trace_failure(no.reason, no.detail, &snap.install_dir));
            evict_and_start(snap, &opts, &mut status, progress);
            return status;
        }
    };
    let evicted = match evict(&snap.install_dir) {
        Ok(e) => e,
        Err(e) => {
            fail(
                &opts,
                &mut status,
                progress,
                super::status::EVICT_FAILED,
                format!("the evict failed: {e}"),
                json!({ "detail": e.to_string() }),
            );
            return status;
        }
    };
    let cold = Cold::Evicted(Box::new(evicted.clone()));
    status.evicted = Some(evicted);
    record(&opts, &mut status, progress);
    let install = match crate::firefox::install::locate(Some(&snap.install_dir), None) {
        Ok(i) => i,
        Err(e) => {
            fail(
                &opts,
                &mut status,
                progress,
                LAUNCH_FAILED,
                format!("Firefox could not be started again: {e}"),
                json!({ "detail": e.to_string() }),
            );
            return status;
        }
    };
    let (cwd, moved) = super::working_folder(snap);
    if let Some(said) = &moved {
        eprintln!("about-startup-host: note: {said}");
        status.working_folder = Some(said.clone());
    }
    let spec = Spec {
        install,
        program: Program {
            path: snap.exe.clone(),
            argv: snap
                .argv
                .iter()
                .cloned()
                .chain(opts.open.iter().cloned())
                .collect(),
            env: snap.env.clone(),
            cwd: Some(cwd),
            // A session of its own: it must not end with this helper.
            setsid: true,
            // launch() gives it a file of its own, read back if it fails.
            stderr: None,
        },
        cold,
        trace: true,
        // The page shows which code faulted pages in; its cost is within noise (benchmarks.md).
        faults: true,
    };
    let stop = Stop {
        seconds: None,
        quiet_ms: QUIET_MS,
    };
    match traced::launch(&spec, stop, Tracer::Given(Ok(link))) {
        Ok(mut launched) => {
            status.stage = Stage::Started;
            status.new_pid = Some(launched.firefox.pid);
            if let Some(why) = launched.failed() {
                // Not a start: not stored, and the page says Firefox failed, in its own words
                // where it said any (issue 39 #3).
                let said = launched
                    .firefox_said()
                    .map(|s| format!(" (it said: {s})"))
                    .unwrap_or_default();
                status.error = Some(trace_failure(
                    "firefox_failed",
                    format!("{why}{said}"),
                    &snap.install_dir,
                ));
            } else if traced::not_a_start(&mut launched.trace, false) {
                let detail = launched
                    .trace
                    .note_codes
                    .last()
                    .map(crate::note::Note::english)
                    .unwrap_or_default();
                status.error = Some(trace_failure("not_restored", detail, &snap.install_dir));
            } else {
                match crate::trace::store::open()
                    .and_then(|d| crate::trace::store::save(&d, &launched.trace))
                {
                    Ok((id, _)) => status.trace_id = Some(id),
                    Err(e) => {
                        status.error = Some(trace_failure(
                            "not_stored",
                            e.to_string(),
                            &snap.install_dir,
                        ))
                    }
                }
            }
            record(&opts, &mut status, progress);
        }
        Err(e) => fail(
            &opts,
            &mut status,
            progress,
            LAUNCH_FAILED,
            format!("Firefox could not be started again: {e:#}"),
            json!({ "detail": format!("{e:#}") }),
        ),
    }
    status
}
