//! The user's own profile in the traced plan and the launch prefetch (issue 31, item 3): what
//! the traced start read of its profile before sessionRestored is read too, under rules of its
//! own, since Firefox writes the profile while it starts and the profile holds the user's data:
//!
//! - only the traced start's profile (the folder the trace recorded, or the one its files point
//!   at: trace/summary/profile.rs), and only when the launch starts that very profile
//!   ([`Launched`]: `-profile DIR`, or no profile argument; `-P NAME` cannot be told here);
//! - only the user's own files: the profile folder and every file read must belong to the user
//!   the plan runs as (the prefetch needs no root; a root preload never reads another user's
//!   profile), opened beneath the held profile folder with no symlink on the way;
//! - a file is read only while it is the file traced: the same inode, size and modification
//!   time ([`unchanged`]). A file written or replaced since (a database after a session, the
//!   session store and the script cache rewritten at every quit) is skipped and counted, by
//!   part, in [`ProfilePlan::changed`];
//! - journals and locks (`-wal`, `-shm`, `-journal`, `.parentlock`, `lock`) are never planned:
//!   they are Firefox's to write;
//! - reading and nothing else: read-only opens, `O_NOATIME` where the kernel allows it
//!   (os/beneath.rs), no lock taken (a `fcntl` lock of SQLite's is never touched: the reader
//!   takes none, and only the locking process's own closes drop its locks), and of
//!   `posix_fadvise` only `RANDOM` on the reader's own descriptor; never `DONTNEED`. The
//!   benchmark's `--cold` evicts only the install (`cold-profile` is its own scenario).
//!
//! Files outside the profile, the install and the system folders are never planned.

use std::ffi::OsString;
use std::fs::Metadata;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::firefox::profile_parts::{classify, Addons, Part, Roots};
use crate::os::beneath::{Folder, Folders};

/// Which profile a launch starts, as its arguments say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launched {
    /// No profile argument (or no launch: a preload): the traced profile is the one planned.
    Default,
    /// `-profile DIR` / `--profile DIR`, relative folders taken from the launch's folder.
    Folder(PathBuf),
    /// `-P NAME` or the profile manager: which folder Firefox takes is not known here.
    Unknown,
}

/// The profile a launch with `args` (Firefox's arguments) starts, `cwd` its working folder.
/// Firefox reads its flags case-insensitively, with one or two dashes. Pure.
#[must_use]
pub fn launched(args: &[OsString], cwd: &Path) -> Launched {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let Some(flag) = arg.to_str().and_then(|a| a.strip_prefix('-')) else {
            continue;
        };
        let flag = flag.strip_prefix('-').unwrap_or(flag).to_ascii_lowercase();
        match flag.as_str() {
            "profile" => {
                return args
                    .next()
                    .map_or(Launched::Unknown, |dir| Launched::Folder(cwd.join(dir)));
            }
            "p" | "profilemanager" => return Launched::Unknown,
            _ => {}
        }
    }
    Launched::Default
}

/// Why nothing of the profile is planned although the traces read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "code")]
pub enum LeftOut {
    /// The launch starts another profile folder than the traced one.
    OtherProfile,
    /// The launch names a profile by name (`-P`) or asks for the profile manager.
    UnknownProfile,
    /// The traced profile folder belongs to another user than the one planning.
    NotOwned,
    /// The traced profile folder is gone (or cannot be opened).
    Gone,
}

/// Profile files of one part that changed since the traces: not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changed {
    /// The part, named by role (and an add-on by id): never a file name of the profile.
    pub part: Part,
    pub files: u64,
}

/// The profile's part of a plan: what the page, the CLI and the benchmark say of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfilePlan {
    /// Bytes of the plan in the user's profile, and files.
    pub bytes: u64,
    pub files: u64,
    /// Profile files the traces read that were written or replaced since (inode, size or
    /// modification time differ): skipped, by part, largest count first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<Changed>,
    /// Why no file of the profile is planned at all; absent when the rules above let some in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<LeftOut>,
}

