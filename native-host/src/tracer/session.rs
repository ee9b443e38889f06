//! One recording, served over a byte stream (pkexec's stdin/stdout, or the sudo split's
//! socket): `Ready`, then at most one `Follow`, lines every tick, and at `Stop` the page frames'
//! flags and `Done`. End of input at any moment, the hard limit or SIGTERM end it too; the
//! instances are removed in every case.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use super::arm::{Armed, FAULT_EVENT};
use super::filter::Filter;
use super::protocol::{self, Ended, Refusal, Reply, Request, LINES_PER_FRAME_BYTES};
use super::who;
use crate::framing::{read_frame, write_frame, ReadOutcome};

/// The tracer hands the tree's lines over this often.
const TICK: Duration = Duration::from_millis(10);
/// …and waits at most this long for the system instance (execs to look at) between requests.
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

/// Set by SIGTERM (tracer/mod.rs installs the handler).
pub static TERMINATED: AtomicBool = AtomicBool::new(false);

/// What the reader thread hands the loop.
enum Input {
    Request(Request),
    Eof,
    Malformed(String),
}

fn reader(mut input: impl Read + Send + 'static) -> mpsc::Receiver<Input> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || loop {
        let item = match read_frame(&mut input) {
            Ok(ReadOutcome::Frame(body)) => match protocol::decode(&body) {
                Ok(req) => Input::Request(req),
                Err(e) => Input::Malformed(e),
            },
            Ok(ReadOutcome::Eof) | Err(_) => Input::Eof,
            Ok(ReadOutcome::TooLarge { len }) => {
                Input::Malformed(format!("a frame of {len} bytes"))
            }
            Ok(ReadOutcome::Truncated) => Input::Malformed("a cut frame".into()),
        };
        let last = !matches!(item, Input::Request(_));
        if tx.send(item).is_err() || last {
            return;
        }
    });
    rx
}

/// The session's writer: a failed write means the user's side is gone.
struct Out<W: Write> {
    w: W,
    gone: bool,
}

impl<W: Write> Out<W> {
    fn send(&mut self, reply: &Reply) {
        if !self.gone && write_frame(&mut self.w, &protocol::encode(reply)).is_err() {
            self.gone = true;
        }
    }
}

/// The followed tree, once `Follow` was accepted.
struct Following {
    filter: Filter,
    uid: u32,
    gid: u32,
    tree_raw: Vec<u8>,
    system_raw: Vec<u8>,
}

