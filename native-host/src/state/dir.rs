//! A [`StateDir`]: a folder the host keeps files in, held open by descriptor. Everything in it
//! goes through that descriptor one plain name at a time (`openat`, `renameat`, `unlinkat`
//! with `O_NOFOLLOW`), so a symlink or `..` planted in the folder, or the folder swapped after it
//! was checked, leads nowhere else.
//!
//! Making it: the deepest part of the path that exists is realpath'ed (a user may keep
//! `~/.local` elsewhere) and opened with no symlink anywhere on the way
//! (`beneath::open_dir_exact`); the rest is made one folder at a time beneath it. Everything is
//! this process's user's (under sudo the command runs as the user, tracer/split.rs): nothing is
//! ever handed to another user, and root makes folders only inside its own.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::os::beneath;
use crate::Error;

/// A folder held open, with the user whose state it is.
#[derive(Debug, Clone)]
pub struct StateDir {
    fd: Arc<OwnedFd>,
    path: PathBuf,
    owner: Owner,
}

/// Whose files these are: what every file read here must belong to. The host works for the
/// user it runs as (under sudo, the command runs as the user: tracer/split.rs), so that is this
/// process's effective uid; nothing here is ever handed to another user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Owner {
    uid: u32,
}

impl Owner {
    fn me() -> Owner {
        Owner {
            uid: crate::os::sys::geteuid(),
        }
    }
}

/// Flags of every open of a name in the folder: never follow a symlink, never block (a FIFO),
/// never become the controlling terminal.
fn name_flags() -> OFlags {
    OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

fn refused(kind: io::ErrorKind, why: impl Into<String>) -> io::Error {
    io::Error::new(kind, why.into())
}

/// A plain name: one path component, not `.` or `..`.
fn check_name(name: &str) -> io::Result<&OsStr> {
    let os = OsStr::new(name);
    let mut parts = Path::new(os).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(n)), None) if n == os && !name.contains('/') => Ok(os),
        _ => Err(refused(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a plain file name"),
        )),
    }
}

impl StateDir {
    /// The folder `path` (absolute) for `user`'s state (`None`: this process's own), made with
    /// mode 0700 if missing and checked: a real folder, owned by that user, writable by nobody
    /// else.
    pub fn create_at(path: &Path) -> Result<StateDir, Error> {
        let owner = Owner::me();
        let context = || format!("cannot use the state folder {}", path.display());
        Self::make(path, owner).map_err(|e| Error::io(context(), e))
    }

