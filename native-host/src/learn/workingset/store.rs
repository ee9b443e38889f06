//! The state on disk: the state folder (where, and whether root may write in it), reading the
//! state file, atomic private writes and the folder's lock.

use super::*;

/// `$XDG_STATE_HOME/about-startup`, or `~/.local/state/about-startup` (XDG Base Directory:
/// a relative XDG_STATE_HOME is invalid and ignored).
pub fn state_dir() -> Result<PathBuf, Error> {
    let from_xdg = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = match from_xdg {
        Some(p) => p,
        None => home()?.join(".local/state"),
    };
    Ok(base.join("about-startup"))
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

/// Read the state file; a missing file, another version or a corrupt file is an empty state
/// (the next `learn` starts over), so an old or damaged file never stops a preload.
#[must_use]
pub fn load(path: &Path) -> State {
    std::fs::read(path)
        .map(|bytes| parse_state(&bytes))
        .unwrap_or_default()
}

/// A state file's bytes as a [`State`]: another version or anything that does not parse is an
/// empty state. Pure (the fuzz target `state` drives it).
#[must_use]
pub fn parse_state(bytes: &[u8]) -> State {
    serde_json::from_slice::<State>(bytes)
        .ok()
        .filter(|s| s.version == STATE_VERSION)
        .unwrap_or_default()
}

/// Make the state folder `dir` (0700, parents as needed) and check it is safe to write in:
/// a real folder, not a symlink, and, when this process is root, owned by root: root never
/// writes into a folder another user controls (they could swap files under it).
pub fn ensure_state_dir(dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let context = || format!("cannot use the state folder {}", dir.display());
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io(context(), e))?;
    let meta = std::fs::symlink_metadata(dir).map_err(|e| Error::io(context(), e))?;
    let refuse = |why: String| {
        Err(Error::io(
            context(),
            io::Error::new(io::ErrorKind::PermissionDenied, why),
        ))
    };
    if !meta.is_dir() {
        return refuse("it is a symlink or not a folder; remove it".to_owned());
    }
    let euid = crate::pagecache::sys::geteuid();
    if euid == 0 && meta.uid() != 0 {
        return refuse(format!(
            "it belongs to uid {}, and root uses only state folders root owns (set XDG_STATE_HOME to one)",
            meta.uid()
        ));
    }
    Ok(())
}

/// Write `value` as JSON to `path` atomically: a new temporary file with a unique name
/// (O_EXCL, mode 0600) in the same folder, renamed over `path`. A planted `*.tmp` symlink is
/// never followed, and a reader sees the old file or the new one, never half of one.
pub fn save_json(path: &Path, value: &impl Serialize) -> Result<(), Error> {
    let bytes = serde_json::to_vec(value)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e.into()))?;
    write_private(path, &bytes)
}

/// Write `bytes` to `path` atomically in a folder [`ensure_state_dir`] accepts (see
/// [`save_json`]); also for the autostart entries in the config folder.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let context = || format!("cannot write {}", path.display());
    ensure_state_dir(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".about-startup-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io(context(), e))?;
    io::Write::write_all(&mut tmp, bytes).map_err(|e| Error::io(context(), e))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| Error::io(context(), e))?;
    tmp.persist(path)
        .map_err(|e| Error::io(context(), e.error))?;
    Ok(())
}

/// Run `f` holding the state folder's lock (`flock` on `.lock` in it, opened without following
/// symlinks), so concurrent `learn`s do not lose each other's read-modify-write.
pub fn with_state_lock<T>(dir: &Path, f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    ensure_state_dir(dir)?;
    let path = dir.join(".lock");
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
    crate::pagecache::sys::flock_exclusive(&lock)
        .map_err(|e| Error::io(format!("cannot lock {}", path.display()), e))?;
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_json_replaces_the_file_and_leaves_no_temporary_one() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("state/x.json");
        save_json(&path, &serde_json::json!({"n": 1})).unwrap();
        save_json(&path, &serde_json::json!({"n": 2})).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), r#"{"n":2}"#);
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["x.json"]);
    }

    #[test]
    fn writes_replace_a_planted_symlink_instead_of_following_it() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        ensure_state_dir(&state).unwrap();
        // What the old code wrote through: the fixed temp name, and the file itself.
        std::os::unix::fs::symlink(&victim, state.join("working-set.json.tmp")).unwrap();
        std::os::unix::fs::symlink(&victim, state.join(STATE_FILE)).unwrap();
        save_json(&state.join(STATE_FILE), &State::default()).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let meta = std::fs::symlink_metadata(state.join(STATE_FILE)).unwrap();
        assert!(meta.is_file(), "the state file is a new regular file");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&state).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    }

    #[test]
    fn a_state_folder_that_is_a_symlink_or_another_users_is_refused_as_root() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = ensure_state_dir(&link).unwrap_err();
        assert!(err.to_string().contains("symlink"), "{err}");
        std::os::unix::fs::chown(&real, Some(65534), Some(65534)).ok();
        let owned_by_other = std::fs::metadata(&real).map(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid() != crate::pagecache::sys::geteuid()
        });
        if crate::pagecache::sys::geteuid() == 0 {
            assert!(owned_by_other.unwrap(), "root could chown it");
            let err = ensure_state_dir(&real).unwrap_err();
            assert!(err.to_string().contains("belongs to uid 65534"), "{err}");
        } else {
            // An ordinary user's own folder is theirs to use.
            ensure_state_dir(&real).unwrap();
        }
    }

    #[test]
    fn concurrent_read_modify_writes_under_the_lock_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().to_path_buf();
        let counter = state.join("count.json");
        save_json(&counter, &0u64).unwrap();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (state, counter) = (state.clone(), counter.clone());
                std::thread::spawn(move || {
                    for _ in 0..25 {
                        with_state_lock(&state, || {
                            let n: u64 =
                                serde_json::from_slice(&std::fs::read(&counter).unwrap()).unwrap();
                            std::thread::yield_now();
                            save_json(&counter, &(n + 1))
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let n: u64 = serde_json::from_slice(&std::fs::read(&counter).unwrap()).unwrap();
        assert_eq!(n, 100);
    }
}
