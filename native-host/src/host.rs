//! The native-messaging loop: one reader, quick commands answered inline, long commands on
//! their own threads, one writer shared behind a mutex so frames never interleave.
//!
//! Generic over the reader and writer so tests drive it in-process. stdout carries frames only;
//! every log line goes to stderr (Firefox shows it in the Browser Console).

use std::any::Any;
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};

use anyhow::{bail, Context as _};
use serde_json::json;

use crate::files::{self, Install};
use crate::framing::{self, ReadOutcome, MAX_INCOMING, MAX_OUTGOING};
use crate::protocol::{
    decode_request, Cancelled, Command, Envelope, ErrorCode, Event, Hello, Reply, ReplyError,
};
use crate::{evict, firefox, preload, residency, Error};

/// The Firefox the host works on, found once at start.
#[derive(Debug, Clone)]
pub struct Context {
    /// The parent Firefox, if the parent is one (`hello` reports it either way).
    pub firefox_pid: Option<i32>,
    /// Its install folder, or the error every command needing it replies with.
    pub install: Result<Install, ReplyError>,
}

impl Context {
    /// The host-mode context: the parent process, if it is a Firefox, and its install folder.
    #[must_use]
    pub fn from_parent() -> Self {
        // A bug in the lookup must not keep `hello` from answering: treat it as "no Firefox".
        let found = guarded(|| {
            let pid = firefox::parent_firefox();
            Ok(Context::for_pid(pid))
        });
        found.unwrap_or_else(|error| {
            log(&format!(
                "could not look for the parent Firefox: {}",
                error.message
            ));
            Context {
                firefox_pid: None,
                install: Err(error),
            }
        })
    }

    fn for_pid(pid: Option<i32>) -> Self {
        let install = match pid {
            Some(pid) => files::locate(None, Some(pid)).map_err(ReplyError::from),
            None => Err(ReplyError::from(Error::FirefoxNotFound(
                "the host's parent process is not Firefox; Firefox starts this host through \
                 native messaging (use the command-line interface to run it by hand)"
                    .into(),
            ))),
        };
        Context {
            firefox_pid: pid,
            install,
        }
    }

    /// A context with no Firefox: every command needing one replies `firefox_not_found`.
    #[must_use]
    pub fn without_firefox(detail: &str) -> Self {
        let error = ReplyError::from(Error::FirefoxNotFound(detail.to_owned()));
        Context {
            firefox_pid: None,
            install: Err(error),
        }
    }

