//! What of the kernel's lines the tracer hands over, and how it rewrites them. Pure (the one
//! question it cannot answer itself, "is this process still wholly the user's", is a callback),
//! so it is tested on recorded real lines (tests/fixtures/tracer/).
//!
//! The parsing is minimal and anchored: a line is `comm-pid (tgid) [cpu] flags timestamp: event:
//! payload`, where the kernel prints the task's name (at most 15 bytes, `TASK_COMM_LEN`) right
//! aligned in 16 columns (`%16s-%-7d`). So the `-` before the pid is always byte 16, and a name
//! the user chose (spaces, dashes, brackets, a newline) can neither move the pid nor make a
//! line of its own: the rest of a name cut by a newline is at most 14 bytes long before its
//! `-`. The only long free text a process controls, an exec's file name, is never in the tree's
//! stream: exec lines come from an instance of their own (tracer/arm.rs), where a line can only
//! make the tracer drop a task, never follow one.
//!
//! **Fails closed.** A line of the tree's instance is handed over only if its task is *proven*
//! of the tree at that point of the ring buffer's order: one of the tasks the tracer listed and
//! proved alive from before it wrote the kernel's pid filter until recording had begun
//! (tracer/who.rs), or the child of a `sched_process_fork` line of a proven task; a task's
//! `sched_process_exit` line ends its proof (a stranger that gets its number later is no one
//! the tracer knows). The kernel's own pid filter only narrows what is recorded; it is never
//! trusted (a number it holds outlives the task it was written for). And:
//! - not an event the tracer armed: dropped;
//! - not in that layout (a task named with a newline), or an exec line that is not exactly one:
//!   nothing more is handed over, as for a lost line (which task forked, exited or exec'd is
//!   unknown);
//! - recorded in hard or soft interrupt context (the third flag is `h`, `H`, `s`, `z` or `Z`):
//!   dropped, it is someone else's I/O that interrupted a task of the tree;
//! - from a task whose exec made it another user or undumpable (setuid/setgid/capabilities: the
//!   exec instance is read, and each exec looked at, before the tree's lines recorded after it
//!   are handed over), or forked by one after that: dropped, for the rest of the session;
//! - any line lost in the tree's ring buffer (`[LOST n EVENTS]`): nothing more is handed over,
//!   the proof is gone (the session ends, tracer/session.rs);
//! - `pfn=0x…` (mm_filemap_add_to_page_cache) replaced by a token, one per distinct frame;
//! - `block_rq_issue` remembered by device and sector, so that the system instance's
//!   `block_rq_complete` of the same request is forwarded, with the interrupted task's name and
//!   pid replaced.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;

use super::arm::TREE_EVENTS;

/// At most this many distinct page frames get a token (1 Mi pages: 4 GiB read in one start);
/// beyond, a line keeps no `pfn` (its page's use is then unknown).
const MAX_TOKENS: usize = 1 << 20;
/// Drains a completion waits for its issue (the issue is read from the other pipe first, so
/// one is enough; two leave room).
const PENDING_ROUNDS: u8 = 2;
/// Completions waiting for their issue.
const MAX_PENDING: usize = 1 << 14;

/// The fixed part of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head<'a> {
    pub tid: i32,
    /// `None` where the kernel printed `(-------)`.
    pub tgid: Option<i32>,
    pub flags: &'a [u8],
    /// When it was recorded, in µs of the trace clock.
    pub ts: u64,
    pub event: &'a [u8],
    pub payload: &'a [u8],
    /// The line from the CPU column on (` [001] …`).
    pub context: &'a [u8],
}

fn digits(b: &[u8]) -> Option<(i32, &[u8])> {
    let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 || n > 9 {
        return None;
    }
    let v = std::str::from_utf8(&b[..n]).ok()?.parse().ok()?;
    Some((v, &b[n..]))
}

fn skip_spaces(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| **c == b' ').count();
    &b[n..]
}

fn find(b: &[u8], what: &[u8]) -> Option<usize> {
    b.windows(what.len()).position(|w| w == what)
}

