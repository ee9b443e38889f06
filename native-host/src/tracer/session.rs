//! One recording, served over a byte stream (pkexec's stdin/stdout, root's own child's pipes, or
//! the sudo split's socket): armed and confined first, then `Ready`, at most one `Follow`, lines
//! every tick, and at `Stop` the page frames' flags and `Done`. End of input at any moment, the
//! hard limits or SIGTERM end it too; the instances are removed in every case.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::arm::{Armed, Failure};
use super::filter::Filter;
use super::protocol::{self, Ended, Refusal, Reply, Request, LINES_PER_FRAME_BYTES};
use super::{confine, who};
use crate::framing::{read_frame, write_frame, ReadOutcome};

/// The tracer hands the tree's lines over this often.
const TICK: Duration = Duration::from_millis(10);
/// …and waits at most this long for the system instance (execs to look at) between two looks
/// at the user's requests.
const EXEC_WAIT: Duration = Duration::from_millis(2);
/// The hard limit of a recording, from `Follow`: no recording of a start needs more (the
/// user's side stops at 120 s), and no input changes it.
pub const LIMIT: Duration = Duration::from_secs(180);
/// How long a session may wait for its `Follow` (under sudo the command may first wait for a
/// running Firefox to quit, for up to an hour: `relaunch --timeout`).
pub const IDLE_LIMIT: Duration = Duration::from_secs(2 * 3600);
/// The most of trace text handed over in one session (a cold start is ~15 MB).
pub const MAX_FORWARDED: u64 = 512 << 20;
/// Page-frame flags per `PageFlags` frame (about 25 bytes each).
const FLAGS_PER_FRAME: usize = 20_000;

/// Set by SIGTERM on pkexec's and root's own route.
static TERMINATED: AtomicBool = AtomicBool::new(false);

pub extern "C" fn on_term(_: libc::c_int) {
    TERMINATED.store(true, Ordering::SeqCst);
}

/// SIGTERM to `handler`, SIGHUP too where `hup` (else ignored), SIGINT ignored: the terminal's
/// Ctrl-C reaches the user's side too, which stops its recording, and its end closing ends the
/// session.
pub fn signals(handler: extern "C" fn(libc::c_int), hup: bool) {
    let handler = handler as *const () as libc::sighandler_t;
    // SAFETY: the handlers only store to an atomic or call kill (async-signal-safe).
    unsafe {
        libc::signal(libc::SIGTERM, handler);
        libc::signal(libc::SIGHUP, if hup { handler } else { libc::SIG_IGN });
        libc::signal(libc::SIGINT, libc::SIG_IGN);
    }
}

/// A request, or why none comes any more (`None`: the stream ended).
type Input = Result<Request, Option<String>>;

/// The user's requests, read by a thread of their own: a read that never completes holds up
/// neither the recording nor its limits.
fn reader(mut input: impl Read + Send + 'static) -> Receiver<Input> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || loop {
        let item = match read_frame(&mut input) {
            Ok(ReadOutcome::Frame(body)) => protocol::decode(&body).map_err(Some),
            Ok(ReadOutcome::TooLarge { len }) => Err(Some(format!("a frame of {len} bytes"))),
            Ok(ReadOutcome::Truncated) => Err(Some("a cut frame".into())),
            Ok(ReadOutcome::Eof) | Err(_) => Err(None),
        };
        let last = item.is_err();
        if tx.send(item).is_err() || last {
            return;
        }
    });
    rx
}

/// The user's end: a failed write means it is gone.
struct Out<W: Write> {
    w: W,
    gone: bool,
}

impl<W: Write> Out<W> {
    fn send(&mut self, reply: &Reply) {
        self.gone = self.gone || write_frame(&mut self.w, &protocol::encode(reply)).is_err();
    }
}

/// Arm (before confinement: Landlock checks a path when it is opened), then confine.
fn arm_and_confine(may_override: bool) -> Result<Armed, Failure> {
    let armed = Armed::prepare()?;
    match confine::confine(may_override) {
        Ok(()) => Ok(armed),
        Err(e) => {
            armed.teardown();
            Err((Refusal::Unavailable, e))
        }
    }
}