/// Whole lines of `raw` (the rest stays for the next drain).
fn whole_lines(raw: &mut Vec<u8>) -> Vec<Vec<u8>> {
    let Some(last) = raw.iter().rposition(|b| *b == b'\n') else {
        return Vec::new();
    };
    let lines = raw[..last]
        .split(|b| *b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    raw.drain(..=last);
    lines
}

/// Serve one recording for user `uid`. `armed`: the instances, or why there are none (then
/// the session says so and ends).
pub fn serve(
    input: impl Read + Send + 'static,
    output: impl Write,
    uid: u32,
    armed: Result<Armed, (Refusal, String)>,
) -> Ended {
    let mut out = Out {
        w: output,
        gone: false,
    };
    let mut armed = match armed {
        Ok(a) => a,
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
        uid,
    });
    let rx = reader(input);
    let mut started = Instant::now();
    let mut following: Option<Following> = None;
    let mut forwarded = 0u64;
    let mut last_tick = Instant::now();
    let ended = loop {
        if out.gone {
            break Ended::Eof;
        }
        if TERMINATED.load(Ordering::SeqCst) {
            break Ended::Signal;
        }
        let limit = if following.is_some() {
            LIMIT
        } else {
            IDLE_LIMIT
        };
        if started.elapsed() >= limit || forwarded >= MAX_FORWARDED {
            break Ended::Limit;
        }
        // While following, the system instance is watched closely: an exec is looked at as
        // soon as it is read (a short-lived program that became someone else is gone ten
        // milliseconds later, and then fails closed); the tree's lines go every tick.
        let next = match following.as_mut() {
            Some(f) => {
                armed.wait_system(EXEC_WAIT);
                if pump_system(&mut armed, f).is_err() {
                    break Ended::Eof;
                }
                match rx.try_recv() {
                    Ok(input) => Ok(input),
                    Err(TryRecvError::Empty) => Err(RecvTimeoutError::Timeout),
                    Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
                }
            }
            None => rx.recv_timeout(TICK),
        };
        match next {
            Ok(Input::Request(Request::Follow { pid, faults })) => {
                if following.is_some() {
                    refuse(
                        &mut out,
                        Refusal::OutOfOrder,
                        "one Follow per session".into(),
                    );
                    break Ended::Refused;
                }
                match follow(&mut armed, uid, pid, faults) {
                    Ok((f, reply)) => {
                        following = Some(f);
                        started = Instant::now();
                        last_tick = Instant::now();
                        out.send(&reply);
                    }
                    Err((code, message)) => {
                        refuse(&mut out, code, message);
                        break Ended::Refused;
                    }
                }
            }
            Ok(Input::Request(Request::Stop {})) => break Ended::Stop,
            Ok(Input::Eof) | Err(RecvTimeoutError::Disconnected) => break Ended::Eof,
            Ok(Input::Malformed(why)) => {
                refuse(&mut out, Refusal::Malformed, why);
                break Ended::Refused;
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        if let Some(f) = following.as_mut() {
            if last_tick.elapsed() >= TICK {
                last_tick = Instant::now();
                forwarded += pump(&mut armed, f, &mut out);
            }
        }
    };
    armed.stop();
    if let Some(f) = following.as_mut() {
        if !matches!(ended, Ended::Eof | Ended::Refused) {
            pump(&mut armed, f, &mut out);
            send_flags(&armed, &f.filter, &mut out);
        }
    }
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

fn refuse<W: Write>(out: &mut Out<W>, code: Refusal, message: String) {
    out.send(&Reply::Refused { code, message });
}

/// Check and arm `Follow{pid}`.
fn follow(
    armed: &mut Armed,
    uid: u32,
    pid: i32,
    faults: bool,
) -> Result<(Following, Reply), (Refusal, String)> {
    let creds = who::credentials(pid)
        .filter(|_| pid > 0 && who::alive(pid))
        .ok_or((Refusal::NoProcess, format!("no running process {pid}")))?;
    if !who::wholly(&creds, uid, None) {
        return Err((
            Refusal::NotYours,
            format!("process {pid} is not wholly yours (uid {uid}): every uid and gid must be yours, with no capability"),
        ));
    }
    let gid = creds.gids[0];
    let (tasks, left_out) = who::tree(pid, uid, gid);
    armed
        .follow(&tasks, faults)
        .map_err(|e| (Refusal::Unavailable, e.to_string()))?;
    // Tasks started while the first list was written: the kernel added those forked by a listed
    // task; a second look adds the rest.
    let (again, left_again) = who::tree(pid, uid, gid);
    let new: Vec<i32> = again
        .iter()
        .copied()
        .filter(|t| !tasks.contains(t))
        .collect();
    armed
        .add(&new)
        .map_err(|e| (Refusal::Unavailable, e.to_string()))?;
    let armed_ns = crate::os::clock::clock_ns();
    let all: Vec<i32> = tasks.into_iter().chain(new).collect();
    let dropped: Vec<i32> = left_out.into_iter().chain(left_again).collect();
    let missing = armed
        .missing
        .iter()
        .filter(|m| faults || m.as_str() != FAULT_EVENT)
        .cloned()
        .collect();
    Ok((
        Following {
            filter: Filter::new(&all, &dropped),
            uid,
            gid,
            tree_raw: Vec::new(),
            system_raw: Vec::new(),
        },
        Reply::Armed {
            armed_ns,
            missing_events: missing,
        },
    ))
}

/// Read the system instance now: execs are looked at, completions wait for their issue.
fn pump_system(armed: &mut Armed, f: &mut Following) -> Result<(), ()> {
    armed.drain_system(&mut f.system_raw).map_err(|_| ())?;
    let (uid, gid) = (f.uid, f.gid);
    let mut still_yours =
        |pid: i32| who::credentials(pid).is_some_and(|c| who::wholly(&c, uid, Some(gid)));
    for line in whole_lines(&mut f.system_raw) {
        f.filter.system_line(&line, &mut still_yours);
    }
    Ok(())
}

/// One drain of the tree's instance (and the system's) through the filter; the bytes
/// forwarded.
fn pump<W: Write>(armed: &mut Armed, f: &mut Following, out: &mut Out<W>) -> u64 {
    if armed.drain_tree(&mut f.tree_raw).is_err() || pump_system(armed, f).is_err() {
        out.gone = true; // a pipe that cannot be read ends the recording like a lost peer
        return 0;
    }
    let tree = whole_lines(&mut f.tree_raw);
    let refs: Vec<&[u8]> = tree.iter().map(Vec::as_slice).collect();
    f.filter.learn_forks(&refs);
    let mut lines: Vec<String> = refs.iter().filter_map(|l| f.filter.tree_line(l)).collect();
    lines.extend(f.filter.matched_completions());
    let lost = f.filter.take_lost();
    let mut sent = 0u64;
    let mut batch = Vec::new();
    let mut size = 0;
    for line in lines {
        size += line.len();
        batch.push(line);
        if size >= LINES_PER_FRAME_BYTES {
            sent += size as u64;
            out.send(&Reply::Lines {
                lines: std::mem::take(&mut batch),
                lost: 0,
            });
            size = 0;
        }
    }
    if !batch.is_empty() || lost > 0 {
        sent += size as u64;
        out.send(&Reply::Lines { lines: batch, lost });
    }
    sent
}

fn send_flags<W: Write>(armed: &Armed, filter: &Filter, out: &mut Out<W>) {
    let all: Vec<(u64, u64)> = filter
        .frames()
        .filter_map(|(pfn, token)| Some((token, armed.page_flags(pfn)?)))
        .collect();
    for chunk in all.chunks(FLAGS_PER_FRAME) {
        out.send(&Reply::PageFlags {
            flags: chunk.to_vec(),
        });
    }
}
