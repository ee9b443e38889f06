//! A recorded start, as the user: reach the tracer, evict (a cold start), fork Firefox held,
//! have the tracer follow it, let it go, record until the start is over, build the trace
//! ([`launch`]); or record a Firefox that already runs ([`attach`]). Time zero of a launch is the
//! held launcher's fork (CLOCK_MONOTONIC just before it): the process Firefox's own `process`
//! milestone counts from.

use std::ffi::OsString;

use anyhow::Context as _;

use super::cold::Evicted;
use super::connect::{self, NoTracer};
use crate::firefox::install::Install;
use crate::note::{self, Note};
use crate::os::clock::{boot_to_clock, clock_ns};
use crate::os::held::{self, Program, Running};
use crate::trace::model::Trace;
use crate::trace::record::{Link, Recorder, Stop};
use crate::trace::store;

/// Whether the start is cold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cold {
    /// As the page cache is.
    No,
    /// Evict the install folder first (launch/cold.rs).
    Evict,
    /// The caller evicted it already (launch/cold.rs): what it dropped and what stayed.
    Evicted(Box<Evicted>),
}

/// What to start, and how to record it.
#[derive(Debug, Clone)]
pub struct Spec {
    pub install: Install,
    /// The program (Firefox's binary), its argv, environment and working folder.
    pub program: Program,
    pub cold: Cold,
    /// Ask for the tracer (else /proc is sampled, and the trace says `--trace` was not given).
    pub trace: bool,
    /// With the tracer: also which instruction faulted each page in (issue 21).
    pub faults: bool,
}

/// Where the tracer comes from.
pub enum Tracer {
    /// Reach it now (launch/connect.rs).
    Connect,
    /// Already reached (or not), by the caller.
    Given(Result<Link, NoTracer>),
}

/// A recorded start: the trace and the Firefox it started (left running: it is the user's).
#[derive(Debug)]
pub struct Launched {
    pub trace: Trace,
    pub firefox: Running,
    /// How Firefox ended, where it exited while it was recorded (`None`: it runs on).
    pub exited: Option<std::process::ExitStatus>,
    /// Firefox's standard error (an unlinked file: gone with the last descriptor), where one
    /// could be made.
    pub stderr: Option<std::fs::File>,
}

impl Launched {
    /// Why this launch failed, where Firefox did: it exited with an error or was killed by a
    /// signal while its start was recorded (no display, a crash, a bad argument). Such a start
    /// is no start: the command fails, nothing is stored, no plan learns from it (issue 39 #3:
    /// with no display Firefox ended after 300 ms, the command said rc 0 and stored it).
    #[must_use]
    pub fn failed(&self) -> Option<String> {
        let status = self.exited.filter(|s| !s.success())?;
        Some(format!(
            "Firefox (pid {}) exited with {} {:.0} ms after it was started, before its start was \
             over",
            self.firefox.pid,
            exit_words(status),
            self.trace.ended_ms
        ))
    }

    /// The end of what Firefox wrote to its standard error, where it wrote anything.
    #[must_use]
    pub fn firefox_said(&self) -> Option<String> {
        self.stderr.as_ref().map(said).filter(|s| !s.is_empty())
    }
}

/// At most this much of what Firefox said is repeated (its last words: a failing start ends
/// with why).
const SAID_BYTES: u64 = 2048;

/// The end of what Firefox wrote to `file` (its standard error), trimmed; read where it is,
/// without moving the offset Firefox writes at.
fn said(file: &std::fs::File) -> String {
    use std::os::unix::fs::FileExt;
    let len = file.metadata().map_or(0, |m| m.len());
    let from = len.saturating_sub(SAID_BYTES);
    let mut buf = vec![0u8; usize::try_from(len - from).unwrap_or(0)];
    let n = file.read_at(&mut buf, from).unwrap_or(0);
    buf.truncate(n);
    String::from_utf8_lossy(&buf).trim().to_owned()
}

/// An unlinked file for Firefox's standard error, in the state folder (on disk: a Firefox
/// left running may write to it all session), else the temporary folder; `None` if neither.
fn stderr_file() -> Option<std::fs::File> {
    crate::state::open()
        .ok()
        .and_then(|s| tempfile::tempfile_in(s.path()).ok())
        .or_else(|| tempfile::tempfile().ok())
}

/// "exit status 1", "signal 11 (SIGSEGV)": how a process ended, in words.
fn exit_words(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        _ => status.to_string(),
    }
}

