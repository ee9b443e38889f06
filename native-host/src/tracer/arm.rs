//! Root's part of the kernel's tracing: three private tracefs instances made before the tracer
//! confines itself, with every file it will later write or read already open (Landlock checks a
//! path when it is opened, not each write to an open descriptor). Paths are root's and fixed;
//! nothing here comes from the user but the uid in one name.
//!
//! Slot `k` of [`MAX_SESSIONS`] (the machine-wide cap; `mkdir` is the lock, atomic):
//! - `about-startup-<k>` (the *system*): `block_rq_complete` of every task, unfiltered (a
//!   completion fires in interrupt context, in whatever task was running); only matched to the
//!   tree's issues and made anonymous (tracer/filter.rs);
//! - `about-startup-<k>-u<uid>` (the *tree*): the page-cache, readahead, block-issue, fork, exit
//!   and (with `faults`) user-fault events, recorded for the pids written to `set_event_pid` and
//!   what they fork (`options/event-fork`); the uid in the name is the one-session-per-user lock;
//! - `about-startup-<k>-exec`: `sched_process_exec` of the same pids, apart because an exec's
//!   file name is text of the user's choosing (newlines included) that must never sit among the
//!   tree's lines; it only ever makes the tracer drop a task (tracer/filter.rs).
//!
//! Every buffer is the kernel's smallest until `Follow` ([`Armed::follow`] grows them): a
//! session waiting for its `Follow` holds a few pages. All are removed when the recording ends
//! ([`Armed::teardown`]), a half-made one at once, and one a dead tracer left at the next start
//! (an instance with an open file cannot be removed, so a live tracer's stay).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::protocol::Refusal;

/// Where tracefs lives on current kernels.
pub const TRACEFS: &str = "/sys/kernel/tracing";
/// The instances' folder (the one place the confined tracer may remove a folder).
pub const INSTANCES: &str = "/sys/kernel/tracing/instances";
/// Every instance of this tracer is named so.
pub const PREFIX: &str = "about-startup-";
/// Sessions at once on the machine (one per user): each holds 36 MiB per CPU while it records.
pub const MAX_SESSIONS: usize = 4;

/// The tree's events (checked on kernel 6.18). One this kernel lacks is left out, but for the
/// first and the two the tree's membership is kept by (fork, exit), without which there is no
/// trace. The last, which instruction faulted (issue 21: every user page fault, ~100k in a
/// start), is enabled only on request.
pub const TREE_EVENTS: [&str; 10] = [
    "filemap/mm_filemap_add_to_page_cache",
    "sched/sched_process_fork",
    "sched/sched_process_exit",
    "filemap/mm_filemap_fault",
    "readahead/page_cache_sync_ra",
    "readahead/page_cache_async_ra",
    "readahead/page_cache_ra_unbounded",
    "readahead/page_cache_ra_order",
    "block/block_rq_issue",
    "exceptions/page_fault_user",
];
/// The events the tracer needs (the first three of [`TREE_EVENTS`]).
const NEEDED: usize = 3;
/// The exec instance's event.
pub const EXEC_EVENTS: [&str; 1] = ["sched/sched_process_exec"];
/// The system instance's event.
pub const SYSTEM_EVENTS: [&str; 1] = ["block/block_rq_complete"];
/// Per-CPU buffers once following (KiB): the tree's 32 MiB hold a cold start's ~100k events
/// between two drains; execs and completions are few.
const TREE_KB: &str = "32768";
const EXEC_KB: &str = "1024";
const SYSTEM_KB: &str = "4096";

/// Why tracing could not be armed: the refusal's code and its words.
pub type Failure = (Refusal, String);

fn failed(what: impl std::fmt::Display) -> impl FnOnce(io::Error) -> Failure {
    move |e| (Refusal::Unavailable, format!("{what}: {e}"))
}

/// One instance, its descriptors open.
#[derive(Debug)]
pub struct Instance {
    dir: PathBuf,
    /// `trace_pipe`, non-blocking.
    pub pipe: File,
    tracing_on: File,
    buffer_size_kb: File,
    set_event_pid: Option<File>,
    /// Each event's `enable`, by name.
    enables: Vec<(&'static str, File)>,
    /// `per_cpu/*/stats`.
    stats: Vec<File>,
}

impl Instance {
    /// Make instance `name` with the smallest buffers and open what will be needed
    /// (`set_event_pid` where `filtered`); enable nothing. A failure removes what was made;
    /// `Ok(None)`: the name is taken.
    fn create(
        name: &str,
        events: &[&'static str],
        filtered: bool,
    ) -> Result<Option<Self>, Failure> {
        let dir = Path::new(INSTANCES).join(name);
        match std::fs::create_dir(&dir) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(None),
            Err(e) => return Err(failed(format!("create {}", dir.display()))(e)),
            Ok(()) => {}
        }
        let made = Self::open(&dir, events, filtered);
        if made.is_err() {
            let _ = std::fs::remove_dir(&dir);
        }
        made.map(Some)
    }

