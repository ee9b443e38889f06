//! The one part of the host that runs as root: `about-startup-host tracer`. It arms the
//! kernel's tracing for one process tree of the invoking user and hands over only what that
//! tree read, over one typed protocol; everything else (starting Firefox, reading files,
//! symbols, storing, exporting) is the user's side, as the user (docs/design/privilege.md).
//!
//! Here: how a run of this binary starts ([`start`]: the tracer, the sudo split, a refusal, or
//! the CLI), and the tracer's run under pkexec or for root itself ([`run`]). The parts:
//! - `protocol`: the messages, typed, both directions;
//! - `who`: the invoking user (PKEXEC_UID, SUDO_UID) and which processes are theirs;
//! - `arm`: the tracefs instances, made and opened before confinement;
//! - `confine`: no_new_privs and Landlock (and `session`: no capability once armed);
//! - `syscalls`: the seccomp allow-list of the system calls the armed tracer makes;
//! - `filter`: which lines are handed over, rewritten how (pure);
//! - `session`: one recording served over a byte stream;
//! - `split`: sudo's route: root stays the tracer, a child drops to the user for the command.
//!
//! It uses only the ground floor (`os`) and the frames (`framing`): tests/layering.rs checks.

pub mod arm;
pub mod confine;
pub mod filter;
pub mod protocol;
pub mod session;
pub mod split;
pub mod syscalls;
pub mod who;

use std::ffi::{OsStr, OsString};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;

use crate::os::account::Account;
pub use who::Route;

/// The argument that makes this binary the tracer.
pub const ARG: &str = "tracer";

/// How this run of the binary starts, decided before anything is parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// `tracer`, as root: pkexec's route (uid of the user) or root itself (0).
    Tracer { route: Route, uid: u32 },
    /// Root under sudo for user `uid`: split (tracer/split.rs).
    SudoSplit { uid: u32 },
    /// The CLI or the native-messaging host, as whoever runs it.
    Cli,
    /// Refused: the message, exit status 2.
    Refuse(String),
}

/// Where every run of the binary begins (main.rs), and all of root's part: `Ok` only where the
/// CLI or the host runs next, as whoever ran it, or in the sudo split's child as the user for
/// good, with the tracer's socket and the user's account; the tracer's own runs and the
/// refusals end here with their exit status.
pub fn entry(args: &[OsString]) -> Result<Option<(UnixStream, Account)>, ExitCode> {
    let env = std::env::var_os;
    let euid = rustix::process::geteuid().as_raw();
    match start(
        args,
        euid,
        env("SUDO_UID").as_deref(),
        env("PKEXEC_UID").as_deref(),
    ) {
        Start::Refuse(why) => {
            eprintln!("about-startup-host: refusing: {why}");
            Err(ExitCode::from(2))
        }
        Start::Tracer { route, uid } => Err(run(route, uid)),
        Start::SudoSplit { uid } => split::split(uid).map(Some),
        Start::Cli => Ok(None),
    }
}

/// Decide how to start from argv, the effective uid and `SUDO_UID`/`PKEXEC_UID`. Pure.
#[must_use]
pub fn start(args: &[OsString], euid: u32, sudo: Option<&OsStr>, pkexec: Option<&OsStr>) -> Start {
    let tracer = args.get(1).is_some_and(|a| a == ARG);
    if !tracer && euid != 0 {
        return Start::Cli; // an ordinary user: the variables are just text
    }
    let invoker = match who::invoker(sudo, pkexec) {
        Ok(invoker) => invoker,
        Err(e) => return Start::Refuse(format!("{e}; run through one of sudo or pkexec")),
    };
    let why = match (tracer, invoker) {
        (true, _) if args.len() != 2 => {
            let extra: Vec<_> = args[2..].iter().map(|a| a.to_string_lossy()).collect();
            format!("`{ARG}` takes no arguments (it follows only a process the caller names over its protocol); refusing {extra:?}")
        }
        (true, _) if euid != 0 => format!("`{ARG}` is root's part of a trace: pkexec runs it (the page's \"Restart cold and trace\", or `launch --trace` with the about-startup package installed), or run `sudo about-startup-host launch --cold --trace`"),
        (true, (Route::Sudo, _)) => format!("under sudo run the command itself (`sudo about-startup-host launch --cold --trace`): `{ARG}` is started by pkexec, or by root's own commands"),
        (true, (route, uid)) => return Start::Tracer { route, uid },
        (false, (Route::Pkexec, _)) => format!("under pkexec this host runs only `{ARG}` (exactly: `about-startup-host {ARG}`); run other commands as yourself, or `sudo about-startup-host …`"),
        (false, (Route::Sudo, uid)) if uid != 0 => return Start::SudoSplit { uid },
        (false, _) => return Start::Cli,
    };
    Start::Refuse(why)
}

