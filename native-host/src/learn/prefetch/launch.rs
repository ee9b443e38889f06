//! Starting Firefox with the prefetcher beside it. Firefox comes first, always: this process
//! forks the prefetcher off and then *becomes* Firefox (exec), so the launched program is
//! Firefox itself (the desktop's startup notification, a benchmark's pid and a terminal's
//! Ctrl-C all see Firefox), and whatever the prefetcher meets (no plan, an unreadable state
//! folder, files replaced by an update, a panic) happens in another process after Firefox was
//! already started. The prefetcher is forked twice, so it belongs to init (or the nearest
//! subreaper) and never becomes a child Firefox would have to reap.
//!
//! Where the disk's readahead window is large ([`super::strategy`]), the plan is read first, in
//! this process, and Firefox is started after it (or after [`FIRST_TIME_LIMIT`], or after
//! whatever went wrong): Firefox still always starts.

use std::io::{self, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use super::image::{self, ImageOutcome};
use super::record::{self, LastPrefetch};
use super::run::{self, Ended, KernelCache, KernelIo};
use super::strategy::{Reason, Strategy, FIRST_TIME_LIMIT};
use super::{choose, Knobs};
use crate::firefox::compressed::{Compressed, Verdict};
use crate::os::clock::now_ms;
use crate::state::StateDir;

/// A prefetch never runs longer than a start may take.
pub const TIME_LIMIT: Duration = Duration::from_secs(120);
/// How often the prefetcher looks whether Firefox still runs.
const WATCH_EVERY: Duration = Duration::from_millis(50);

/// What the prefetcher reads for whom.
#[derive(Debug, Clone)]
pub struct Prefetch {
    pub install_dir: PathBuf,
    /// The state folder (`$XDG_STATE_HOME/about-startup`): opened by the prefetcher, after
    /// Firefox was started.
    pub state_dir: PathBuf,
    /// Paced by I/O pressure (pagecache/pace.rs); off by default: at a launch the one waiting on
    /// the disk is mostly Firefox itself, and pacing would yield to exactly what it serves.
    pub paced: bool,
    pub knobs: Knobs,
    /// Say on stderr which plan it reads and what it did: one line each (a desktop launch's
    /// stderr is the session log).
    pub verbose: bool,
    /// Beside the start, or first.
    pub strategy: Strategy,
    /// Why that strategy (the CLI and the session log say it).
    pub reason: Reason,
    /// The readahead window of the disk holding Firefox, KiB (recorded: the page words why
    /// `first`).
    pub read_ahead_kb: Option<u64>,
    /// The profile this launch starts (its arguments): the traced reads of that profile only
    /// are prefetched (learn/plan/profile.rs).
    pub launched: crate::learn::plan::profile::Launched,
    /// The image behind the install's mount when the kernel names none (a FUSE mount of
    /// `pack`'s own image): firefox/compressed/.
    pub known_image: Option<PathBuf>,
}

/// Fork the prefetcher off, then exec `firefox`. Returns only if the exec failed (Firefox could
/// not be started at all); a failed fork leaves Firefox to start without a prefetch.
pub fn exec_beside(mut firefox: Command, prefetch: &Prefetch) -> io::Error {
    let pid = i32::try_from(std::process::id()).unwrap_or(0);
    let start_ticks = crate::os::proc::stat(pid).map(|s| s.starttime);
    let at_ms = now_ms();
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    if prefetch.strategy == Strategy::First {
        if prefetch.verbose {
            eprintln!(
                "about-startup-host: reading the plan first, then starting Firefox ({})",
                first_reason(prefetch.reason)
            );
        }
        let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            prefetch_for(pid, start_ticks, at_ms, prefetch);
        }));
        if done.is_err() && prefetch.verbose {
            eprintln!("about-startup-host: the prefetch failed; starting Firefox");
        }
        return firefox.exec();
    }
    if let Some(why) = cannot_fork() {
        eprintln!("about-startup-host: no prefetch ({why}); starting Firefox without it");
        return firefox.exec();
    }
    // SAFETY: this process has one thread (checked just above), so the child is a complete
    // copy of it; both children only run ordinary Rust code and end with `_exit`.
    match unsafe { libc::fork() } {
        -1 => eprintln!(
            "about-startup-host: no prefetch (fork: {}); starting Firefox without it",
            io::Error::last_os_error()
        ),
        0 => {
            // SAFETY: as above; the first child forks the prefetcher and leaves at once.
            if unsafe { libc::fork() } == 0 {
                let _ = rustix::process::setsid();
                let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    prefetch_for(pid, start_ticks, at_ms, prefetch);
                }));
                // SAFETY: `_exit` ends this process without running the parent's atexit work.
                unsafe { libc::_exit(i32::from(done.is_err())) };
            }
            // SAFETY: as above.
            unsafe { libc::_exit(0) };
        }
        child => {
            let mut status = 0;
            // SAFETY: waits for our own child, which exits at once; `status` is an out-parameter.
            unsafe { libc::waitpid(child, &mut status, 0) };
        }
    }
    firefox.exec()
}