    fn open(dir: &Path, events: &[&'static str], filtered: bool) -> Result<Self, Failure> {
        let open = |name: &str, options: &mut OpenOptions| {
            options
                .open(dir.join(name))
                .map_err(failed(format!("open {name}")))
        };
        let write = || OpenOptions::new().write(true).clone();
        let settings = [
            ("tracing_on", "0"),
            ("trace_clock", "mono"),
            ("buffer_size_kb", "1"),
            ("options/record-tgid", "1"),
            ("options/irq-info", "1"),
            ("options/event-fork", if filtered { "1" } else { "0" }),
        ];
        for (name, value) in settings {
            open(name, &mut write())?
                .write_all(value.as_bytes())
                .map_err(failed(format!("write {value} to {name}")))?;
        }
        let mut enables = Vec::new();
        for event in events {
            match write().open(dir.join(format!("events/{event}/enable"))) {
                Ok(file) => enables.push((*event, file)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(failed(format!("open {event}"))(e)),
            }
        }
        let stats = std::fs::read_dir(dir.join("per_cpu"))
            .map_err(failed("list per_cpu"))?
            .flatten()
            .filter_map(|cpu| File::open(cpu.path().join("stats")).ok())
            .collect();
        Ok(Instance {
            dir: dir.to_owned(),
            pipe: open(
                "trace_pipe",
                OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK),
            )?,
            tracing_on: open("tracing_on", &mut write())?,
            buffer_size_kb: open("buffer_size_kb", &mut write())?,
            set_event_pid: filtered
                .then(|| open("set_event_pid", &mut write()))
                .transpose()?,
            enables,
            stats,
        })
    }

    fn set_on(&mut self, on: bool) -> Result<(), Failure> {
        let value: &[u8] = if on { b"1" } else { b"0" };
        self.tracing_on
            .write_all(value)
            .map_err(failed("write tracing_on"))
    }

    /// Grow the buffers, write `pids` to the filter (one write: each adds to what is there),
    /// enable the events `which` picks.
    fn arm(&mut self, kb: &str, pids: &str, which: impl Fn(&str) -> bool) -> Result<(), Failure> {
        self.buffer_size_kb
            .write_all(kb.as_bytes())
            .map_err(failed("write buffer_size_kb"))?;
        if let Some(filter) = self.set_event_pid.as_mut() {
            filter
                .write_all(pids.as_bytes())
                .map_err(failed("write set_event_pid"))?;
        }
        for (event, file) in self.enables.iter_mut().filter(|(e, _)| which(e)) {
            file.write_all(b"1")
                .map_err(failed(format!("enable {event}")))?;
        }
        Ok(())
    }

    /// Append what the pipe holds now to `buf` (it never blocks).
    pub fn drain(&mut self, buf: &mut Vec<u8>) -> Result<(), Failure> {
        match self.pipe.read_to_end(buf) {
            Err(e) if e.kind() != io::ErrorKind::WouldBlock => Err(failed("read trace_pipe")(e)),
            _ => Ok(()),
        }
    }

    /// Events the ring buffers dropped: per CPU `overrun` + `dropped events`.
    #[must_use]
    pub fn lost(&self) -> u64 {
        let mut text = [0u8; 4096];
        let mut lost = 0;
        for file in &self.stats {
            if let Ok(n) = file.read_at(&mut text, 0) {
                lost += parse_lost(&String::from_utf8_lossy(&text[..n]));
            }
        }
        lost
    }

    /// Stop, close every descriptor (the kernel keeps an instance with an open file), remove;
    /// the folder if it could not be removed.
    fn remove(mut self) -> Option<PathBuf> {
        let _ = self.set_on(false);
        let dir = std::mem::take(&mut self.dir);
        drop(self);
        for _ in 0..50 {
            match std::fs::remove_dir(&dir) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => return None,
            }
        }
        Some(dir)
    }
}

/// `overrun:` + `dropped events:` of a per-CPU `stats` file. Pure.
#[must_use]
pub fn parse_lost(stats: &str) -> u64 {
    stats
        .lines()
        .filter_map(|l| {
            l.strip_prefix("overrun:")
                .or_else(|| l.strip_prefix("dropped events:"))
        })
        .filter_map(|v| v.trim().parse::<u64>().ok())
        .sum()
}

/// The three instances, made and open.
#[derive(Debug)]
pub struct Armed {
    pub tree: Instance,
    pub exec: Instance,
    pub system: Instance,
    kpageflags: Option<File>,
}

/// Remove every instance of this tracer that no live tracer holds open (a dead tracer's).
fn remove_stale() {
    let Ok(dir) = std::fs::read_dir(INSTANCES) else {
        return;
    };
    for entry in dir.flatten() {
        if entry.file_name().to_string_lossy().starts_with(PREFIX) {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Whether another instance of user `uid`'s than `ours` exists.
fn users_other(uid: u32, ours: &str) -> bool {
    let mark = format!("-u{uid}");
    std::fs::read_dir(INSTANCES).is_ok_and(|dir| {
        dir.flatten().any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with(PREFIX) && name.ends_with(&mark) && name != ours
        })
    })
}

impl Armed {
    /// Mount tracefs if it is not (mount(2), no `mount` program), remove what dead tracers
    /// left, take a free slot, make its three instances for user `uid` (refused where another
    /// session of theirs runs), open what will be needed, enable nothing. Root only.
    pub fn prepare(uid: u32) -> Result<Armed, Failure> {
        if !Path::new(INSTANCES).is_dir() {
            let flags = rustix::mount::MountFlags::empty();
            rustix::mount::mount("nodev", TRACEFS, "tracefs", flags, None).map_err(|e| {
                let why =
                    format!("tracefs is not available at {TRACEFS} and could not be mounted ({e})");
                (Refusal::NoTracefs, why)
            })?;
        }
        remove_stale();
        let taken = |why: String| (Refusal::InstanceTaken, why);
        let (slot, system) = (0..MAX_SESSIONS)
            .find_map(|k| {
                let made = Instance::create(&format!("{PREFIX}{k}"), &SYSTEM_EVENTS, false);
                made.transpose().map(|m| m.map(|i| (k, i)))
            })
            .transpose()?
            .ok_or_else(|| {
                taken(format!(
                    "{MAX_SESSIONS} traces are being recorded on this machine already, the most \
                     at once; try again when one has ended"
                ))
            })?;
        let name = format!("{PREFIX}{slot}-u{uid}");
        let made = Instance::create(&name, &TREE_EVENTS, true).and_then(|tree| {
            let tree = tree.ok_or_else(|| taken(format!("{name} exists")))?;
            match Instance::create(&format!("{PREFIX}{slot}-exec"), &EXEC_EVENTS, true) {
                Ok(Some(exec)) => Ok((tree, exec)),
                other => {
                    tree.remove();
                    Err(other
                        .err()
                        .unwrap_or_else(|| taken(format!("slot {slot} exists"))))
                }
            }
        });
        let (tree, exec) = match made {
            Ok(made) => made,
            Err(e) => {
                system.remove();
                return Err(e);
            }
        };
        let kpageflags = File::open("/proc/kpageflags").ok();
        let armed = Armed {
            tree,
            exec,
            system,
            kpageflags,
        };
        // Made first, looked for second: of two sessions of one user starting together, at
        // least the second refuses (both may), never neither.
        if users_other(uid, &name) {
            armed.teardown();
            return Err(taken(format!(
                "another trace of yours (uid {uid}) is being recorded; one at a time"
            )));
        }
        let found: Vec<&str> = armed.tree.enables.iter().map(|e| e.0).collect();
        if let Some(missing) = TREE_EVENTS[..NEEDED].iter().find(|e| !found.contains(e)) {
            armed.teardown();
            let why = format!("this kernel has no {missing} event");
            return Err((Refusal::Unavailable, why));
        }
        if armed.exec.enables.is_empty() {
            armed.teardown();
            let why = format!("this kernel has no {} event", EXEC_EVENTS[0]);
            return Err((Refusal::Unavailable, why));
        }
        Ok(armed)
    }

    /// Grow the buffers, follow `pids` (in the tree's and the exec instance's filters), enable
    /// the events (the fault event only with `faults`), turn the three instances on. Nothing is
    /// enabled unless the pid filter took the pids: an empty filter would record every task.
    pub fn follow(&mut self, pids: &[i32], faults: bool) -> Result<(), Failure> {
        if pids.is_empty() {
            return Err((Refusal::Unavailable, "no task to follow".into()));
        }
        let text: Vec<String> = pids.iter().map(ToString::to_string).collect();
        let text = format!("{}\n", text.join(" "));
        let fault = TREE_EVENTS[TREE_EVENTS.len() - 1];
        self.exec.arm(EXEC_KB, &text, |_| true)?;
        self.tree.arm(TREE_KB, &text, |e| faults || e != fault)?;
        self.system.arm(SYSTEM_KB, "", |_| true)?;
        self.exec.set_on(true)?;
        self.tree.set_on(true)?;
        self.system.set_on(true)
    }

    /// Wait up to `timeout` (under a second) for the exec instance to have a line.
    pub fn wait_exec(&self, timeout: Duration) {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        let mut fds = [PollFd::new(&self.exec.pipe, PollFlags::IN)];
        let nanos = i64::from(timeout.subsec_nanos());
        let _ = poll(
            &mut fds,
            Some(&Timespec {
                tv_sec: 0,
                tv_nsec: nanos,
            }),
        );
    }

    /// Stop recording (the buffers stay readable).
    pub fn stop(&mut self) {
        let _ = self.exec.set_on(false);
        let _ = self.tree.set_on(false);
        let _ = self.system.set_on(false);
    }

    /// The `/proc/kpageflags` words of page frames `frames` (`(pfn, token)`), by token, where
    /// the frame still shows a page of the page cache ([`cache_page`]). Read in windows of
    /// [`FLAGS_WINDOW`] frames, one read each: a start's frames are many (~50,000) and mostly
    /// near each other, and a read per frame made the end of a session take tens of seconds
    /// where each system call costs more (a machine under load, or strace).
    #[must_use]
    pub fn page_flags(&self, frames: &mut [(u64, u64)]) -> Vec<(u64, u64)> {
        let Some(file) = self.kpageflags.as_ref() else {
            return Vec::new();
        };
        frames.sort_unstable();
        let mut window = vec![0u8; FLAGS_WINDOW * 8];
        let (mut base, mut have) = (0u64, 0usize);
        let mut out = Vec::new();
        for &(pfn, token) in frames.iter() {
            if pfn < base || pfn - base >= have as u64 {
                base = pfn;
                have = pfn
                    .checked_mul(8)
                    .and_then(|at| file.read_at(&mut window, at).ok())
                    .map_or(0, |n| n / 8);
            }
            // After the read above, `pfn - base` is below `have` unless the read gave nothing.
            let Some(i) = usize::try_from(pfn - base).ok().filter(|i| *i < have) else {
                continue;
            };
            let mut word = [0u8; 8];
            word.copy_from_slice(&window[i * 8..i * 8 + 8]);
            let w = u64::from_ne_bytes(word);
            if cache_page(w) {
                out.push((token, w));
            }
        }
        out
    }

    /// Remove the three instances; the folders that could not be removed.
    pub fn teardown(self) -> Vec<PathBuf> {
        [self.tree, self.exec, self.system]
            .into_iter()
            .filter_map(Instance::remove)
            .collect()
    }
}

/// Page frames whose `/proc/kpageflags` words one read fetches (4 KiB).
const FLAGS_WINDOW: usize = 512;

/// Whether a `/proc/kpageflags` word shows a page of the page cache still (on an LRU list, up
/// to date; not anonymous, swap-backed, free, slab, KSM, a page table, offline or the zero
/// page): a frame the tree's page left since and someone's anonymous memory or the kernel took
/// says nothing. Another file's page in the same frame cannot be told apart
/// (docs/design/privilege.md). Pure.
#[must_use]
pub fn cache_page(w: u64) -> bool {
    const NEEDED: u64 = 1 << 3 | 1 << 5;
    const NOT: u64 = 1 << 7 | 1 << 10 | 1 << 12 | 1 << 13 | 1 << 14 | 1 << 20 | 1 << 21;
    const NOT_EITHER: u64 = 1 << 23 | 1 << 24 | 1 << 26;
    w & NEEDED == NEEDED && w & (NOT | NOT_EITHER) == 0
}

#[cfg(test)]
mod tests {
    #[test]
    fn lost_counts_overrun_and_dropped() {
        // A per_cpu/cpu0/stats of this kernel, with the two counts made non-zero.
        let stats = "entries: 5\noverrun: 3\ncommit overrun: 0\nbytes: 1\noldest event ts:  4742.490166\nnow ts:  4743.1\ndropped events: 2\nread events: 9\n";
        assert_eq!(super::parse_lost(stats), 5);
    }
}
