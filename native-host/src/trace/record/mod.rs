//! Recording a start: evict (optional), arm a tracefs instance (root) or fall back to sampling
//! /proc (anyone), start Firefox as the invoking user or attach to a running one, stop when the
//! start is over, then resolve files, extents and ELF sections into a [`Trace`].
//!
//! Here: the two ways in, [`launch`] and [`attach`]; `spec.rs` what to record ([`Launch`],
//! [`Stop`]) and the recording's pace;
//! `sampler.rs` is the /proc side (also the unprivileged fallback), `recording.rs` the tracefs
//! side and the loop that decides when the start is over, `finish.rs` the step from a stopped
//! recording to the [`Trace`], `files.rs` which files the trace names (dev+inode resolved to
//! paths, and the residency fallback without tracefs), `enrich.rs` what issue 21 adds to a
//! finished trace (the code behind each fault, omni.ja's entries behind each read).

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use anyhow::Context as _;

use super::build::{self, Context};
use super::model::Trace;
use crate::firefox::install::Install;
use crate::note::{self, Note};
use crate::os::clock::{boot_to_clock, clock_ns};

mod enrich;
mod files;
mod finish;
mod recording;
mod sampler;
mod spec;

use files::install_identity;
use finish::finish;
use recording::{run_loop, Recording};
pub use sampler::process_kind;
use sampler::Sampler;
pub use spec::{Launch, Stop, MAX_SECONDS, QUIET_MS};

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
