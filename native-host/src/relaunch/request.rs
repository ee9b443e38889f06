//! The traced restart's hand-over from the user to root (docs/design/pkexec.md). The user's
//! detached `relaunch --cold --trace` writes what starting their Firefox again needs into their
//! own state folder (`relaunch-request.json`: executable, arguments, environment, working
//! folder, install folder, profile) and runs `pkexec about-startup-host launch --relaunch`.
//! Root reads it back from the state folder of the user pkexec names (PKEXEC_UID), through the
//! state module's checks (a real folder owned by that user; a plain file, bounded, no symlink),
//! and starts nothing before [`check`] has accepted it: a Firefox executable of a Firefox
//! install folder the user may read, a profile the user owns, started as the user.
//!
//! The environment goes through the file, not the command line: argv is visible to every user
//! (`ps`), an environment may hold secrets, and pkexec clears it anyway.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::state::{StateDir, User};
use crate::Error;

use super::Snapshot;

pub const REQUEST_FILE: &str = "relaunch-request.json";
const REQUEST_VERSION: u32 = 1;
/// An environment is at most ARG_MAX-sized; with argv and paths the file stays under this.
const MAX_BYTES: u64 = 4 << 20;

/// Bytes of a path, argument or variable: JSON arrays of bytes keep every one exact.
type Bytes = Vec<u8>;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchRequest {
    pub version: u32,
    pub exe: Bytes,
    pub argv: Vec<Bytes>,
    pub env: Vec<(Bytes, Bytes)>,
    pub cwd: Option<Bytes>,
    pub install_dir: Bytes,
    pub profile: Option<Bytes>,
}

fn path(b: &Bytes) -> PathBuf {
    PathBuf::from(OsString::from_vec(b.clone()))
}

impl LaunchRequest {
    #[must_use]
    pub fn of(snap: &Snapshot) -> Self {
        let b = |p: &Path| p.as_os_str().as_bytes().to_vec();
        LaunchRequest {
            version: REQUEST_VERSION,
            exe: b(&snap.exe),
            argv: snap.argv.iter().map(|a| a.as_bytes().to_vec()).collect(),
            env: snap
                .env
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
                .collect(),
            cwd: snap.cwd.as_deref().map(b),
            install_dir: b(&snap.install_dir),
            profile: snap.profile.as_deref().map(b),
        }
    }
}

/// Write the request into this user's state folder at `state` (as the user).
pub fn write(state: &Path, req: &LaunchRequest) -> Result<(), Error> {
    let dir = StateDir::create_at(state, None)?;
    let bytes =
        serde_json::to_vec(req).map_err(|e| Error::io("encoding the restart request", e.into()))?;
    dir.write(REQUEST_FILE, &bytes)
}

/// Read (and remove: it is for one launch) the request in `user`'s state folder, as root.
pub fn take(user: &User) -> Result<LaunchRequest, Error> {
    let location = crate::state::locate(Some(user))?;
    let missing = || {
        Error::io(
            format!(
                "no restart request in {}: `launch --relaunch` only starts a Firefox that the \
                 user's own `relaunch --cold --trace` asked for",
                location.display()
            ),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )
    };
    let dir = StateDir::existing(&location, Some(user))?.ok_or_else(missing)?;
    let bytes = dir
        .read(REQUEST_FILE, MAX_BYTES)
        .map_err(|e| Error::io(format!("reading {REQUEST_FILE}"), e))?
        .ok_or_else(missing)?;
    let _ = dir.remove(REQUEST_FILE);
    parse(&bytes).ok_or_else(|| {
        Error::io(
            format!("{REQUEST_FILE} is not a restart request of this version"),
            std::io::Error::from(std::io::ErrorKind::InvalidData),
        )
    })
}

/// A request file's bytes, or `None` for anything else (another version, not JSON). Pure: the
/// fuzz target `relaunch` drives it, with the restart record's parser.
#[must_use]
pub fn parse(bytes: &[u8]) -> Option<LaunchRequest> {
    serde_json::from_slice::<LaunchRequest>(bytes)
        .ok()
        .filter(|r| r.version == REQUEST_VERSION)
}