    /// The folder `path` for `user`'s state if it exists (checked as [`StateDir::create_at`]);
    /// `Ok(None)` if it does not.
    pub fn existing(path: &Path) -> Result<Option<StateDir>, Error> {
        let owner = Owner::me();
        let context = || format!("cannot use the state folder {}", path.display());
        let real = match path.canonicalize() {
            Ok(real) => real,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(context(), e)),
        };
        let fd = beneath::open_dir_exact(&real).map_err(|e| Error::io(context(), e))?;
        Self::checked(fd, path.to_path_buf(), owner)
            .map(Some)
            .map_err(|e| Error::io(context(), e))
    }

    fn make(path: &Path, owner: Owner) -> io::Result<StateDir> {
        if !path.is_absolute() {
            return Err(refused(
                io::ErrorKind::InvalidInput,
                "the path is not absolute",
            ));
        }
        // The deepest part of the path that exists (following symlinks), and what is missing.
        let mut missing: Vec<&OsStr> = Vec::new();
        let mut existing = path;
        let real = loop {
            match existing.canonicalize() {
                Ok(real) => break real,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    let (Some(parent), Some(name)) = (existing.parent(), existing.file_name())
                    else {
                        return Err(e);
                    };
                    missing.push(name);
                    existing = parent;
                }
                Err(e) => return Err(e),
            }
        };
        let mut fd = beneath::open_dir_exact(&real)?;
        if !missing.is_empty() && crate::os::sys::geteuid() == 0 {
            // Root makes nothing in a folder the state's owner does not own: a path that leads
            // into root's own folders (or anyone else's) is refused, not filled.
            let st = rustix::fs::fstat(&fd)?;
            if st.st_uid != owner.uid {
                return Err(refused(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "{} belongs to uid {}, not to uid {}: root makes no folder for a user in a folder they do not own",
                        existing.display(),
                        st.st_uid,
                        owner.uid
                    ),
                ));
            }
        }
        for name in missing.iter().rev() {
            match rustix::fs::mkdirat(&fd, *name, Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            let next = rustix::fs::openat(&fd, *name, dir_flags(), Mode::empty())
                .map_err(|e| symlink_or(e, path))?;
            fd = next;
        }
        Self::checked(fd, path.to_path_buf(), owner)
    }

    /// Check the folder behind `fd`: a folder, owned by `owner`, not writable by others.
    fn checked(fd: OwnedFd, path: PathBuf, owner: Owner) -> io::Result<StateDir> {
        let st = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
            return Err(refused(io::ErrorKind::InvalidInput, "it is not a folder"));
        }
        if st.st_uid != owner.uid {
            return Err(refused(
                io::ErrorKind::PermissionDenied,
                format!(
                    "it belongs to uid {}, not to uid {} whose state it holds; remove it or set XDG_STATE_HOME to a folder of theirs",
                    st.st_uid, owner.uid
                ),
            ));
        }
        if st.st_mode & 0o022 != 0 {
            return Err(refused(
                io::ErrorKind::PermissionDenied,
                format!(
                    "others can write in it (mode {:o}); `chmod go-w` it",
                    st.st_mode & 0o7777
                ),
            ));
        }
        Ok(StateDir {
            fd: Arc::new(fd),
            path,
            owner,
        })
    }

    /// The folder's path (as it was named, for messages and replies).
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `name` in the folder, for messages.
    #[must_use]
    pub fn path_of(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// The sub-folder `name` (`traces`), made if missing when `create`, checked like this one.
    pub fn sub(&self, name: &str, create: bool) -> Result<Option<StateDir>, Error> {
        let path = self.path.join(name);
        let context = || format!("cannot use the state folder {}", path.display());
        let os = check_name(name).map_err(|e| Error::io(context(), e))?;
        if create {
            match rustix::fs::mkdirat(&*self.fd, os, Mode::from_raw_mode(0o700)) {
                Ok(()) => {
                    let fd = rustix::fs::openat(&*self.fd, os, dir_flags(), Mode::empty())
                        .map_err(|e| Error::io(context(), symlink_or(e, &path)))?;
                    return Self::checked(fd, path.clone(), self.owner)
                        .map(Some)
                        .map_err(|e| Error::io(context(), e));
                }
                Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(Error::io(context(), e.into())),
            }
        }
        match rustix::fs::openat(&*self.fd, os, dir_flags(), Mode::empty()) {
            Ok(fd) => Self::checked(fd, path.clone(), self.owner)
                .map(Some)
                .map_err(|e| Error::io(context(), e)),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(Error::io(context(), symlink_or(e, &path))),
        }
    }

    /// Open `name` for reading: `Ok(None)` if there is none; refused unless it is a regular file
    /// with one name, owned by the state's owner.
    pub fn open_read(&self, name: &str) -> io::Result<Option<(File, u64)>> {
        let os = check_name(name)?;
        let fd =
            match rustix::fs::openat(&*self.fd, os, OFlags::RDONLY | name_flags(), Mode::empty()) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::NOENT) => return Ok(None),
                Err(e) => return Err(symlink_or(e, &self.path.join(name))),
            };
        let st = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(refused(
                io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", self.path.join(name).display()),
            ));
        }
        if st.st_uid != self.owner.uid {
            return Err(refused(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} belongs to uid {}, not to uid {}",
                    self.path.join(name).display(),
                    st.st_uid,
                    self.owner.uid
                ),
            ));
        }
        if st.st_nlink != 1 {
            return Err(refused(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} has {} names (hard links); state files have one",
                    self.path.join(name).display(),
                    st.st_nlink
                ),
            ));
        }
        Ok(Some((
            File::from(fd),
            u64::try_from(st.st_size).unwrap_or(0),
        )))
    }

    /// Read `name` whole, at most `limit` bytes (more is an error: a state file never grows
    /// that large). `Ok(None)` if there is none.
    pub fn read(&self, name: &str, limit: u64) -> io::Result<Option<Vec<u8>>> {
        let Some((file, size)) = self.open_read(name)? else {
            return Ok(None);
        };
        if size > limit {
            return Err(too_large(&self.path.join(name), limit));
        }
        let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        file.take(limit + 1).read_to_end(&mut out)?;
        if out.len() as u64 > limit {
            return Err(too_large(&self.path.join(name), limit));
        }
        Ok(Some(out))
    }

    /// Write `bytes` to `name` atomically: a new file with a unique name (`O_EXCL`, mode 0600,
    /// handed to the owner), synced, renamed over `name`. A symlink at `name` is replaced, never
    /// followed; a reader sees the old file or the new one, never half of one.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<(), Error> {
        let context = || format!("cannot write {}", self.path.join(name).display());
        let os = check_name(name).map_err(|e| Error::io(context(), e))?;
        let (tmp, fd) = self.new_file(name).map_err(|e| Error::io(context(), e))?;
        let done = (|| {
            let mut file = File::from(fd);
            file.write_all(bytes)?;
            file.sync_all()?;
            rustix::fs::renameat(&*self.fd, tmp.as_str(), &*self.fd, os)?;
            Ok(())
        })();
        if done.is_err() {
            let _ = rustix::fs::unlinkat(&*self.fd, tmp.as_str(), AtFlags::empty());
        }
        done.map_err(|e| Error::io(context(), e))
    }

    /// A new temporary file for `name`: `.name.<pid>.<n>.tmp`, made with `O_EXCL`.
    fn new_file(&self, name: &str) -> io::Result<(String, OwnedFd)> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | name_flags();
        for _ in 0..100 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let tmp = format!(".{name}.{}.{n}.tmp", std::process::id());
            match rustix::fs::openat(&*self.fd, tmp.as_str(), flags, Mode::from_raw_mode(0o600)) {
                Ok(fd) => return Ok((tmp, fd)),
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(refused(
            io::ErrorKind::AlreadyExists,
            "no free temporary name after 100 tries",
        ))
    }

    /// Make the empty file `name` if there is none (a marker). A symlink there is not followed.
    pub fn touch(&self, name: &str) -> io::Result<()> {
        let os = check_name(name)?;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | name_flags();
        match rustix::fs::openat(&*self.fd, os, flags, Mode::from_raw_mode(0o600)) {
            Ok(_) | Err(rustix::io::Errno::EXIST) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether `name` exists in the folder (whatever it is; a symlink is not followed).
    #[must_use]
    pub fn exists(&self, name: &str) -> bool {
        check_name(name)
            .is_ok_and(|os| rustix::fs::statat(&*self.fd, os, AtFlags::SYMLINK_NOFOLLOW).is_ok())
    }

    /// Remove `name` from the folder (the name only: a symlink is removed, not its target);
    /// `Ok(false)` if there was none.
    pub fn remove(&self, name: &str) -> io::Result<bool> {
        let os = check_name(name)?;
        match rustix::fs::unlinkat(&*self.fd, os, AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Set `name` aside as `<name>.corrupt.<ms since the epoch>` (a rename in the folder, never
    /// over an existing name, never through a symlink: the name itself moves), so a damaged
    /// state file is kept for a person to look at and the next write starts afresh. Returns the
    /// new name. The same naming as the add-on's history (`history.corrupt.<ms>`).
    pub fn set_aside(&self, name: &str) -> io::Result<String> {
        let os = check_name(name)?;
        let now = crate::os::clock::now_ms();
        for n in 0..100 {
            let aside = format!("{name}.corrupt.{}", now + n);
            match rustix::fs::renameat_with(
                &*self.fd,
                os,
                &*self.fd,
                aside.as_str(),
                rustix::fs::RenameFlags::NOREPLACE,
            ) {
                Ok(()) => return Ok(aside),
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(refused(
            io::ErrorKind::AlreadyExists,
            format!("no free name to set {name} aside after 100 tries"),
        ))
    }

    /// The UTF-8 names in the folder (`.` and `..` aside), at most `max` of them.
    pub fn names(&self, max: usize) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for entry in rustix::fs::Dir::read_from(&*self.fd)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            if let Ok(s) = std::str::from_utf8(name) {
                out.push(s.to_owned());
                if out.len() >= max {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// Hold the folder's lock (`flock` on `.lock` in it) until the guard drops, so concurrent
    /// read-modify-writes (two `learn`s) do not lose each other's work.
    pub fn lock(&self) -> Result<Lock, Error> {
        let context = || format!("cannot lock {}", self.path.join(".lock").display());
        let flags = OFlags::RDWR | OFlags::CREATE | name_flags();
        let fd = rustix::fs::openat(&*self.fd, ".lock", flags, Mode::from_raw_mode(0o600))
            .map_err(|e| Error::io(context(), symlink_or(e, &self.path.join(".lock"))))?;
        let st = rustix::fs::fstat(&fd).map_err(|e| Error::io(context(), e.into()))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(Error::io(
                context(),
                refused(io::ErrorKind::InvalidInput, "not a regular file"),
            ));
        }
        let file = File::from(fd);
        crate::os::sys::flock_exclusive(&file).map_err(|e| Error::io(context(), e))?;
        Ok(Lock { _file: file })
    }
}

/// The state folder's lock, held until dropped.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

fn too_large(path: &Path, limit: u64) -> io::Error {
    refused(
        io::ErrorKind::InvalidData,
        format!("{} is over {limit} bytes; remove it", path.display()),
    )
}

/// `O_NOFOLLOW` answers ELOOP for a symlink (ENOTDIR with `O_DIRECTORY`): say so.
fn symlink_or(e: rustix::io::Errno, path: &Path) -> io::Error {
    match e {
        rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => refused(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is a symlink or not a folder; the host follows no symlink in its state folder: remove it",
                path.display()
            ),
        ),
        e => e.into(),
    }
}

#[cfg(test)]
#[path = "dir_tests.rs"]
pub(crate) mod tests;
