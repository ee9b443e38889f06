//! The login-time preload: a systemd user unit (or, without a systemd user session, an XDG
//! autostart entry) that runs `about-startup-host preload --plan --idle`, rendered from the
//! templates in manifests/ with this binary's real path. Paths follow XDG_CONFIG_HOME and
//! XDG_STATE_HOME; nothing here is hard-coded to a user's folder.
//!
//! Caveat measured on this project's machines (docs/benchmarks.md): a DAMON kdamond with a
//! `pageout` scheme reclaims page cache idle for about a minute, so a login-time preload is
//! undone before the first launch unless Firefox starts soon after login. `status` says so.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context as _};
use serde::Serialize;

use crate::learn::last_run::{self, LastRun};
use crate::state::{self, StateDir};

/// The unit's (and the entry's) file name.
pub const UNIT: &str = "about-startup-preload.service";
pub const DESKTOP: &str = "about-startup-preload.desktop";
const UNIT_TEMPLATE: &str = include_str!("../../../manifests/about-startup-preload.service");
const DESKTOP_TEMPLATE: &str = include_str!("../../../manifests/about-startup-preload.desktop");
const PLACEHOLDER: &str = "@ABSOLUTE_PATH_OF_about-startup-host@";
const KDAMONDS: &str = "/sys/kernel/mm/damon/admin/kdamonds";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Systemd,
    Xdg,
}

/// `plan_status.autostart` and `autostart status`.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub enabled: bool,
    pub kind: Option<Kind>,
    pub last_run: Option<LastRun>,
    /// English, for the CLI and older extensions; `note_code` is what to word (crate::note).
    pub note: Option<String>,
    /// A DAMON kdamond with a `pageout` scheme runs: page cache left idle for about a minute is
    /// reclaimed, so a preload at login does not stay until a later launch (the page words it).
    pub damon_pageout: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note_code: Option<&'static str>,
}

/// Where things go: the config folder (XDG_CONFIG_HOME or ~/.config) and the state folder.
#[derive(Debug, Clone)]
pub struct Dirs {
    pub config: PathBuf,
    pub state: PathBuf,
}

impl Dirs {
    pub fn from_env() -> anyhow::Result<Self> {
        let config = match std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
        {
            Some(p) => p,
            None => state::home()?.join(".config"),
        };
        Ok(Dirs {
            config,
            state: state::locate()?,
        })
    }

    #[must_use]
    pub fn unit(&self) -> PathBuf {
        self.config.join("systemd/user").join(UNIT)
    }

    /// The link `systemctl --user enable` makes for `WantedBy=default.target`.
    #[must_use]
    pub fn unit_wanted(&self) -> PathBuf {
        self.config
            .join("systemd/user/default.target.wants")
            .join(UNIT)
    }

    #[must_use]
    pub fn desktop(&self) -> PathBuf {
        self.config.join("autostart").join(DESKTOP)
    }
}

/// Runs `systemctl --user ARGS`; `Ok(true)` on exit status 0. Tests pass fakes.
pub type Systemctl<'a> = dyn Fn(&[&str]) -> io::Result<bool> + 'a;

/// The real `systemctl --user`, quiet.
pub fn systemctl(args: &[&str]) -> io::Result<bool> {
    Ok(Command::new("systemctl")
        .arg("--user")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?
        .success())
}

/// Whether a systemd user session answers (`systemctl --user show-environment`).
fn has_user_systemd(systemctl: &Systemctl<'_>) -> bool {
    systemctl(&["show-environment"]).unwrap_or(false)
}

/// A template with this binary's path in place. The path is quoted for both systemd's
/// ExecStart and the desktop entry's Exec; characters those quotes would still interpret are
/// refused rather than escaped two different ways.
pub fn render(template: &str, binary: &Path) -> anyhow::Result<String> {
    let Some(text) = binary.to_str() else {
        bail!(
            "the host path {} is not UTF-8; move the binary to a folder with a plain name",
            binary.display()
        );
    };
    if !binary.is_absolute() {
        bail!("the host path {text} is not absolute");
    }
    if let Some(c) = text
        .chars()
        .find(|c| "\"\\`$%".contains(*c) || c.is_control())
    {
        bail!("the host path {text} contains {c:?}, which the unit and autostart formats would interpret; move the binary to a folder with a plain name");
    }
    Ok(template.replace(PLACEHOLDER, text))
}

/// What `enable` did.
#[derive(Debug, Clone, Serialize)]
pub struct Enabled {
    pub kind: Kind,
    #[serde(flatten, with = "crate::path_text::file")]
    pub file: PathBuf,
}

