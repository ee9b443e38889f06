//! The native-messaging loop: one reader, quick commands answered inline (`dispatch`), long
//! commands on their own threads (`work`), one writer shared behind a mutex so frames never
//! interleave (`writer`).
//!
//! Generic over the reader and writer so tests drive it in-process. stdout carries frames only;
//! every log line goes to stderr (Firefox shows it in the Browser Console).

use std::io::{self, Read, Write};
use std::sync::{Arc, RwLock};
use std::thread::JoinHandle;

use anyhow::{bail, Context as _};
use serde_json::json;

use super::context::Context;
use super::dispatch::dispatch;
use super::log::log;
use super::protocol::{decode_request, Envelope, ErrorCode, ReplyError};
use super::runner::run_long;
use super::running::Running;
use super::shared::{LongRunner, Shared};
use super::writer::Writer;
use crate::framing::{self, ReadOutcome, MAX_INCOMING};

/// Serve native messaging on stdin/stdout until stdin ends.
pub fn run_stdio() -> anyhow::Result<()> {
    let ctx = Context::from_parent();
    match ctx.firefox_pid {
        Some(pid) => log(&format!("serving Firefox {pid}")),
        None => log("started by a process that is not Firefox: only hello answers"),
    }
    serve(io::stdin().lock(), io::stdout(), ctx)
}

/// Serve requests from `reader` until it ends. `Ok` on a clean end-of-file (after in-flight
/// requests have finished), `Err` when the stream breaks inside a frame or cannot be used.
pub fn serve<R, W>(reader: R, writer: W, ctx: Context) -> anyhow::Result<()>
where
    R: Read,
    W: Write + Send + 'static,
{
    serve_with(reader, writer, ctx, Box::new(run_long))
}

/// [`serve`] with the long commands' work supplied by the caller.
pub fn serve_with<R, W>(
    mut reader: R,
    writer: W,
    ctx: Context,
    runner: Box<LongRunner>,
) -> anyhow::Result<()>
where
    R: Read,
    W: Write + Send + 'static,
{
    let shared = Arc::new(Shared {
        out: Writer::new(writer),
        running: Running::default(),
        ctx: RwLock::new(ctx),
        runner,
        imports: std::sync::Mutex::default(),
    });
    let mut workers = Vec::new();
    let result = read_loop(&mut reader, &shared, &mut workers);
    if result.is_err() {
        // Nobody will read what the workers would still send: stop them.
        shared.running.cancel_all();
    }
    for worker in workers {
        // A worker catches its own panics, so join only fails on a bug in the catching.
        let _ = worker.join();
    }
    result
}

fn read_loop<W: Write + Send + 'static>(
    reader: &mut impl Read,
    shared: &Arc<Shared<W>>,
    workers: &mut Vec<JoinHandle<()>>,
) -> anyhow::Result<()> {
    loop {
        workers.retain(|w| !w.is_finished());
        let outcome = read_frame(reader)?;
        let reply = match outcome {
            ReadOutcome::Eof => return Ok(()),
            ReadOutcome::Truncated => {
                // Best effort: the peer is probably gone already.
                let _ = shared.out.send(&Envelope::error(None, truncated()));
                bail!(
                    "stdin ended inside a frame (a cut length prefix or body): the browser \
                     closed the connection mid-message or the sender wrote a wrong length"
                );
            }
            ReadOutcome::TooLarge { len } => Some(Envelope::error(None, too_large(len))),
            ReadOutcome::Frame(body) => match decode_request(&body) {
                Err(bad) => Some(Envelope::error(bad.id, bad.error)),
                Ok(request) => dispatch(shared, request.id, request.command, workers)
                    .context("writing a reply to stdout")?,
            },
        };
        if let Some(reply) = reply {
            shared
                .out
                .send(&reply)
                .context("writing a reply to stdout")?;
        }
    }
}

fn read_frame(reader: &mut impl Read) -> anyhow::Result<ReadOutcome> {
    framing::read_frame(reader).context("reading a request from stdin")
}

fn truncated() -> ReplyError {
    ReplyError::new(
        ErrorCode::TruncatedFrame,
        "the stream ended inside a frame; the host is exiting",
        json!({}),
    )
}

fn too_large(len: u32) -> ReplyError {
    ReplyError::new(
        ErrorCode::FrameTooLarge,
        format!(
            "a request of {len} bytes is over the host's {MAX_INCOMING}-byte limit; it was \
             skipped (name fewer files per request)"
        ),
        json!({ "length": len, "limit": MAX_INCOMING }),
    )
}

#[cfg(test)]
mod tests {
    use std::thread;
    use std::time::Duration;

    use serde_json::{json, Value};

    use super::super::test_support::{codes, evicted, probe, request, run};
    use super::*;
    use crate::framing::encode as frame;

    #[test]
    fn every_bad_input_gets_its_code_and_the_host_goes_on() {
        let mut input = Vec::new();
        input.extend(frame(b"\xff\xfe"));
        input.extend(frame(b"{nope"));
        input.extend(frame(b"[1]"));
        input.extend(frame(br#"{"command": "hello"}"#));
        input.extend(frame(br#"{"id": -3, "command": "hello"}"#));
        input.extend(frame(br#"{"id": 5, "command": "reboot"}"#));
        input.extend(frame(br#"{"id": 6, "command": "residency", "files": 5}"#));
        input.extend(frame(&vec![b' '; MAX_INCOMING as usize + 1]));
        input.extend(probe(7));
        let (result, replies) = run(&input, Box::new(run_long));
        result.unwrap();
        assert_eq!(
            codes(&replies),
            vec![
                (Value::Null, json!("bad_utf8")),
                (Value::Null, json!("bad_json")),
                (Value::Null, json!("bad_json")),
                (Value::Null, json!("bad_request")),
                (Value::Null, json!("bad_request")),
                (json!(5), json!("unknown_command")),
                (json!(6), json!("bad_request")),
                (Value::Null, json!("frame_too_large")),
                (json!(7), json!("unknown_request")),
            ]
        );
        assert_eq!(
            replies[7]["params"],
            json!({"length": MAX_INCOMING + 1, "limit": MAX_INCOMING})
        );
        assert_eq!(replies[8]["params"], json!({"target": 999_999}));
    }

    #[test]
    fn truncated_frame_is_an_error_after_a_best_effort_reply() {
        let mut input = probe(1);
        input.extend(&frame(b"{\"id\": 2}")[..6]);
        let (result, replies) = run(&input, Box::new(run_long));
        assert!(result.unwrap_err().to_string().contains("inside a frame"));
        assert_eq!(
            codes(&replies),
            vec![
                (json!(1), json!("unknown_request")),
                (Value::Null, json!("truncated_frame"))
            ]
        );
    }

    #[test]
    fn eof_waits_for_running_commands() {
        let runner: Box<LongRunner> = Box::new(|_, _, _, _| {
            thread::sleep(Duration::from_millis(200));
            Ok(evicted(200))
        });
        let (result, replies) = run(&request(&json!({"id": 1, "command": "evict"})), runner);
        result.unwrap();
        assert_eq!(
            replies,
            vec![json!({"id": 1, "status": "ok", "data": {
                "files": [], "pages_dropped": 0, "elapsed_ms": 200, "cache": "files"}})]
        );
    }
}