/// Why this process must not fork now (more than one thread: a fork would copy only this one).
fn cannot_fork() -> Option<String> {
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let threads = crate::os::proc::tasks(me).map_or(1, |t| t.len());
    (threads != 1).then(|| format!("{threads} threads running"))
}

/// The prefetcher's whole life: choose the plan, read it while Firefox (`pid`, started at
/// `start_ticks`) runs, record what it did.
pub fn prefetch_for(pid: i32, start_ticks: Option<u64>, at_ms: u64, p: &Prefetch) {
    // Not niced: niceness 10 and 0 measured the same on a cold start (it mostly waits for the
    // disk), and on a hot one it is done within milliseconds (docs/benchmarks.md).
    let begun = Instant::now();
    let limit = match p.strategy {
        Strategy::Beside => TIME_LIMIT,
        Strategy::First => FIRST_TIME_LIMIT,
    };
    let state = match StateDir::create_at(&p.state_dir) {
        Ok(state) => state,
        Err(e) => {
            if p.verbose {
                eprintln!("about-startup-host: no prefetch: {e}");
            }
            return;
        }
    };
    // What every record of this launch says; each outcome below fills in the rest.
    let base = LastPrefetch {
        at_ms,
        firefox_pid: pid,
        plan: super::PrefetchStatus {
            source: None,
            build_id: None,
            traces: 0,
            fallback: None,
            learned_stale: false,
        },
        bytes_planned: 0,
        plan_ms: 0,
        strategy: Some(p.strategy),
        read_ahead_kb: p.read_ahead_kb,
        outcome: run::Outcome::default(),
        profile: None,
        failed: None,
        compressed: None,
        image_read: None,
    };
    // A compressed install (a Snap, a packed Firefox): never read through the mount.
    let compressed = crate::firefox::compressed::detect(&p.install_dir, p.known_image.as_deref());
    if let Some(c) = compressed
        .as_ref()
        .filter(|c| c.verdict == Verdict::LeftOff)
    {
        if p.verbose {
            eprintln!("about-startup-host: {}", c.line());
        }
        let left = LastPrefetch {
            plan_ms: millis(begun.elapsed()),
            compressed: Some(c.clone()),
            ..base
        };
        record::write(&state, &left);
        return;
    }
    let (plan, status) = match choose(&p.install_dir, &state, p.knobs, &p.launched) {
        Ok(chosen) => chosen,
        Err(e) => {
            if p.verbose {
                eprintln!("about-startup-host: no prefetch: {e}");
            }
            let failed = LastPrefetch {
                plan_ms: millis(begun.elapsed()),
                failed: Some(e.to_string()),
                ..base
            };
            record::write(&state, &failed);
            return;
        }
    };
    let plan_ms = millis(begun.elapsed());
    let Some(plan) = plan else {
        if p.verbose {
            eprintln!(
                "about-startup-host: nothing to prefetch: {}",
                describe(&status)
            );
        }
        let none = LastPrefetch {
            plan: status,
            plan_ms,
            ..base
        };
        record::write(&state, &none);
        return;
    };
    if let Some(c) = compressed {
        if p.verbose {
            eprintln!("about-startup-host: {}", c.line());
        }
        let image_read = read_image(&plan, &c, p, pid, start_ticks, &begun, limit);
        if p.verbose {
            eprintln!(
                "about-startup-host: read {:.1} MB of the image ({:.1} MB of it mapped from {:.1} MB of {} files) in {} of {} batches by first use, in {} ms; {:.1} MB not mapped, {:.1} MB off the mount left to the start{}",
                image_read.bytes_image_read as f64 / 1e6,
                image_read.bytes_image_planned as f64 / 1e6,
                image_read.bytes_files_mapped as f64 / 1e6,
                image_read.files_mapped,
                image_read.batches_done,
                image_read.batches,
                image_read.elapsed_ms,
                image_read.bytes_unmapped as f64 / 1e6,
                image_read.bytes_outside as f64 / 1e6,
                match image_read.warm_ms {
                    Some(ms) => format!(
                        "; decompressed ahead through the mount: {:.1} of {:.1} MB of files, done {ms} ms after the image read began",
                        image_read.bytes_warmed as f64 / 1e6,
                        image_read.bytes_warm_planned as f64 / 1e6,
                    ),
                    None => String::new(),
                },
            );
        }
        let outcome = run::Outcome {
            bytes_read: image_read.bytes_image_read,
            batches: image_read.batches,
            batches_done: image_read.batches_done,
            elapsed_ms: image_read.elapsed_ms,
            ended: image_read.ended,
            ..run::Outcome::default()
        };
        let record = LastPrefetch {
            compressed: Some(c),
            image_read: Some(image_read),
            ..planned(base, status, &plan, plan_ms, outcome)
        };
        record::write(&state, &record);
        return;
    }
    let mut cache = KernelCache::new(&plan);
    let mut io = KernelIo::new(p.paced);
    let mut stop = stop_when(pid, start_ticks, &begun, limit);
    let mut outcome = run::run(&plan, p.knobs.ahead, &mut cache, &mut io, &mut stop);
    outcome.files_exact = cache.exact;
    outcome.files_probed = cache.probed;
    if p.verbose {
        eprintln!(
            "about-startup-host: prefetched {:.1} MB of the {} ({:.1} MB planned, {:.1} MB found cached) in {} ms{}; {}",
            outcome.bytes_read as f64 / 1e6,
            describe(&status),
            plan.bytes_planned as f64 / 1e6,
            outcome.bytes_cached as f64 / 1e6,
            outcome.elapsed_ms,
            if p.strategy == Strategy::First { ", before Firefox" } else { "" },
            match outcome.ended {
                Some(Ended::FirefoxExited) => "Firefox exited first",
                Some(Ended::TimeLimit) => "stopped at the time limit",
                _ => "done",
            }
        );
        if let Some(profile) = &plan.profile {
            eprintln!(
                "about-startup-host: the plan held {} ({:.1} MB of it read)",
                profile.describe(),
                outcome.bytes_read_profile as f64 / 1e6
            );
        }
    }
    record::write(&state, &planned(base, status, &plan, plan_ms, outcome));
}