/// Arm, confine and serve one recording for user `uid`; `may_override`: whether root's own
/// environment may let it run without Landlock (confine.rs). Call while this process has one
/// thread.
pub fn serve(
    input: impl Read + Send + 'static,
    output: impl Write,
    uid: u32,
    may_override: bool,
) -> Ended {
    let mut out = Out {
        w: output,
        gone: false,
    };
    let mut armed = match arm_and_confine(may_override) {
        Ok(armed) => armed,
        Err((code, message)) => {
            out.send(&Reply::Refused { code, message });
            out.send(&Reply::Done {
                lost_events: 0,
                ended: Ended::Refused,
            });
            return Ended::Refused;
        }
    };
    out.send(&Reply::Ready {
        version: protocol::VERSION,
    });
    let ended = record(&mut armed, &reader(input), &mut out, uid);
    out.send(&Reply::Done {
        lost_events: armed.lost(),
        ended,
    });
    for dir in armed.teardown() {
        eprintln!(
            "about-startup-host tracer: could not remove {}; remove it with rmdir as root",
            dir.display()
        );
    }
    ended
}

/// The session's loop until it ends, and the last lines and the flags where it ends well.
fn record<W: Write>(armed: &mut Armed, rx: &Receiver<Input>, out: &mut Out<W>, uid: u32) -> Ended {
    let mut since = Instant::now();
    let mut following: Option<Following> = None;
    let mut forwarded = 0u64;
    let ended = loop {
        let limit = if following.is_some() {
            LIMIT
        } else {
            IDLE_LIMIT
        };
        if out.gone {
            break Ended::Eof;
        } else if TERMINATED.load(Ordering::SeqCst) {
            break Ended::Signal;
        } else if since.elapsed() >= limit || forwarded >= MAX_FORWARDED {
            break Ended::Limit;
        }
        // While following, the system instance is watched closely: an exec is looked at as
        // soon as it is read (a short-lived program that became someone else is gone ten
        // milliseconds later, and then fails closed); the tree's lines go every tick.
        let wait = match following.as_mut() {
            Some(f) => {
                armed.wait_system(EXEC_WAIT);
                if f.system(armed).is_err() {
                    break Ended::Eof;
                }
                Duration::ZERO
            }
            None => TICK,
        };
        let refused = match rx.recv_timeout(wait) {
            Ok(Ok(Request::Follow { .. })) if following.is_some() => {
                (Refusal::OutOfOrder, "one Follow per session".to_owned())
            }
            Ok(Ok(Request::Follow { pid, faults })) => match follow(armed, uid, pid, faults) {
                Ok(f) => {
                    following = Some(f);
                    since = Instant::now();
                    out.send(&Reply::Armed);
                    continue;
                }
                Err(refused) => refused,
            },
            Ok(Ok(Request::Stop {})) => break Ended::Stop,
            Ok(Err(None)) | Err(RecvTimeoutError::Disconnected) => break Ended::Eof,
            Ok(Err(Some(why))) => (Refusal::Malformed, why),
            Err(RecvTimeoutError::Timeout) => {
                if let Some(f) = following.as_mut().filter(|f| f.last.elapsed() >= TICK) {
                    forwarded += f.pump(armed, out);
                }
                continue;
            }
        };
        out.send(&Reply::Refused {
            code: refused.0,
            message: refused.1,
        });
        break Ended::Refused;
    };
    armed.stop();
    if let (Some(f), Ended::Stop | Ended::Limit | Ended::Signal) = (following.as_mut(), ended) {
        f.pump(armed, out);
        f.send_flags(armed, out);
    }
    ended
}