/// Install and enable the login-time preload for `binary`.
pub fn enable(dirs: &Dirs, binary: &Path, systemctl: &Systemctl<'_>) -> anyhow::Result<Enabled> {
    if has_user_systemd(systemctl) {
        let file = dirs.unit();
        write(&file, &render(UNIT_TEMPLATE, binary)?)?;
        systemctl(&["daemon-reload"]).context("running systemctl --user daemon-reload")?;
        if !systemctl(&["enable", UNIT]).context("running systemctl --user enable")? {
            bail!("systemctl --user enable {UNIT} failed; see `systemctl --user status {UNIT}`");
        }
        return Ok(Enabled {
            kind: Kind::Systemd,
            file,
        });
    }
    let file = dirs.desktop();
    write(&file, &render(DESKTOP_TEMPLATE, binary)?)?;
    Ok(Enabled {
        kind: Kind::Xdg,
        file,
    })
}

/// Disable and remove both forms; returns the files removed.
pub fn disable(dirs: &Dirs, systemctl: &Systemctl<'_>) -> anyhow::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let unit = dirs.unit();
    if unit.exists() && has_user_systemd(systemctl) {
        let _ = systemctl(&["disable", UNIT]);
    }
    for file in [dirs.unit_wanted(), unit, dirs.desktop()] {
        match std::fs::remove_file(&file) {
            Ok(()) => removed.push(file),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {}", file.display())),
        }
    }
    if removed.iter().any(|f| f.ends_with(UNIT)) && has_user_systemd(systemctl) {
        let _ = systemctl(&["daemon-reload"]);
    }
    Ok(removed)
}

/// Whether it is on, how, when it last ran, and the DAMON caveat where it applies. Reads files
/// only (no systemctl), so `plan_status` stays quick.
#[must_use]
pub fn status_in(dirs: &Dirs) -> Status {
    let state = StateDir::existing(&dirs.state).ok().flatten();
    status_with(dirs, state.as_ref())
}

fn status_with(dirs: &Dirs, state: Option<&StateDir>) -> Status {
    let kind = if dirs.unit_wanted().exists() {
        Some(Kind::Systemd)
    } else if dirs.desktop().is_file() {
        Some(Kind::Xdg)
    } else {
        None
    };
    let damon = damon_pageout_running(Path::new(KDAMONDS));
    Status {
        enabled: kind.is_some(),
        kind,
        last_run: state.and_then(last_run::read),
        damon_pageout: damon,
        note: damon.then(|| crate::note::Note::new(crate::note::DAMON_PAGEOUT).english()),
        note_code: damon.then_some(crate::note::DAMON_PAGEOUT),
    }
}

/// [`status_in`] for the state folder `state` and the config folder of the environment.
#[must_use]
pub fn status(state: &StateDir) -> Status {
    match Dirs::from_env() {
        Ok(dirs) => status_with(&dirs, Some(state)),
        Err(_) => Status {
            enabled: false,
            kind: None,
            last_run: last_run::read(state),
            note: None,
            damon_pageout: damon_pageout_running(Path::new(KDAMONDS)),
            note_code: None,
        },
    }
}

/// A running kdamond with a `pageout` scheme (the same test as scripts/lib/damon.mjs).
fn damon_pageout_running(admin: &Path) -> bool {
    let read = |p: PathBuf| std::fs::read_to_string(p).map(|s| s.trim().to_owned()).ok();
    let Ok(entries) = std::fs::read_dir(admin) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|d| {
        let dir = d.path();
        if read(dir.join("state")).as_deref() != Some("on") {
            return false;
        }
        let Ok(contexts) = std::fs::read_dir(dir.join("contexts")) else {
            return false;
        };
        contexts.filter_map(Result::ok).any(|c| {
            std::fs::read_dir(c.path().join("schemes")).is_ok_and(|schemes| {
                schemes
                    .filter_map(Result::ok)
                    .any(|s| read(s.path().join("action")).as_deref() == Some("pageout"))
            })
        })
    })
}

