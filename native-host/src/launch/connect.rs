//! Reaching the tracer (root's part, tracer/) from the user's side: one protocol, three ways in,
//! tried in this order:
//! - the socket the sudo split handed this process (`sudo about-startup-host …`);
//! - root itself: its own `about-startup-host tracer` as a child, over pipes;
//! - the Debian package's route: `pkexec /usr/lib/about-startup/about-startup-host tracer`,
//!   only that root-owned host in a folder only root can write (polkit pins the path and the
//!   argument), over pkexec's stdin/stdout.
//!
//! Else there is none: the recording samples /proc, and says how to get the exact trace.

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use serde::Serialize;

use crate::note;
use crate::os::proc;
use crate::trace::record::{Link, LinkError};

/// Where the Debian package puts the host; the polkit action names this path.
pub const PACKAGED_HOST: &str = "/usr/lib/about-startup/about-startup-host";
pub const PKEXEC: &str = "/usr/bin/pkexec";
pub const POLKIT_ACTION: &str = "/usr/share/polkit-1/actions/dev.startup-lab.about-startup.policy";
/// Most of pkexec's stderr kept.
const MAX_STDERR: u64 = 4096;

/// The sudo split's socket, until a recording takes it.
static INHERITED: Mutex<Option<UnixStream>> = Mutex::new(None);

/// Hand this process the tracer's socket (the sudo split does, before the command runs).
pub fn inherit(socket: UnixStream) {
    if let Ok(mut s) = INHERITED.lock() {
        *s = Some(socket);
    }
}

/// Why there is no tracer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoTracer {
    /// The traced restart's words for it (`relaunch.json`'s `trace_failed` reason): `not_root`,
    /// `not_installed`, `no_pkexec`, `no_agent`, `dismissed`, `not_authorized`, `failed`.
    pub reason: &'static str,
    /// The trace's note reason (`note::NO_TRACE_*`).
    pub note: &'static str,
    /// English for a person.
    pub detail: String,
}

impl NoTracer {
    /// As a recording's fallback reason.
    #[must_use]
    pub fn for_note(&self) -> (&'static str, String) {
        (self.note, self.detail.clone())
    }

    fn from_link(e: &LinkError) -> NoTracer {
        NoTracer {
            reason: "failed",
            note: e.note_reason(),
            detail: e.to_string(),
        }
    }
}

/// Whether the traced restart can run from the page here (`relaunch_status`'s `trace_ready`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Readiness {
    /// `/usr/bin/pkexec` is installed.
    pub pkexec: bool,
    /// The package's polkit action is installed.
    pub action: bool,
    /// The host pkexec would run: root's own, in a folder only root can write; `None` without one.
    pub system_host: Option<String>,
    /// Whether a polkit authentication agent seems to run among this user's processes (a desktop
    /// shell with one built in, or a `polkit…agent` program). Only a hint: a polkit rule may let
    /// the user through without one, and pkexec's own answer is what the record reports.
    pub agent: bool,
    /// The command to run in a terminal instead, as this user runs it (crate::invocation: the
    /// host's path where its bare name is not on `PATH`, `sudo` unless root already).
    pub command: String,
}

/// Looks at this machine now.
#[must_use]
pub fn readiness() -> Readiness {
    Readiness {
        pkexec: Path::new(PKEXEC).is_file(),
        action: Path::new(POLKIT_ACTION).is_file(),
        system_host: packaged_host().map(|p| p.display().to_string()),
        agent: agent_running(),
        command: crate::trace::store::record_command(),
    }
}

/// The package's host, if it is there and root's (the rule of `install --system`).
fn packaged_host() -> Option<PathBuf> {
    Some(PathBuf::from(PACKAGED_HOST))
        .filter(|p| p.is_file())
        .filter(|p| crate::os::binary::system_binary_problem(p).is_none())
}

/// A process of this user that is a polkit agent, by its name (comm): `polkit-gnome-au…`,
/// `polkit-kde-auth…`, `lxpolkit`, `lxqt-policykit…`, `mate-polkit`, or a shell with one built
/// in (GNOME Shell, Cinnamon).
fn agent_running() -> bool {
    let me = crate::os::sys::geteuid();
    proc::pids()
        .into_iter()
        .filter(|pid| proc::owner(*pid) == Some(me))
        .filter_map(|pid| proc::read(pid, "comm", proc::SMALL_BYTES).ok())
        .any(|comm| is_agent_name(String::from_utf8_lossy(&comm).trim()))
}

/// Pure.
#[must_use]
pub fn is_agent_name(comm: &str) -> bool {
    let c = comm.to_ascii_lowercase();
    c.contains("polkit") || c.contains("policykit") || c == "gnome-shell" || c == "cinnamon"
}

/// Why pkexec gave no tracer, from its exit status and stderr. Pure.
#[must_use]
pub fn refusal_reason(code: Option<i32>, stderr: &str) -> &'static str {
    if stderr.contains("authentication agent") {
        "no_agent"
    } else if code == Some(126) {
        "dismissed"
    } else if stderr.contains("Not authorized") || stderr.contains("not authorized") {
        "not_authorized"
    } else {
        "failed"
    }
}

