//! The native-messaging loop: one reader, quick commands answered inline, long commands on
//! their own threads, one writer shared behind a mutex so frames never interleave.
//!
//! Generic over the reader and writer so tests drive it in-process. stdout carries frames only;
//! every log line goes to stderr (Firefox shows it in the Browser Console).
//!
//! - here: [`run_stdio`] and [`serve`], the reader loop, and the helpers the others share;
//! - `context`: the Firefox being served ([`Context`]);
//! - `dispatch`: quick commands, answered on the reader's thread;
//! - `work`: long commands on their own threads, with cancel flags;
//! - `runner`: the real work of the long commands ([`run_long`]);
//! - `writer`: the locked frame writer and its size guard;
//! - [`framing`]: length-prefixed frames over any `Read`/`Write`;
//! - [`protocol`]: the typed requests, replies, events and error codes (docs/PROTOCOL.md);
//! - [`bench`]: `bench_record`, the startup benchmark's record written to a file;
//! - [`manifest`]: the native-messaging manifest that registers this host with Firefox.

use std::any::Any;
use std::io::{self, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::thread::JoinHandle;

use anyhow::{bail, Context as _};
use serde_json::json;

use super::framing::{self, ReadOutcome, MAX_INCOMING};
use crate::host::protocol::{
    decode_request, Command, Envelope, ErrorCode, Event, Reply, ReplyError,
};

pub use super::context::Context;
use super::dispatch::dispatch;
pub use super::runner::run_long;
use super::work::Running;
use super::writer::Writer;

/// Sends one event of a long command. When an event cannot be sent the host raises the command's
/// cancel flag, so the command stops at its next check.
pub type Emit<'a> = dyn FnMut(Event) + 'a;

/// What a long command (`residency`, `preload`, `evict`) does. The real one is [`run_long`];
/// tests pass fakes to exercise threads, cancel and panics without touching the kernel.
pub type LongRunner = dyn Fn(&Context, &Command, &AtomicBool, &mut Emit<'_>) -> Result<Reply, ReplyError>
    + Send
    + Sync;

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

/// State shared by the reader loop and the workers.
pub(super) struct Shared<W> {
    pub(super) out: Writer<W>,
    pub(super) running: Running,
    /// Written only by `hello` when it matches the served Firefox (parent not Firefox); every
    /// long command works on a copy taken when it starts.
    pub(super) ctx: RwLock<Context>,
    pub(super) runner: Box<LongRunner>,
}

impl<W> Shared<W> {
    /// A copy of the context (a poisoned lock still holds a whole context: it is replaced in
    /// one assignment).
    pub(super) fn ctx(&self) -> Context {
        self.ctx
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
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

/// The final message of request `id`.
pub(super) fn finish(id: u64, result: Result<Reply, ReplyError>) -> Envelope {
    match result {
        Ok(data) => Envelope::ok(id, data),
        Err(error) => Envelope::error(Some(id), error),
    }
}

/// Run `f`, turning a panic into an `io_error` reply: a bug in one command must not take the
/// whole host (and the extension's port) down with it.
pub(super) fn guarded<T>(f: impl FnOnce() -> Result<T, ReplyError>) -> Result<T, ReplyError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let message = panic_message(panic.as_ref());
        log(&format!("a command panicked: {message}"));
        Err(ReplyError::internal(&message))
    })
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// Lock, ignoring poisoning: a panic elsewhere never leaves these maps or the writer half-done
/// (a frame is written under the lock by code that does not panic).
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A line for the Browser Console. Never `eprintln!`: it panics when stderr is broken (a closed
/// pipe, a hung-up terminal), and a log line must never stop the host.
pub(super) fn log(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "about-startup-host: {message}");
}

#[cfg(test)]
mod tests {
    use std::thread;
    use std::time::Duration;

    use serde_json::{json, Value};

    use super::*;
    use crate::host::framing::encode as frame;
    use crate::host::test_support::{codes, evicted, probe, request, run};

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
