//! The user's side of the tracer's protocol (tracer/protocol.rs): a [`Link`] over whatever
//! reaches the tracer (pkexec's pipes, the sudo split's socket, root's own child; how, is the
//! launch pipeline's business: launch/connect.rs). A thread reads the tracer's frames so the
//! recording can poll them every tick without blocking.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::process::Child;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::time::Duration;

use crate::framing::{read_frame, write_frame, ReadOutcome};
use crate::tracer::protocol::{self, Ended, Refusal, Reply, Request};

/// Why the link gives no trace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error("the tracer refused ({code:?}): {message}")]
    Refused { code: Refusal, message: String },
    #[error("the tracer ended: {0}")]
    Closed(String),
    #[error("the tracer answered out of protocol: {0}")]
    Protocol(String),
}

impl LinkError {
    /// The trace's note reason for it (`note::NO_TRACE_*`).
    #[must_use]
    pub fn note_reason(&self) -> &'static str {
        match self {
            LinkError::Refused {
                code: Refusal::NoTracefs,
                ..
            } => crate::note::NO_TRACE_NO_TRACEFS,
            LinkError::Refused {
                code: Refusal::InstanceTaken,
                ..
            } => crate::note::NO_TRACE_INSTANCE_TAKEN,
            _ => crate::note::NO_TRACE_IO,
        }
    }
}

enum Msg {
    Reply(Reply),
    Closed(String),
}

/// How long the tracer may take from `Stop` to `Done` (its last lines, the page frames' flags,
/// the instances removed: a second or two); past it the tracer is taken as gone, and the
/// recording ends with what it has.
const LAST_WORDS: Duration = Duration::from_secs(30);

/// Why a session that ended before it was told to stop did, in words for the user.
#[must_use]
pub fn ended_early(ended: Ended) -> &'static str {
    match ended {
        Ended::Lost => "the kernel's ring buffer lost events of the traced tree, so which tasks are Firefox's could no longer be proven, and the tracer hands over nothing it cannot prove",
        Ended::Limit => "it reached its hard limit (180 s of recording, or 512 MiB of trace text)",
        Ended::Signal => "it was told to end (SIGTERM or SIGHUP)",
        Ended::Refused => "it refused a request of this side",
        Ended::Eof => "its connection to this side ended",
        Ended::Stop => "it was told to stop",
    }
}

fn spawn_reader(mut input: impl Read + Send + 'static) -> Receiver<Msg> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || loop {
        let msg = match read_frame(&mut input) {
            Ok(ReadOutcome::Frame(body)) => match serde_json::from_slice::<Reply>(&body) {
                Ok(r) => Msg::Reply(r),
                Err(e) => Msg::Closed(format!("an unreadable frame ({e})")),
            },
            Ok(ReadOutcome::Eof) => Msg::Closed("its end closed".into()),
            Ok(ReadOutcome::TooLarge { len }) => Msg::Closed(format!("a frame of {len} bytes")),
            Ok(ReadOutcome::Truncated) => Msg::Closed("a cut frame".into()),
            Err(e) => Msg::Closed(e.to_string()),
        };
        let last = matches!(msg, Msg::Closed(_));
        if tx.send(msg).is_err() || last {
            return;
        }
    });
    rx
}

/// What the end of a recording brings.
#[derive(Debug, Default)]
pub struct Stopped {
    pub lines: Vec<String>,
    /// Page frame token → `/proc/kpageflags` word.
    pub flags: HashMap<u64, u64>,
    /// Lines the tracer's filter could not deliver.
    pub lost_lines: u64,
    /// Events the kernel's buffers dropped.
    pub lost_events: u64,
    pub ended: Option<Ended>,
}

/// A connection to a tracer that said `Ready`.
pub struct Link {
    writer: Box<dyn Write + Send>,
    rx: Receiver<Msg>,
    /// The tracer's process where this side started it (pkexec, or root's own child).
    process: Option<Child>,
    /// Set once the tracer sent `Done` (it ends; nothing more comes).
    pub ended: Option<Ended>,
    /// Where the tracer's end closed before its `Done`: why (then `ended` is `Eof`).
    pub closed: Option<String>,
    lost_lines: u64,
    /// `Done.lost_events`, where it came in [`Link::poll`].
    lost_events: u64,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link").field("ended", &self.ended).finish()
    }
}