/// Check `Follow{pid}` (a running process, wholly the user's) and arm it.
fn follow(armed: &mut Armed, uid: u32, pid: i32, faults: bool) -> Result<Following, Failure> {
    let creds = who::credentials(pid)
        .filter(|c| pid > 0 && !matches!(c.state, 'Z' | 'X'))
        .ok_or((Refusal::NoProcess, format!("no running process {pid}")))?;
    if !who::wholly(&creds, uid, None) {
        return Err((
            Refusal::NotYours,
            format!("process {pid} is not wholly yours (uid {uid}): every uid and gid must be yours, with no capability"),
        ));
    }
    let gid = creds.gids[0];
    let (mut tasks, mut left_out) = who::tree(pid, uid, gid);
    armed.follow(&tasks, faults)?;
    // Tasks started while the first list was written: the kernel added those forked by a listed
    // task; a second look adds the rest.
    let (again, left_again) = who::tree(pid, uid, gid);
    let new: Vec<i32> = again.into_iter().filter(|t| !tasks.contains(t)).collect();
    armed.add(&new)?;
    tasks.extend(new);
    left_out.extend(left_again);
    Ok(Following {
        filter: Filter::new(&tasks, &left_out),
        uid,
        gid,
        tree_raw: Vec::new(),
        system_raw: Vec::new(),
        last: Instant::now(),
    })
}

/// The followed tree, once `Follow` was accepted.
struct Following {
    filter: Filter,
    uid: u32,
    gid: u32,
    tree_raw: Vec<u8>,
    system_raw: Vec<u8>,
    /// When the tree's lines were last handed over.
    last: Instant,
}

/// Whole lines of `raw` (the rest stays for the next drain).
fn whole_lines(raw: &mut Vec<u8>) -> Vec<Vec<u8>> {
    let Some(end) = raw.iter().rposition(|b| *b == b'\n') else {
        return Vec::new();
    };
    let lines = raw[..end]
        .split(|b| *b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    raw.drain(..=end);
    lines
}

impl Following {
    /// Read the system instance now: execs are looked at, completions wait for their issue.
    fn system(&mut self, armed: &mut Armed) -> Result<(), Failure> {
        armed.system.drain(&mut self.system_raw)?;
        let (uid, gid) = (self.uid, self.gid);
        let mut still_yours =
            |pid| who::credentials(pid).is_some_and(|c| who::wholly(&c, uid, Some(gid)));
        for line in whole_lines(&mut self.system_raw) {
            self.filter.system_line(&line, &mut still_yours);
        }
        Ok(())
    }

    /// Hand over what both instances hold now, through the filter, in frames; the bytes handed
    /// over. A pipe that cannot be read ends the recording like a lost peer.
    fn pump<W: Write>(&mut self, armed: &mut Armed, out: &mut Out<W>) -> u64 {
        self.last = Instant::now();
        if armed.tree.drain(&mut self.tree_raw).is_err() || self.system(armed).is_err() {
            out.gone = true;
            return 0;
        }
        let tree = whole_lines(&mut self.tree_raw);
        let tree: Vec<&[u8]> = tree.iter().map(Vec::as_slice).collect();
        self.filter.learn_forks(&tree);
        let mut lines: Vec<String> = tree
            .iter()
            .filter_map(|l| self.filter.tree_line(l))
            .collect();
        lines.extend(self.filter.matched_completions());
        let lost = self.filter.take_lost();
        let (mut sent, mut batch, mut size) = (0, Vec::new(), 0);
        for line in lines {
            size += line.len();
            batch.push(line);
            if size >= LINES_PER_FRAME_BYTES {
                sent += size;
                let lines = std::mem::take(&mut batch);
                out.send(&Reply::Lines { lines, lost: 0 });
                size = 0;
            }
        }
        if !batch.is_empty() || lost > 0 {
            sent += size;
            out.send(&Reply::Lines { lines: batch, lost });
        }
        sent as u64
    }

    /// Each page frame's `/proc/kpageflags` word, by token.
    fn send_flags<W: Write>(&self, armed: &Armed, out: &mut Out<W>) {
        let frames = self.filter.frames();
        let all: Vec<(u64, u64)> = frames
            .filter_map(|(pfn, token)| Some((token, armed.page_flags(pfn)?)))
            .collect();
        for chunk in all.chunks(FLAGS_PER_FRAME) {
            out.send(&Reply::PageFlags {
                flags: chunk.to_vec(),
            });
        }
    }
}
