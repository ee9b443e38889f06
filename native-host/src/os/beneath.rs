//! Opening a file beneath a folder held open: the one way this host opens a file it was asked
//! about (an install file, a learned system library), so a folder swapped for a symlink between
//! selection and open cannot lead it elsewhere.
//!
//! A [`Folder`] is a descriptor of a folder (realpath'ed, then opened once with
//! `O_DIRECTORY|O_NOFOLLOW`); [`Folder::open_file`] opens a path beneath it with
//! `openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)` (Linux ≥ 5.6), non-blocking (a FIFO swapped in
//! opens at once instead of hanging the request), and checks the descriptor with fstat. Where
//! the kernel has no `openat2` (`ENOSYS`: Linux < 5.6, or a seccomp filter that does not know
//! it) the same rule is kept by hand: one `openat(O_NOFOLLOW)` per path component, each beneath
//! the previous one's descriptor, `..` refused. Both refuse a symlink anywhere on the way with
//! [`Escape`].

use std::ffi::OsStr;
use std::fmt;
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustix::fs::{Mode, OFlags, ResolveFlags};

/// A folder held open by descriptor; files are opened beneath it, never by path.
#[derive(Debug, Clone)]
pub struct Folder {
    fd: Arc<OwnedFd>,
    /// Its real path when it was opened: what request paths are relative to.
    path: PathBuf,
}

/// An open refused because the path would leave its folder: a symlink (or `..`) on the way,
/// typically a folder swapped for a symlink after the path was selected.
#[derive(Debug)]
pub struct Escape {
    pub path: PathBuf,
    pub folder: PathBuf,
}

impl fmt::Display for Escape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "refused: {} does not stay inside {} (a symlink or `..` on its way; a folder replaced while in use?)",
            self.path.display(),
            self.folder.display()
        )
    }
}

impl std::error::Error for Escape {}

/// The [`Escape`] inside an I/O error, if that is what it is.
#[must_use]
pub fn escape_of(e: &io::Error) -> Option<&Escape> {
    e.get_ref().and_then(|inner| inner.downcast_ref::<Escape>())
}

/// Set once `openat2` answered `ENOSYS`: then every open goes component by component.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// How a path is resolved beneath a folder (a parameter so tests can take either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resolver {
    /// `openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)`.
    Openat2,
    /// `openat(O_NOFOLLOW)` per component, for kernels without `openat2`.
    PerComponent,
}

/// The `openat2` syscall's shape (a parameter, so tests can be a kernel without it).
pub(crate) type Openat2 =
    fn(BorrowedFd<'_>, &Path, OFlags, Mode, ResolveFlags) -> rustix::io::Result<OwnedFd>;

fn real_openat2(
    dir: BorrowedFd<'_>,
    path: &Path,
    flags: OFlags,
    mode: Mode,
    resolve: ResolveFlags,
) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat2(dir, path, flags, mode, resolve)
}

/// Flags of the final open: read, never block (a FIFO), never become the controlling tty.
fn file_flags() -> OFlags {
    OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NOFOLLOW
}

impl Folder {
    /// realpath `path`, then open that folder (`O_DIRECTORY|O_NOFOLLOW`: if it was swapped for a
    /// symlink since the realpath, the open fails). Hold it for the whole request.
    pub fn open(path: &Path) -> io::Result<Folder> {
        let real = path.canonicalize()?;
        Self::open_real(real)
    }

    /// Open `path` only if it is already its own real path (no symlink anywhere on the way).
    pub fn open_exact(path: &Path) -> io::Result<Folder> {
        let real = path.canonicalize()?;
        if real != path {
            return Err(io::Error::other(Escape {
                path: path.to_path_buf(),
                folder: real,
            }));
        }
        Self::open_real(real)
    }

    fn open_real(real: PathBuf) -> io::Result<Folder> {
        let fd = rustix::fs::open(
            &real,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Folder {
            fd: Arc::new(fd),
            path: real,
        })
    }

