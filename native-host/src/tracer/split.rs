//! sudo's route: root under sudo for user U, before anything is parsed, makes a socket pair and
//! forks. The parent stays root and becomes the tracer serving the socket (it looks at nothing
//! of the command); the child becomes U for good and runs the command, with the socket as its
//! tracer. When the child ends the parent ends with its status.
//!
//! The parent arms tracefs and confines itself at once, before it reads anything from the
//! socket, and sends `Ready` unasked: the command's held Firefox must not wait for the arming
//! (a ring buffer of 32 MiB per CPU takes a moment). A command that traces nothing closes its
//! end, and the instances are removed.

use std::io;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::os::account::{self, Account};

/// The child, for the signal handler.
static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(signal: libc::c_int) {
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe {
            libc::kill(child, signal);
        }
    }
}

/// Root's part under sudo for `uid`. Returns only in the child, as the user, with its end of
/// the socket; the parent serves, waits and exits.
pub fn split(uid: u32) -> Result<UnixStream, ExitCode> {
    let Some(user) = account::lookup(uid) else {
        eprintln!(
            "about-startup-host: error: sudo names uid {uid} (SUDO_UID), which has no passwd \
             entry; nothing was done"
        );
        return Err(ExitCode::from(2));
    };
    let (parent_end, child_end) = UnixStream::pair().map_err(|e| {
        eprintln!("about-startup-host: error: a socket pair for the tracer: {e}");
        ExitCode::FAILURE
    })?;
    // SAFETY: the process has one thread here (nothing has run but this), so the child may
    // do anything after the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        eprintln!(
            "about-startup-host: error: fork: {}",
            io::Error::last_os_error()
        );
        return Err(ExitCode::FAILURE);
    }
    if pid == 0 {
        drop(parent_end);
        return match become_the_user(&user) {
            Ok(()) => Ok(child_end),
            Err(e) => {
                eprintln!(
                    "about-startup-host: error: could not become {} (uid {uid}): {e}; nothing \
                     was done",
                    user.name
                );
                Err(ExitCode::from(2))
            }
        };
    }
    drop(child_end);
    std::process::exit(parent(pid, &parent_end, uid));
}

/// The child: the user's ids for good, and the environment of their session.
fn become_the_user(user: &Account) -> io::Result<()> {
    account::become_user(user)?;
    // SAFETY (set_var/remove_var): one thread, nothing reads the environment concurrently.
    std::env::set_var("HOME", &user.home);
    std::env::set_var("USER", &user.name);
    std::env::set_var("LOGNAME", &user.name);
    let sudo: Vec<_> = std::env::vars_os()
        .map(|(k, _)| k)
        .filter(|k| k.to_string_lossy().starts_with("SUDO_"))
        .collect();
    for k in sudo {
        std::env::remove_var(k);
    }
    Ok(())
}

/// The parent: wait for the child's first bytes (or its end), then arm, confine and serve;
/// wait for the child; its exit status.
fn parent(child: i32, socket: &UnixStream, uid: u32) -> i32 {
    CHILD.store(child, Ordering::SeqCst);
    // SAFETY: handlers that only call kill; SIGINT is ignored (the terminal sends it to the
    // child too, which stops its recording and so ends the session).
    unsafe {
        let handler = forward as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGTERM, handler);
        libc::signal(libc::SIGHUP, handler);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
    }
    let _ = std::env::set_current_dir("/");
    let allow_without =
        std::env::var_os(super::confine::WITHOUT_LANDLOCK).is_some_and(|v| v == "1");
    let armed = super::arm_and_confine(allow_without);
    if let (Ok(reader), Ok(writer)) = (socket.try_clone(), socket.try_clone()) {
        super::session::serve(reader, writer, uid, armed);
    }
    wait(child)
}

/// The child's exit status as this process's (128 + a signal that ended it).
fn wait(child: i32) -> i32 {
    loop {
        let mut status = 0;
        // SAFETY: waitpid on our own child with an out-parameter.
        let rc = unsafe { libc::waitpid(child, &mut status, 0) };
        if rc == child {
            if libc::WIFEXITED(status) {
                return libc::WEXITSTATUS(status);
            }
            if libc::WIFSIGNALED(status) {
                return 128 + libc::WTERMSIG(status);
            }
        } else if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return 1;
        }
    }
}