/// What to tell a person whose Firefox failed to start from this environment, where something
/// can be told: no display to open a window on. Pure (`var` reads the environment).
#[must_use]
pub fn failure_hint(args: &[OsString], var: impl Fn(&str) -> Option<OsString>) -> Option<String> {
    let headless = args.iter().any(|a| a == "--headless" || a == "-headless")
        || var("MOZ_HEADLESS").is_some_and(|v| !v.is_empty());
    let display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .into_iter()
        .any(|k| var(k).is_some_and(|v| !v.is_empty()));
    (!headless && !display).then(|| {
        "there is no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset: under \
         sudo, su or ssh?): run it from your desktop's terminal, or add `-- --headless`"
            .to_owned()
    })
}

/// The program of a Firefox `binary` with `args`, this process's environment plus `extra`.
#[must_use]
pub fn firefox_program(
    binary: &std::path::Path,
    args: &[OsString],
    extra: &[(&str, String)],
) -> Program {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| !extra.iter().any(|(e, _)| k == e))
        .collect();
    env.extend(
        extra
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    Program {
        path: binary.to_path_buf(),
        argv: std::iter::once(binary.as_os_str().to_owned())
            .chain(args.iter().cloned())
            .collect(),
        env,
        cwd: None,
        setsid: false,
        stderr: None,
    }
}

fn tracer_for(trace: bool, tracer: Tracer) -> Result<Link, (&'static str, String)> {
    if !trace {
        return Err((note::NO_TRACE_NOT_ASKED, "--trace not given".into()));
    }
    match tracer {
        Tracer::Connect => connect::connect(),
        Tracer::Given(t) => t,
    }
    .map_err(|e| e.for_note())
}

/// The profile folder the start of `program` will use, where its arguments name one (relative
/// to the folder it will run in); refused when Firefox could not start on it (a folder that
/// does not exist: ESR 153 waits for ever on an invisible dialog, issue 30 #5).
pub fn profile_of(program: &Program) -> anyhow::Result<Option<std::path::PathBuf>> {
    let cwd = match &program.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().unwrap_or_else(|_| "/".into()),
    };
    let profile =
        crate::firefox::process::profile_in_args(program.argv.get(1..).unwrap_or(&[]), &cwd);
    if let Some(problem) = profile
        .as_deref()
        .and_then(crate::firefox::process::profile_problem)
    {
        anyhow::bail!("{problem}");
    }
    Ok(profile)
}

/// Launch `spec` and record its start.
pub fn launch(spec: &Spec, stop: Stop, tracer: Tracer) -> anyhow::Result<Launched> {
    // Before anything is evicted or traced: a start that cannot come is refused.
    let profile = profile_of(&spec.program)?;
    let link = tracer_for(spec.trace, tracer);
    let mut notes = Vec::new();
    let evicted = match &spec.cold {
        Cold::No => None,
        Cold::Evict => Some(super::cold::evict(&spec.install.dir)?),
        Cold::Evicted(e) => Some((**e).clone()),
    };
    if let Some(e) = &evicted {
        notes.push(
            Note::new(note::COLD_EVICTED)
                .with("files", e.files)
                .with("pages", e.pages_dropped),
        );
        // Not cold after all: said in the trace (the page shows its notes) and at once.
        if let Some(held) = e.held_note(crate::os::sys::page_size() as u64) {
            eprintln!("about-startup-host: warning: {}", held.english());
            notes.push(held);
        }
    }
    if crate::os::sys::geteuid() == 0 {
        notes.push(Note::new(note::STARTED_AS_ROOT));
    }
    // The traces folder exists before Firefox starts: the extension's marker goes there.
    let traces = store::open().ok();
    // Ctrl-C, SIGTERM and SIGHUP stop the recording (and keep what it has) from the moment
    // Firefox can run: armed when the recording's loop began, a signal that came right after
    // Firefox's exec ended the host itself (the root-only signals test lost that race once).
    let _ = crate::trace::record::signal::interrupted();
    let stderr = stderr_file();
    let mut program = spec.program.clone();
    if program.stderr.is_none() {
        program.stderr = stderr
            .as_ref()
            .and_then(|f| f.try_clone().ok())
            .map(|f| std::sync::Arc::new(std::os::fd::OwnedFd::from(f)));
    }
    let zero_ns = clock_ns();
    let launched_at = std::time::SystemTime::now();
    let held =
        held::spawn(&program).with_context(|| format!("start {}", spec.program.path.display()))?;
    let pid = held.pid();
    let mut recorder = Recorder::follow(link, pid, spec.faults, &spec.install.dir);
    recorder.watch_start(profile, launched_at);
    let mut firefox = held
        .release()
        .with_context(|| format!("start {}", spec.program.path.display()))?;
    // With the about:startup extension in that Firefox, its `learn` after sessionRestored leaves
    // a marker in this user's state folder.
    let marker = traces.and_then(|d| {
        let ticks = store::process_start(pid)?;
        Some((d, store::recorded_marker(pid, ticks)))
    });
    let mut exited = None;
    let ended_by = recorder.run(
        &mut || match firefox.try_wait() {
            Ok(Some(status)) => {
                exited = Some(status);
                Some(format!("firefox exited ({})", exit_words(status)))
            }
            _ => None,
        },
        zero_ns,
        stop,
        &marker,
    );
    if let Some(status) = exited {
        notes.push(Note::new(note::START_INCOMPLETE).with("status", exit_words(status)));
    }
    let zero = (
        zero_ns,
        "the held launcher's fork, which then became Firefox (CLOCK_MONOTONIC just before it)"
            .to_owned(),
    );
    let cold = spec.cold != Cold::No;
    let mut trace = recorder.finish(&spec.install, zero, ended_by, notes, cold)?;
    if let Some((dir, _)) = &marker {
        let restored = store::take_recorded(dir, pid, trace.process_start_ticks);
        trace.note_session_restored(restored);
    }
    Ok(Launched {
        trace,
        firefox,
        exited,
        stderr,
    })
}