impl Link {
    /// Talk to a tracer over `reader`/`writer`; waits for its `Ready` (pkexec may first ask
    /// for a password: no time limit here, pkexec ends itself).
    pub fn open(
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
        process: Option<Child>,
    ) -> Result<Link, LinkError> {
        let mut link = Link {
            writer: Box::new(writer),
            rx: spawn_reader(reader),
            process,
            ended: None,
            closed: None,
            lost_lines: 0,
            lost_events: 0,
        };
        match link.next()? {
            Reply::Ready { version } if version == protocol::VERSION => Ok(link),
            Reply::Ready { version, .. } => Err(LinkError::Protocol(format!(
                "the tracer speaks version {version}, this host {}: install the same version of both",
                protocol::VERSION
            ))),
            Reply::Refused { code, message } => Err(LinkError::Refused { code, message }),
            other => Err(LinkError::Protocol(format!("{other:?} before Ready"))),
        }
    }

    /// Let this link reap `process` (the tracer's, started by the caller) when it ends.
    #[must_use]
    pub fn with_process(mut self, process: Child) -> Link {
        self.process = Some(process);
        self
    }

    fn next(&mut self) -> Result<Reply, LinkError> {
        match self.rx.recv() {
            Ok(Msg::Reply(r)) => Ok(r),
            Ok(Msg::Closed(why)) => Err(LinkError::Closed(why)),
            Err(_) => Err(LinkError::Closed("its end closed".into())),
        }
    }

    fn send(&mut self, req: &Request) -> Result<(), LinkError> {
        let body = serde_json::to_vec(req).map_err(|e| LinkError::Protocol(e.to_string()))?;
        write_frame(&mut self.writer, &body).map_err(|e| LinkError::Closed(e.to_string()))
    }

    /// Follow `pid`; `Ok` once armed: the tree's events are recorded from then on.
    pub fn follow(&mut self, pid: i32, faults: bool) -> Result<(), LinkError> {
        self.send(&Request::Follow { pid, faults })?;
        match self.next()? {
            Reply::Armed => Ok(()),
            Reply::Refused { code, message } => Err(LinkError::Refused { code, message }),
            other => Err(LinkError::Protocol(format!("{other:?} instead of Armed"))),
        }
    }

    /// The lines that came since the last call (never waits).
    pub fn poll(&mut self, lines: &mut Vec<String>) {
        loop {
            match self.rx.try_recv() {
                Ok(Msg::Reply(Reply::Lines { lines: l, lost })) => {
                    lines.extend(l);
                    self.lost_lines += lost;
                }
                Ok(Msg::Reply(Reply::Done { ended, lost_events })) => {
                    self.ended = Some(ended);
                    self.lost_events = lost_events;
                    return;
                }
                Ok(Msg::Reply(_)) => {}
                Ok(Msg::Closed(why)) => {
                    self.ended.get_or_insert(Ended::Eof);
                    self.closed.get_or_insert(why);
                    return;
                }
                Err(TryRecvError::Disconnected) => {
                    self.ended.get_or_insert(Ended::Eof);
                    self.closed.get_or_insert("its end closed".into());
                    return;
                }
                Err(TryRecvError::Empty) => return,
            }
        }
    }

    /// Stop: the last lines, the page frames' flags, the counts; the tracer then ends. A
    /// tracer that has ended already (its `Done` or its end's close came in [`Link::poll`])
    /// has nothing more to say: nothing is waited for. Its `Done` is waited for at most
    /// [`LAST_WORDS`].
    pub fn stop(mut self) -> Stopped {
        let mut out = Stopped {
            lost_events: self.lost_events,
            ..Stopped::default()
        };
        if self.ended.is_none() && self.send(&Request::Stop {}).is_err() {
            self.ended = Some(Ended::Eof);
        }
        let until = std::time::Instant::now() + LAST_WORDS;
        while self.ended.is_none() {
            let left = until.saturating_duration_since(std::time::Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Msg::Reply(Reply::Lines { lines, lost })) => {
                    out.lines.extend(lines);
                    self.lost_lines += lost;
                }
                Ok(Msg::Reply(Reply::PageFlags { flags })) => out.flags.extend(flags),
                Ok(Msg::Reply(Reply::Done { lost_events, ended })) => {
                    out.lost_events = lost_events;
                    out.ended = Some(ended);
                    break;
                }
                Ok(Msg::Reply(_)) => {}
                Ok(Msg::Closed(_)) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    eprintln!("about-startup-host: warning: the tracer did not end within {} s of Stop; recording ends with what it handed over", LAST_WORDS.as_secs());
                    break;
                }
            }
        }
        out.lost_lines = self.lost_lines;
        out.ended = out.ended.or(self.ended);
        out
    }
}

impl Drop for Link {
    /// Close this end (the tracer ends on it) and reap the tracer's process.
    fn drop(&mut self) {
        self.writer = Box::new(std::io::sink());
        if let Some(mut child) = self.process.take() {
            let _ = child.wait();
        }
    }
}
