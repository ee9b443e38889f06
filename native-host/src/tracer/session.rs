//! One recording, served over a byte stream (pkexec's stdin/stdout, root's own child's pipes, or
//! the sudo split's socket): armed, confined and stripped of its capabilities first, then
//! `Ready`, at most one `Follow`, lines every tick, and at `Stop` the page frames' flags and
//! `Done`. End of input at any moment, the hard
//! limits, SIGTERM or SIGHUP, or a line lost where the tree's proof lives end it too; the
//! instances are removed in every case. No write to the user's side blocks past the limits.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::thread::{set_capabilities, CapabilitySet, CapabilitySets};

use super::arm::{Armed, Failure};
use super::filter::Filter;
use super::protocol::{self, Ended, Refusal, Reply, Request, LINES_PER_FRAME_BYTES};
use super::{confine, syscalls, who};
use crate::framing::{encode, read_frame, ReadOutcome};

/// The tracer hands the tree's lines over this often.
const TICK: Duration = Duration::from_millis(10);
/// …and waits at most this long for the exec instance between two looks at the user's
/// requests: an exec is looked at as soon as it is read (a short-lived program that became
/// someone else is gone ten milliseconds later, and then fails closed).
const EXEC_WAIT: Duration = Duration::from_millis(2);
/// The hard limit of a recording, from `Follow`: no recording of a start needs more (the
/// user's side stops at 120 s), and no input changes it.
pub const LIMIT: Duration = Duration::from_secs(180);
/// How long a session may wait for its `Follow` (under sudo the command may first wait for a
/// running Firefox to quit, for up to an hour: `relaunch --timeout`). Nothing is armed meanwhile:
/// the buffers are the kernel's smallest (tracer/arm.rs).
pub const IDLE_LIMIT: Duration = Duration::from_secs(2 * 3600);
/// The most of trace text handed over in one session (a cold start is ~15 MB).
pub const MAX_FORWARDED: u64 = 512 << 20;
/// Page-frame flags per `PageFlags` frame (about 25 bytes each).
const FLAGS_PER_FRAME: usize = 20_000;
/// How long each message may wait for room outside the recording (`Ready`, the last lines, the
/// page frames' flags, `Done`): a reader that stops reading holds the tracer up this long…
const LAST_WORDS: Duration = Duration::from_secs(2);
/// …and all of the session's end (its last lines read, its page frames' flags read and sent,
/// `Done`) at most this long. The deadline of a write starts when the write does: the work
/// before it (tens of thousands of flags read where each system call is slow) once ate the whole
/// of a deadline set when the recording ended, the user's side was taken as gone, and no
/// `Done` was sent.
const ENDING: Duration = Duration::from_secs(20);

/// Set by SIGTERM and SIGHUP on pkexec's and root's own route.
static TERMINATED: AtomicBool = AtomicBool::new(false);

pub extern "C" fn on_term(_: libc::c_int) {
    TERMINATED.store(true, Ordering::SeqCst);
}