/// Whether a recorded launch is not a start to store: it got to its profile and never reached
/// sessionRestored (issue 30 #5), and the recording was meant to cover the whole start (not a
/// window the user chose with `--seconds`). Such a trace gets its note, naming the profile.
pub fn not_a_start(trace: &mut Trace, seconds_given: bool) -> bool {
    if trace.session_restored_reached != Some(false) || seconds_given {
        return false;
    }
    let profile = trace
        .profile
        .as_ref()
        .and_then(|p| p.dir.clone())
        .unwrap_or_default();
    let n = Note::new(note::START_NOT_RESTORED).with("profile", profile);
    trace.notes.push(n.english());
    trace.note_codes.push(n);
    true
}

/// `trace --pid`: record a running Firefox; what it read before is missed (said in notes).
pub fn attach(
    pid: i32,
    install: &Install,
    trace: bool,
    faults: bool,
    stop: Stop,
) -> anyhow::Result<Trace> {
    let stat = crate::os::proc::stat(pid).with_context(|| format!("no process {pid}"))?;
    let zero_ns =
        boot_to_clock(stat.starttime * (1_000_000_000 / crate::os::sys::clk_tck().max(1)));
    let link = tracer_for(trace, Tracer::Connect);
    let mut recorder = Recorder::follow(link, pid, trace && faults, &install.dir);
    recorder.baseline();
    let ended_by = recorder.run(
        &mut || (!crate::os::proc::alive(pid)).then(|| "firefox exited".to_owned()),
        zero_ns,
        stop,
        &None,
    );
    // Attached right after a spawn, the pid may still have been a wrapper (a cgroup or sandbox
    // launcher) that exec'd Firefox since: name the install by what the process is now.
    let now_install = crate::firefox::install::locate(None, Some(pid)).ok();
    if let Some(now) = now_install.as_ref().filter(|now| now.dir != install.dir) {
        recorder.install_is(&now.dir);
    }
    let install = now_install.as_ref().unwrap_or(install);
    let attached = (recorder.armed_ns().saturating_sub(zero_ns)) as f64 / 1e6;
    let notes = vec![Note::new(note::ATTACHED_LATE).with("ms", attached.round())];
    let mut trace = recorder.finish(
        install,
        (
            zero_ns,
            "/proc/<pid>/stat starttime (CLOCK_BOOTTIME, clock-tick resolution, on CLOCK_MONOTONIC)".into(),
        ),
        ended_by,
        notes,
        false,
    )?;
    // The extension's marker, if it recorded this start already (it names sessionRestored).
    if let Ok(dir) = store::open() {
        let restored = store::take_recorded(&dir, pid, trace.process_start_ticks);
        trace.note_session_restored(restored);
    }
    Ok(trace)
}