impl ProfilePlan {
    /// A plan whose profile part is left out for `why`.
    #[must_use]
    pub fn left_out(why: LeftOut) -> Self {
        ProfilePlan {
            left_out: Some(why),
            ..ProfilePlan::default()
        }
    }

    /// Count a changed file of `part`.
    pub fn note_changed(&mut self, part: Part) {
        match self.changed.iter_mut().find(|c| c.part == part) {
            Some(c) => c.files += 1,
            None => self.changed.push(Changed { part, files: 1 }),
        }
        self.changed
            .sort_by(|a, b| b.files.cmp(&a.files).then_with(|| a.part.cmp(&b.part)));
    }

    /// Files skipped because they changed since the traces.
    #[must_use]
    pub fn changed_files(&self) -> u64 {
        self.changed.iter().map(|c| c.files).sum()
    }

    /// In English, for the CLI and the session log: "12.3 MB of 40 files of your profile; 5
    /// changed since traced, not read (3 startup cache, 2 session store)".
    #[must_use]
    pub fn describe(&self) -> String {
        let why = |w: &LeftOut| {
            match w {
            LeftOut::OtherProfile => "this launch starts another profile than the traced one",
            LeftOut::UnknownProfile => {
                "this launch names its profile (-P) or asks for the profile manager: which folder is not known"
            }
            LeftOut::NotOwned => "the traced profile belongs to another user",
            LeftOut::Gone => "the traced profile folder is gone",
        }
        };
        if let Some(w) = &self.left_out {
            return format!("nothing of the profile: {}", why(w));
        }
        let mut text = format!(
            "{} of {} file{} of your profile",
            crate::units::mb(self.bytes),
            self.files,
            if self.files == 1 { "" } else { "s" }
        );
        if !self.changed.is_empty() {
            let parts: Vec<String> = self
                .changed
                .iter()
                .map(|c| format!("{} {}", c.files, c.part.label()))
                .collect();
            text.push_str(&format!(
                "; {} changed since traced, not read ({})",
                self.changed_files(),
                parts.join(", ")
            ));
        }
        text
    }
}

/// A profile file as a plan read it: checked again when it is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planned {
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
}

impl Planned {
    /// Whether the opened file `meta` is still the planned one.
    #[must_use]
    pub fn matches(&self, meta: &Metadata) -> bool {
        meta.ino() == self.ino && meta.len() == self.size && mtime_ns(meta) == self.mtime_ns
    }
}

/// The identity a trace saw a file with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traced {
    pub ino: u64,
    pub size: Option<u64>,
    pub mtime_ns: Option<i64>,
}

/// The modification time of `meta`, ns since the epoch (as traces record it).
#[must_use]
pub fn mtime_ns(meta: &Metadata) -> i64 {
    meta.mtime()
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.mtime_nsec())
}

/// Whether the profile file is still the one traced: same inode, size and modification time.
/// A trace that did not record the size or the time (an older host's) cannot tell: not read.
/// Pure.
#[must_use]
pub fn unchanged(traced: &Traced, ino: u64, size: u64, mtime: i64) -> bool {
    traced.ino == ino && traced.size == Some(size) && traced.mtime_ns == Some(mtime)
}

/// Files of a profile no plan reads, whatever the traces say: Firefox writes them (a
/// database's journal and shared memory, the profile's locks). `rel` is relative to the
/// profile. Pure.
#[must_use]
pub fn never_planned(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name == ".parentlock"
        || name == "lock"
        || ["-wal", "-shm", "-journal"]
            .iter()
            .any(|s| name.ends_with(s))
}

/// What the plan may read of a profile: its folders, held open, and their owner.
#[derive(Debug, Clone)]
pub struct Scope {
    roots: Roots,
    folders: Vec<Folder>,
    /// The same folders, to open and stat beneath.
    held: Folders,
    uid: u32,
}