/// SIGTERM and SIGHUP to `handler` (the session ends and tears down); every other signal a
/// terminal sends (SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU) ignored: the terminal's keys
/// reach the user's side too, which ends its recording, and its end closing ends the session.
/// Then the tracer leaves the terminal's session where it can (`setsid`: not as a process
/// group's leader, which keeps its ignored signals).
pub fn signals(handler: extern "C" fn(libc::c_int)) {
    let handler = handler as *const () as libc::sighandler_t;
    // SAFETY: the handlers only store to an atomic or call kill (async-signal-safe).
    unsafe {
        for signal in [libc::SIGTERM, libc::SIGHUP] {
            libc::signal(signal, handler);
        }
        for signal in [
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGTSTP,
            libc::SIGTTIN,
            libc::SIGTTOU,
        ] {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
    let _ = rustix::process::setsid();
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

/// The user's end, written without blocking: a reader that stops reading holds the tracer up
/// until the deadline at most, then it counts as gone.
struct Out {
    fd: OwnedFd,
    socket: bool,
    gone: bool,
    deadline: Instant,
    /// Whether SIGTERM or SIGHUP end a write (not the last words).
    recording: bool,
    /// Outside the recording: when the session's end must be over.
    ends_by: Option<Instant>,
}

impl Out {
    fn new(fd: OwnedFd) -> Self {
        let socket = rustix::fs::fstat(&fd)
            .is_ok_and(|s| rustix::fs::FileType::from_raw_mode(s.st_mode).is_socket());
        Out {
            fd,
            socket,
            gone: false,
            deadline: Instant::now() + LAST_WORDS,
            recording: false,
            ends_by: None,
        }
    }

    fn send(&mut self, reply: &Reply) {
        if !self.recording {
            let each = Instant::now() + LAST_WORDS;
            self.deadline = self.ends_by.map_or(each, |end| each.min(end));
        }
        if !self.gone {
            self.gone = !self.write(&encode(&protocol::encode(reply)));
        }
    }

    /// Write all of `bytes` before the deadline (and, while recording, SIGTERM): wait for room, then a socket
    /// takes what it can without blocking (`MSG_DONTWAIT`), a pipe at most `PIPE_BUF` bytes,
    /// which a pipe with room takes whole.
    fn write(&self, mut bytes: &[u8]) -> bool {
        while !bytes.is_empty() {
            let now = Instant::now();
            if now >= self.deadline || (self.recording && TERMINATED.load(Ordering::SeqCst)) {
                return false;
            }
            let wait = (self.deadline - now).min(Duration::from_millis(100));
            let mut fds = [PollFd::new(&self.fd, PollFlags::OUT)];
            let timeout = Timespec {
                tv_sec: 0,
                tv_nsec: i64::from(wait.subsec_nanos()),
            };
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return false,
                Ok(_) if fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP) => {
                    return false
                }
                Ok(_) => {}
            }
            let n = if self.socket {
                let chunk = &bytes[..bytes.len().min(1 << 16)];
                // SAFETY: send on a descriptor we own, from a live slice.
                let n = unsafe {
                    libc::send(
                        std::os::fd::AsRawFd::as_raw_fd(&self.fd),
                        chunk.as_ptr().cast(),
                        chunk.len(),
                        libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
                    )
                };
                usize::try_from(n).map_err(|_| rustix::io::Errno::from_raw_os_error(errno()))
            } else {
                rustix::io::write(&self.fd, &bytes[..bytes.len().min(libc::PIPE_BUF)])
            };
            match n {
                Ok(n) => bytes = &bytes[n..],
                Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {}
                Err(_) => return false,
            }
        }
        true
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Arm (before confinement: Landlock checks a path when it is opened), confine, then give up
/// every capability but `keep`: what the tracer does from here on (read its open descriptors
/// and `/proc`, remove its instances, which root owns) needs none; the sudo split's parent
/// keeps CAP_KILL to pass SIGTERM on to its child, the user's. Last, the system calls it makes
/// from here on are the only ones it may (syscalls.rs).
fn arm_and_confine(who: &For) -> Result<Armed, Failure> {
    // The allow-list is made before arming (the kill rule names the child, if any).
    let child = (!who.keep.is_empty()).then_some(who.invoker);
    let program = syscalls::program(child).map_err(|e| (Refusal::Unavailable, e.to_string()))?;
    let armed = Armed::prepare(who.uid)?;
    let sets = CapabilitySets {
        effective: who.keep,
        permitted: who.keep,
        inheritable: CapabilitySet::empty(),
    };
    let confined = confine::confine(who.may_override)
        .and_then(|()| {
            set_capabilities(None, sets).map_err(|e| format!("giving up capabilities: {e}"))
        })
        .and_then(|()| syscalls::lock(&program));
    match confined {
        Ok(()) => Ok(armed),
        Err(e) => {
            armed.teardown();
            Err((Refusal::Unavailable, e))
        }
    }
}

/// Who the session works for: the user, their process that asked (`invoker`: Yama's ancestor),
/// whether root's own environment may let it run without Landlock (confine.rs), and the
/// capabilities it keeps once armed.
pub struct For {
    pub uid: u32,
    pub invoker: i32,
    pub may_override: bool,
    pub keep: CapabilitySet,
}

/// Arm, confine and serve one recording. Call while this process has one thread.
pub fn serve(input: impl Read + Send + 'static, output: OwnedFd, who: &For) -> Ended {
    let mut out = Out::new(output);
    let mut armed = match arm_and_confine(who) {
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
    let ended = record(&mut armed, &reader(input), &mut out, who);
    out.send(&Reply::Done {
        lost_events: armed.tree.lost() + armed.exec.lost() + armed.system.lost(),
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

/// The session's loop until it ends, and the last lines where it ends well.
fn record(armed: &mut Armed, rx: &Receiver<Input>, out: &mut Out, who: &For) -> Ended {
    let mut since = Instant::now();
    let mut following: Option<Following> = None;
    let mut forwarded = 0u64;
    out.recording = true;
    let ended = loop {
        let limit = if following.is_some() {
            LIMIT
        } else {
            IDLE_LIMIT
        };
        out.deadline = since + limit;
        if out.gone {
            break Ended::Eof;
        } else if TERMINATED.load(Ordering::SeqCst) {
            break Ended::Signal;
        } else if since.elapsed() >= limit || forwarded >= MAX_FORWARDED {
            break Ended::Limit;
        } else if following.as_ref().is_some_and(|f| f.filter.broken()) {
            break Ended::Lost;
        }
        let wait = match following.as_mut() {
            Some(f) => {
                armed.wait_exec(EXEC_WAIT);
                if f.execs(armed).is_err() {
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
            Ok(Ok(Request::Follow { pid, faults })) => match follow(armed, who, pid, faults) {
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
    out.recording = false;
    out.ends_by = Some(Instant::now() + ENDING);
    if let (Some(f), Ended::Stop | Ended::Limit | Ended::Signal) = (following.as_mut(), ended) {
        f.pump(armed, out);
        if f.filter.broken() {
            return Ended::Lost;
        }
        f.send_flags(armed, out);
    }
    ended
}

/// Check `Follow{pid}` (a running process, wholly the user's, one they could ptrace) and arm
/// it: the tasks proven of the tree are those held from before the pid filter was written
/// until recording had begun.
fn follow(armed: &mut Armed, who: &For, pid: i32, faults: bool) -> Result<Following, Failure> {
    let uid = who.uid;
    let creds = who::credentials(pid)
        .filter(|c| pid > 0 && !matches!(c.state, 'Z' | 'X'))
        .ok_or((Refusal::NoProcess, format!("no running process {pid}")))?;
    if !who::wholly(&creds, uid, None) {
        return Err((
            Refusal::NotYours,
            format!("process {pid} is not wholly yours (uid {uid}): every uid and gid must be yours, with no capability"),
        ));
    }
    if !who::traceable(pid, uid, who.invoker, who::yama_scope()) {
        return Err((
            Refusal::NotYours,
            format!("you (uid {uid}) could not ptrace process {pid} (it made itself undumpable, or Yama's ptrace_scope forbids it): the tracer follows only what you could"),
        ));
    }
    let gid = creds.gids[0];
    let held = who::tree(pid, uid, gid, who.invoker);
    let tids: Vec<i32> = held.iter().map(|h| h.tid).collect();
    armed.follow(&tids, faults)?;
    let proven: Vec<i32> = held.iter().filter(|h| h.alive()).map(|h| h.tid).collect();
    if proven.is_empty() {
        return Err((Refusal::NoProcess, format!("process {pid} ended")));
    }
    Ok(Following {
        filter: Filter::new(&proven),
        uid,
        gid,
        tree_raw: Vec::new(),
        exec_raw: Vec::new(),
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
    exec_raw: Vec<u8>,
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
    /// Read the exec instance now and look at each exec: a task that is no longer wholly the
    /// user's, or no longer one they could ptrace, or gone, is dropped. Where the instance lost
    /// a line, the proof is gone.
    fn execs(&mut self, armed: &mut Armed) -> Result<(), Failure> {
        armed.exec.drain(&mut self.exec_raw)?;
        if armed.exec.lost() > 0 {
            self.filter.tree_line(b"CPU:0 [LOST 1 EVENTS]");
        }
        let (uid, gid) = (self.uid, self.gid);
        let mut still_yours = |pid| {
            who::credentials(pid).is_some_and(|c| who::wholly(&c, uid, Some(gid)))
                && who::dump_owner(pid) == Some(uid)
        };
        let lines = whole_lines(&mut self.exec_raw);
        let lines: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
        self.filter.exec_lines(&lines, &mut still_yours);
        Ok(())
    }

    /// Hand over what the instances hold now, through the filter, in frames; the bytes handed
    /// over. The tree is read first, then the execs (any exec recorded before a tree line read
    /// here is then read too), then the tree's losses (any loss before the lines read shows).
    /// A pipe that cannot be read ends the recording like a lost peer.
    fn pump(&mut self, armed: &mut Armed, out: &mut Out) -> u64 {
        self.last = Instant::now();
        let read = armed
            .tree
            .drain(&mut self.tree_raw)
            .and_then(|()| self.execs(armed));
        if read.is_err() || armed.system.drain(&mut self.system_raw).is_err() {
            out.gone = true;
            return 0;
        }
        if armed.tree.lost() > 0 {
            self.filter.tree_line(b"CPU:0 [LOST 1 EVENTS]");
        }
        for line in whole_lines(&mut self.system_raw) {
            self.filter.system_line(&line);
        }
        let mut lines: Vec<String> = whole_lines(&mut self.tree_raw)
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

    /// Each page frame's `/proc/kpageflags` word, by token, where the frame still shows a page
    /// of the page cache ([`Armed::page_flags`]).
    fn send_flags(&self, armed: &Armed, out: &mut Out) {
        let mut frames: Vec<(u64, u64)> = self.filter.frames().collect();
        let all = armed.page_flags(&mut frames);
        for chunk in all.chunks(FLAGS_PER_FRAME) {
            out.send(&Reply::PageFlags {
                flags: chunk.to_vec(),
            });
        }
    }
}
