//! Every launch from the desktop through the prefetch (`about-startup-host desktop
//! enable|disable|status`, the protocol's `desktop`): a copy of the system's desktop entry for
//! this Firefox in the user's own applications folder (`$XDG_DATA_HOME/applications`, else
//! `~/.local/share/applications`), under the same file name, so it takes the system entry's
//! place in menus, docks and MIME defaults, with every `Exec` run through `launch --prefetch`.
//! The system's entry is never written; `disable` removes only a file `enable` wrote (it
//! carries [`entry::MARKER_KEY`]), after which the system entry is what the desktop sees again.
//!
//! The host binary an entry names runs at every launch of Firefox, so, as `install --system`
//! requires of a binary every user runs, it must be a file no other user can replace: owned by
//! root or by the user, below folders only they can write.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::learn::prefetch::{self, record::LastPrefetch, PrefetchStatus};
use crate::state::{self, StateDir};

pub mod entry;

/// Entries larger than this are not desktop entries (Firefox's, with every translation: 12 KB).
const MAX_ENTRY_BYTES: u64 = 256 * 1024;
/// At most this many files of an applications folder are looked at.
const MAX_ENTRIES: usize = 5000;

/// Where desktop entries live: the user's data folder and the system's.
#[derive(Debug, Clone)]
pub struct Dirs {
    /// `$XDG_DATA_HOME` or `~/.local/share`.
    pub data_home: PathBuf,
    /// `$XDG_DATA_DIRS` or `/usr/local/share:/usr/share`, the user's own folder left out.
    pub data_dirs: Vec<PathBuf>,
    /// `$PATH`, to resolve an `Exec` that names its program without a folder.
    pub path: Vec<PathBuf>,
}

impl Dirs {
    /// The folders of this environment (XDG Base Directory; relative entries are ignored).
    pub fn from_env() -> Result<Self, crate::Error> {
        let absolute = |p: &PathBuf| p.is_absolute();
        let data_home = match std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .filter(absolute)
        {
            Some(p) => p,
            None => state::home()?.join(".local/share"),
        };
        let data_dirs = std::env::var_os("XDG_DATA_DIRS")
            .filter(|v| !v.is_empty())
            .map_or_else(
                || {
                    vec![
                        PathBuf::from("/usr/local/share"),
                        PathBuf::from("/usr/share"),
                    ]
                },
                |v| std::env::split_paths(&v).filter(absolute).collect(),
            );
        let path =
            std::env::var_os("PATH").map_or_else(Vec::new, |v| std::env::split_paths(&v).collect());
        Ok(Dirs {
            data_home,
            data_dirs,
            path,
        })
    }

    /// The user's applications folder.
    #[must_use]
    pub fn user_apps(&self) -> PathBuf {
        self.data_home.join("applications")
    }
}

/// The host binary an entry would run, and why no entry may name it (`None`: it may). The
/// caller judges it by the rule of per-user entries (`os::binary::user_binary_problem`),
/// so this folder needs nothing of the host's.
#[derive(Debug, Clone)]
pub struct HostBinary {
    pub path: PathBuf,
    pub problem: Option<String>,
}

/// Why the entry cannot be written (the page words the code).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// `no_system_entry`, `host_replaceable`, `foreign_entry`, `unreadable_entry`.
    pub code: &'static str,
    /// English, for the CLI and older extensions.
    pub message: String,
}

/// `desktop status`, and the reply of `desktop` (docs/PROTOCOL.md).
#[derive(Debug, Clone, Serialize)]
pub struct DesktopStatus {
    /// Our entry for this Firefox is in place.
    pub enabled: bool,
    /// Where our entry is (or would go).
    pub entry: Option<PathBuf>,
    /// The system's entry it copies.
    pub system_entry: Option<PathBuf>,
    /// The Firefox executable the entry runs.
    pub firefox: Option<PathBuf>,
    /// This host binary (what the entry's Exec names).
    pub host: PathBuf,
    /// The entry in place names another host binary or Firefox than now (the host moved):
    /// `enable` again writes it anew.
    pub outdated: bool,
    /// Why `enable` cannot write the entry; `None` when it can (or did).
    pub problem: Option<Problem>,
    /// Which plan a launch would prefetch now, and why not the traced one (a Firefox update
    /// makes it stale).
    pub prefetch: PrefetchStatus,
    /// What the last launch's prefetch did.
    pub last: Option<LastPrefetch>,
    /// What the page must say: `last-prefetch.json` was damaged and set aside by this request
    /// (crate::state::aside); absent when empty (appended).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub note_codes: Vec<crate::note::Note>,
    /// The host binary the entry in place runs, where it is ours (appended).
    pub entry_host: Option<PathBuf>,
    /// That binary is gone (`apt remove about-startup` removes the package's host but not the
    /// entries users wrote in their home folders): launching Firefox from the desktop runs
    /// nothing (appended).
    pub entry_host_missing: bool,
    /// What packing would save on this machine: the traced start's bytes plain and compressed
    /// (learn/packing.rs); `None` without a traced plan of this build (appended).
    pub packing: Option<crate::learn::packing::Saving>,
    /// `pack`'s image of this install, if any: compressor, sizes, and whether launches use it
    /// (appended).
    pub packed: Option<PackedView>,
}