    /// The folder's real path when it was opened.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `path` (absolute) names something under this folder, by components.
    #[must_use]
    pub fn holds(&self, path: &Path) -> bool {
        path.starts_with(&self.path) && path != self.path
    }

    /// Open `path` (absolute under [`Folder::path`], or relative to it) for reading, beneath
    /// this folder's descriptor, and check it is a regular file (fstat of the descriptor).
    pub fn open_file(&self, path: &Path) -> io::Result<(File, Metadata)> {
        self.open_checked(self.resolve(path, file_flags(), self.resolver(), real_openat2, true)?)
    }

    /// [`Folder::open_file`] without updating the file's access time (`O_NOATIME`), where the
    /// kernel allows it (the file's owner, or CAP_FOWNER; otherwise `EPERM`, and the file is
    /// opened as [`Folder::open_file`] does): a prefetch of a user's profile reads it and changes
    /// nothing of it, not even its metadata.
    pub fn open_file_noatime(&self, path: &Path) -> io::Result<(File, Metadata)> {
        let quiet = file_flags() | OFlags::NOATIME;
        match self.resolve(path, quiet, self.resolver(), real_openat2, true) {
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => self.open_file(path),
            fd => self.open_checked(fd?),
        }
    }

    /// The metadata of `path` beneath this folder, without opening it for reading (an
    /// `O_PATH` descriptor: a FIFO does not block) and without following any symlink.
    pub fn stat(&self, path: &Path) -> io::Result<Metadata> {
        let flags = OFlags::PATH | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        let fd = self.resolve(path, flags, self.resolver(), real_openat2, true)?;
        File::from(fd).metadata()
    }

    fn resolver(&self) -> Resolver {
        if NO_OPENAT2.load(Ordering::Relaxed) {
            Resolver::PerComponent
        } else {
            Resolver::Openat2
        }
    }

    /// [`Folder::open_file`] with the resolver and the `openat2` to use (tests pass one that
    /// answers `ENOSYS`, as a kernel before 5.6 does); what it finds is not remembered.
    #[cfg(test)]
    pub(crate) fn open_file_with(
        &self,
        path: &Path,
        resolver: Resolver,
        openat2: Openat2,
    ) -> io::Result<(File, Metadata)> {
        self.open_checked(self.resolve(path, file_flags(), resolver, openat2, false)?)
    }

    /// The open file of `fd`, if fstat says it is a regular file.
    fn open_checked(&self, fd: OwnedFd) -> io::Result<(File, Metadata)> {
        let file = File::from(fd);
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        Ok((file, meta))
    }

    /// A descriptor of `path` beneath the folder, opened with `flags`. `remember`: whether an
    /// `ENOSYS` from `openat2` sends every later open straight to the fallback.
    fn resolve(
        &self,
        path: &Path,
        flags: OFlags,
        resolver: Resolver,
        openat2: Openat2,
        remember: bool,
    ) -> io::Result<OwnedFd> {
        let rel = self.relative(path)?;
        let escape = || {
            io::Error::other(Escape {
                path: path.to_path_buf(),
                folder: self.path.clone(),
            })
        };
        match resolver {
            Resolver::Openat2 => {
                let how = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS;
                match openat2(self.fd.as_fd(), rel, flags, Mode::empty(), how) {
                    Ok(fd) => Ok(fd),
                    Err(rustix::io::Errno::NOSYS) => {
                        if remember {
                            NO_OPENAT2.store(true, Ordering::Relaxed);
                        }
                        per_component(self.fd.as_fd(), rel, flags).map_err(|e| escape_or(e, escape))
                    }
                    // ELOOP: a symlink on the way; EXDEV: `..` would leave the folder.
                    Err(rustix::io::Errno::LOOP | rustix::io::Errno::XDEV) => Err(escape()),
                    Err(e) => Err(e.into()),
                }
            }
            Resolver::PerComponent => {
                per_component(self.fd.as_fd(), rel, flags).map_err(|e| escape_or(e, escape))
            }
        }
    }

