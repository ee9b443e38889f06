//! A private tracefs instance (`/sys/kernel/tracing/instances/<name>`): created for one
//! recording, removed by `Drop` (normal end, error, panic) and by the signal guard (Ctrl-C,
//! SIGTERM, SIGHUP), so no instance is ever left behind. Nothing global is changed.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use thiserror::Error;

/// Where tracefs lives on current kernels.
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// The events a recording arms (checked on kernel 6.18; a missing one is skipped and noted).
/// `exceptions/page_fault_user` (which code faulted, issue 21) only with [`Instance::create`]'s
/// `faults`: it fires on every user page fault, ~100k in a start.
pub const FAULT_EVENT: &str = "exceptions/page_fault_user";
pub const EVENTS: [&str; 10] = [
    "filemap/mm_filemap_add_to_page_cache",
    "filemap/mm_filemap_fault",
    "readahead/page_cache_sync_ra",
    "readahead/page_cache_async_ra",
    "readahead/page_cache_ra_unbounded",
    "readahead/page_cache_ra_order",
    "block/block_rq_issue",
    "block/block_rq_complete",
    "sched/sched_process_fork",
    "sched/sched_process_exec",
];

#[derive(Debug, Error)]
pub enum TraceError {
    #[error("tracefs is not available at {TRACEFS} and could not be mounted ({0}); as root run `mount -t tracefs nodev {TRACEFS}`, or record without --trace")]
    NoTracefs(io::Error),
    #[error("the tracefs instance {0} already exists: another about-startup-host trace is running (or a crashed one left it: `rmdir {0}` as root once none runs)")]
    InstanceTaken(PathBuf),
    #[error("tracing needs root: the kernel's page-cache events are only for root. Run `{} launch --trace …` (Firefox is still started as you, the trace is stored in your state folder)", crate::invocation::current().as_root)]
    NotRoot,
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> TraceError {
    let what = what.into();
    move |source| TraceError::Io { what, source }
}

/// Instances that exist right now, for the signal guard.
fn live() -> &'static Mutex<Vec<PathBuf>> {
    static LIVE: OnceLock<Mutex<Vec<PathBuf>>> = OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(Vec::new()))
}

/// How long the first signal leaves the recording to wind down and store what it has before
/// the host ends anyway: `timeout` and most service managers send one SIGTERM, and a host that
/// only sets a flag must not outlive it (issue 20).
pub const GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// What a signal does, by how many came before it. Pure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnSignal {
    /// The first: stop recording, keep what it has, end within [`GRACE`].
    WindDown,
    /// A second SIGINT or SIGTERM: remove the instances and end now.
    Exit,
}

#[must_use]
pub fn on_signal(already: bool) -> OnSignal {
    if already {
        OnSignal::Exit
    } else {
        OnSignal::WindDown
    }
}

/// Set by Ctrl-C/SIGTERM/SIGHUP: the recording stops, cleans up and keeps what it has. A second
/// signal ends the host at once, and so does the first one's [`GRACE`] running out.
#[must_use]
pub fn interrupted() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = Arc::clone(&flag);
        let _ = ctrlc::set_handler(move || match on_signal(f.swap(true, Ordering::SeqCst)) {
            OnSignal::Exit => end_now(),
            OnSignal::WindDown => {
                // ctrlc runs this on its own thread, not in the signal handler: a thread may
                // be started here.
                let _ = std::thread::Builder::new()
                    .name("signal grace".into())
                    .spawn(|| {
                        std::thread::sleep(GRACE);
                        let _ = writeln!(
                            io::stderr(),
                            "about-startup-host: still running {} s after the signal; ending",
                            GRACE.as_secs()
                        );
                        end_now();
                    });
            }
        });
        flag
    })
    .clone()
}

fn end_now() -> ! {
    remove_all_live();
    std::process::exit(130);
}

fn remove_all_live() {
    if let Ok(list) = live().lock() {
        for dir in list.iter() {
            let _ = fs::write(dir.join("tracing_on"), "0");
            let _ = fs::remove_dir(dir);
        }
    }
}

/// Mount tracefs if it is not (root only).
pub fn ensure_mounted() -> Result<PathBuf, TraceError> {
    // Without root tracefs is either invisible (0700) or read-only: say "root", not "missing".
    if crate::os::sys::geteuid() != 0 {
        return Err(TraceError::NotRoot);
    }
    let root = PathBuf::from(TRACEFS);
    if root.join("instances").is_dir() {
        return Ok(root);
    }
    let status = std::process::Command::new("mount")
        .args(["-t", "tracefs", "nodev", TRACEFS])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(TraceError::NoTracefs)?;
    if status.success() && root.join("instances").is_dir() {
        Ok(root)
    } else {
        Err(TraceError::NoTracefs(io::Error::other(format!(
            "mount exited with {status}"
        ))))
    }
}

