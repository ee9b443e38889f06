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
//! Both are removed when the recording ends ([`Armed::teardown`]).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Where tracefs lives on current kernels.
pub const TRACEFS: &str = "/sys/kernel/tracing";
/// The instances' folder (the one place the confined tracer may remove a folder).
pub const INSTANCES: &str = "/sys/kernel/tracing/instances";

/// The tree's events (checked on kernel 6.18; a missing one is said in `Armed`).
pub const TREE_EVENTS: [&str; 8] = [
    "filemap/mm_filemap_add_to_page_cache",
    "filemap/mm_filemap_fault",
    "readahead/page_cache_sync_ra",
    "readahead/page_cache_async_ra",
    "readahead/page_cache_ra_unbounded",
    "readahead/page_cache_ra_order",
    "block/block_rq_issue",
    "sched/sched_process_fork",
];
/// Which instruction faulted (issue 21): every user page fault, ~100k in a start; on request.
pub const FAULT_EVENT: &str = "exceptions/page_fault_user";
/// The system instance's events.
pub const SYSTEM_EVENTS: [&str; 2] = ["block/block_rq_complete", "sched/sched_process_exec"];

/// Per-CPU ring buffer of the tree: 32 MiB holds a cold start's ~100k events between 10 ms
/// drains. The system instance's events are few.
const TREE_BUFFER_KB: u32 = 32 * 1024;
const SYSTEM_BUFFER_KB: u32 = 4 * 1024;

/// Why the kernel's tracing could not be armed.
#[derive(Debug, Error)]
pub enum ArmError {
    #[error("tracefs is not available at {TRACEFS} and could not be mounted ({0})")]
    NoTracefs(io::Error),
    #[error("the tracefs instance {0} already exists: another about-startup-host tracer is running (or a crashed one left it: `rmdir {0}` as root once none runs)")]
    InstanceTaken(PathBuf),
    #[error("this kernel has no {0} event")]
    MissingEvent(&'static str),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> ArmError {
    let what = what.into();
    move |source| ArmError::Io { what, source }
}

/// Mount tracefs if it is not (mount(2); no `mount` program is run).
fn ensure_mounted() -> Result<(), ArmError> {
    if Path::new(INSTANCES).is_dir() {
        return Ok(());
    }
    rustix::mount::mount(
        "nodev",
        TRACEFS,
        "tracefs",
        rustix::mount::MountFlags::empty(),
        None,
    )
    .map_err(|e| ArmError::NoTracefs(e.into()))?;
    if Path::new(INSTANCES).is_dir() {
        Ok(())
    } else {
        Err(ArmError::NoTracefs(io::Error::from(
            io::ErrorKind::NotFound,
        )))
    }
}

/// One instance, its descriptors open.
#[derive(Debug)]
struct Instance {
    dir: PathBuf,
    pipe: Option<File>,
    tracing_on: Option<File>,
    set_event_pid: Option<File>,
    /// Each event's `enable`, by name.
    enables: Vec<(&'static str, File)>,
    stats: Vec<File>,
}

fn write_path(path: &Path, value: &str) -> Result<(), ArmError> {
    std::fs::write(path, value).map_err(io_err(format!("write {value:?} to {}", path.display())))
}

fn open_write(path: &Path, truncate: bool) -> Result<File, ArmError> {
    OpenOptions::new()
        .write(true)
        .truncate(truncate)
        .open(path)
        .map_err(io_err(format!("open {}", path.display())))
}

impl Instance {
    fn create(
        name: &str,
        buffer_kb: u32,
        events: &[&'static str],
        filtered: bool,
        missing: &mut Vec<String>,
    ) -> Result<Self, ArmError> {
        let dir = Path::new(INSTANCES).join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(ArmError::InstanceTaken(dir))
            }
            Err(e) => return Err(io_err(format!("create {}", dir.display()))(e)),
        }
        let mut inst = Instance {
            dir,
            pipe: None,
            tracing_on: None,
            set_event_pid: None,
            enables: Vec::new(),
            stats: Vec::new(),
        };
        let at = |f: &str| inst.dir.join(f);
        write_path(&at("tracing_on"), "0")?;
        write_path(&at("trace_clock"), "mono")?;
        write_path(&at("buffer_size_kb"), &buffer_kb.to_string())?;
        write_path(&at("options/record-tgid"), "1")?;
        write_path(&at("options/irq-info"), "1")?;
        if filtered {
            write_path(&at("options/event-fork"), "1")?;
            inst.set_event_pid = Some(open_write(&at("set_event_pid"), true)?);
        }
        for ev in events {
            let enable = at(&format!("events/{ev}/enable"));
            if enable.exists() {
                inst.enables.push((ev, open_write(&enable, false)?));
            } else {
                missing.push((*ev).to_owned());
            }
        }
        inst.tracing_on = Some(open_write(&at("tracing_on"), false)?);
        inst.pipe = Some(
            OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(at("trace_pipe"))
                .map_err(io_err("open trace_pipe"))?,
        );
        let cpus = std::fs::read_dir(at("per_cpu")).map_err(io_err("list per_cpu"))?;
        for cpu in cpus.flatten() {
            if let Ok(f) = File::open(cpu.path().join("stats")) {
                inst.stats.push(f);
            }
        }
        Ok(inst)
    }

    fn enable(&mut self, which: impl Fn(&str) -> bool) -> Result<(), ArmError> {
        for (name, file) in &mut self.enables {
            if which(name) {
                file.write_all(b"1")
                    .map_err(io_err(format!("enable {name}")))?;
            }
        }
        self.set_on(true)
    }