/// The record of a launch that had a plan and read it (the install's files or the image's),
/// from what every record of the launch says (`base`). The one place both paths fill it in.
fn planned(
    base: LastPrefetch,
    status: super::PrefetchStatus,
    plan: &super::PrefetchPlan,
    plan_ms: u64,
    outcome: run::Outcome,
) -> LastPrefetch {
    LastPrefetch {
        plan: status,
        bytes_planned: plan.bytes_planned,
        plan_ms,
        outcome,
        profile: plan.profile.clone(),
        ..base
    }
}

/// When a prefetch stops before its plan is read: at the time limit, or once Firefox (`pid`,
/// started at `start_ticks`) has exited, looked at every [`WATCH_EVERY`]. One rule for the
/// install's files and the image.
fn stop_when<'a>(
    pid: i32,
    start_ticks: Option<u64>,
    begun: &'a Instant,
    limit: Duration,
) -> impl FnMut() -> Option<Ended> + 'a {
    let mut last_look = Instant::now();
    move || {
        if begun.elapsed() > limit {
            return Some(Ended::TimeLimit);
        }
        if last_look.elapsed() >= WATCH_EVERY {
            last_look = Instant::now();
            if !alive(pid, start_ticks) {
                return Some(Ended::FirefoxExited);
            }
        }
        None
    }
}

