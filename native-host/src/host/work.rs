//! Long commands (`residency`, `preload`, `evict`): each on its own thread, with a cancel flag
//! registered under its request id until its final message.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use serde_json::json;

use super::guard::{finish, guarded};
use super::log::log;
use super::shared::Shared;
use crate::host::protocol::{Command, ErrorCode, Event, ReplyError};
use crate::Error;

/// Start a long command on its own thread, its cancel flag registered under `id`.
pub(super) fn spawn_long<W: Write + Send + 'static>(
    shared: &Arc<Shared<W>>,
    id: u64,
    command: Command,
) -> Result<JoinHandle<()>, ReplyError> {
    let cancel = shared.running.register(id)?;
    let name = format!("{} {id}", command.name());
    let worker_shared = Arc::clone(shared);
    let spawned = thread::Builder::new()
        .name(name)
        .spawn(move || worker_shared.run_worker(id, &command, &cancel));
    spawned.map_err(|e| {
        shared.running.unregister(id);
        ReplyError::from(Error::io("starting a worker thread", e))
    })
}

impl<W: Write> Shared<W> {
    /// The body of a worker thread: run, then send exactly one final message.
    fn run_worker(&self, id: u64, command: &Command, cancel: &AtomicBool) {
        let mut oversized: Option<ReplyError> = None;
        let result = guarded(|| {
            let mut emit = |event| self.emit(id, event, cancel, &mut oversized);
            (self.runner)(&self.ctx(), command, cancel, &mut emit)
        });
        let result = match (oversized, result) {
            (Some(error), _) => Err(error),
            (None, Err(error)) if error.code == ErrorCode::Cancelled => Err(cancelled(command, id)),
            (None, result) => result,
        };
        // Unregister before replying, so a cancel that arrives after the reply gets
        // `unknown_request` rather than a false success.
        self.running.unregister(id);
        if let Err(e) = self.out.send(&finish(id, result)) {
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
        match self.out.send_event(id, event) {
            Ok(None) => {}
            Ok(Some(error)) => {
                // The final message must be the last one: send it when the worker ends.
                *oversized = Some(error);
                cancel.store(true, Ordering::Relaxed);
            }
            Err(e) => {
                log(&format!(
                    "could not send an event of request {id}, stopping it: {e}"
                ));
                cancel.store(true, Ordering::Relaxed);
            }
        }
    }
}

fn cancelled(command: &Command, id: u64) -> ReplyError {
    ReplyError::new(
        ErrorCode::Cancelled,
        format!("{} {id} was cancelled", command.name()),
        json!({}),
    )
}

#[cfg(test)]
mod tests {
    use std::io::{self, Cursor, Read};
    use std::sync::atomic::Ordering;
    use std::thread;
    use std::time::{Duration, Instant};

    use serde_json::{json, Value};

    use crate::host::protocol::Event;
    use crate::host::test_support::{codes, evicted, no_firefox, probe, request, run, Sink};
    use crate::host::{serve_with, LongRunner};
    use crate::pagecache::preload;
    use crate::Error;

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
        assert_eq!(
            codes(&replies),
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
}