/// Split a `trace_pipe` line (without its newline). `None` if it is not in the layout.
#[must_use]
pub fn split(line: &[u8]) -> Option<Head<'_>> {
    if line.len() < 18 || line[16] != b'-' || line[0] != b' ' {
        return None;
    }
    let (tid, rest) = digits(&line[17..])?;
    let rest = skip_spaces(rest).strip_prefix(b"(")?;
    let close = find(rest, b")")?;
    let tgid = match skip_spaces(&rest[..close]) {
        b"-------" => None,
        inside => match digits(inside)? {
            (g, []) => Some(g),
            _ => return None,
        },
    };
    let context = &rest[close + 1..];
    let rest = context.strip_prefix(b" [")?;
    let close = find(rest, b"]")?;
    let cpu = &rest[..close];
    let rest = rest[close + 1..].strip_prefix(b" ")?;
    let space = find(rest, b" ")?;
    let flags = &rest[..space];
    let rest = skip_spaces(&rest[space..]);
    let colon = find(rest, b":")?;
    let ts = &rest[..colon];
    let number = |b: &[u8], dot: bool| {
        !b.is_empty() && b.iter().all(|c| c.is_ascii_digit() || (dot && *c == b'.'))
    };
    if !number(cpu, false) || !number(ts, true) {
        return None;
    }
    let (secs, micros) = std::str::from_utf8(ts).ok()?.split_once('.')?;
    let ts = secs
        .parse::<u64>()
        .ok()?
        .checked_mul(1_000_000)?
        .checked_add(micros.parse::<u64>().ok()?)?;
    let rest = rest[colon + 1..].strip_prefix(b" ")?;
    // `event: payload`, or `sys_execve -> 0x0` for a syscall's exit.
    let end = rest.iter().position(|c| *c == b':' || *c == b' ')?;
    let payload = rest[end..]
        .strip_prefix(b": ")
        .unwrap_or_else(|| skip_spaces(&rest[end..]));
    Some(Head {
        tid,
        tgid,
        flags,
        ts,
        event: &rest[..end],
        payload,
        context,
    })
}

/// `[LOST n EVENTS]`, the line trace_pipe writes where a ring buffer overflowed (`CPU:%d [LOST
/// %lu EVENTS]`): the count. A task's line always begins with a space (see the module's doc).
#[must_use]
pub fn lost_count(line: &[u8]) -> Option<u64> {
    let rest = &line[find(line.strip_prefix(b"CPU:")?, b"[LOST ")? + 10..];
    let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    std::str::from_utf8(&rest[..n]).ok()?.parse().ok()
}

/// Recorded in interrupt context: the irq-info flags' third column (`h` hard irq, `H` hard irq
/// inside a soft one, `s` soft irq, `z`/`Z` NMI).
#[must_use]
pub fn in_interrupt(flags: &[u8]) -> bool {
    flags.get(2).is_some_and(|c| b"hHszZ".contains(c))
}

/// A block request's device (`254,0`) and first sector, from an issue's or a completion's
/// payload: `254,0 RA 4096 () 500179312 + 8 …` / `254,0 RA () 500179264 + 16 …`.
#[must_use]
pub fn block_key(payload: &[u8]) -> Option<(Vec<u8>, u64)> {
    let dev = &payload[..find(payload, b" ")?];
    if !dev.iter().all(|c| c.is_ascii_digit() || *c == b',') {
        return None;
    }
    let rest = skip_spaces(&payload[find(payload, b")")? + 1..]);
    let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    let sector = std::str::from_utf8(&rest[..n]).ok()?.parse().ok()?;
    rest[n..].strip_prefix(b" + ")?;
    Some((dev.to_vec(), sector))
}

/// The child of a `sched_process_fork` payload (`comm=… pid=… child_comm=… child_pid=N`): the
/// last `child_pid=`, since a name before it may hold the same text.
#[must_use]
pub fn fork_child(payload: &[u8]) -> Option<i32> {
    const KEY: &[u8] = b" child_pid=";
    let at = payload.windows(KEY.len()).rposition(|w| w == KEY)? + KEY.len();
    match digits(&payload[at..])? {
        (pid, []) => Some(pid),
        _ => None,
    }
}

/// The new and the old pid of a `sched_process_exec` payload (`filename=… pid=N old_pid=M`),
/// read from its end: the file name before them is the user's text.
#[must_use]
pub fn exec_pids(payload: &[u8]) -> Option<(i32, i32)> {
    const OLD: &[u8] = b" old_pid=";
    const PID: &[u8] = b" pid=";
    let at = payload.windows(OLD.len()).rposition(|w| w == OLD)?;
    let (old, []) = digits(&payload[at + OLD.len()..])? else {
        return None;
    };
    let head = &payload[..at];
    let p = head.windows(PID.len()).rposition(|w| w == PID)?;
    let (pid, []) = digits(&head[p + PID.len()..])? else {
        return None;
    };
    Some((pid, old))
}

