//! Root's part of the kernel's tracing: two private tracefs instances made before the tracer
//! confines itself, with every file it will later write or read already open (Landlock checks a
//! path when it is opened, not each write to an open descriptor). Paths are root's and fixed;
//! nothing here comes from the user.
//!
//! - `about-startup-<pid>` (the *tree*): the page-cache, readahead, block-issue, fork and (with
//!   `faults`) user-fault events, recorded only for the pids written to `set_event_pid` and
//!   what they fork (`options/event-fork`);
//! - `about-startup-<pid>-system`: `block_rq_complete` and `sched_process_exec` of every task,
//!   unfiltered: a completion fires in interrupt context, in whatever task was running (checked
//!   here: `.Ns..` lines in a shell's name), and an exec's line carries a file name of the
//!   user's choosing. Neither is forwarded as such (tracer/filter.rs).
//!
//! Both are removed when the recording ends ([`Armed::teardown`]), and a half-made one at once.

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

/// The tree's events (checked on kernel 6.18). One this kernel lacks is left out, but for the
/// first, without which there is no trace. The last, which instruction faulted (issue 21: every
/// user page fault, ~100k in a start), is enabled only on request.
pub const TREE_EVENTS: [&str; 9] = [
    "filemap/mm_filemap_add_to_page_cache",
    "filemap/mm_filemap_fault",
    "readahead/page_cache_sync_ra",
    "readahead/page_cache_async_ra",
    "readahead/page_cache_ra_unbounded",
    "readahead/page_cache_ra_order",
    "block/block_rq_issue",
    "sched/sched_process_fork",
    "exceptions/page_fault_user",
];
/// The system instance's events.
pub const SYSTEM_EVENTS: [&str; 2] = ["block/block_rq_complete", "sched/sched_process_exec"];

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
    pipe: File,
    tracing_on: File,
    set_event_pid: Option<File>,
    /// Each event's `enable`, by name.
    enables: Vec<(&'static str, File)>,
    /// `per_cpu/*/stats`.
    stats: Vec<File>,
}

