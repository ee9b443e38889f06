//! How a person runs this binary: the command the page, `--help` and the CLI's notes print, so
//! that it runs as printed for the user who reads it (issue 19: `sudo about-startup-host …` was
//! "command not found" after `npm start`, which leaves the binary in `native-host/target/release`).
//!
//! - [`Invocation::plain`]: the bare name when this user's `PATH` finds *this* binary under it,
//!   else its absolute path;
//! - [`Invocation::as_root`]: the same for a command that needs root: nothing in front when this
//!   process is root already, else `sudo` and the bare name only where sudo's usual `secure_path`
//!   finds it (sudo replaces `PATH`, so `~/.local/bin` is not searched), else the absolute path.
//!
//! Used by all, uses none (like `path_text`).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The binary's name, as installed (`cargo build`, the `.deb`, `~/.local/bin`).
pub const NAME: &str = "about-startup-host";

/// The folders of Debian's and most distributions' sudo `secure_path`: the only ones a
/// `sudo NAME` finds, whatever the user's own `PATH` holds.
const SUDO_PATH: [&str; 6] = [
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// What to print to run this binary (`hello`'s `cli`, docs/PROTOCOL.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Invocation {
    /// As this user: `about-startup-host` or `/abs/path/about-startup-host`.
    #[serde(rename = "command")]
    pub plain: String,
    /// As root: `sudo about-startup-host`, `sudo /abs/path/…`, or `plain` when root already.
    #[serde(rename = "root_command")]
    pub as_root: String,
    /// Whether `PATH` finds this binary by its bare name.
    pub on_path: bool,
}

impl Invocation {
    /// `args` appended to the plain command: `"{plain} {args}"`.
    #[must_use]
    pub fn run(&self, args: &str) -> String {
        format!("{} {args}", self.plain)
    }

    /// `args` appended to the root command.
    #[must_use]
    pub fn run_as_root(&self, args: &str) -> String {
        format!("{} {args}", self.as_root)
    }

    /// `args` run by root itself, for what needs root's own view (exact residency of root's
    /// files, `install --system`): under sudo this binary runs the command as the user who
    /// asked (tracer/split.rs), unless `SUDO_UID` is taken out of its environment first.
    #[must_use]
    pub fn run_as_root_itself(&self, args: &str) -> String {
        match self.as_root.strip_prefix("sudo ") {
            Some(rest) => format!("sudo env -u SUDO_UID {rest} {args}"),
            None => format!("{} {args}", self.as_root),
        }
    }
}

/// This process's invocation: its executable, this user's `PATH`, its effective uid.
#[must_use]
pub fn current() -> Invocation {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from(NAME));
    let path = std::env::var_os("PATH");
    of(&exe, path.as_deref(), rustix::process::geteuid().is_root())
}

/// The invocation of the binary `exe` for a user whose `PATH` is `path` (root or not).
#[must_use]
pub fn of(exe: &Path, path: Option<&OsStr>, root: bool) -> Invocation {
    let real = exe.canonicalize().unwrap_or_else(|_| exe.to_path_buf());
    // The first folder of PATH holding a NAME decides what the bare name runs: only if that is
    // this binary does the bare name run it.
    let found = path.and_then(|p| {
        std::env::split_paths(p)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(NAME))
            .find(|candidate| candidate.is_file())
    });
    let on_path = found
        .as_ref()
        .and_then(|f| f.canonicalize().ok())
        .is_some_and(|f| f == real);
    let absolute = quote(&real);
    let plain = if on_path {
        NAME.to_owned()
    } else {
        absolute.clone()
    };
    let in_sudo_path = on_path
        && found
            .as_ref()
            .and_then(|f| f.parent())
            .is_some_and(|dir| SUDO_PATH.iter().any(|s| Path::new(s) == dir));
    let as_root = if root {
        plain.clone()
    } else if in_sudo_path {
        format!("sudo {NAME}")
    } else {
        format!("sudo {absolute}")
    };
    Invocation {
        plain,
        as_root,
        on_path,
    }
}

/// A path as a shell word: bare when it has only safe characters, else in single quotes.
pub fn quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    let safe = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%".contains(&b));
    if safe {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn stage() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let build = tmp.path().join("target/release");
        fs::create_dir_all(&build).unwrap();
        let exe = build.join(NAME);
        fs::write(&exe, b"").unwrap();
        (tmp, exe)
    }

    fn path_of(dirs: &[&Path]) -> OsString {
        std::env::join_paths(dirs).unwrap()
    }

    #[test]
    fn not_on_path_is_the_absolute_path_and_sudo_with_it() {
        let (_tmp, exe) = stage();
        let real = exe.canonicalize().unwrap();
        let i = of(&exe, Some(&path_of(&[Path::new("/nonexistent")])), false);
        assert_eq!(i.plain, real.to_string_lossy());
        assert_eq!(i.as_root, format!("sudo {}", real.display()));
        assert!(!i.on_path);
        assert_eq!(i.run("install"), format!("{} install", real.display()));
        assert_eq!(
            i.run_as_root_itself("residency"),
            format!("sudo env -u SUDO_UID {} residency", real.display())
        );
        let root = of(&exe, Some(&path_of(&[Path::new("/nonexistent")])), true);
        assert_eq!(
            root.run_as_root_itself("residency"),
            format!("{} residency", real.display())
        );
    }

    #[test]
    fn a_link_in_a_users_bin_is_the_bare_name_but_sudo_needs_the_path() {
        // ~/.local/bin is on the user's PATH, not on sudo's secure_path.
        let (tmp, exe) = stage();
        let bin = tmp.path().join("home/.local/bin");
        fs::create_dir_all(&bin).unwrap();
        symlink(&exe, bin.join(NAME)).unwrap();
        let i = of(&exe, Some(&path_of(&[&bin])), false);
        assert_eq!(i.plain, NAME);
        assert!(i.on_path);
        assert_eq!(
            i.as_root,
            format!("sudo {}", exe.canonicalize().unwrap().display())
        );
        // Root needs no sudo, and the bare name works for root with that PATH.
        let root = of(&exe, Some(&path_of(&[&bin])), true);
        assert_eq!((root.plain.as_str(), root.as_root.as_str()), (NAME, NAME));
    }

    #[test]
    fn another_binary_of_that_name_first_on_path_means_the_absolute_path() {
        let (tmp, exe) = stage();
        let other = tmp.path().join("other");
        fs::create_dir_all(&other).unwrap();
        fs::write(other.join(NAME), b"old").unwrap();
        let i = of(&exe, Some(&path_of(&[&other])), false);
        assert!(!i.on_path);
        assert!(i.plain.starts_with('/'), "{}", i.plain);
    }

    #[test]
    fn paths_with_spaces_are_quoted_for_the_shell() {
        assert_eq!(quote(Path::new("/a/b-c_d.e")), "/a/b-c_d.e");
        assert_eq!(quote(Path::new("/my dir/x")), "'/my dir/x'");
        assert_eq!(quote(Path::new("/it's")), r"'/it'\''s'");
    }
}