/// A set that forgets its oldest entries beyond `MAX`: what the filter remembers of what
/// others do is bounded.
#[derive(Debug, Default)]
struct Bounded<T, const MAX: usize> {
    set: HashSet<T>,
    order: VecDeque<T>,
}

impl<T: Hash + Eq + Clone, const MAX: usize> Bounded<T, MAX> {
    fn insert(&mut self, v: T) {
        if self.set.insert(v.clone()) {
            self.order.push_back(v);
            if self.order.len() > MAX {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }

    fn remove(&mut self, v: &T) -> bool {
        self.set.remove(v)
    }
}

/// The filter's state over one recording.
#[derive(Debug, Default)]
pub struct Filter {
    /// The tasks proven of the followed tree now, in the ring buffer's order.
    tree: HashSet<i32>,
    /// Task numbers whose exec made them someone else (or could not be looked at), and what
    /// they forked since: dropped for the rest of the session (at most `pid_max` numbers).
    dropped: HashSet<i32>,
    tokens: HashMap<u64, u64>,
    /// Block requests the tree issued (device, first sector), for their completions.
    issued: Bounded<(Vec<u8>, u64), { 1 << 16 }>,
    /// Completions (the line to hand over, their request) waiting for their issue, and for how
    /// many more drains.
    pending: Vec<(String, (Vec<u8>, u64), u8)>,
    /// Where a task exec'd twice in one read, the first program's time (from its exec to the
    /// next, µs): the look at the task was of the later one, so its lines then are dropped.
    spans: HashMap<i32, Vec<(u64, u64)>>,
    /// The time of the last tree line read (spans before it are of no more use).
    last_ts: u64,
    /// Lines not delivered since the last [`Filter::take_lost`].
    lost: u64,
    /// The tree's ring buffer lost lines: no proof holds after them.
    broken: bool,
}

impl Filter {
    /// Start with the tasks proven of the tree when recording began.
    #[must_use]
    pub fn new(proven: &[i32]) -> Self {
        Filter {
            tree: proven.iter().copied().collect(),
            ..Filter::default()
        }
    }

    /// Whether the tree's ring buffer lost lines (nothing is handed over after that).
    #[must_use]
    pub fn broken(&self) -> bool {
        self.broken
    }

    /// The exec instance's lines read since the last call (read after the tree's lines they
    /// are applied to: an exec recorded before a line of its task is among them). For each
    /// exec, `still_yours` looks at the task now; where it is not the user's any more, or gone,
    /// its number is dropped, and the number an exec from a thread left behind too. A task that
    /// exec'd again in the same lines: the look is of the later program, so the lines of the
    /// earlier one (from its exec to the next, by the trace clock) are dropped. Any line that is not
    /// exactly one exec line (a file name or a task name with a newline) breaks the proof: which
    /// task exec'd is unknown. A line forged in a file name can only drop a task or break.
    pub fn exec_lines(&mut self, lines: &[&[u8]], still_yours: &mut dyn FnMut(i32) -> bool) {
        let mut execs = Vec::new();
        for line in lines {
            if let Some(n) = lost_count(line) {
                self.lost += n;
                self.broken = true;
                continue;
            }
            match split(line).filter(|h| h.event == b"sched_process_exec") {
                Some(h) => match exec_pids(h.payload) {
                    Some((pid, old)) if pid == h.tid => execs.push((pid, old, h.ts)),
                    _ => self.broken = true,
                },
                None => self.broken = true,
            }
        }
        let last = self.last_ts;
        self.spans.retain(|_, v| {
            v.retain(|s| s.1 >= last);
            !v.is_empty()
        });
        for (i, (pid, old, ts)) in execs.iter().enumerate() {
            if old != pid {
                self.dropped.insert(*old);
            }
            if let Some((_, _, next)) = execs[i + 1..].iter().find(|(p, _, _)| p == pid) {
                self.spans.entry(*pid).or_default().push((*ts, *next));
            } else if self.dropped.contains(old) || !still_yours(*pid) {
                self.dropped.insert(*pid);
            }
        }
    }

    /// A line of the system instance: a block completion waits for its issue.
    pub fn system_line(&mut self, line: &[u8]) {
        let Some(h) = split(line) else { return };
        if h.event == b"block_rq_complete" && self.pending.len() < MAX_PENDING {
            if let Some(key) = block_key(h.payload) {
                // The interrupted task's name and pid (someone else's, often) are replaced.
                let context = String::from_utf8_lossy(h.context);
                let line = format!("{:>16}-{:<7} (-------){context}", "<irq>", 0);
                self.pending.push((line, key, PENDING_ROUNDS));
            }
        }
    }

    /// A line of the tree's instance, in the ring buffer's order: the line to forward, if any.
    pub fn tree_line(&mut self, line: &[u8]) -> Option<String> {
        if let Some(n) = lost_count(line) {
            self.lost += n;
            self.broken = true;
            return None;
        }
        if self.broken {
            return None;
        }
        // A line that is not in the layout (a task name with a newline) may be any task's exit
        // or fork: the proof is gone.
        let Some(h) = split(line) else {
            self.lost += 1;
            self.broken = true;
            return None;
        };
        let armed = |e: &&str| e.rsplit('/').next().map(str::as_bytes) == Some(h.event);
        if !TREE_EVENTS.iter().any(armed) || !self.tree.contains(&h.tid) {
            return None;
        }
        match (h.event, fork_child(h.payload)) {
            (b"sched_process_exit", _) => {
                self.tree.remove(&h.tid);
                self.spans.remove(&h.tid);
                return None;
            }
            (b"sched_process_fork", Some(child)) => {
                self.tree.insert(child);
                if self.dropped.contains(&h.tid) {
                    self.dropped.insert(child);
                }
            }
            (b"sched_process_fork", None) => {
                self.broken = true;
                return None;
            }
            _ => {}
        }
        self.last_ts = h.ts;
        let spanned = self.spans.get(&h.tid).into_iter().flatten();
        if in_interrupt(h.flags)
            || self.dropped.contains(&h.tid)
            || spanned.into_iter().any(|(a, b)| (*a..=*b).contains(&h.ts))
        {
            return None;
        }
        if let (b"block_rq_issue", Some(key)) = (h.event, block_key(h.payload)) {
            self.issued.insert(key);
        }
        if h.event == b"mm_filemap_add_to_page_cache" {
            return self.with_token(line, &h);
        }
        Some(String::from_utf8_lossy(line).into_owned())
    }

    /// The line with its `pfn=0x…` replaced by the frame's token. A `pfn=` that does not parse
    /// drops the line (lost); beyond [`MAX_TOKENS`] frames the field is left out.
    fn with_token(&mut self, line: &[u8], h: &Head<'_>) -> Option<String> {
        const KEY: &[u8] = b" pfn=0x";
        let Some(at) = find(h.payload, KEY) else {
            return Some(String::from_utf8_lossy(line).into_owned());
        };
        let start = line.len() - h.payload.len() + at;
        let hex = &line[start + KEY.len()..];
        let n = hex.iter().take_while(|c| c.is_ascii_hexdigit()).count();
        let pfn = std::str::from_utf8(&hex[..n]).ok();
        let Some(pfn) = pfn.and_then(|s| u64::from_str_radix(s, 16).ok()) else {
            self.lost += 1;
            return None;
        };
        let next = self.tokens.len() as u64 + 1;
        let token = match self.tokens.get(&pfn) {
            Some(t) => format!(" pfn=0x{t:x}"),
            None if self.tokens.len() < MAX_TOKENS => {
                self.tokens.insert(pfn, next);
                format!(" pfn=0x{next:x}")
            }
            None => String::new(),
        };
        let before = String::from_utf8_lossy(&line[..start]);
        Some(format!(
            "{before}{token}{}",
            String::from_utf8_lossy(&hex[n..])
        ))
    }

    /// Completions whose issue was forwarded, and the others aged by one drain (dropped after
    /// [`PENDING_ROUNDS`]).
    pub fn matched_completions(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        self.pending.retain_mut(|(line, key, rounds)| {
            if self.issued.remove(key) {
                out.push(std::mem::take(line));
                return false;
            }
            *rounds -= 1;
            *rounds > 0
        });
        out
    }

    /// Each page frame that got a token, with it.
    pub fn frames(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.tokens.iter().map(|(pfn, token)| (*pfn, *token))
    }

    /// Lines lost since the last call.
    pub fn take_lost(&mut self) -> u64 {
        std::mem::take(&mut self.lost)
    }
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