/// One instance; removed on drop.
pub struct Instance {
    dir: PathBuf,
    pipe: Option<File>,
    /// Events the kernel does not offer here.
    pub missing_events: Vec<String>,
}

impl Instance {
    /// Create and arm `name`: the monotonic clock (CLOCK_MONOTONIC, the clock of a Firefox
    /// profile's `startTimeAsClockMonotonicNanosecondsSinceBoot`), a per-CPU buffer of
    /// `buffer_kb`, thread-group ids recorded, `EVENTS` (and with `faults` [`FAULT_EVENT`])
    /// enabled, tracing on.
    pub fn create(name: &str, buffer_kb: u32, faults: bool) -> Result<Self, TraceError> {
        let root = ensure_mounted()?;
        let dir = root.join("instances").join(name);
        match fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(TraceError::InstanceTaken(dir))
            }
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                return Err(TraceError::NotRoot)
            }
            Err(e) => return Err(io_err(format!("create {}", dir.display()))(e)),
        }
        live().lock().map(|mut l| l.push(dir.clone())).ok();
        let mut inst = Instance {
            dir,
            pipe: None,
            missing_events: Vec::new(),
        };
        inst.write("tracing_on", "0")?;
        inst.write("trace_clock", "mono")?;
        inst.write("buffer_size_kb", &buffer_kb.to_string())?;
        inst.write("options/record-tgid", "1")?;
        for ev in EVENTS.into_iter().chain(faults.then_some(FAULT_EVENT)) {
            let enable = format!("events/{ev}/enable");
            if inst.dir.join(&enable).exists() {
                inst.write(&enable, "1")?;
            } else {
                inst.missing_events.push(ev.to_owned());
            }
        }
        if inst
            .missing_events
            .iter()
            .any(|e| e.ends_with("mm_filemap_add_to_page_cache"))
        {
            return Err(io_err(
                "this kernel has no filemap:mm_filemap_add_to_page_cache event",
            )(io::Error::from(io::ErrorKind::Unsupported)));
        }
        let pipe = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(inst.dir.join("trace_pipe"))
            .map_err(io_err("open trace_pipe"))?;
        inst.pipe = Some(pipe);
        inst.write("tracing_on", "1")?;
        Ok(inst)
    }

    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn write(&self, file: &str, value: &str) -> Result<(), TraceError> {
        fs::write(self.dir.join(file), value).map_err(io_err(format!(
            "write {value:?} to {}",
            self.dir.join(file).display()
        )))
    }

    /// Read what the pipe has now (non-blocking) and append it to `buf`; the count read.
    pub fn drain(&mut self, buf: &mut Vec<u8>) -> Result<usize, TraceError> {
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

    /// Stop tracing (the buffer stays readable).
    pub fn stop(&self) -> Result<(), TraceError> {
        self.write("tracing_on", "0")
    }

    /// Events the ring buffers dropped: per CPU `overrun` + `dropped events`.
    #[must_use]
    pub fn lost_events(&self) -> u64 {
        let Ok(cpus) = fs::read_dir(self.dir.join("per_cpu")) else {
            return 0;
        };
        cpus.flatten()
            .filter_map(|c| fs::read_to_string(c.path().join("stats")).ok())
            .map(|s| parse_lost(&s))
            .sum()
    }
}

/// `overrun:` + `dropped events:` of a per-CPU `stats` file.
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

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = fs::write(self.dir.join("tracing_on"), "0");
        // The pipe must be closed before the kernel lets the instance go.
        self.pipe = None;
        for _ in 0..50 {
            match fs::remove_dir(&self.dir) {
                Ok(()) => break,
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
        if self.dir.exists() {
            eprintln!(
                "about-startup-host: warning: could not remove {}; remove it with rmdir",
                self.dir.display()
            );
        }
        if let Ok(mut l) = live().lock() {
            l.retain(|d| d != &self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{on_signal, OnSignal};

    #[test]
    fn the_first_signal_winds_down_and_a_second_ends() {
        assert_eq!(on_signal(false), OnSignal::WindDown);
        assert_eq!(on_signal(true), OnSignal::Exit);
    }

    #[test]
    fn lost_counts_overrun_and_dropped() {
        let stats = "entries: 5\noverrun: 3\ncommit overrun: 0\nbytes: 1\ndropped events: 2\nread events: 9\n";
        assert_eq!(super::parse_lost(stats), 5);
    }
}