    /// `path` relative to the folder: absolute paths must lie under it; `..`, and the folder
    /// itself, are refused before anything is opened.
    fn relative<'a>(&self, path: &'a Path) -> io::Result<&'a Path> {
        let rel = if path.is_absolute() {
            path.strip_prefix(&self.path).map_err(|_| {
                io::Error::other(Escape {
                    path: path.to_path_buf(),
                    folder: self.path.clone(),
                })
            })?
        } else {
            path
        };
        if rel
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(io::Error::other(Escape {
                path: path.to_path_buf(),
                folder: self.path.clone(),
            }));
        }
        if rel.components().all(|c| c == Component::CurDir) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        Ok(rel)
    }
}

/// Open the folder `path` (absolute, already its real path) for reading and for `*at` calls
/// beneath it, refusing a symlink anywhere on the way from `/` ([`Escape`]): a path realpath'ed
/// earlier opens exactly what it named, even if a folder on it was swapped since. The state
/// folder (crate::state) starts here.
pub fn open_dir_exact(path: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if path == Path::new("/") {
        return Ok(rustix::fs::open(path, flags, Mode::empty())?);
    }
    let root = Folder::open_real(PathBuf::from("/"))?;
    root.resolve(path, flags, root.resolver(), real_openat2, true)
}

/// Several held folders (an install folder and the system folders a plan reads from): a path is
/// opened beneath the deepest one that holds it, and refused if none does.
#[derive(Debug, Clone, Default)]
pub struct Folders(Vec<Folder>);

impl Folders {
    pub fn push(&mut self, folder: Folder) {
        self.0.push(folder);
    }

    /// Whether one of the folders holds `path`.
    #[must_use]
    pub fn holds(&self, path: &Path) -> bool {
        self.0.iter().any(|f| f.holds(path))
    }

    /// The first folder pushed (the plan's install folder).
    #[must_use]
    pub fn first(&self) -> Option<&Folder> {
        self.0.first()
    }

    fn holder(&self, path: &Path) -> io::Result<&Folder> {
        self.0
            .iter()
            .filter(|f| f.holds(path))
            .max_by_key(|f| f.path.components().count())
            .ok_or_else(|| {
                io::Error::other(Escape {
                    path: path.to_path_buf(),
                    folder: self.0.first().map(|f| f.path.clone()).unwrap_or_default(),
                })
            })
    }

    /// [`Folder::open_file`] beneath the deepest folder holding `path`.
    pub fn open_file(&self, path: &Path) -> io::Result<(File, Metadata)> {
        self.holder(path)?.open_file(path)
    }

    /// [`Folder::open_file_noatime`] beneath the deepest folder holding `path`.
    pub fn open_file_noatime(&self, path: &Path) -> io::Result<(File, Metadata)> {
        self.holder(path)?.open_file_noatime(path)
    }

    /// [`Folder::stat`] beneath the deepest folder holding `path`.
    pub fn stat(&self, path: &Path) -> io::Result<Metadata> {
        self.holder(path)?.stat(path)
    }
}

/// What opens files beneath held folders: one [`Folder`] (a request's install folder) or
/// [`Folders`] (the install folder and a loop image's folder, a plan's system folders).
pub trait Opener: Sync {
    fn open_file(&self, path: &Path) -> io::Result<(File, Metadata)>;
    fn stat(&self, path: &Path) -> io::Result<Metadata>;
}

impl Opener for Folder {
    fn open_file(&self, path: &Path) -> io::Result<(File, Metadata)> {
        Folder::open_file(self, path)
    }
    fn stat(&self, path: &Path) -> io::Result<Metadata> {
        Folder::stat(self, path)
    }
}

