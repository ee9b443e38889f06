//! What of the kernel's lines the tracer hands over, and how it rewrites them. Pure (the one
//! question it cannot answer itself, "is this process still wholly the user's", is a callback),
//! so it is tested on recorded real lines (tests/fixtures/tracer/).
//!
//! The parsing is minimal and anchored: a line is `comm-pid (tgid) [cpu] flags timestamp: event:
//! payload`, where the kernel prints the task's name (at most 15 bytes, `TASK_COMM_LEN`) right
//! aligned in 16 columns (`%16s-%-7d`). So the `-` before the pid is always byte 16, and a name
//! the user chose (spaces, dashes, brackets, a newline) can neither move the pid nor make a
//! line of its own: the rest of a name cut by a newline is at most 14 bytes long before its
//! `-`. The only long free text a process controls, an exec's file name, is never in this
//! stream: exec events come from the system instance (tracer/arm.rs), where they are only
//! triggers for a look at `/proc/<pid>/status`, never forwarded nor trusted for a page frame.
//!
//! Per line of the tree's instance (the kernel's pid filter: only the followed tree's tasks):
//! - not in that layout, or not an event the tracer armed: dropped (counted as lost);
//! - recorded in hard or soft interrupt context (the third flag is `h`, `H`, `s`, `z` or `Z`):
//!   dropped, it is someone else's I/O that interrupted a task of the tree;
//! - from a task that became another user (setuid/setgid/capabilities at an exec: each exec is
//!   looked at as soon as it is read) or descends from one: dropped;
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
    /// Every task known to be of the followed tree (the pids the tracer wrote, and every child
    /// a task of the tree forked).
    tree: HashSet<i32>,
    /// Tasks (and processes) that became someone else, and what they forked since.
    dropped: HashSet<i32>,
    tokens: HashMap<u64, u64>,
    /// Block requests the tree issued (device, first sector), for their completions.
    issued: Bounded<(Vec<u8>, u64), { 1 << 16 }>,
    /// Completions (the line to hand over, their request) waiting for their issue, and for how
    /// many more drains.
    pending: Vec<(String, (Vec<u8>, u64), u8)>,
    /// Tasks not known (yet) to be of the tree whose exec made them someone else: their fork
    /// may be read after their exec (the two instances are read apart).
    others: Bounded<i32, { 1 << 14 }>,
    /// Lines not delivered since the last [`Filter::take_lost`].
    lost: u64,
}

impl Filter {
    /// Start with the tasks written to the kernel's pid filter, and those left out of it (not
    /// wholly the user's: their lines never come, and nothing they fork is followed).
    #[must_use]
    pub fn new(tree: &[i32], dropped: &[i32]) -> Self {
        Filter {
            tree: tree.iter().copied().collect(),
            dropped: dropped.iter().copied().collect(),
            ..Filter::default()
        }
    }

    /// Learn the tree's new tasks from a batch of its lines before it is forwarded (so an exec
    /// of a task forked in the same batch counts, whichever was read first).
    pub fn learn_forks(&mut self, lines: &[&[u8]]) {
        for h in lines.iter().filter_map(|l| split(l)) {
            self.adopt(&h);
        }
    }

    /// The child of a fork line is of the tree: dropped with its parent, or when its exec made
    /// it someone else before its fork was read.
    fn adopt(&mut self, h: &Head<'_>) {
        if let (b"sched_process_fork", Some(child)) = (h.event, fork_child(h.payload)) {
            self.tree.insert(child);
            if self.is_dropped(h) || self.others.remove(&child) {
                self.dropped.insert(child);
            }
        }
    }

    fn is_dropped(&self, h: &Head<'_>) -> bool {
        self.dropped.contains(&h.tid) || h.tgid.is_some_and(|g| self.dropped.contains(&g))
    }

    /// A line of the system instance: an exec makes `still_yours` look at the task that exec'd
    /// at once (the session reads this instance as soon as it has a line); one that is not the
    /// user's any more is dropped from then on, or, not known yet to be of the tree, remembered
    /// for its fork. A block completion waits for its issue.
    pub fn system_line(&mut self, line: &[u8], still_yours: &mut dyn FnMut(i32) -> bool) {
        let Some(h) = split(line) else { return };
        if h.event == b"sched_process_exec" {
            if !self.dropped.contains(&h.tid) && !still_yours(h.tid) {
                if self.tree.contains(&h.tid) {
                    self.dropped.insert(h.tid);
                } else {
                    self.others.insert(h.tid);
                }
            }
        } else if h.event == b"block_rq_complete" && self.pending.len() < MAX_PENDING {
            if let Some(key) = block_key(h.payload) {
                // The interrupted task's name and pid (someone else's, often) are replaced.
                let context = String::from_utf8_lossy(h.context);
                let line = format!("{:>16}-{:<7} (-------){context}", "<irq>", 0);
                self.pending.push((line, key, PENDING_ROUNDS));
            }
        }
    }

    /// A line of the tree's instance: the line to forward, if any.
    pub fn tree_line(&mut self, line: &[u8]) -> Option<String> {
        if let Some(n) = lost_count(line) {
            self.lost += n;
            return None;
        }
        let Some(h) = split(line) else {
            self.lost += 1;
            return None;
        };
        let armed = |e: &&str| e.rsplit('/').next().map(str::as_bytes) == Some(h.event);
        if !TREE_EVENTS.iter().any(armed) {
            return None;
        }
        // Again as it is handed over: what a task dropped since it was learned forks is dropped
        // with it, from this line on.
        self.adopt(&h);
        if in_interrupt(h.flags) || self.is_dropped(&h) {
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
