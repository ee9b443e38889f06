//! sudo's route: root under sudo for user U, before anything is parsed, makes a socket pair and
//! forks. The parent stays root and becomes the tracer serving the socket (it looks at nothing
//! of the command); the child becomes U for good and runs the command, with the socket as its
//! tracer. When the child ends the parent ends with its status.
//!
//! The parent arms tracefs and confines itself at once, before it reads anything from the
//! socket, and sends `Ready` unasked: the command's held Firefox must not wait for the arming
//! (a ring buffer of 32 MiB per CPU takes a moment). A command that traces nothing closes its
//! end, and the instances are removed.

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};

use rustix::thread::CapabilitySet;

use super::session;
use crate::os::account::{self, Account};

/// The child, for the signal handler.
static CHILD: AtomicI32 = AtomicI32::new(0);

/// SIGTERM and SIGHUP are passed on to the child (its end closing then ends the session): the
/// one capability the parent keeps once armed is CAP_KILL, for this.
extern "C" fn forward(signal: libc::c_int) {
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe {
            libc::kill(child, signal);
        }
    }
}

/// Root's part under sudo for `uid`. Returns only in the child, as the user for good, with its
/// end of the socket and the user's account (whose environment the child then takes on); the
/// parent serves, waits for the child and exits with its status.
pub fn split(uid: u32) -> Result<(UnixStream, Account), ExitCode> {
    let fail = |code: u8, why: String| {
        eprintln!("about-startup-host: error: {why}; nothing was done");
        ExitCode::from(code)
    };
    let user = account::lookup(uid).ok_or_else(|| {
        fail(
            2,
            format!("sudo names uid {uid} (SUDO_UID), which has no passwd entry"),
        )
    })?;
    let (parent_end, child_end) =
        UnixStream::pair().map_err(|e| fail(1, format!("a socket pair for the tracer: {e}")))?;
    // SAFETY: the process has one thread here (nothing has run but this), so the child may
    // do anything after the fork.
    let child = unsafe { libc::fork() };
    if child == 0 {
        drop(parent_end);
        return match account::become_user(&user) {
            Ok(()) => Ok((child_end, user)),
            Err(e) => Err(fail(
                2,
                format!("could not become {} (uid {uid}): {e}", user.name),
            )),
        };
    }
    if child < 0 {
        let e = std::io::Error::last_os_error();
        return Err(fail(1, format!("fork: {e}")));
    }
    drop(child_end);
    CHILD.store(child, Ordering::SeqCst);
    session::signals(forward);
    let _ = std::env::set_current_dir("/");
    if let (Ok(reader), Ok(closer)) = (parent_end.try_clone(), parent_end.try_clone()) {
        let writer = OwnedFd::from(parent_end);
        let who = session::For {
            uid,
            invoker: child,
            may_override: true,
            keep: CapabilitySet::KILL,
        };
        session::serve(reader, writer, &who);
        // The session is over, but this process lives on until the child ends, and the
        // session's reader thread still holds the socket: shut it down, so that the child's
        // side reads its end now (it waited for it, and the child for it, for good).
        let _ = closer.shutdown(std::net::Shutdown::Both);
    }
    std::process::exit(wait(child))
}

/// The child's exit status as this process's (128 + a signal that ended it).
fn wait(child: i32) -> i32 {
    let mut status = 0;
    // SAFETY: waitpid on our own child with an out-parameter.
    while unsafe { libc::waitpid(child, &mut status, 0) } != child {
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return 1;
        }
    }
    if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        libc::WEXITSTATUS(status)
    }
}