/// What the traces' profile file at a path is to the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Not in the profile: the install's or the system's rules decide.
    Outside,
    /// Read it: still the traced file, the user's own.
    Plan(Planned),
    /// Written or replaced since the traces: skipped and counted.
    Changed(Part),
    /// Never read: a journal or lock, not the user's, not a regular file, or gone.
    Never,
}

impl Scope {
    /// The profile the traces read (`traced`: its folder, a real path) if a launch of
    /// `launched` starts it and it belongs to `uid`; `Ok(None)` when the traces name no
    /// profile. I/O: opens the folders.
    pub fn of(
        traced: Option<&str>,
        launched: &Launched,
        uid: u32,
    ) -> Result<Option<Scope>, LeftOut> {
        let Some(traced) = traced else {
            return Ok(None);
        };
        let roots = Roots::of(traced);
        let folder = Folder::open(Path::new(&roots.profile)).map_err(|_| LeftOut::Gone)?;
        if folder.path() != Path::new(&roots.profile) {
            // The traced path is now a symlink elsewhere: not the traced folder.
            return Err(LeftOut::Gone);
        }
        match launched {
            Launched::Default => {}
            Launched::Unknown => return Err(LeftOut::UnknownProfile),
            Launched::Folder(dir) => {
                if dir.canonicalize().ok().as_deref() != Some(folder.path()) {
                    return Err(LeftOut::OtherProfile);
                }
            }
        }
        if owner(&folder) != Some(uid) {
            return Err(LeftOut::NotOwned);
        }
        let mut folders = vec![folder];
        // The local folder (the startup cache of a profile under ~/.mozilla/firefox), where it
        // is there and the user's too.
        if let Some(local) = roots.local.as_deref() {
            if let Ok(f) = Folder::open(Path::new(local)) {
                if f.path() == Path::new(local) && owner(&f) == Some(uid) {
                    folders.push(f);
                }
            }
        }
        let mut held = Folders::default();
        for f in &folders {
            held.push(f.clone());
        }
        Ok(Some(Scope {
            roots,
            folders,
            held,
            uid,
        }))
    }

    /// Add the profile's folders to `folders` (the plan's), so that its files open beneath them.
    pub fn hold_in(&self, folders: &mut Folders) {
        for f in &self.folders {
            folders.push(f.clone());
        }
    }

    /// `path` relative to the profile (or its local folder), if it is in it.
    #[must_use]
    pub fn relative<'a>(&self, path: &'a Path) -> Option<&'a str> {
        self.roots.relative(path.to_str()?)
    }

    /// What the plan does with the traced file at `path`, seen by the traces as `traced`.
    /// I/O: one `stat` beneath the held folder (no symlink followed).
    #[must_use]
    pub fn judge(&self, path: &Path, traced: &Traced) -> Verdict {
        let Some(rel) = self.relative(path) else {
            return Verdict::Outside;
        };
        if never_planned(rel) {
            return Verdict::Never;
        }
        let Some(meta) = self.stat(path).ok().filter(Metadata::is_file) else {
            return Verdict::Never;
        };
        if meta.uid() != self.uid {
            return Verdict::Never;
        }
        let mtime = mtime_ns(&meta);
        if unchanged(traced, meta.ino(), meta.len(), mtime) {
            Verdict::Plan(Planned {
                ino: meta.ino(),
                size: meta.len(),
                mtime_ns: mtime,
            })
        } else {
            // Named by role: the add-on ids only, no site (classify, profile_parts.rs).
            Verdict::Changed(classify(rel, &Addons::default()))
        }
    }

    fn stat(&self, path: &Path) -> io::Result<Metadata> {
        self.held.stat(path)
    }
}

