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

/// The events of the tree's instance that are forwarded, by the name printed in the line.
const FORWARDED: [&str; 9] = [
    "mm_filemap_add_to_page_cache",
    "mm_filemap_fault",
    "page_cache_sync_ra",
    "page_cache_async_ra",
    "page_cache_ra_unbounded",
    "page_cache_ra_order",
    "block_rq_issue",
    "sched_process_fork",
    "page_fault_user",
];

/// At most this many distinct page frames get a token (1 Mi pages: 4 GiB read in one start);
/// beyond, a line keeps no `pfn` (its page's use is then unknown).
const MAX_TOKENS: usize = 1 << 20;
/// Issued block requests remembered for their completion.
const MAX_ISSUED: usize = 1 << 16;
/// Drains a completion waits for its issue (the issue is read from the other pipe first, so
/// one is enough; two leave room).
const PENDING_ROUNDS: u8 = 2;
/// Completions waiting for their issue.
const MAX_PENDING: usize = 1 << 14;
/// Exec verdicts kept for tasks not known (yet) to be of the tree: their fork may be read
/// after their exec (the two instances are read apart).
const MAX_VERDICTS: usize = 1 << 14;

/// The fixed part of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head<'a> {
    pub tid: i32,
    /// `None` where the kernel printed `(-------)`.
    pub tgid: Option<i32>,
    pub cpu: &'a [u8],
    pub flags: &'a [u8],
    pub ts: &'a [u8],
    pub event: &'a [u8],
    pub payload: &'a [u8],
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

/// Split a `trace_pipe` line (without its newline). `None` if it is not in the layout.
#[must_use]
pub fn split(line: &[u8]) -> Option<Head<'_>> {
    if line.len() < 18 || line[16] != b'-' || line[0] != b' ' {
        return None;
    }
    let (tid, rest) = digits(&line[17..])?;
    let rest = skip_spaces(rest).strip_prefix(b"(")?;
    let close = rest.iter().position(|c| *c == b')')?;
    let inside = skip_spaces(&rest[..close]);
    let tgid = if inside == b"-------" {
        None
    } else {
        match digits(inside)? {
            (g, []) => Some(g),
            _ => return None,
        }
    };
    let rest = rest[close + 1..].strip_prefix(b" [")?;
    let close = rest.iter().position(|c| *c == b']')?;
    let cpu = &rest[..close];
    if cpu.is_empty() || !cpu.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let rest = rest[close + 1..].strip_prefix(b" ")?;
    let space = rest.iter().position(|c| *c == b' ')?;
    let flags = &rest[..space];
    let rest = skip_spaces(&rest[space..]);
    let colon = rest.iter().position(|c| *c == b':')?;
    let ts = &rest[..colon];
    if ts.is_empty() || !ts.iter().all(|c| c.is_ascii_digit() || *c == b'.') {
        return None;
    }
    let rest = rest[colon + 1..].strip_prefix(b" ")?;
    // `event: payload`, or `sys_execve -> 0x0` for a syscall's exit.
    let end = rest.iter().position(|c| *c == b':' || *c == b' ')?;
    let event = &rest[..end];
    let payload = rest[end..]
        .strip_prefix(b": ")
        .unwrap_or_else(|| skip_spaces(&rest[end..]));
    Some(Head {
        tid,
        tgid,
        cpu,
        flags,
        ts,
        event,
        payload,
    })
}