/// The compressed install's prefetch: the plan mapped to image ranges, read raw batch by batch in
/// first-use order (each batch in image order) until done, Firefox exits or the time limit.
fn read_image(
    plan: &super::PrefetchPlan,
    c: &Compressed,
    p: &Prefetch,
    pid: i32,
    start_ticks: Option<u64>,
    begun: &Instant,
    limit: Duration,
) -> ImageOutcome {
    let mut stop = stop_when(pid, start_ticks, begun, limit);
    image::prefetch(plan, c, p.knobs.gap, p.knobs.ahead, p.knobs.warm, &mut stop)
}

/// Why the plan is read first, in words (the CLI and the session log).
fn first_reason(reason: Reason) -> String {
    match reason {
        // In MB, as the page says it, and read_ahead_kb as sysfs has it.
        Reason::LargeWindow(kb) => format!(
            "the disk reads {:.1} MB around every page Firefox would fault in before the \
             prefetch reached it, read_ahead_kb {kb}; --strategy beside starts it at once",
            (kb * 1024) as f64 / 1e6
        ),
        Reason::Asked | Reason::SmallWindow | Reason::Compressed => {
            "asked with --strategy first".to_owned()
        }
    }
}

/// Whether process `pid` is still the one that started at `start_ticks` and has not exited.
#[must_use]
pub fn alive(pid: i32, start_ticks: Option<u64>) -> bool {
    crate::os::proc::stat(pid)
        .is_some_and(|s| s.state != 'Z' && start_ticks.is_none_or(|t| t == s.starttime))
}

/// Which plan, in words (the CLI and the session log; the page words the codes itself).
#[must_use]
pub fn describe(status: &super::PrefetchStatus) -> String {
    use super::{Fallback, Source};
    let why = match &status.fallback {
        None => String::new(),
        Some(Fallback::NoTrace) => "no stored trace of this Firefox".to_owned(),
        Some(Fallback::NoPageUse) => {
            "the traces of this build do not say which pages were used (recorded without root)"
                .to_owned()
        }
        Some(Fallback::OtherBuild { traced_build }) => format!(
            "the traced plan is stale: traced on build {}, this is build {} (an update)",
            traced_build.as_deref().unwrap_or("unknown"),
            status.build_id.as_deref().unwrap_or("unknown")
        ),
    };
    match status.source {
        Some(Source::Trace) if status.stale() => format!(
            "traced plan of build {} ({} trace{}), read by file name, each file by its traced \
             ranges cut to its size now: Firefox was updated to build {} since; the next traced \
             start of this build renews the plan ({})",
            match &status.fallback {
                Some(Fallback::OtherBuild { traced_build }) =>
                    traced_build.as_deref().unwrap_or("unknown"),
                _ => "unknown",
            },
            status.traces,
            if status.traces == 1 { "" } else { "s" },
            status.build_id.as_deref().unwrap_or("unknown"),
            crate::trace::store::record_command()
        ),
        Some(Source::Trace) => format!(
            "traced plan of build {} ({} trace{}), in first-use order",
            status.build_id.as_deref().unwrap_or("unknown"),
            status.traces,
            if status.traces == 1 { "" } else { "s" }
        ),
        Some(Source::Learned) => format!(
            "learned plan, in disk order ({why}{})",
            if status.learned_stale {
                "; it was learned on another build, changed files left out"
            } else {
                ""
            }
        ),
        None if status.learned_stale => format!(
            "{why}, and the learned plan is of another build too; the next start is learned again"
        ),
        None => format!("{why}, and nothing learned yet"),
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