/// The profile of traces whose profile folder is `traced_dir`, for a launch of `launched` by
/// `uid`: the scope to plan from (`None`: nothing of a profile is planned) and what the plan says
/// of the profile so far (`None` where the traces name no profile; `left_out` and why where
/// the rules keep it out). I/O: opens the folders.
#[must_use]
pub fn scope_for(
    traced_dir: Option<&str>,
    launched: &Launched,
    uid: u32,
) -> (Option<Scope>, Option<ProfilePlan>) {
    match Scope::of(traced_dir, launched, uid) {
        Ok(Some(scope)) => (Some(scope), Some(ProfilePlan::default())),
        Ok(None) => (None, None),
        Err(why) => (None, Some(ProfilePlan::left_out(why))),
    }
}

/// The uid owning the held folder.
fn owner(folder: &Folder) -> Option<u32> {
    std::fs::metadata(folder.path()).ok().map(|m| m.uid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launchs_profile_comes_from_its_arguments() {
        let cwd = Path::new("/home/u");
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            launched(&args(&["--new-window", "x"]), cwd),
            Launched::Default
        );
        assert_eq!(
            launched(&args(&["-profile", "/p/a", "--headless"]), cwd),
            Launched::Folder(PathBuf::from("/p/a"))
        );
        assert_eq!(
            launched(&args(&["--Profile", "rel"]), cwd),
            Launched::Folder(PathBuf::from("/home/u/rel"))
        );
        assert_eq!(launched(&args(&["-P", "work"]), cwd), Launched::Unknown);
        assert_eq!(
            launched(&args(&["-ProfileManager"]), cwd),
            Launched::Unknown
        );
        assert_eq!(launched(&args(&["-profile"]), cwd), Launched::Unknown);
        // A URL that looks like nothing of the above is not a flag.
        assert_eq!(
            launched(&args(&["profile", "-private"]), cwd),
            Launched::Default
        );
    }

    #[test]
    fn journals_and_locks_are_never_planned() {
        for rel in [
            "places.sqlite-wal",
            "places.sqlite-shm",
            "storage/default/x/idb/1.sqlite-journal",
            ".parentlock",
            "lock",
        ] {
            assert!(never_planned(rel), "{rel}");
        }
        for rel in [
            "places.sqlite",
            "extensions/a@b.xpi",
            "startupCache/startupCache.8.little",
        ] {
            assert!(!never_planned(rel), "{rel}");
        }
    }

    #[test]
    fn a_file_is_unchanged_only_with_the_same_inode_size_and_time() {
        let t = Traced {
            ino: 7,
            size: Some(4096),
            mtime_ns: Some(1_000),
        };
        assert!(unchanged(&t, 7, 4096, 1_000));
        assert!(!unchanged(&t, 8, 4096, 1_000), "replaced");
        assert!(!unchanged(&t, 7, 8192, 1_000), "grown");
        assert!(!unchanged(&t, 7, 4096, 1_001), "written in place");
        // An older trace without the time cannot tell.
        let old = Traced {
            mtime_ns: None,
            ..t
        };
        assert!(!unchanged(&old, 7, 4096, 1_000));
    }

    #[test]
    fn changed_files_are_counted_by_part_largest_first() {
        let mut p = ProfilePlan::default();
        p.note_changed(Part::Session);
        p.note_changed(Part::StartupCache);
        p.note_changed(Part::StartupCache);
        assert_eq!(p.changed_files(), 3);
        assert_eq!(p.changed[0].part, Part::StartupCache);
        let text = p.describe();
        assert!(
            text.contains("3 changed since traced, not read (2 startup cache, 1 session store)"),
            "{text}"
        );
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["changed"][0]["part"]["kind"], "startup_cache");
        assert!(json.get("left_out").is_none());
        let out = ProfilePlan::left_out(LeftOut::OtherProfile);
        assert_eq!(
            serde_json::to_value(&out).unwrap()["left_out"]["code"],
            "other_profile"
        );
    }
}