/// What a user without root reads: how to get the exact trace.
fn not_root_detail() -> String {
    format!(
        "tracing needs root: the kernel's page-cache events are only for root. Run `{} launch \
         --trace …` (Firefox is still started as you, the trace is stored in your state \
         folder), or install the about-startup package: pkexec then asks for the \
         administrator's password",
        crate::invocation::current().as_root
    )
}

/// Reach a tracer, or say why there is none.
pub fn connect() -> Result<Link, NoTracer> {
    if let Some(socket) = INHERITED.lock().ok().and_then(|mut s| s.take()) {
        let reader = socket.try_clone().map_err(|e| NoTracer {
            reason: "failed",
            note: note::NO_TRACE_IO,
            detail: e.to_string(),
        })?;
        return Link::open(reader, socket, None).map_err(|e| NoTracer::from_link(&e));
    }
    if crate::os::sys::geteuid() == 0 {
        return own_tracer();
    }
    let ready = readiness();
    match (packaged_host(), ready.pkexec) {
        (Some(host), true) => pkexec_tracer(&host),
        (None, _) => Err(NoTracer {
            reason: "not_installed",
            note: note::NO_TRACE_NOT_ROOT,
            detail: format!(
                "{}; root runs only a host root owns in a system folder ({PACKAGED_HOST}, from \
                 the about-startup package) through pkexec",
                not_root_detail()
            ),
        }),
        (_, false) => Err(NoTracer {
            reason: "no_pkexec",
            note: note::NO_TRACE_NOT_ROOT,
            detail: format!(
                "{}; {PKEXEC} is not installed (apt install pkexec)",
                not_root_detail()
            ),
        }),
    }
}

/// Root itself: this binary's `tracer` as a child, in a process group of its own (the
/// terminal's Ctrl-C is this process's to handle: it stops the recording, which ends the
/// tracer).
fn own_tracer() -> Result<Link, NoTracer> {
    let failed = |detail: String| NoTracer {
        reason: "failed",
        note: note::NO_TRACE_IO,
        detail,
    };
    let exe = std::env::current_exe().map_err(|e| failed(format!("this program's path: {e}")))?;
    let mut child = Command::new(exe)
        .arg(crate::tracer::ARG)
        .env_remove("SUDO_UID")
        .env_remove("PKEXEC_UID")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
        .map_err(|e| failed(format!("starting the tracer: {e}")))?;
    let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(failed("the tracer's pipes".into()));
    };
    match Link::open(output, input, Some(child)) {
        Ok(link) => Ok(link),
        Err(e) => Err(NoTracer::from_link(&e)),
    }
}

/// The package's route: pkexec asks for the administrator's password (the desktop's dialog,
/// or the terminal's), then runs the packaged host's tracer.
fn pkexec_tracer(host: &Path) -> Result<Link, NoTracer> {
    let failed = |detail: String| NoTracer {
        reason: "failed",
        note: note::NO_TRACE_NOT_ROOT,
        detail,
    };
    let mut child = Command::new(PKEXEC)
        .arg(host)
        .arg(crate::tracer::ARG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("starting {PKEXEC}: {e}")))?;
    let (Some(input), Some(output), Some(errors)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(failed("pkexec's pipes".into()));
    };
    // pkexec's words, kept (bounded) for its refusal; later the tracer's own stderr.
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = errors.take(MAX_STDERR).read_to_string(&mut text);
        text
    });
    match Link::open(output, input, None) {
        Ok(link) => Ok(link.with_process(child)),
        Err(e) => {
            let status = child.wait().ok();
            let text = stderr.join().unwrap_or_default();
            let text = text.trim();
            let reason = match &e {
                LinkError::Closed(_) => refusal_reason(status.and_then(|s| s.code()), text),
                _ => "failed",
            };
            Err(NoTracer {
                reason,
                note: note::NO_TRACE_NOT_ROOT,
                detail: match status {
                    Some(s) => format!("pkexec exited with {s} ({text})"),
                    None => format!("pkexec gave no tracer: {e} ({text})"),
                },
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkexec_outcomes_are_told_apart() {
        // pkexec's own words (polkit 122) without an agent and without a terminal.
        let no_agent = "Error creating textual authentication agent: Error opening current controlling terminal for the process (`/dev/tty'): No such device or address";
        assert_eq!(refusal_reason(Some(127), no_agent), "no_agent");
        assert_eq!(refusal_reason(Some(126), ""), "dismissed");
        assert_eq!(
            refusal_reason(
                Some(127),
                "Error executing command as another user: Not authorized"
            ),
            "not_authorized"
        );
        assert_eq!(
            refusal_reason(Some(1), "about-startup-host: error: refusing"),
            "failed"
        );
    }

    #[test]
    fn agents_are_known_by_name() {
        for name in [
            "polkit-gnome-au",
            "polkit-kde-auth",
            "lxpolkit",
            "lxqt-policykit-",
            "gnome-shell",
        ] {
            assert!(is_agent_name(name), "{name}");
        }
        assert!(!is_agent_name("firefox-esr"));
    }
}