/// What root starts once [`check`] accepted a request.
#[derive(Debug, Clone)]
pub struct Accepted {
    pub install: crate::firefox::install::Install,
    pub binary: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
}

/// Why root refuses a request (each refusal has a test: relaunch/request_tests.rs).
fn refuse(why: String) -> Error {
    Error::io(
        format!("refusing the restart request: {why}"),
        std::io::Error::from(std::io::ErrorKind::PermissionDenied),
    )
}

/// Whether `user` may search (x) every folder down to `dir` and, with `read`, list `dir`: the
/// permission bits as the kernel applies them to the user's uid and groups (owner, then group,
/// then others). Root never names a folder for the user that the user could not open.
#[must_use]
pub fn user_may_enter(dir: &Path, user: &User, read: bool) -> bool {
    let allowed = |meta: &std::fs::Metadata, want: u32| {
        let mode = meta.mode();
        let bits = if meta.uid() == user.uid {
            mode >> 6
        } else if meta.gid() == user.gid || user.groups.contains(&meta.gid()) {
            mode >> 3
        } else {
            mode
        };
        bits & want == want
    };
    let mut walked = PathBuf::new();
    for part in dir.components() {
        walked.push(part);
        let Ok(meta) = std::fs::metadata(&walked) else {
            return false;
        };
        let want = if read && walked == dir { 0o5 } else { 0o1 };
        if !meta.is_dir() || !allowed(&meta, want) {
            return false;
        }
    }
    true
}

/// Accept `req` for `user` or say why not: the executable must be the Firefox executable of the
/// install folder it names (root starts no other program); the user must be able to open that
/// folder (root names its files in the trace); the profile, if named, must be the user's own.
pub fn check(req: &LaunchRequest, user: &User) -> Result<Accepted, Error> {
    // The real path, symlinks resolved: every folder on the way to what root will read must be
    // one the user may pass (a link in the user's folder to a folder under a 0700 one is not).
    let install_dir = path(&req.install_dir);
    let install_dir = install_dir.canonicalize().unwrap_or(install_dir);
    if !install_dir.is_absolute() || !user_may_enter(&install_dir, user, true) {
        return Err(refuse(format!(
            "{} is not a folder {} may open",
            install_dir.display(),
            user.name
        )));
    }
    let install = crate::firefox::install::locate(Some(&install_dir), None)
        .map_err(|e| refuse(e.to_string()))?;
    let binary = crate::os::binary::firefox_binary(&install.dir).ok_or_else(|| {
        refuse(format!(
            "no firefox executable in {}",
            install.dir.display()
        ))
    })?;
    let exe = path(&req.exe);
    let same = |a: &Path, b: &Path| match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    };
    if !same(&exe, &binary) {
        return Err(refuse(format!(
            "{} is not the Firefox executable of {}",
            exe.display(),
            install.dir.display()
        )));
    }
    let joined: Vec<u8> = req
        .argv
        .iter()
        .flat_map(|a| a.iter().copied().chain([0]))
        .collect();
    let profiles = req
        .profile
        .as_ref()
        .map(path)
        .into_iter()
        .chain(crate::firefox::process::profile_argument(&joined));
    for profile in profiles {
        let owned =
            std::fs::symlink_metadata(&profile).is_ok_and(|m| m.is_dir() && m.uid() == user.uid);
        if !owned {
            return Err(refuse(format!(
                "the profile {} is not a folder {} owns",
                profile.display(),
                user.name
            )));
        }
    }
    let cwd = req
        .cwd
        .as_ref()
        .map(path)
        .and_then(|c| c.canonicalize().ok())
        .filter(|c| user_may_enter(c, user, false))
        .unwrap_or_else(|| user.home.clone());
    Ok(Accepted {
        install,
        binary,
        args: req
            .argv
            .iter()
            .skip(1)
            .map(|a| OsString::from_vec(a.clone()))
            .collect(),
        env: req
            .env
            .iter()
            .map(|(k, v)| (OsString::from_vec(k.clone()), OsString::from_vec(v.clone())))
            .collect(),
        cwd,
    })
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