/// `[LOST n EVENTS]`, the line trace_pipe writes where a ring buffer overflowed (`CPU:%d [LOST
/// %lu EVENTS]`): the count. A task's line always begins with a space (see the module's doc).
#[must_use]
pub fn lost_count(line: &[u8]) -> Option<u64> {
    if !line.starts_with(b"CPU:") {
        return None;
    }
    let at = line.windows(6).position(|w| w == b"[LOST ")? + 6;
    let rest = &line[at..];
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
    let space = payload.iter().position(|c| *c == b' ')?;
    let dev = &payload[..space];
    if !dev.iter().all(|c| c.is_ascii_digit() || *c == b',') {
        return None;
    }
    let close = payload.iter().position(|c| *c == b')')?;
    let rest = skip_spaces(&payload[close + 1..]);
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

/// The process an exec trigger names: the task that exec'd (its pid is the process's after the
/// exec). `sched_process_exec` lines only.
#[must_use]
pub fn exec_task(head: &Head<'_>) -> Option<i32> {
    (head.event == b"sched_process_exec").then_some(head.tid)
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
    issued: HashSet<(Vec<u8>, u64)>,
    issued_order: VecDeque<(Vec<u8>, u64)>,
    pending: Vec<(Vec<u8>, Vec<u8>, u64, u8)>,
    /// Whether each task whose exec was seen before it was known to be of the tree was still
    /// the user's then.
    verdicts: HashMap<i32, bool>,
    verdict_order: VecDeque<i32>,
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
        for line in lines {
            let Some(h) = split(line) else { continue };
            if h.event == b"sched_process_fork" {
                if let Some(child) = fork_child(h.payload) {
                    let dropped = self.is_dropped(&h);
                    self.adopt(child, dropped);
                }
            }
        }
    }

    /// `child` is of the tree: dropped with its parent, or when its exec was seen to make it
    /// someone else before its fork was read.
    fn adopt(&mut self, child: i32, parent_dropped: bool) {
        self.tree.insert(child);
        if parent_dropped || self.verdicts.remove(&child) == Some(false) {
            self.dropped.insert(child);
        }
    }

    fn is_dropped(&self, h: &Head<'_>) -> bool {
        self.dropped.contains(&h.tid) || h.tgid.is_some_and(|g| self.dropped.contains(&g))
    }

    /// A line of the system instance: an exec makes `still_yours` look at the task at once (the
    /// session reads this instance as soon as it has a line): a task of the tree that is not
    /// the user's any more is dropped; for a task not known yet the answer is kept for its fork.
    /// A block completion waits for its issue.
    pub fn system_line(&mut self, line: &[u8], still_yours: &mut dyn FnMut(i32) -> bool) {
        let Some(h) = split(line) else { return };
        if let Some(pid) = exec_task(&h) {
            if self.dropped.contains(&pid) {
                return;
            }
            let yours = still_yours(pid);
            if self.tree.contains(&pid) {
                if !yours {
                    self.dropped.insert(pid);
                }
            } else if self.verdicts.insert(pid, yours).is_none() {
                self.verdict_order.push_back(pid);
                if self.verdict_order.len() > MAX_VERDICTS {
                    if let Some(old) = self.verdict_order.pop_front() {
                        self.verdicts.remove(&old);
                    }
                }
            }
            return;
        }
        if h.event == b"block_rq_complete" {
            if let Some((dev, sector)) = block_key(h.payload) {
                if self.pending.len() < MAX_PENDING {
                    self.pending
                        .push((anonymous_completion(&h), dev, sector, PENDING_ROUNDS));
                }
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
        let Ok(event) = std::str::from_utf8(h.event) else {
            self.lost += 1;
            return None;
        };
        if !FORWARDED.contains(&event) {
            return None;
        }
        if event == "sched_process_fork" {
            // What a dropped task forks is dropped with it, from this line on.
            if let Some(child) = fork_child(h.payload) {
                let dropped = self.is_dropped(&h);
                self.adopt(child, dropped);
            }
        }
        if in_interrupt(h.flags) || self.is_dropped(&h) {
            return None;
        }
        if event == "block_rq_issue" {
            if let Some(key) = block_key(h.payload) {
                self.remember_issue(key);
            }
        }
        if event == "mm_filemap_add_to_page_cache" {
            return self.with_token(line, &h);
        }
        Some(String::from_utf8_lossy(line).into_owned())
    }

    fn remember_issue(&mut self, key: (Vec<u8>, u64)) {
        if self.issued.insert(key.clone()) {
            self.issued_order.push_back(key);
            if self.issued_order.len() > MAX_ISSUED {
                if let Some(old) = self.issued_order.pop_front() {
                    self.issued.remove(&old);
                }
            }
        }
    }

    /// The line with its `pfn=0x…` replaced by the frame's token. A `pfn=` that does not parse
    /// drops the line (lost); beyond [`MAX_TOKENS`] frames the field is left out.
    fn with_token(&mut self, line: &[u8], h: &Head<'_>) -> Option<String> {
        const KEY: &[u8] = b" pfn=0x";
        let payload_at = line.len() - h.payload.len();
        let Some(at) = h.payload.windows(KEY.len()).position(|w| w == KEY) else {
            return Some(String::from_utf8_lossy(line).into_owned());
        };
        let hex_at = payload_at + at + KEY.len();
        let n = line[hex_at..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit())
            .count();
        let pfn = std::str::from_utf8(&line[hex_at..hex_at + n])
            .ok()
            .and_then(|s| u64::from_str_radix(s, 16).ok());
        let Some(pfn) = pfn else {
            self.lost += 1;
            return None;
        };
        let before = String::from_utf8_lossy(&line[..payload_at + at]);
        let after = String::from_utf8_lossy(&line[hex_at + n..]);
        let next = self.tokens.len() as u64 + 1;
        let token = match self.tokens.get(&pfn) {
            Some(t) => *t,
            None if self.tokens.len() < MAX_TOKENS => {
                self.tokens.insert(pfn, next);
                next
            }
            None => return Some(format!("{before}{after}")),
        };
        Some(format!("{before} pfn=0x{token:x}{after}"))
    }

    /// Completions whose issue was forwarded, and the others aged by one drain (dropped after
    /// [`PENDING_ROUNDS`]).
    pub fn matched_completions(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        let issued = &mut self.issued;
        self.pending.retain_mut(|(line, dev, sector, rounds)| {
            if issued.remove(&(dev.clone(), *sector)) {
                out.push(String::from_utf8_lossy(line).into_owned());
                return false;
            }
            *rounds = rounds.saturating_sub(1);
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

/// A completion line with the interrupted task's name and pid (someone else's, often)
/// replaced by `<irq>-0 (-------)`.
fn anonymous_completion(h: &Head<'_>) -> Vec<u8> {
    let mut out = format!("{:>16}-{:<7} (-------) [", "<irq>", 0).into_bytes();
    out.extend_from_slice(h.cpu);
    out.extend_from_slice(b"] ");
    out.extend_from_slice(h.flags);
    out.push(b' ');
    out.extend_from_slice(h.ts);
    out.extend_from_slice(b": block_rq_complete: ");
    out.extend_from_slice(h.payload);
    out
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
