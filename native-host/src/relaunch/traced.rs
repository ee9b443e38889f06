//! "Restart cold and trace", the user's side (docs/design/pkexec.md): wait for Firefox to quit,
//! hand what starting it again needs to root through the state folder (`request`), and run the
//! one privileged step, `pkexec /usr/lib/about-startup/about-startup-host launch --cold --trace
//! --relaunch`, which evicts, starts Firefox as the user and traces its start. Only a host root
//! owns, in a folder only root can write, is ever run that way (the Debian package's); pkexec
//! asks for the password in the desktop's own dialog (polkit action
//! `dev.startup-lab.about-startup.trace`). When the step cannot run or is refused, Firefox is
//! restarted cold all the same, untraced, and the record says why and which command to run.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Serialize;
use serde_json::{json, Value};

use super::request::{self, LaunchRequest};
use super::status::{Evicted, Failure, Stage, Status, TRACE_FAILED};
use super::{begin, evict_and_start, record, wait_step, Options, Snapshot};
use crate::os::proc;

/// Where the Debian package puts the host; the polkit action names this path.
pub const PACKAGED_HOST: &str = "/usr/lib/about-startup/about-startup-host";
pub const PKEXEC: &str = "/usr/bin/pkexec";
pub const POLKIT_ACTION: &str = "/usr/share/polkit-1/actions/dev.startup-lab.about-startup.policy";
/// What the page shows where the traced restart cannot run from it.
pub const COMMAND: &str = "sudo about-startup-host launch --cold --trace";
/// Most of pkexec's stderr kept in the record.
const MAX_STDERR: u64 = 4096;

/// Whether the traced restart can run from the page here (`relaunch_status`'s `trace_ready`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Readiness {
    /// `/usr/bin/pkexec` is installed.
    pub pkexec: bool,
    /// The package's polkit action is installed.
    pub action: bool,
    /// The host root would run: root's own, in a folder only root can write; `None` without one.
    pub system_host: Option<String>,
    /// Whether a polkit authentication agent seems to run among this user's processes (a desktop
    /// shell with one built in, or a `polkit…agent` program). Only a hint: a polkit rule may let
    /// the user through without one, and pkexec's own answer is what the record reports.
    pub agent: bool,
    /// The command to run in a terminal instead.
    pub command: &'static str,
}

/// Looks at this machine now.
#[must_use]
pub fn readiness() -> Readiness {
    let system_host = Path::new(PACKAGED_HOST)
        .is_file()
        .then(|| PathBuf::from(PACKAGED_HOST))
        .filter(|p| crate::os::binary::system_binary_problem(p).is_none())
        .map(|p| p.display().to_string());
    Readiness {
        pkexec: Path::new(PKEXEC).is_file(),
        action: Path::new(POLKIT_ACTION).is_file(),
        system_host,
        agent: agent_running(),
        command: COMMAND,
    }
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

/// Why the privileged step did not give a trace, from pkexec's exit status and stderr. Pure.
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

/// The record of a step that did not run or failed; Firefox is then restarted untraced.
fn trace_failure(reason: &str, detail: String) -> Failure {
    Failure {
        code: TRACE_FAILED.to_owned(),
        message: format!(
            "the trace was not recorded ({reason}): {detail}; Firefox was restarted cold without \
             it. In a terminal: {COMMAND}"
        ),
        params: json!({ "reason": reason, "detail": detail, "command": COMMAND }),
    }
}

/// The whole traced restart of `snap` (always cold).
pub fn run(snap: &Snapshot, opts: &Options, progress: &mut dyn FnMut(&Status)) -> Status {
    let opts = Options {
        cold: true,
        ..opts.clone()
    };
    let mut status = begin(snap, true, true);
    record(&opts, &mut status, progress);
    if !wait_step(snap, &opts, &mut status, progress) {
        return status;
    }
    let ready = readiness();
    let host = match (&ready.system_host, ready.pkexec) {
        (Some(host), true) => host.clone(),
        (None, _) => {
            return untraced(snap, &opts, status, progress, trace_failure(
                "not_installed",
                format!("root runs only a host root owns in a system folder ({PACKAGED_HOST}, from the about-startup package); this one is not"),
            ))
        }
        (_, false) => {
            return untraced(snap, &opts, status, progress, trace_failure(
                "no_pkexec",
                format!("{PKEXEC} is not installed (apt install pkexec)"),
            ))
        }
    };
    let Some(state) = opts.state_dir.clone() else {
        return untraced(
            snap,
            &opts,
            status,
            progress,
            trace_failure("failed", "no state folder to hand the request over".into()),
        );
    };
    if let Err(e) = request::write(&state, &LaunchRequest::of(snap)) {
        return untraced(
            snap,
            &opts,
            status,
            progress,
            trace_failure("failed", e.to_string()),
        );
    }
    status.stage = Stage::Tracing;
    record(&opts, &mut status, progress);
    let outcome = privileged_step(&host);
    // Root removes the request when it reads it; one left means root never got that far.
    if let Ok(dir) = crate::state::StateDir::create_at(&state, None) {
        let _ = dir.remove(request::REQUEST_FILE);
    }
    match outcome {
        Ok(line) => {
            status.stage = Stage::Started;
            status.new_pid = line["pid"].as_i64().and_then(|p| i32::try_from(p).ok());
            status.trace_id = line["trace_id"].as_str().map(str::to_owned);
            let files = line["evicted"]["files"].as_u64().unwrap_or(0);
            status.evicted = Some(Evicted {
                files,
                exact_files: files,
                pages_dropped: line["evicted"]["pages"].as_u64().unwrap_or(0),
                ..Evicted::default()
            });
            if let Some(e) = line["store_error"].as_str() {
                status.error = Some(trace_failure("not_stored", e.to_owned()));
            }
            record(&opts, &mut status, progress);
            status
        }
        Err((reason, detail)) => {
            untraced(snap, &opts, status, progress, trace_failure(reason, detail))
        }
    }
}

/// Restart cold without the trace, the failure kept in the record.
fn untraced(
    snap: &Snapshot,
    opts: &Options,
    mut status: Status,
    progress: &mut dyn FnMut(&Status),
    failure: Failure,
) -> Status {
    status.error = Some(failure);
    evict_and_start(snap, opts, &mut status, progress);
    status
}

/// Runs pkexec; `Ok` with root's one JSON line, or `Err((reason, detail))`.
fn privileged_step(host: &str) -> Result<Value, (&'static str, String)> {
    let child = Command::new(PKEXEC)
        .args([host, "launch", "--cold", "--trace", "--relaunch"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ("failed", format!("starting {PKEXEC}: {e}")))?;
    let output = child
        .wait_with_output()
        .map_err(|e| ("failed", format!("waiting for {PKEXEC}: {e}")))?;
    let mut stderr = String::new();
    let _ = (&output.stderr[..])
        .take(MAX_STDERR)
        .read_to_string(&mut stderr);
    let stderr = stderr.trim().to_owned();
    if !output.status.success() {
        let reason = refusal_reason(output.status.code(), &stderr);
        return Err((
            reason,
            format!("pkexec exited with {} ({stderr})", output.status),
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["pid"].is_i64())
        .ok_or_else(|| {
            (
                "failed",
                format!("root's launch printed no result ({stderr})"),
            )
        })
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