impl Opener for Folders {
    fn open_file(&self, path: &Path) -> io::Result<(File, Metadata)> {
        Folders::open_file(self, path)
    }
    fn stat(&self, path: &Path) -> io::Result<Metadata> {
        Folders::stat(self, path)
    }
}

/// What went wrong in a component-wise open: a symlink on the way is an escape.
enum Step {
    Symlink,
    Io(io::Error),
}

fn escape_or(e: Step, escape: impl Fn() -> io::Error) -> io::Error {
    match e {
        Step::Symlink => escape(),
        Step::Io(e) => e,
    }
}

/// The fallback without `openat2`: every folder on the way opened beneath the previous one with
/// `O_NOFOLLOW` (so no symlink is followed; `..` never gets here), then the file itself.
fn per_component(dir: BorrowedFd<'_>, rel: &Path, flags: OFlags) -> Result<OwnedFd, Step> {
    let names: Vec<&OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let Some((last, folders)) = names.split_last() else {
        return Err(Step::Io(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        )));
    };
    let mut held: Option<OwnedFd> = None;
    for name in folders {
        let at = held.as_ref().map_or(dir, AsFd::as_fd);
        let next = rustix::fs::openat(
            at,
            *name,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| classify(at, name, e))?;
        held = Some(next);
    }
    let at = held.as_ref().map_or(dir, AsFd::as_fd);
    rustix::fs::openat(at, *last, flags, Mode::empty()).map_err(|e| classify(at, last, e))
}