/// `about-startup-host tracer` under pkexec (`uid`: PKEXEC_UID) or for root itself (`uid` 0),
/// serving its stdin/stdout.
fn run(route: Route, uid: u32) -> ExitCode {
    // Its caller (pkexec replaced itself with this program, so the parent is the user's
    // process that ran pkexec) must be wholly the user's.
    let parent = i32::try_from(std::os::unix::process::parent_id()).unwrap_or(0);
    if !who::credentials(parent).is_some_and(|c| c.uids.iter().all(|u| *u == uid)) {
        eprintln!(
            "about-startup-host {ARG}: refusing: its caller (process {parent}) is not wholly \
             uid {uid}'s"
        );
        return ExitCode::from(2);
    }
    session::signals(session::on_term);
    let _ = std::env::set_current_dir("/");
    let Ok(stdout) = std::io::stdout().as_fd().try_clone_to_owned() else {
        return ExitCode::from(1);
    };
    let who = session::For {
        uid,
        invoker: parent,
        may_override: route == Route::Root,
        keep: rustix::thread::CapabilitySet::empty(),
    };
    session::serve(std::io::stdin(), stdout, &who);
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        std::iter::once("about-startup-host")
            .chain(a.iter().copied())
            .map(OsString::from)
            .collect()
    }

    fn s(v: &str) -> Option<&std::ffi::OsStr> {
        Some(std::ffi::OsStr::new(v))
    }

    #[test]
    fn pkexec_runs_only_the_tracer_with_no_argument() {
        assert_eq!(
            start(&args(&["tracer"]), 0, None, s("1000")),
            Start::Tracer {
                route: Route::Pkexec,
                uid: 1000
            }
        );
        for refused in [
            args(&["tracer", "x"]),
            args(&["launch", "--cold", "--trace"]),
            args(&["residency", "--json"]),
            args(&[]),
        ] {
            match start(&refused, 0, None, s("1000")) {
                Start::Refuse(why) => assert!(why.contains("tracer"), "{why}"),
                other => panic!("{refused:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn sudo_splits_every_command_and_root_itself_runs_the_cli() {
        assert_eq!(
            start(&args(&["residency"]), 0, s("1000"), None),
            Start::SudoSplit { uid: 1000 }
        );
        assert_eq!(start(&args(&["residency"]), 0, s("0"), None), Start::Cli);
        assert_eq!(start(&args(&["residency"]), 0, None, None), Start::Cli);
        assert_eq!(
            start(&args(&["tracer"]), 0, None, None),
            Start::Tracer {
                route: Route::Root,
                uid: 0
            }
        );
        assert!(matches!(
            start(&args(&["tracer"]), 0, s("1000"), None),
            Start::Refuse(_)
        ));
        // An ordinary user: the variables are just text, the CLI runs as them.
        assert_eq!(
            start(&args(&["residency"]), 1000, s("5"), s("6")),
            Start::Cli
        );
        assert!(matches!(
            start(&args(&["tracer"]), 1000, None, None),
            Start::Refuse(_)
        ));
        assert!(matches!(
            start(&args(&["launch"]), 0, s("1000"), s("1001")),
            Start::Refuse(_)
        ));
    }
}