/// `pack`'s image as the page shows it (`desktop`'s `packed`).
#[derive(Debug, Clone, Serialize)]
pub struct PackedView {
    pub compressor: String,
    pub block_size: u32,
    pub bytes_image: u64,
    pub bytes_install: u64,
    /// Launches start Firefox from it (the install's build is the image's).
    pub current: bool,
    /// Why not, in English; `None` when current.
    pub not_used: Option<String>,
}

/// A small text file, read without following a final symlink and never from a FIFO.
fn read_small(path: &Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_ENTRY_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The real path of `program` (absolute, or looked up on `path`).
fn resolve(program: &str, path: &[PathBuf]) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.is_absolute() {
        return p.canonicalize().ok();
    }
    if program.contains('/') {
        return None; // relative to nothing the desktop would agree on
    }
    path.iter()
        .map(|d| d.join(program))
        .find(|c| c.is_file())
        .and_then(|c| c.canonicalize().ok())
}

/// The system's entry for the Firefox in `install_dir` (canonical): a `.desktop` file of an
/// applications folder of `dirs.data_dirs` whose `Exec` runs an executable in that folder. The
/// one named after the executable first (firefox-esr.desktop for firefox-esr), else the first
/// by name. Returns its path, text and the executable.
#[must_use]
pub fn system_entry(dirs: &Dirs, install_dir: &Path) -> Option<(PathBuf, String, PathBuf)> {
    let mut found: Vec<(bool, PathBuf, String, PathBuf)> = Vec::new();
    for apps in dirs.data_dirs.iter().map(|d| d.join("applications")) {
        if apps.starts_with(dirs.user_apps()) || dirs.user_apps().starts_with(&apps) {
            continue;
        }
        let Ok(list) = std::fs::read_dir(&apps) else {
            continue;
        };
        let mut names: Vec<PathBuf> = list
            .filter_map(Result::ok)
            .take(MAX_ENTRIES)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "desktop"))
            .collect();
        names.sort();
        for path in names {
            let Some(text) = read_small(&path) else {
                continue;
            };
            if entry::is_ours(&text) {
                continue;
            }
            let Some(binary) = entry::program(&text).and_then(|p| resolve(&p, &dirs.path)) else {
                continue;
            };
            if binary.parent() == Some(install_dir) {
                let named = binary
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| path.file_stem().and_then(|s| s.to_str()) == Some(n));
                found.push((named, path, text, binary));
            }
        }
        if !found.is_empty() {
            break; // the first folder of XDG_DATA_DIRS with one wins, as for the desktop
        }
    }
    found.sort_by_key(|f| !f.0);
    found
        .into_iter()
        .next()
        .map(|(_, path, text, binary)| (path, text, binary))
}

/// The state of the entry for the Firefox in `install_dir`, written by this `host` binary;
/// `state` is the state folder (traces, learned plan, last prefetch), if there is one.
#[must_use]
pub fn status(
    dirs: &Dirs,
    install_dir: &Path,
    binary: &HostBinary,
    state: Option<&StateDir>,
) -> DesktopStatus {
    let host = binary.path.as_path();
    let system = system_entry(dirs, install_dir);
    let entry = system
        .as_ref()
        .and_then(|(path, _, _)| path.file_name())
        .map(|name| dirs.user_apps().join(name));
    let in_place = entry.as_deref().and_then(read_small);
    let ours = in_place.as_deref().is_some_and(entry::is_ours);
    let firefox = system.as_ref().map(|s| s.2.clone());
    let exec_args = in_place
        .as_deref()
        .filter(|_| ours)
        .and_then(|t| entry::split_exec(entry::value(t, "Desktop Entry", "Exec")?));
    let entry_host = exec_args
        .as_ref()
        .and_then(|args| args.first())
        .map(PathBuf::from);
    // metadata follows links: a dangling one is as gone as a removed file.
    let entry_host_missing = entry_host
        .as_deref()
        .is_some_and(|h| std::fs::metadata(h).is_err());
    let outdated = ours
        && exec_args.as_ref().is_none_or(|args| {
            args.first().map(PathBuf::from).as_deref() != Some(host)
                || !args
                    .windows(2)
                    .any(|w| w[0] == "--firefox" && firefox.as_deref() == Some(Path::new(&w[1])))
        });
    let problem = if let Some(why) = &binary.problem {
        Some(Problem {
            code: "host_replaceable",
            message: format!(
                "the entry would run {} at every launch of Firefox, but {why}: another user could replace it. \
                 Copy the binary to a folder only you (or root) can write, e.g. install -m 0755 {} ~/.local/bin/, \
                 and run it from there",
                host.display(),
                host.display()
            ),
        })
    } else if system.is_none() {
        Some(Problem {
            code: "no_system_entry",
            message: format!(
                "no desktop entry in {} runs the Firefox in {}; there is nothing to launch it through",
                dirs.data_dirs.iter().map(|d| d.join("applications").display().to_string()).collect::<Vec<_>>().join(", "),
                install_dir.display()
            ),
        })
    } else if in_place.is_some() && !ours {
        Some(Problem {
            code: "foreign_entry",
            message: format!(
                "{} exists and was not written by about-startup-host: it is left as it is",
                entry.as_deref().unwrap_or(Path::new("")).display()
            ),
        })
    } else {
        None
    };
    let none = || PrefetchStatus {
        source: None,
        build_id: crate::firefox::app_ini::read(install_dir).1,
        traces: 0,
        fallback: Some(prefetch::Fallback::NoTrace),
        learned_stale: false,
    };
    let prefetch = state
        .and_then(|s| prefetch::status(install_dir, s).ok())
        .unwrap_or_else(none);
    let (last, set_aside) = state.map_or((None, None), prefetch::record::read_or_set_aside);
    let packed = state
        .and_then(crate::learn::pack::read)
        .filter(|p| p.install_dir == install_dir);
    let on_mount = crate::firefox::compressed::detect(
        install_dir,
        crate::firefox::packed::image_for(install_dir).as_deref(),
    );
    let packing = state.and_then(|s| {
        crate::learn::packing::saving(s, install_dir, on_mount.as_ref(), packed.as_ref())
    });
    let packed = packed.map(|p| {
        let used = crate::learn::pack::check(&p, install_dir);
        PackedView {
            compressor: p.compressor.clone(),
            block_size: p.block_size,
            bytes_image: p.bytes_image,
            bytes_install: p.bytes_install,
            current: used.is_ok(),
            not_used: used.err().map(|e| e.to_string()),
        }
    });
    DesktopStatus {
        enabled: ours,
        entry,
        system_entry: system.as_ref().map(|s| s.0.clone()),
        firefox,
        host: host.to_path_buf(),
        outdated,
        problem,
        prefetch,
        last,
        note_codes: set_aside.into_iter().collect(),
        entry_host,
        entry_host_missing,
        packing,
        packed,
    }
}

