//! The one home of what the host keeps between runs: the state folder,
//! `$XDG_STATE_HOME/about-startup` (or `~/.local/state/about-startup`) of the user it works for.
//! The working set, the last planned preload, the stored traces and their markers live there;
//! the autostart entries use the same folder rules in the config folder.
//!
//! On the ground floor: it uses `os::{beneath, sys, clock}` (the syscall wrappers), `error` and
//! `note`, and nothing else of the crate, so every feature may keep state without an arrow pointing back.
//!
//! - [`user`]: whom root acts for under `sudo`/`pkexec`, and where their state folder is;
//! - [`dir`]: a [`StateDir`], a folder held open by descriptor; every file in it is read, written,
//!   listed and removed beneath that descriptor, one name at a time, never through a symlink;
//! - [`aside`]: a damaged state file is set aside (`<name>.corrupt.<ms>`), never deleted, and
//!   said in a note (crate::note) for the page and the CLI to word.
//!
//! The rules, one for every user (root included), are the threat model's
//! (docs/design/root-acting-for-a-user.md): the state folder is a real folder (not a symlink)
//! owned by the user whose state it is and writable by nobody else; what root creates in it for
//! a user is theirs (fchown on the descriptor); reads are bounded and refuse anything but a
//! regular file with one name (a FIFO, a device, a hard link to someone else's file); writes
//! are atomic (a new file with a unique name, renamed over the old one).

pub mod aside;
pub mod dir;
pub mod user;

use std::io;
use std::path::PathBuf;

pub use dir::StateDir;
pub use user::{acting_for, User, Via};

use crate::Error;

/// The state folder's name in the state home.
pub const FOLDER: &str = "about-startup";

/// The state home of `user` (their XDG_STATE_HOME, else `~/.local/state`), or of this process's
/// own user (`$XDG_STATE_HOME`, else `$HOME/.local/state`). XDG Base Directory: a relative
/// XDG_STATE_HOME is invalid and ignored.
pub fn home_of(user: Option<&User>) -> Result<PathBuf, Error> {
    if let Some(u) = user {
        return Ok(match &u.state_home {
            Some(p) => p.clone(),
            None => u.home.join(".local/state"),
        });
    }
    let from_xdg = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    Ok(match from_xdg {
        Some(p) => p,
        None => home()?.join(".local/state"),
    })
}

/// Where the state folder of `user` (or of this process's user) is, without making it.
pub fn locate(user: Option<&User>) -> Result<PathBuf, Error> {
    Ok(home_of(user)?.join(FOLDER))
}

/// The state folder of `user` (or of this process's user), made if missing and checked.
pub fn open(user: Option<&User>) -> Result<StateDir, Error> {
    StateDir::create_at(&locate(user)?, user)
}

/// The state folder of whom this process works for: the user root acts for under sudo or
/// pkexec ([`acting_for`]), else its own user. Made if missing, checked.
pub fn open_acting() -> Result<StateDir, Error> {
    open(acting_for()?.as_ref())
}

/// `$HOME`, which must be absolute.
pub fn home() -> Result<PathBuf, Error> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .ok_or_else(|| {
            Error::io(
                "HOME is not set to an absolute path; set it (or XDG_STATE_HOME)",
                io::Error::from(io::ErrorKind::NotFound),
            )
        })
}