impl Instance {
    /// Make instance `name` with per-CPU buffers of `buffer_kb` and open what will be needed
    /// (`set_event_pid` where `filtered`); enable nothing. A failure removes what was made.
    fn create(
        name: &str,
        buffer_kb: &str,
        events: &[&'static str],
        filtered: bool,
    ) -> Result<Self, Failure> {
        let dir = Path::new(INSTANCES).join(name);
        if let Err(e) = std::fs::create_dir(&dir) {
            return Err(if e.kind() == io::ErrorKind::AlreadyExists {
                let d = dir.display();
                (Refusal::InstanceTaken, format!("the tracefs instance {d} already exists: another about-startup-host tracer is running (or a crashed one left it: `rmdir {d}` as root once none runs)"))
            } else {
                failed(format!("create {}", dir.display()))(e)
            });
        }
        let made = Self::open(&dir, buffer_kb, events, filtered);
        if made.is_err() {
            let _ = std::fs::remove_dir(&dir);
        }
        made
    }

    fn open(
        dir: &Path,
        buffer_kb: &str,
        events: &[&'static str],
        filtered: bool,
    ) -> Result<Self, Failure> {
        let open = |name: &str, options: &mut OpenOptions| {
            options
                .open(dir.join(name))
                .map_err(failed(format!("open {name}")))
        };
        let write = || OpenOptions::new().write(true).clone();
        let settings = [
            ("tracing_on", "0"),
            ("trace_clock", "mono"),
            ("buffer_size_kb", buffer_kb),
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

    /// Append what the pipe holds now to `buf` (it never blocks).
    pub fn drain(&mut self, buf: &mut Vec<u8>) -> Result<(), Failure> {
        match self.pipe.read_to_end(buf) {
            Err(e) if e.kind() != io::ErrorKind::WouldBlock => Err(failed("read trace_pipe")(e)),
            _ => Ok(()),
        }
    }

    /// Events the ring buffers dropped: per CPU `overrun` + `dropped events`.
    fn lost(&self) -> u64 {
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

/// Both instances, made and open.
#[derive(Debug)]
pub struct Armed {
    pub tree: Instance,
    pub system: Instance,
    kpageflags: Option<File>,
}

impl Armed {
    /// Mount tracefs if it is not (mount(2), no `mount` program), make both instances (named
    /// after this process), open what will be needed, enable nothing. Root only.
    pub fn prepare() -> Result<Armed, Failure> {
        if !Path::new(INSTANCES).is_dir() {
            let flags = rustix::mount::MountFlags::empty();
            rustix::mount::mount("nodev", TRACEFS, "tracefs", flags, None).map_err(|e| {
                let why =
                    format!("tracefs is not available at {TRACEFS} and could not be mounted ({e})");
                (Refusal::NoTracefs, why)
            })?;
        }
        let name = format!("about-startup-{}", std::process::id());
        let tree = Instance::create(&name, "32768", &TREE_EVENTS, true)?;
        if tree.enables.first().map(|e| e.0) != Some(TREE_EVENTS[0]) {
            tree.remove();
            let why = format!("this kernel has no {} event", TREE_EVENTS[0]);
            return Err((Refusal::Unavailable, why));
        }
        // The system instance's events are few: 4 MiB per CPU; the tree's 32 MiB hold a cold
        // start's ~100k events between two drains.
        match Instance::create(&format!("{name}-system"), "4096", &SYSTEM_EVENTS, false) {
            Ok(system) => Ok(Armed {
                tree,
                system,
                kpageflags: File::open("/proc/kpageflags").ok(),
            }),
            Err(e) => {
                tree.remove();
                Err(e)
            }
        }
    }

    /// Follow `pids`, enable the events (the fault event only with `faults`), turn both
    /// instances on. Nothing is enabled unless the pid filter took the pids: an empty filter
    /// would record every task.
    pub fn follow(&mut self, pids: &[i32], faults: bool) -> Result<(), Failure> {
        if pids.is_empty() {
            return Err((Refusal::Unavailable, "no task to follow".into()));
        }
        self.add(pids)?;
        let fault = TREE_EVENTS[TREE_EVENTS.len() - 1];
        let enables = self.tree.enables.iter_mut().chain(&mut self.system.enables);
        for (event, file) in enables.filter(|(e, _)| faults || *e != fault) {
            file.write_all(b"1")
                .map_err(failed(format!("enable {event}")))?;
        }
        self.tree.set_on(true)?;
        self.system.set_on(true)
    }

    /// Add tasks to the tree's pid filter, in one write (each write adds to what is there).
    pub fn add(&mut self, pids: &[i32]) -> Result<(), Failure> {
        let (Some(filter), false) = (self.tree.set_event_pid.as_mut(), pids.is_empty()) else {
            return Ok(());
        };
        let text: Vec<String> = pids.iter().map(ToString::to_string).collect();
        filter
            .write_all(format!("{}\n", text.join(" ")).as_bytes())
            .map_err(failed("write set_event_pid"))
    }

    /// Wait up to `timeout` (under a second) for the system instance to have a line.
    pub fn wait_system(&self, timeout: Duration) {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        let mut fds = [PollFd::new(&self.system.pipe, PollFlags::IN)];
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
        let _ = self.tree.set_on(false);
        let _ = self.system.set_on(false);
    }

    /// Events the kernel's buffers dropped, both instances.
    #[must_use]
    pub fn lost(&self) -> u64 {
        self.tree.lost() + self.system.lost()
    }

    /// The `/proc/kpageflags` word of page frame `pfn`.
    #[must_use]
    pub fn page_flags(&self, pfn: u64) -> Option<u64> {
        let mut word = [0u8; 8];
        let file = self.kpageflags.as_ref()?;
        file.read_exact_at(&mut word, pfn.checked_mul(8)?).ok()?;
        Some(u64::from_ne_bytes(word))
    }

    /// Remove both instances; the folders that could not be removed.
    pub fn teardown(self) -> Vec<PathBuf> {
        drop(self.kpageflags);
        [self.tree, self.system]
            .into_iter()
            .filter_map(Instance::remove)
            .collect()
    }
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