/// Write the entry (again, if it is there), unless [`status`] names a problem.
pub fn enable(
    dirs: &Dirs,
    install_dir: &Path,
    binary: &HostBinary,
    state: Option<&StateDir>,
) -> Result<DesktopStatus, Problem> {
    let host = binary.path.as_path();
    let before = status(dirs, install_dir, binary, state);
    if let Some(problem) = before.problem {
        return Err(problem);
    }
    let (system_path, text, firefox) = system_entry(dirs, install_dir).ok_or_else(|| Problem {
        code: "no_system_entry",
        message: "the system's entry went away meanwhile".into(),
    })?;
    let unreadable = |why: String| Problem {
        code: "unreadable_entry",
        message: why,
    };
    let (Some(host_text), Some(firefox_text)) = (host.to_str(), firefox.to_str()) else {
        return Err(unreadable(
            "a path in the entry is not UTF-8, which desktop entries cannot hold".into(),
        ));
    };
    let launcher = [host_text.to_owned(), "launch".into(), "--prefetch".into()];
    let copy = entry::rewrite(
        &text,
        &launcher,
        firefox_text,
        &system_path.to_string_lossy(),
    )
    .ok_or_else(|| {
        unreadable(format!(
            "{}: an Exec line cannot be read (unterminated quote?)",
            system_path.display()
        ))
    })?;
    let target = before
        .entry
        .ok_or_else(|| unreadable("no entry path".into()))?;
    // Atomically, never through a symlink, in a folder only this user can write (state/dir.rs).
    let (Some(folder), Some(name)) = (target.parent(), target.file_name().and_then(|n| n.to_str()))
    else {
        return Err(unreadable(format!(
            "{} is not a file path",
            target.display()
        )));
    };
    StateDir::create_at(folder)
        .and_then(|apps| apps.write(name, copy.as_bytes()))
        .map_err(|e| unreadable(e.to_string()))?;
    let mut after = status(dirs, install_dir, binary, state);
    // A note of the first look (a record set aside then) is said once: keep it.
    after.note_codes.splice(0..0, before.note_codes);
    Ok(after)
}

/// Remove our entries for the Firefox in `install_dir` (those `enable` wrote: marked, and
/// running an executable of that folder); returns what was removed. Nothing else is touched.
pub fn disable(dirs: &Dirs, install_dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let Ok(list) = std::fs::read_dir(dirs.user_apps()) else {
        return Ok(removed);
    };
    for path in list
        .filter_map(Result::ok)
        .take(MAX_ENTRIES)
        .map(|e| e.path())
    {
        let Some(text) = read_small(&path) else {
            continue;
        };
        let runs_this = entry::value(&text, "Desktop Entry", "Exec")
            .and_then(entry::split_exec)
            .is_some_and(|args| {
                args.windows(2)
                    .any(|w| w[0] == "--firefox" && Path::new(&w[1]).parent() == Some(install_dir))
            });
        if entry::is_ours(&text) && runs_this {
            std::fs::remove_file(&path)?;
            removed.push(path);
        }
    }
    removed.sort();
    Ok(removed)
}

#[cfg(test)]
mod tests;
