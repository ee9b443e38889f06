//! This binary and the binaries it runs or registers: where this program is, which file of an
//! install folder is Firefox's executable, and the trust rules for a binary another user's or
//! root's program will run (a system-wide manifest, root's traced restart, a user's autostart
//! entry): it and every folder above it must be writable only by whom it runs as.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// This binary's real absolute path, which the manifest must name.
pub fn host_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("finding this program's own path")?;
    exe.canonicalize()
        .with_context(|| format!("resolving this program's path {}", exe.display()))
}

/// The Firefox executable of an install folder.
#[must_use]
pub fn firefox_binary(dir: &Path) -> Option<PathBuf> {
    ["firefox", "firefox-esr", "firefox-bin"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

/// Why `binary` must not be named in a system-wide manifest, or `None` when it may: every
/// user's Firefox would start it, so it and every folder above it must be root's and not
/// writable by group or others (else another user could replace what everyone runs).
/// `lstat` of each component: a symlink on the way is judged as the link, then its target.
pub fn system_binary_problem(binary: &Path) -> Option<String> {
    binary_problem(binary, &[0], false)
}

/// Why `binary` must not be named in this user's own manifest or autostart entry, or `None`
/// when it may: the entry runs it as the user, so nobody but the user (or root) may be able to
/// replace it: it and every folder above it must belong to the user or root and be writable
/// by nobody else. A root-owned sticky folder (`/tmp`) is allowed on the way: there others
/// cannot rename or remove what is not theirs. (Issue 20 #9: a binary in a 0777 folder was
/// replaced by another user, and the entry ran their code as the user.)
pub fn user_binary_problem(binary: &Path) -> Option<String> {
    let euid = crate::os::sys::geteuid();
    binary_problem(binary, &[0, euid], true)
}

/// The rule of [`system_binary_problem`] and [`user_binary_problem`]: every component of the
/// binary's real path owned by one of `owners` and writable by nobody else (save a root-owned
/// sticky folder, where `sticky_ok`).
pub fn binary_problem(binary: &Path, owners: &[u32], sticky_ok: bool) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let real = match binary.canonicalize() {
        Ok(real) => real,
        Err(e) => return Some(format!("{}: {e}", binary.display())),
    };
    for path in real.ancestors() {
        let meta = match fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) => return Some(format!("{}: {e}", path.display())),
        };
        if !owners.contains(&meta.uid()) {
            let whom = if owners == [0] {
                "root".to_owned()
            } else {
                format!(
                    "root or you (uid {})",
                    owners.iter().find(|u| **u != 0).copied().unwrap_or(0)
                )
            };
            return Some(format!(
                "{} belongs to uid {}, not {whom}",
                path.display(),
                meta.uid()
            ));
        }
        let sticky_root = meta.uid() == 0 && meta.mode() & 0o1000 != 0 && meta.is_dir();
        // The sticky /tmp-like folders are writable by all: never a place for a system binary.
        if meta.mode() & 0o022 != 0 && !(sticky_ok && sticky_root) {
            return Some(format!(
                "{} is writable by {} (mode {:o})",
                path.display(),
                if meta.mode() & 0o002 != 0 {
                    "every user"
                } else {
                    "its group"
                },
                meta.mode() & 0o7777
            ));
        }
    }
    None
}

/// Refuse an entry of this user's (`what`: manifest, autostart entry) that would run `binary`
/// when others than the user could replace it ([`user_binary_problem`]).
pub fn check_user_binary(binary: &Path, what: &str) -> anyhow::Result<()> {
    if let Some(problem) = user_binary_problem(binary) {
        anyhow::bail!(
            "refusing a {what} that runs {}: {problem}, so another user could replace what it \
             runs as you. Move the binary to a folder only you (or root) can write, e.g. \
             install -m 0755 {} ~/.local/bin/, and run this again from there",
            binary.display(),
            binary.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_system_manifest_names_only_a_binary_no_other_user_can_replace() {
        assert_eq!(system_binary_problem(Path::new("/usr/bin/env")), None);
        // Under /var/tmp (world-writable): refused whoever owns the file.
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let bin = dir.path().join("about-startup-host");
        fs::write(&bin, "x").unwrap();
        let problem = system_binary_problem(&bin).unwrap();
        assert!(
            problem.contains("writable by every user") || problem.contains("not root"),
            "{problem}"
        );
        // A group-writable folder on the way.
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o775)).unwrap();
        let problem = system_binary_problem(&bin).unwrap();
        assert!(
            problem.contains("writable by its group") || problem.contains("not root"),
            "{problem}"
        );
        assert!(system_binary_problem(&dir.path().join("missing")).is_some());
    }

    /// Issue 20 #9: a per-user entry named a binary in a 0777 folder; another user replaced it
    /// and the entry ran their code as the user. The user's entries now get the system rule
    /// for what others than the user could write.
    #[test]
    fn a_user_entry_names_only_a_binary_others_cannot_replace() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("shared");
        std::fs::create_dir(&open).unwrap();
        let bin = open.join("about-startup-host");
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        assert_eq!(
            user_binary_problem(&bin),
            None,
            "a folder of one's own is fine"
        );
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let problem = user_binary_problem(&bin).unwrap();
        assert!(problem.contains("writable by every user"), "{problem}");
        assert!(check_user_binary(&bin, "manifest").is_err());
        // A root-owned sticky folder on the way (/tmp) is not a problem for a user's entry,
        // and still one for a system manifest.
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        let root = crate::os::sys::geteuid() == 0;
        assert_eq!(
            user_binary_problem(&bin).is_none(),
            root,
            "sticky only counts when root's"
        );
        assert!(system_binary_problem(&bin).is_some());
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        if root {
            // Another user's binary is not root's to register for itself.
            std::os::unix::fs::chown(&bin, Some(65534), Some(65534)).unwrap();
            let problem = user_binary_problem(&bin).unwrap();
            assert!(problem.contains("belongs to uid 65534"), "{problem}");
        }
    }
}