/// `O_NOFOLLOW` answers `ELOOP` for a final symlink, and `O_PATH|O_DIRECTORY|O_NOFOLLOW`
/// `ENOTDIR` for a symlink where a folder should be: tell those from a real non-folder.
fn classify(at: BorrowedFd<'_>, name: &OsStr, e: rustix::io::Errno) -> Step {
    let is_link = || {
        rustix::fs::statat(at, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink
        })
    };
    match e {
        rustix::io::Errno::LOOP => Step::Symlink,
        rustix::io::Errno::NOTDIR if is_link() => Step::Symlink,
        e => Step::Io(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::test_support::folder_with_a_way_out;
    use std::fs;
    use std::os::unix::fs::symlink;

    /// tmp/ff (a.so, sub/b.so, link → ../outside), tmp/outside/b.so
    fn fixture() -> (tempfile::TempDir, PathBuf) {
        let (tmp, ff) = folder_with_a_way_out();
        fs::write(tmp.path().join("outside/b.so"), "outside").unwrap();
        symlink("sub/b.so", ff.join("alias.so")).unwrap();
        (tmp, ff.canonicalize().unwrap())
    }

    fn enosys(
        _: BorrowedFd<'_>,
        _: &Path,
        _: OFlags,
        _: Mode,
        _: ResolveFlags,
    ) -> rustix::io::Result<OwnedFd> {
        Err(rustix::io::Errno::NOSYS)
    }

    /// Each way of resolving: the real openat2, and the fallback a kernel without it gets.
    fn each_way(folder: &Folder, path: &Path) -> [io::Result<(File, Metadata)>; 3] {
        [
            folder.open_file_with(path, Resolver::Openat2, real_openat2),
            folder.open_file_with(path, Resolver::PerComponent, real_openat2),
            // openat2 answers ENOSYS: the fallback is taken, not a refusal.
            folder.open_file_with(path, Resolver::Openat2, enosys),
        ]
    }

    #[test]
    fn files_beneath_open_and_symlinks_anywhere_on_the_way_are_refused() {
        let (_tmp, ff) = fixture();
        let folder = Folder::open(&ff).unwrap();
        for good in [
            ff.join("a.so"),
            ff.join("sub/b.so"),
            PathBuf::from("sub/b.so"),
        ] {
            for r in each_way(&folder, &good) {
                let (mut f, meta) = r.unwrap_or_else(|e| panic!("{}: {e}", good.display()));
                assert!(meta.is_file());
                let mut s = String::new();
                std::io::Read::read_to_string(&mut f, &mut s).unwrap();
                assert!(s == "a" || s == "b", "{s}");
            }
        }
        for bad in [
            ff.join("link/b.so"),
            ff.join("alias.so"),
            ff.join("../outside/b.so"),
            ff.with_file_name("outside").join("b.so"),
            PathBuf::from("/etc/passwd"),
        ] {
            for r in each_way(&folder, &bad) {
                let e = r.map(|_| ()).unwrap_err();
                assert!(escape_of(&e).is_some(), "{}: {e}", bad.display());
            }
        }
        for not_file in [ff.join("sub"), ff.clone()] {
            for r in each_way(&folder, &not_file) {
                let e = r.map(|_| ()).unwrap_err();
                assert_eq!(
                    e.kind(),
                    io::ErrorKind::InvalidInput,
                    "{}",
                    not_file.display()
                );
            }
        }
        for r in each_way(&folder, &ff.join("nope")) {
            assert_eq!(r.map(|_| ()).unwrap_err().kind(), io::ErrorKind::NotFound);
        }
    }

    /// The race of issue 10 #4, made deterministic: the path is selected (realpath'ed and
    /// confined) while `sub` is a folder; then `sub` is swapped for a symlink to a folder outside
    /// holding a file of the same name; the open must refuse, not read the outside file.
    #[test]
    fn a_folder_swapped_for_a_symlink_after_selection_is_refused() {
        let (tmp, ff) = fixture();
        let folder = Folder::open(&ff).unwrap();
        let selected = ff.join("sub/b.so").canonicalize().unwrap();
        fs::rename(ff.join("sub"), tmp.path().join("sub.moved")).unwrap();
        symlink("../outside", ff.join("sub")).unwrap();
        // What a path open (even with O_NOFOLLOW) reaches now: the outside file.
        assert_eq!(fs::read_to_string(&selected).unwrap(), "outside");
        for r in each_way(&folder, &selected) {
            let e = r.map(|_| ()).unwrap_err();
            let escape = escape_of(&e).unwrap_or_else(|| panic!("not an escape: {e}"));
            assert_eq!(escape.path, selected);
            assert_eq!(escape.folder, ff);
        }
    }

    /// The install folder itself swapped after it was opened: the held descriptor still names the
    /// folder that was chosen.
    #[test]
    fn the_held_folder_is_the_one_chosen() {
        let (tmp, ff) = fixture();
        let folder = Folder::open(&ff).unwrap();
        fs::rename(&ff, tmp.path().join("ff.moved")).unwrap();
        symlink("outside", &ff).unwrap();
        let (mut f, _) = folder.open_file(Path::new("sub/b.so")).unwrap();
        let mut s = String::new();
        std::io::Read::read_to_string(&mut f, &mut s).unwrap();
        assert_eq!(s, "b");
        // And a folder that is a symlink when opened is refused by open_exact.
        assert!(Folder::open_exact(&ff).is_err());
    }

    #[test]
    fn a_fifo_is_refused_at_once_not_waited_on() {
        let (_tmp, ff) = fixture();
        let fifo = ff.join("libxul.so");
        crate::os::mkfifo(&fifo);
        let folder = Folder::open(&ff).unwrap();
        for resolver in [Resolver::Openat2, Resolver::PerComponent] {
            let (tx, rx) = std::sync::mpsc::channel();
            let (folder, fifo) = (folder.clone(), fifo.clone());
            std::thread::spawn(move || {
                let r = folder.open_file_with(&fifo, resolver, real_openat2);
                tx.send(r.map(|_| ()).unwrap_err().kind())
            });
            let kind = rx
                .recv_timeout(std::time::Duration::from_secs(10))
                .expect("the open blocked on the FIFO instead of refusing it");
            assert_eq!(kind, io::ErrorKind::InvalidInput);
        }
    }
}
