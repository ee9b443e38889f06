//! Recording a start: evict (optional), arm a tracefs instance (root) or fall back to sampling
//! /proc (anyone), start Firefox as the invoking user or attach to a running one, stop when the
//! start is over, then resolve files, extents and ELF sections into a [`Trace`].
//!
//! Here: what to record ([`Launch`], [`Stop`]) and the two ways in, [`launch`] and [`attach`];
//! `sampler.rs` is the /proc side (also the unprivileged fallback), `recording.rs` the tracefs
//! side and the loop that decides when the start is over, `finish.rs` the step from a stopped
//! recording to the [`Trace`], `files.rs` which files the trace names (dev+inode resolved to
//! paths, and the residency fallback without tracefs), `enrich.rs` what issue 21 adds to a
//! finished trace (the code behind each fault, omni.ja's entries behind each read).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context as _;

use super::build::{self, Context, FileInfo};
use super::event::{lost_in_line, parse_line, Line};
use super::model::{Process, Sample, Source, Trace, TRACE_VERSION};
use super::tracefs::{self, Instance, TraceError};
use crate::firefox::install::Install;
use crate::firefox::process as firefox;
use crate::note::{self, Note};
use crate::os::clock::{boot_to_clock, clock_ns, now_ms};
use crate::os::proc::maps::parse_maps_line;
use crate::state::user::User;

/// Per-CPU ring buffer: 32 MiB holds a cold start's ~100k events between 10 ms drains.
const BUFFER_KB: u32 = 32 * 1024;
/// The recording polls the pipe and /proc this often.
const TICK: Duration = Duration::from_millis(10);
/// /proc sampling period with tracefs (cheap, for read_bytes and quiet detection)…
const SAMPLE_TRACED: Duration = Duration::from_millis(50);
/// …and without (the only data then).
const SAMPLE_FALLBACK: Duration = Duration::from_millis(10);
/// The start is over when the tree has read nothing for this long (documented in README)…
pub const QUIET_MS: u64 = 3000;
/// …but never before this, nor after `MAX_SECONDS`.
const MIN_MS: u64 = 1500;
pub const MAX_SECONDS: f64 = 120.0;

/// How a recording ends.
#[derive(Debug, Clone, Copy)]
pub struct Stop {
    pub seconds: Option<f64>,
    pub quiet_ms: u64,
}

/// The file (in a traces folder) whose appearance means the extension recorded this start (see
/// store::mark_recorded).
type Marker = Option<(crate::state::StateDir, String)>;

/// What `launch` starts.
#[derive(Debug)]
pub struct Launch {
    pub install: Install,
    pub binary: PathBuf,
    pub args: Vec<OsString>,
    pub cold: bool,
    pub trace: bool,
    /// Also trace which instructions faulted (exceptions:page_fault_user; issue 21).
    pub faults: bool,
    /// Start Firefox with its own startup profiler on and collect its profile (issue 21).
    pub firefox_profile: bool,
    pub user: Option<User>,
    /// The whole environment to start Firefox with (a traced restart starts it as the user had
    /// it: relaunch/request.rs), instead of this process's, adjusted for `user`.
    pub env: Option<Vec<(OsString, OsString)>>,
    /// Its working folder (a traced restart: the old Firefox's).
    pub cwd: Option<PathBuf>,
}

mod enrich;
mod files;
mod finish;
mod recording;
mod sampler;

use files::install_identity;
use finish::finish;
use recording::{run_loop, Recording};
pub use sampler::process_kind;
use sampler::Sampler;