    fn set_on(&mut self, on: bool) -> Result<(), ArmError> {
        if let Some(f) = &mut self.tracing_on {
            f.write_all(if on { b"1" } else { b"0" })
                .map_err(io_err("write tracing_on"))?;
        }
        Ok(())
    }

    /// Read what the pipe has now (non-blocking), appended to `buf`.
    fn drain(&mut self, buf: &mut Vec<u8>) -> Result<usize, ArmError> {
        let Some(pipe) = self.pipe.as_mut() else {
            return Ok(0);
        };
        let mut chunk = vec![0u8; 1 << 16];
        let mut total = 0;
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) => return Ok(total),
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    total += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(total),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err("read trace_pipe")(e)),
            }
        }
    }

    /// Events the ring buffers dropped: per CPU `overrun` + `dropped events`.
    fn lost(&self) -> u64 {
        let mut text = vec![0u8; 4096];
        self.stats
            .iter()
            .filter_map(|f| {
                let n = f.read_at(&mut text, 0).ok()?;
                Some(parse_lost(&String::from_utf8_lossy(&text[..n])))
            })
            .sum()
    }

    /// Stop, close every descriptor (the kernel keeps an instance with an open file), remove.
    fn remove(mut self) -> Result<(), PathBuf> {
        let _ = self.set_on(false);
        let dir = std::mem::take(&mut self.dir);
        drop(self);
        for _ in 0..50 {
            match std::fs::remove_dir(&dir) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
        Err(dir)
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

/// Both instances, made and open, nothing enabled yet.
#[derive(Debug)]
pub struct Armed {
    tree: Instance,
    system: Instance,
    kpageflags: Option<File>,
    /// Events this kernel does not offer.
    pub missing: Vec<String>,
}

impl Armed {
    /// Make both instances (named after this process), open what will be needed, enable
    /// nothing. Root only.
    pub fn prepare() -> Result<Armed, ArmError> {
        ensure_mounted()?;
        let me = std::process::id();
        let mut missing = Vec::new();
        let mut tree_events: Vec<&'static str> = TREE_EVENTS.to_vec();
        tree_events.push(FAULT_EVENT);
        let tree = Instance::create(
            &format!("about-startup-{me}"),
            TREE_BUFFER_KB,
            &tree_events,
            true,
            &mut missing,
        )?;
        if missing.iter().any(|m| m == TREE_EVENTS[0]) {
            let _ = tree.remove();
            return Err(ArmError::MissingEvent(
                "filemap:mm_filemap_add_to_page_cache",
            ));
        }
        let system = match Instance::create(
            &format!("about-startup-{me}-system"),
            SYSTEM_BUFFER_KB,
            &SYSTEM_EVENTS,
            false,
            &mut missing,
        ) {
            Ok(s) => s,
            Err(e) => {
                let _ = tree.remove();
                return Err(e);
            }
        };
        let kpageflags = File::open("/proc/kpageflags").ok();
        Ok(Armed {
            tree,
            system,
            kpageflags,
            missing,
        })
    }

    /// Follow `pids` (written to the tree's pid filter in one write), enable the events (the
    /// fault event only with `faults`), turn both instances on. Nothing is enabled unless the
    /// pid filter took the pids: an empty filter would record every task.
    pub fn follow(&mut self, pids: &[i32], faults: bool) -> Result<(), ArmError> {
        if pids.is_empty() {
            return Err(io_err("no task to follow")(io::Error::from(
                io::ErrorKind::NotFound,
            )));
        }
        self.add(pids)?;
        self.tree.enable(|e| e != FAULT_EVENT || faults)?;
        self.system.enable(|_| true)
    }

    /// Add tasks to the tree's pid filter (each write adds to what is there).
    pub fn add(&mut self, pids: &[i32]) -> Result<(), ArmError> {
        if pids.is_empty() {
            return Ok(());
        }
        let text: Vec<String> = pids.iter().map(ToString::to_string).collect();
        let filter = self
            .tree
            .set_event_pid
            .as_mut()
            .ok_or_else(|| io_err("set_event_pid")(io::Error::from(io::ErrorKind::NotFound)))?;
        filter
            .write_all(format!("{}\n", text.join(" ")).as_bytes())
            .map_err(io_err("write set_event_pid"))
    }

    pub fn drain_tree(&mut self, buf: &mut Vec<u8>) -> Result<usize, ArmError> {
        self.tree.drain(buf)
    }

    pub fn drain_system(&mut self, buf: &mut Vec<u8>) -> Result<usize, ArmError> {
        self.system.drain(buf)
    }

    /// Wait up to `timeout` for the system instance to have a line (an exec to look at).
    pub fn wait_system(&self, timeout: std::time::Duration) {
        let Some(pipe) = self.system.pipe.as_ref() else {
            std::thread::sleep(timeout);
            return;
        };
        let mut fds = [rustix::event::PollFd::new(
            pipe,
            rustix::event::PollFlags::IN,
        )];
        let ts = rustix::time::Timespec {
            tv_sec: 0,
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        let _ = rustix::event::poll(&mut fds, Some(&ts));
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
        let file = self.kpageflags.as_ref()?;
        let mut word = [0u8; 8];
        file.read_exact_at(&mut word, pfn.checked_mul(8)?).ok()?;
        Some(u64::from_ne_bytes(word))
    }

    /// Remove both instances; the folders that could not be removed.
    pub fn teardown(self) -> Vec<PathBuf> {
        let mut left = Vec::new();
        drop(self.kpageflags);
        for inst in [self.tree, self.system] {
            if let Err(dir) = inst.remove() {
                left.push(dir);
            }
        }
        left
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