    fn install(&self) -> Result<&Install, ReplyError> {
        self.install.as_ref().map_err(Clone::clone)
    }
}

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
        out: Mutex::new(writer),
        running: Mutex::new(HashMap::new()),
        ctx,
        runner,
    });
    let mut workers = Vec::new();
    let result = read_loop(&mut reader, &shared, &mut workers);
    if result.is_err() {
        // Nobody will read what the workers would still send: stop them.
        shared.cancel_all();
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
                let _ = shared.send(&Envelope::error(None, truncated()));
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
            shared.send(&reply).context("writing a reply to stdout")?;
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

/// Answer a quick command (returns the reply) or start a long one (returns `None`: its thread
/// replies). `Err` only when the cancel reply, sent here, cannot be written.
fn dispatch<W: Write + Send + 'static>(
    shared: &Arc<Shared<W>>,
    id: u64,
    command: Command,
    workers: &mut Vec<JoinHandle<()>>,
) -> io::Result<Option<Envelope>> {
    let result = match command {
        Command::Hello => guarded(|| hello(&shared.ctx)),
        Command::Firefox => guarded(|| inspect_firefox(&shared.ctx)),
        Command::Cancel { target } => {
            // Flag and reply under the writer lock, so the cancelled request's final error
            // cannot overtake this ok (docs/PROTOCOL.md promises the ok first).
            shared.send_with(|| finish(id, shared.cancel(target).map(Reply::Cancel)))?;
            return Ok(None);
        }
        Command::Residency { .. } | Command::Preload { .. } | Command::Evict { .. } => {
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

fn finish(id: u64, result: Result<Reply, ReplyError>) -> Envelope {
    match result {
        Ok(data) => Envelope::ok(id, data),
        Err(error) => Envelope::error(Some(id), error),
    }
}

fn hello(ctx: &Context) -> Result<Reply, ReplyError> {
    Ok(Reply::Hello(Hello {
        host_version: crate::HOST_VERSION,
        protocol_version: crate::PROTOCOL_VERSION,
        capabilities: residency::capabilities(),
        firefox_pid: ctx.firefox_pid,
    }))
}

fn inspect_firefox(ctx: &Context) -> Result<Reply, ReplyError> {
    let Some(pid) = ctx.firefox_pid else {
        // Same error as the commands that need the install folder.
        return Err(ctx.install().err().unwrap_or_else(|| {
            ReplyError::from(Error::FirefoxNotFound("no parent Firefox".into()))
        }));
    };
    Ok(Reply::Firefox(firefox::inspect(pid)?))
}

/// Run `f`, turning a panic into an `io_error` reply: a bug in one command must not take the
/// whole host (and the extension's port) down with it.
fn guarded<T>(f: impl FnOnce() -> Result<T, ReplyError>) -> Result<T, ReplyError> {
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

/// Start a long command on its own thread, its cancel flag registered under `id`.
fn spawn_long<W: Write + Send + 'static>(
    shared: &Arc<Shared<W>>,
    id: u64,
    command: Command,
) -> Result<JoinHandle<()>, ReplyError> {
    let cancel = shared.register(id)?;
    let name = format!("{} {id}", command.name());
    let worker_shared = Arc::clone(shared);
    let spawned = thread::Builder::new()
        .name(name)
        .spawn(move || worker_shared.run_worker(id, &command, &cancel));
    spawned.map_err(|e| {
        shared.unregister(id);
        ReplyError::from(Error::io("starting a worker thread", e))
    })
}

/// State shared by the reader loop and the workers.
struct Shared<W> {
    out: Mutex<W>,
    /// Cancel flags of the running long commands, by request id.
    running: Mutex<HashMap<u64, Arc<AtomicBool>>>,
    ctx: Context,
    runner: Box<LongRunner>,
}

impl<W: Write> Shared<W> {
    /// Serialise and write one final message. A message over Firefox's limit is replaced by a
    /// `reply_too_large` error for the same id (one that will not serialise, by an `io_error`).
    fn send(&self, envelope: &Envelope) -> io::Result<()> {
        // Serialise before taking the lock: other threads' frames need not wait for it.
        let bytes = final_body(envelope);
        framing::write_frame(&mut *lock(&self.out), &bytes)
    }

    /// Like [`Self::send`], with the message made while the writer is held: whatever `make`
    /// does happens-before any other frame.
    fn send_with(&self, make: impl FnOnce() -> Envelope) -> io::Result<()> {
        let mut out = lock(&self.out);
        framing::write_frame(&mut *out, &final_body(&make()))
    }

    fn register(&self, id: u64) -> Result<Arc<AtomicBool>, ReplyError> {
        let mut running = lock(&self.running);
        if running.contains_key(&id) {
            // A second registration would orphan the first one's cancel flag.
            return Err(ReplyError::bad_request(format!(
                "id {id} is already used by a running request; give every request its own id"
            )));
        }
        let flag = Arc::new(AtomicBool::new(false));
        running.insert(id, Arc::clone(&flag));
        Ok(flag)
    }

    fn unregister(&self, id: u64) {
        lock(&self.running).remove(&id);
    }

    fn cancel(&self, target: u64) -> Result<Cancelled, ReplyError> {
        let Some(flag) = lock(&self.running).get(&target).cloned() else {
            return Err(ReplyError::new(
                ErrorCode::UnknownRequest,
                format!("no request with id {target} is running (it finished already, or was never sent)"),
                json!({ "target": target }),
            ));
        };
        flag.store(true, Ordering::Relaxed);
        Ok(Cancelled { target })
    }

    fn cancel_all(&self) {
        for flag in lock(&self.running).values() {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// The body of a worker thread: run, then send exactly one final message.
    fn run_worker(&self, id: u64, command: &Command, cancel: &AtomicBool) {
        let mut oversized: Option<ReplyError> = None;
        let result = guarded(|| {
            let mut emit = |event| self.emit(id, event, cancel, &mut oversized);
            (self.runner)(&self.ctx, command, cancel, &mut emit)
        });
        let result = match (oversized, result) {
            (Some(error), _) => Err(error),
            (None, Err(error)) if error.code == ErrorCode::Cancelled => Err(cancelled(command, id)),
            (None, result) => result,
        };
        // Unregister before replying, so a cancel that arrives after the reply gets
        // `unknown_request` rather than a false success.
        self.unregister(id);
        if let Err(e) = self.send(&finish(id, result)) {
            log(&format!(
                "could not send the reply to {} {id}: {e}",
                command.name()
            ));
        }
    }

    /// Send one event of request `id`. When an event cannot be sent (too large, or stdout is
    /// gone) the command is cancelled; an oversized event becomes the request's final error.
    fn emit(&self, id: u64, event: Event, cancel: &AtomicBool, oversized: &mut Option<ReplyError>) {
        if oversized.is_some() {
            return;
        }
        let bytes = match encode(&Envelope::event(id, event)) {
            Ok(Encoded::Fits(bytes)) => bytes,
            Ok(Encoded::TooLarge(error)) => {
                // The final message must be the last one: send it when the worker ends.
                *oversized = Some(error);
                cancel.store(true, Ordering::Relaxed);
                return;
            }
            Err(e) => {
                // One event lost (e.g. a file name that is not UTF-8); the command goes on.
                log(&format!(
                    "could not serialise an event of request {id}: {e}"
                ));
                return;
            }
        };
        if let Err(e) = framing::write_frame(&mut *lock(&self.out), &bytes) {
            log(&format!(
                "could not send an event of request {id}, stopping it: {e}"
            ));
            cancel.store(true, Ordering::Relaxed);
        }
    }
}

/// A message serialised for the wire.
#[derive(Debug)]
enum Encoded {
    /// Its frame body, within [`MAX_OUTGOING`].
    Fits(Vec<u8>),
    /// It is over [`MAX_OUTGOING`]: the `reply_too_large` error that stands for it.
    TooLarge(ReplyError),
}

/// Serialise `envelope` once and check the size of the bytes.
fn encode(envelope: &Envelope) -> serde_json::Result<Encoded> {
    let bytes = serde_json::to_vec(envelope)?;
    let size = bytes.len();
    if size <= MAX_OUTGOING {
        return Ok(Encoded::Fits(bytes));
    }
    log(&format!(
        "a reply of {size} bytes is over the {MAX_OUTGOING}-byte limit"
    ));
    Ok(Encoded::TooLarge(ReplyError::new(
        ErrorCode::ReplyTooLarge,
        format!(
            "the reply would be {size} bytes, over Firefox's {MAX_OUTGOING}-byte limit; this \
             is a bug in the host, please report it"
        ),
        json!({ "size": size }),
    )))
}

/// The frame body of a final message: `envelope`, or the error that stands for it for the same
/// id when it is too large or will not serialise (that error is tiny, so always fits).
fn final_body(envelope: &Envelope) -> Vec<u8> {
    let error = match encode(envelope) {
        Ok(Encoded::Fits(bytes)) => return bytes,
        Ok(Encoded::TooLarge(error)) => error,
        Err(e) => ReplyError::internal(&format!("serialising a reply: {e}")),
    };
    let fallback = Envelope::error(envelope.id, error);
    serde_json::to_vec(&fallback).expect("a small error envelope serialises")
}

fn cancelled(command: &Command, id: u64) -> ReplyError {
    ReplyError::new(
        ErrorCode::Cancelled,
        format!("{} {id} was cancelled", command.name()),
        json!({}),
    )
}

/// Lock, ignoring poisoning: a panic elsewhere never leaves these maps or the writer half-done
/// (a frame is written under the lock by code that does not panic).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn log(message: &str) {
    eprintln!("about-startup-host: {message}");
}

/// The real work of `residency`, `preload` and `evict`: confine the paths first, then run.
pub fn run_long(
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
        } => {
            let selected = select(install, files.as_deref())?;
            let opts = preload::Options {
                method: method.unwrap_or_default(),
                idle: idle.unwrap_or(false),
                jobs: *jobs,
            };
            let mut on_progress =
                |progress: &preload::Progress| emit(Event::Progress(progress.clone()));
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
        Command::Hello | Command::Firefox | Command::Cancel { .. } | Command::Unknown => Err(
            ReplyError::internal(&format!("{} is not a long command", command.name())),
        ),
    }
}

/// Confinement to the install folder, before anything is opened.
fn select(install: &Install, files: Option<&[PathBuf]>) -> Result<Vec<PathBuf>, ReplyError> {
    Ok(files::select(&install.dir, files.unwrap_or_default())?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::encode as frame;
    use crate::residency::{FileReport, Group, Status};
    use serde_json::Value;
    use std::ffi::OsString;
    use std::io::Cursor;
    use std::os::unix::ffi::OsStringExt;
    use std::time::{Duration, Instant};

    /// A writer the test keeps a handle to.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            lock(&self.0).extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Sink {
        fn replies(&self) -> Vec<Value> {
            let bytes = lock(&self.0).clone();
            let mut cursor = Cursor::new(bytes);
            let mut out = Vec::new();
            while let ReadOutcome::Frame(body) = framing::read_frame(&mut cursor).unwrap() {
                out.push(serde_json::from_slice(&body).unwrap());
            }
            out
        }
    }

    fn no_firefox() -> Context {
        Context::without_firefox("test")
    }

    fn run(input: &[u8], runner: Box<LongRunner>) -> (anyhow::Result<()>, Vec<Value>) {
        let sink = Sink::default();
        let result = serve_with(
            Cursor::new(input.to_vec()),
            sink.clone(),
            no_firefox(),
            runner,
        );
        (result, sink.replies())
    }

    fn request(value: &Value) -> Vec<u8> {
        frame(&serde_json::to_vec(value).unwrap())
    }

    fn probe(id: u64) -> Vec<u8> {
        // Answered by the host alone, whatever the kernel modules do.
        request(&json!({"id": id, "command": "cancel", "target": 999_999}))
    }

    /// `evict`'s reply with no files: what the fake long commands answer.
    fn evicted(elapsed_ms: u64) -> Reply {
        Reply::Evict(evict::Summary {
            files: Vec::new(),
            pages_dropped: 0,
            elapsed_ms,
        })
    }

    /// A `residency` event for a file named `path`.
    fn file_event(path: impl Into<PathBuf>) -> Event {
        Event::File(FileReport {
            path: path.into(),
            group: Group::Install,
            size: 0,
            pages: 0,
            status: Status::Exact,
            hidden_reason: None,
            error: None,
            resident_pages: Some(0),
            resident_ranges: Some(Vec::new()),
            range_unit_pages: 1,
            mapped: None,
        })
    }

    fn codes(replies: &[Value]) -> Vec<(Value, Value)> {
        replies
            .iter()
            .map(|r| (r["id"].clone(), r["code"].clone()))
            .collect()
    }

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
    fn without_firefox_long_commands_and_firefox_reply_firefox_not_found() {
        let mut input = Vec::new();
        for (id, command) in [
            (1, "residency"),
            (2, "preload"),
            (3, "evict"),
            (4, "firefox"),
        ] {
            input.extend(request(&json!({"id": id, "command": command})));
        }
        let (result, mut replies) = run(&input, Box::new(run_long));
        result.unwrap();
        replies.sort_by_key(|r| r["id"].as_u64());
        let expected: Vec<_> = (1..=4)
            .map(|id| (json!(id), json!("firefox_not_found")))
            .collect();
        assert_eq!(codes(&replies), expected);
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

    /// A long command that streams `n` events, then waits for cancel (up to 5 s).
    fn slow_runner(n: usize) -> Box<LongRunner> {
        Box::new(move |_ctx, _cmd, cancel, emit| {
            for i in 0..n as u64 {
                emit(Event::Progress(preload::Progress {
                    bytes_done: i,
                    bytes_total: n as u64,
                    files_done: i,
                    files_total: n as u64,
                    current_file: None,
                }));
            }
            let start = Instant::now();
            while !cancel.load(Ordering::Relaxed) {
                if start.elapsed() > Duration::from_secs(5) {
                    return Ok(evicted(5000));
                }
                thread::sleep(Duration::from_millis(5));
            }
            Err(Error::Cancelled.into())
        })
    }

    /// A reader that hands out its frames one by one, pausing before each, so a worker has
    /// started before the next request (e.g. a cancel) is read.
    struct Paced(Vec<Vec<u8>>, Option<Cursor<Vec<u8>>>);

    impl Read for Paced {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            loop {
                if let Some(cur) = &mut self.1 {
                    let n = cur.read(buf)?;
                    if n > 0 {
                        return Ok(n);
                    }
                }
                if self.0.is_empty() {
                    return Ok(0);
                }
                thread::sleep(Duration::from_millis(50));
                self.1 = Some(Cursor::new(self.0.remove(0)));
            }
        }
    }

    fn run_paced(frames: Vec<Vec<u8>>, runner: Box<LongRunner>) -> Vec<Value> {
        let sink = Sink::default();
        serve_with(Paced(frames, None), sink.clone(), no_firefox(), runner).unwrap();
        sink.replies()
    }

    #[test]
    fn cancel_stops_a_running_command_and_events_come_first() {
        let replies = run_paced(
            vec![
                request(&json!({"id": 4, "command": "preload"})),
                request(&json!({"id": 6, "command": "cancel", "target": 4})),
            ],
            slow_runner(2),
        );
        let summary: Vec<_> = replies
            .iter()
            .map(|r| (r["id"].clone(), r["status"].clone()))
            .collect();
        assert_eq!(
            summary,
            vec![
                (json!(4), json!("event")),
                (json!(4), json!("event")),
                (json!(6), json!("ok")),
                (json!(4), json!("error")),
            ]
        );
        assert_eq!(replies[2]["data"], json!({"target": 4}));
        assert_eq!(replies[3]["code"], json!("cancelled"));
        assert_eq!(replies[3]["message"], json!("preload 4 was cancelled"));
    }

    #[test]
    fn a_reused_running_id_is_refused() {
        let replies = run_paced(
            vec![
                request(&json!({"id": 4, "command": "evict"})),
                request(&json!({"id": 4, "command": "residency"})),
                request(&json!({"id": 5, "command": "cancel", "target": 4})),
            ],
            slow_runner(0),
        );
        let summary: Vec<_> = replies
            .iter()
            .map(|r| (r["id"].clone(), r["code"].clone()))
            .collect();
        assert_eq!(
            summary,
            vec![
                (json!(4), json!("bad_request")),
                (json!(5), Value::Null),
                (json!(4), json!("cancelled")),
            ]
        );
    }

    #[test]
    fn a_panicking_worker_becomes_an_io_error_and_the_host_goes_on() {
        let mut input = request(&json!({"id": 1, "command": "residency"}));
        input.extend(probe(2));
        let (result, mut replies) = run(&input, Box::new(|_, _, _, _| panic!("boom")));
        result.unwrap();
        replies.sort_by_key(|r| r["id"].as_u64());
        assert_eq!(replies[0]["code"], json!("io_error"));
        assert_eq!(replies[0]["message"], json!("internal error: boom"));
        assert_eq!(replies[1]["code"], json!("unknown_request"));
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
                "files": [], "pages_dropped": 0, "elapsed_ms": 200}})]
        );
    }

    #[test]
    fn an_oversized_final_reply_becomes_reply_too_large() {
        let runner: Box<LongRunner> = Box::new(|_, _, _, _| {
            Ok(Reply::Residency(residency::Summary {
                install_dir: "x".repeat(MAX_OUTGOING + 10).into(),
                page_size: 4096,
                groups: std::collections::BTreeMap::new(),
                elapsed_ms: 0,
            }))
        });
        let (result, replies) = run(&request(&json!({"id": 1, "command": "evict"})), runner);
        result.unwrap();
        assert_eq!(replies.len(), 1);
        assert_eq!(replies[0]["code"], json!("reply_too_large"));
        assert!(replies[0]["params"]["size"].as_u64().unwrap() > MAX_OUTGOING as u64);
    }

    #[test]
    fn an_oversized_event_cancels_and_ends_the_request_with_reply_too_large() {
        let runner: Box<LongRunner> = Box::new(|_, _, cancel, emit| {
            emit(file_event("small"));
            emit(file_event("x".repeat(MAX_OUTGOING)));
            emit(file_event("never sent"));
            assert!(cancel.load(Ordering::Relaxed));
            Err(Error::Cancelled.into())
        });
        let (result, replies) = run(&request(&json!({"id": 1, "command": "residency"})), runner);
        result.unwrap();
        let statuses: Vec<_> = replies.iter().map(|r| r["status"].clone()).collect();
        assert_eq!(statuses, vec![json!("event"), json!("error")]);
        assert_eq!(replies[1]["code"], json!("reply_too_large"));
    }

    #[test]
    fn an_event_that_will_not_serialise_is_dropped_and_the_command_goes_on() {
        let runner: Box<LongRunner> = Box::new(|_, _, cancel, emit| {
            // serde_json refuses a path that is not UTF-8.
            emit(file_event(OsString::from_vec(b"bad\xff".to_vec())));
            emit(file_event("good"));
            assert!(!cancel.load(Ordering::Relaxed));
            Ok(evicted(0))
        });
        let (result, replies) = run(&request(&json!({"id": 1, "command": "residency"})), runner);
        result.unwrap();
        let statuses: Vec<_> = replies.iter().map(|r| r["status"].clone()).collect();
        assert_eq!(statuses, vec![json!("event"), json!("ok")]);
        assert_eq!(replies[0]["event"], json!("file"));
        assert_eq!(replies[0]["data"]["path"], json!("good"));
    }

    #[test]
    fn a_final_reply_that_will_not_serialise_becomes_an_io_error() {
        let runner: Box<LongRunner> = Box::new(|_, _, _, _| {
            Ok(Reply::Residency(residency::Summary {
                install_dir: OsString::from_vec(b"bad\xff".to_vec()).into(),
                page_size: 4096,
                groups: std::collections::BTreeMap::new(),
                elapsed_ms: 0,
            }))
        });
        let (result, replies) = run(&request(&json!({"id": 1, "command": "residency"})), runner);
        result.unwrap();
        assert_eq!(codes(&replies), vec![(json!(1), json!("io_error"))]);
        let message = replies[0]["message"].as_str().unwrap();
        assert!(
            message.starts_with("internal error: serialising a reply"),
            "{message}"
        );
    }
}