/// Atomically, never through a planted symlink, in a folder of this user's that nobody else
/// can write in (the state folder's rules, crate::state).
fn write(file: &Path, text: &str) -> anyhow::Result<()> {
    let (Some(folder), Some(name)) = (file.parent(), file.file_name().and_then(|n| n.to_str()))
    else {
        bail!("{} is not a file path", file.display());
    };
    StateDir::create_at(folder)?.write(name, text.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::pagecache::preload::Summary;

    fn dirs(root: &Path) -> Dirs {
        Dirs {
            config: root.join("config"),
            state: root.join("state"),
        }
    }

    #[test]
    fn templates_render_with_the_binary_path() {
        let unit = render(UNIT_TEMPLATE, Path::new("/opt/a b/about-startup-host")).unwrap();
        assert!(unit.contains("ExecStart=\"/opt/a b/about-startup-host\" preload --plan --idle"));
        assert!(
            unit.contains("IOSchedulingClass=idle") && unit.contains("WantedBy=default.target")
        );
        assert!(!unit.contains('@'));
        let desktop = render(DESKTOP_TEMPLATE, Path::new("/usr/bin/about-startup-host")).unwrap();
        assert!(desktop.contains("Exec=\"/usr/bin/about-startup-host\" preload --plan --idle"));
        // An entry left behind by a removed package does nothing (docs/design/package.md).
        assert!(desktop.contains("\nTryExec=/usr/bin/about-startup-host\n"));
        assert!(unit.contains("\nConditionPathExists=/opt/a b/about-startup-host\n"));
        for bad in [
            "relative/host",
            "/a/100%/host",
            "/a/$HOME/host",
            "/a/\"q\"/host",
        ] {
            assert!(render(UNIT_TEMPLATE, Path::new(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn without_systemd_the_xdg_entry_is_used_and_removed() {
        let root = tempfile::tempdir().unwrap();
        let d = dirs(root.path());
        let no_systemd = |_: &[&str]| Ok(false);
        let done = enable(&d, Path::new("/usr/bin/about-startup-host"), &no_systemd).unwrap();
        assert_eq!((done.kind, done.file.clone()), (Kind::Xdg, d.desktop()));
        let status = status_in(&d);
        assert_eq!((status.enabled, status.kind), (true, Some(Kind::Xdg)));
        assert!(status.last_run.is_none());
        assert_eq!(disable(&d, &no_systemd).unwrap(), [d.desktop()]);
        assert!(!status_in(&d).enabled);
    }

    #[test]
    fn with_systemd_the_unit_is_written_and_enabled() {
        let root = tempfile::tempdir().unwrap();
        let d = dirs(root.path());
        let calls = RefCell::new(Vec::new());
        // A fake systemctl: `enable` makes the link the real one would.
        let fake = |args: &[&str]| {
            calls.borrow_mut().push(args.join(" "));
            if args[0] == "enable" {
                std::fs::create_dir_all(d.unit_wanted().parent().unwrap())?;
                std::os::unix::fs::symlink(d.unit(), d.unit_wanted())?;
            }
            Ok(true)
        };
        let done = enable(&d, Path::new("/usr/bin/about-startup-host"), &fake).unwrap();
        assert_eq!(done.kind, Kind::Systemd);
        assert!(std::fs::read_to_string(d.unit())
            .unwrap()
            .contains("preload --plan --idle"));
        assert_eq!(status_in(&d).kind, Some(Kind::Systemd));
        let removed = disable(&d, &fake).unwrap();
        assert_eq!(removed, [d.unit_wanted(), d.unit()]);
        let calls = calls.borrow();
        assert!(
            calls.contains(&format!("enable {UNIT}")) && calls.contains(&format!("disable {UNIT}"))
        );
        assert!(!status_in(&d).enabled);
    }

    #[test]
    fn last_run_round_trips() {
        let root = tempfile::tempdir().unwrap();
        let d = dirs(root.path());
        let summary = Summary {
            files: 3,
            bytes: 1000,
            elapsed_ms: 7,
            mb_per_s: 0.1,
            method: crate::pagecache::preload::Method::Read,
            jobs: 1,
            idle: true,
            errors: Vec::new(),
            errors_omitted: 0,
            planned: true,
            bytes_planned: Some(1000),
            bytes_planned_system: Some(0),
            bytes_planned_install: Some(1000),
            bytes_planned_profile: None,
            profile_changed_files: None,
            bytes_install: 5000,
            order: None,
            pace: None,
            cache: crate::pagecache::Cache::Files,
            bytes_cached: None,
            compressed: None,
        };
        last_run::write(&StateDir::create_at(&d.state).unwrap(), &summary);
        let last = status_in(&d).last_run.unwrap();
        assert_eq!((last.bytes, last.elapsed_ms, last.planned), (1000, 7, true));
    }

    #[test]
    fn damon_pageout_is_detected_in_a_fake_sysfs() {
        let root = tempfile::tempdir().unwrap();
        let scheme = root.path().join("0/contexts/0/schemes/0");
        std::fs::create_dir_all(&scheme).unwrap();
        std::fs::write(root.path().join("0/state"), "on\n").unwrap();
        std::fs::write(scheme.join("action"), "pageout\n").unwrap();
        assert!(damon_pageout_running(root.path()));
        std::fs::write(root.path().join("0/state"), "off\n").unwrap();
        assert!(!damon_pageout_running(root.path()));
        assert!(!damon_pageout_running(&root.path().join("missing")));
    }
}