/// `launch`: evict if asked, arm, start Firefox (as the invoking user), record until the start
/// is over. Returns the trace and the running Firefox (left running: it is the user's).
pub fn launch(opts: &Launch, stop: Stop) -> anyhow::Result<(Trace, Child)> {
    let mut notes = Vec::new();
    if opts.cold {
        let selected = crate::firefox::install::select(&opts.install.dir, &[])?;
        let summary = crate::pagecache::evict::evict(&selected.folder, &selected.files);
        notes.push(
            Note::new(note::COLD_EVICTED)
                .with("files", selected.files.len())
                .with("pages", summary.pages_dropped),
        );
    }
    let install_id = install_identity(&opts.install.dir);
    let mut rec = Recording::arm(opts.trace, opts.faults);
    let mut cmd = Command::new(&opts.binary);
    if opts.firefox_profile {
        cmd.envs(crate::firefox::startup_profile::env());
    }
    cmd.args(&opts.args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(env) = &opts.env {
        cmd.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
    }
    if let Some(cwd) = &opts.cwd {
        cmd.current_dir(cwd);
    }
    if let Some(u) = &opts.user {
        if opts.env.is_none() {
            cmd.env("HOME", &u.home)
                .env("USER", &u.name)
                .env("LOGNAME", &u.name)
                .env_remove("XDG_CONFIG_HOME")
                .env_remove("XDG_CACHE_HOME")
                .env_remove("XDG_STATE_HOME")
                .env_remove("XDG_DATA_HOME")
                .env_remove("SUDO_UID")
                .env_remove("SUDO_GID")
                .env_remove("SUDO_USER")
                .env_remove("PKEXEC_UID");
        }
        let (uid, gid, groups) = (u.uid, u.gid, u.groups.clone());
        // SAFETY: only async-signal-safe syscalls between fork and exec; `groups` was built
        // before the fork.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setgroups(groups.len(), groups.as_ptr()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    } else if crate::os::sys::geteuid() == 0 {
        notes.push(Note::new(note::STARTED_AS_ROOT));
    }
    let spawn_ns = clock_ns();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("start {}", opts.binary.display()))?;
    let pid = i32::try_from(child.id()).unwrap_or(0);
    let mut sampler = Sampler {
        root: pid,
        ..Sampler::default()
    };
    // With the about:startup extension in that Firefox, its `learn` after sessionRestored leaves
    // a marker in the state folder of the user Firefox runs as.
    let marker = super::store::process_start(pid).and_then(|ticks| {
        super::store::open(opts.user.as_ref())
            .ok()
            .map(|d| (d, super::store::recorded_marker(pid, ticks)))
    });
    let ended_by = match run_loop(
        &mut rec,
        &mut sampler,
        Some(&mut child),
        spawn_ns,
        stop,
        &marker,
    ) {
        Ok(e) => e,
        Err(e) => {
            drop(rec);
            return Err(e);
        }
    };
    if ended_by.starts_with("firefox exited") {
        // `status` is Rust's wording of the exit status: for the English note only.
        let status = ended_by
            .trim_start_matches("firefox exited")
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')');
        notes.push(Note::new(note::START_INCOMPLETE).with("status", status));
    }
    // Time zero: the fork as traced if seen (exact), else the spawn call.
    let probe = build::build(
        &rec.lines,
        &Context {
            root: pid,
            ..Context::default()
        },
    )
    .fork_ns;
    let zero = match probe {
        Some(ns) => (
            ns,
            "the traced fork of the Firefox process (CLOCK_MONOTONIC)".to_owned(),
        ),
        None => (
            spawn_ns,
            "the host's spawn call (CLOCK_MONOTONIC)".to_owned(),
        ),
    };
    let mut trace = finish(
        rec,
        sampler,
        &opts.install,
        pid,
        zero,
        ended_by,
        notes,
        install_id,
        opts.cold,
    )?;
    if let Some((dir, _)) = &marker {
        let restored = super::store::take_recorded(dir, pid, trace.process_start_ticks);
        trace.note_session_restored(restored);
    }
    Ok((trace, child))
}

/// `trace --pid`: attach to a running Firefox; what it read before is missed (said in notes).
/// `owner`: whose state folder the trace goes to, where the extension's marker is looked for.
pub fn attach(
    owner: Option<&crate::state::User>,
    pid: i32,
    install: &Install,
    trace: bool,
    faults: bool,
    stop: Stop,
) -> anyhow::Result<Trace> {
    let stat = crate::os::proc::stat(pid).with_context(|| format!("no process {pid}"))?;
    let zero_ns =
        boot_to_clock(stat.starttime * (1_000_000_000 / crate::os::sys::clk_tck().max(1)));
    let install_id = install_identity(&install.dir);
    let mut rec = Recording::arm(trace, trace && faults);
    let mut sampler = Sampler {
        root: pid,
        ..Sampler::default()
    };
    sampler.sample(0.0, true);
    sampler.baseline = sampler
        .read_bytes
        .iter()
        .map(|(p, rb)| (*p, (*rb, sampler.majflt.get(p).copied().unwrap_or(0))))
        .collect();
    sampler.samples.clear();
    let ended_by = run_loop(&mut rec, &mut sampler, None, zero_ns, stop, &None)?;
    // Attached right after a spawn, the pid may still have been a wrapper (a cgroup or sandbox
    // launcher) that exec'd Firefox since: name the install by what the process is now.
    let now_install = crate::firefox::install::locate(None, Some(pid)).ok();
    let install_id = match &now_install {
        Some(now) if now.dir != install.dir => install_identity(&now.dir),
        _ => install_id,
    };
    let install = now_install.as_ref().unwrap_or(install);
    let attached = (rec.armed_ns.saturating_sub(zero_ns)) as f64 / 1e6;
    let notes = vec![Note::new(note::ATTACHED_LATE).with("ms", attached.round())];
    let mut trace = finish(
        rec,
        sampler,
        install,
        pid,
        (
            zero_ns,
            "/proc/<pid>/stat starttime (CLOCK_BOOTTIME, clock-tick resolution, on CLOCK_MONOTONIC)".into(),
        ),
        ended_by,
        notes,
        install_id,
        false,
    )?;
    // The extension's marker, if it recorded this start already (it names sessionRestored).
    if let Ok(dir) = super::store::open(owner) {
        let restored = super::store::take_recorded(&dir, pid, trace.process_start_ticks);
        trace.note_session_restored(restored);
    }
    Ok(trace)
}
