//! Starting the restart from host mode: Firefox closes its native hosts when it quits, so the
//! host starts `about-startup-host relaunch --pid N …` (this same binary) in a session of its
//! own, with no stdio (stdout carries the host's frames), and returns at once. That process
//! outlives Firefox, and reports through the state folder (`status`).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use crate::Error;

/// What the page asked for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub cold: bool,
    pub trace: bool,
    /// A URL to open in the restarted Firefox (when session restore will not bring the page
    /// back), passed as one more argument.
    pub open: Option<String>,
    pub timeout_s: Option<u64>,
}

/// The arguments of the detached `relaunch` for Firefox `pid`. Pure.
#[must_use]
pub fn helper_args(pid: i32, req: &Request) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["relaunch".into(), "--pid".into(), pid.to_string().into()];
    if req.cold {
        args.push("--cold".into());
    }
    if req.trace {
        args.push("--trace".into());
    }
    if let Some(s) = req.timeout_s {
        args.push("--timeout".into());
        args.push(s.to_string().into());
    }
    if let Some(url) = &req.open {
        // `--open=URL` in one argument: a URL starting with '-' stays a value.
        args.push(format!("--open={url}").into());
    }
    args
}

/// Start the detached restart of Firefox `pid`; returns the helper's pid.
pub fn spawn_helper(pid: i32, req: &Request) -> Result<u32, Error> {
    let exe = std::env::current_exe().map_err(|e| Error::io("finding this program's path", e))?;
    let mut cmd = Command::new(exe);
    cmd.args(helper_args(pid, req))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe. A session of its own: no signal to Firefox's
    // process group or terminal reaches it.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| Error::io("starting the restart helper", e))?;
    // Not waited for (dropping a Child neither waits nor kills): it must outlive this host,
    // and is reaped by whoever inherits it.
    Ok(child.id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helper_args_carry_the_request() {
        let req = Request {
            cold: true,
            trace: false,
            open: Some("-x moz-extension://u/page/startup.html".into()),
            timeout_s: Some(30),
        };
        let args: Vec<String> = helper_args(42, &req)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        assert_eq!(
            args,
            [
                "relaunch",
                "--pid",
                "42",
                "--cold",
                "--timeout",
                "30",
                "--open=-x moz-extension://u/page/startup.html"
            ]
        );
    }
}
