//! The one home of what the host keeps between runs: the state folder,
//! `$XDG_STATE_HOME/about-startup` (or `~/.local/state/about-startup`) of the user it works for.
//! The working set, the last planned preload, the stored traces and their markers live there;
//! the autostart entries use the same folder rules in the config folder.
//!
//! On the ground floor: it uses `os::{beneath, sys, clock}` (the syscall wrappers), `error` and
//! `note`, and nothing else of the crate, so every feature may keep state without an arrow pointing back.
//!
//! - [`user`]: under sudo, where the user's own session keeps its state (their
//!   `XDG_STATE_HOME`), for the command that runs as them (tracer/split.rs);
//! - [`dir`]: a [`StateDir`], a folder held open by descriptor; every file in it is read, written,
//!   listed and removed beneath that descriptor, one name at a time, never through a symlink;
//! - [`aside`]: a damaged state file is set aside (`<name>.corrupt.<ms>`), never deleted, and
//!   said in a note (crate::note) for the page and the CLI to word.
//!
//! The rules, one for every user (root included; docs/design/privilege.md): the state folder is
//! a real folder (not a symlink) owned by the user the host runs as and writable by nobody
//! else; root never touches a user's state folder (under sudo the command runs as the user);
//! reads are bounded and refuse anything but a regular file with one name (a FIFO, a device, a
//! hard link to someone else's file); writes are atomic (a new file with a unique name, renamed
//! over the old one).

pub mod aside;
pub mod dir;
pub mod user;

use std::io;
use std::path::PathBuf;

pub use dir::StateDir;

use crate::Error;

/// The state folder's name in the state home.
pub const FOLDER: &str = "about-startup";

/// This process's user's state home: `$XDG_STATE_HOME`, else `$HOME/.local/state`. XDG Base
/// Directory: a relative XDG_STATE_HOME is invalid and ignored.
pub fn home_of() -> Result<PathBuf, Error> {
    let from_xdg = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    Ok(match from_xdg {
        Some(p) => p,
        None => home()?.join(".local/state"),
    })
}

/// Where this user's state folder is, without making it.
pub fn locate() -> Result<PathBuf, Error> {
    Ok(home_of()?.join(FOLDER))
}

/// This user's state folder, made if missing and checked.
pub fn open() -> Result<StateDir, Error> {
    StateDir::create_at(&locate()?)
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
