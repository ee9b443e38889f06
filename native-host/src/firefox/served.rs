//! Which Firefox the host serves when its parent is not Firefox. A Snap or Flatpak Firefox
//! reaches native hosts through the desktop portal (xdg-desktop-portal starts the host), so
//! `getppid()` names the portal, not Firefox. Then the extension's word (`hello`'s `browser`:
//! version, build ID, optionally the profile folder) is matched against this user's running
//! Firefox main processes: each one's `application.ini` (beside `/proc/<pid>/exe`) and profile
//! (`process::profile_dir`: the `.parentlock` it holds open, else `-profile`).
//!
//! [`match_served`] is a pure function over a process table ([`ProcEntry`]), so the unit tests
//! pass a made-up one; [`process_table`] reads the real one.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::firefox::{app_ini, process};
use crate::os::proc;

/// What the extension says about the Firefox it runs in (`hello`'s `browser`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct BrowserHint {
    /// `runtime.getBrowserInfo().version`, e.g. "153.7.0".
    #[serde(default)]
    pub version: Option<String>,
    /// `runtime.getBrowserInfo().buildID`, e.g. "20261103151912".
    #[serde(default)]
    pub build_id: Option<String>,
    /// The profile folder, where the extension knows it (full mode).
    #[serde(default)]
    pub profile: Option<PathBuf>,
}

/// One process of the table [`match_served`] looks at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcEntry {
    pub pid: i32,
    pub ppid: i32,
    /// The owner (real uid of /proc/<pid>): only the host's own user's Firefox is served.
    pub uid: u32,
    /// Whether its executable is a Firefox's (application.ini beside it).
    pub firefox: bool,
    pub version: Option<String>,
    pub build_id: Option<String>,
    /// Its profile folder, where known.
    pub profile: Option<PathBuf>,
    /// A content/utility process (`-contentproc` on its command line): never the one served.
    pub child_process: bool,
}

/// How the served Firefox was found, or why it was not (a code for programs and translators).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Found {
    /// The parent process is Firefox (native messaging straight from Firefox).
    Parent,
    /// The parent is not Firefox; one running Firefox matched what the extension said.
    Matched,
    /// The parent is not Firefox and the extension said nothing to match (no `browser` in hello).
    NoHint,
    /// No running Firefox of this user matched.
    NoMatch,
    /// Several matched and nothing told them apart (send `browser.profile`).
    Ambiguous,
}

/// The outcome of [`match_served`]: the pid, and the words for `hello`'s `firefox_found`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub found: Found,
    pub pid: Option<i32>,
    /// What was compared, or why nothing matched, in English (the CLI and the log).
    pub detail: String,
    /// The matching main processes: one for `Matched`, several for `Ambiguous`, else none (with
    /// `found` and `candidates`, what the extension words instead of `detail`).
    pub pids: Vec<i32>,
    /// How many of this user's Firefox main processes were looked at.
    pub candidates: usize,
}

/// The Firefox main process of user `uid` in `procs` that matches `hint`: same build ID and
/// version (where the hint has them), and the same profile folder where the hint names one. A
/// main process is a Firefox process whose parent is not a Firefox process and which is not a
/// content process.
#[must_use]
pub fn match_served(procs: &[ProcEntry], hint: &BrowserHint, uid: u32) -> Outcome {
    let is_firefox = |pid: i32| procs.iter().any(|p| p.pid == pid && p.firefox);
    let mains: Vec<&ProcEntry> = procs
        .iter()
        .filter(|p| p.firefox && p.uid == uid && !p.child_process && !is_firefox(p.ppid))
        .collect();
    let candidates = mains.len();
    if hint.version.is_none() && hint.build_id.is_none() && hint.profile.is_none() {
        return Outcome {
            found: Found::NoHint,
            pid: None,
            detail: "the host's parent process is not Firefox (a Snap or Flatpak starts hosts \
                     through the desktop portal) and the extension sent no version, build ID or \
                     profile to find it by"
                .into(),
            pids: Vec::new(),
            candidates,
        };
    }
    let same = |want: &Option<String>, have: &Option<String>| {
        want.as_ref().is_none_or(|w| have.as_ref() == Some(w))
    };
    let matching: Vec<&ProcEntry> = mains
        .iter()
        .copied()
        .filter(|p| same(&hint.version, &p.version) && same(&hint.build_id, &p.build_id))
        .filter(|p| {
            hint.profile
                .as_ref()
                .is_none_or(|want| p.profile.as_ref().is_some_and(|have| same_dir(want, have)))
        })
        .collect();
    let wanted = describe_hint(hint);
    match matching.as_slice() {
        [one] => Outcome {
            found: Found::Matched,
            pid: Some(one.pid),
            detail: format!("process {} matched {wanted}", one.pid),
            pids: vec![one.pid],
            candidates,
        },
        [] => Outcome {
            found: Found::NoMatch,
            pid: None,
            detail: format!(
                "the host's parent process is not Firefox, and none of your {candidates} running \
                 Firefox main process(es) matched {wanted} (a Snap's or Flatpak's processes may \
                 be hidden from the host by its sandbox)"
            ),
            pids: Vec::new(),
            candidates,
        },
        several => Outcome {
            found: Found::Ambiguous,
            pid: None,
            detail: format!(
                "the host's parent process is not Firefox, and {} running Firefox processes \
                 ({}) matched {wanted}: the profile folder would tell them apart",
                several.len(),
                several
                    .iter()
                    .map(|p| p.pid.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            pids: several.iter().map(|p| p.pid).collect(),
            candidates,
        },
    }
}

fn describe_hint(hint: &BrowserHint) -> String {
    let mut parts = Vec::new();
    if let Some(v) = &hint.version {
        parts.push(format!("version {v}"));
    }
    if let Some(b) = &hint.build_id {
        parts.push(format!("build {b}"));
    }
    if let Some(p) = &hint.profile {
        parts.push(format!("profile {}", p.display()));
    }
    parts.join(", ")
}

/// Two profile paths name the same folder: equal as given, or equal once resolved.
#[must_use]
pub fn same_dir(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// This system's process table, as much of it as this user may read.
#[must_use]
pub fn process_table() -> Vec<ProcEntry> {
    proc::pids()
        .into_iter()
        .filter_map(|pid| {
            let stat = proc::stat(pid)?;
            let uid = proc::owner(pid)?;
            let mut entry = ProcEntry {
                pid,
                ppid: stat.ppid,
                uid,
                ..ProcEntry::default()
            };
            let Ok(exe) = proc::exe(pid) else {
                return Some(entry);
            };
            entry.firefox = process::is_firefox_exe(&exe);
            if !entry.firefox {
                return Some(entry);
            }
            entry.child_process = is_child_process(pid);
            let (version, build_id) = exe.parent().map(app_ini::read).unwrap_or_default();
            entry.version = version;
            entry.build_id = build_id;
            entry.profile = process::profile_dir(pid);
            Some(entry)
        })
        .collect()
}

/// Whether process `pid` is a content or utility process (`-contentproc` among its arguments).
fn is_child_process(pid: i32) -> bool {
    proc::cmdline(pid).is_ok_and(|b| b.split(|c| *c == 0).any(|a| a == b"-contentproc"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn firefox(pid: i32, ppid: i32, build: &str, profile: &str) -> ProcEntry {
        ProcEntry {
            pid,
            ppid,
            uid: 1000,
            firefox: true,
            version: Some("153.7.0".into()),
            build_id: Some(build.into()),
            profile: Some(profile.into()),
            child_process: false,
        }
    }

    fn table() -> Vec<ProcEntry> {
        let portal = ProcEntry {
            pid: 50,
            ppid: 1,
            uid: 1000,
            ..ProcEntry::default()
        };
        let content = ProcEntry {
            child_process: true,
            ..firefox(101, 100, "20261103151912", "/p/a")
        };
        let others = ProcEntry {
            uid: 1001,
            ..firefox(300, 1, "20261103151912", "/home/bob/p")
        };
        vec![
            portal,
            firefox(100, 1, "20261103151912", "/p/a"),
            content,
            firefox(200, 1, "20250101000000", "/p/old"),
            others,
        ]
    }

    fn hint(build: Option<&str>, profile: Option<&str>) -> BrowserHint {
        BrowserHint {
            version: Some("153.7.0".into()),
            build_id: build.map(Into::into),
            profile: profile.map(Into::into),
        }
    }

    #[test]
    fn the_build_id_picks_the_main_process_of_this_user() {
        let out = match_served(&table(), &hint(Some("20261103151912"), None), 1000);
        assert_eq!((out.found, out.pid), (Found::Matched, Some(100)));
        // Content process 101 and bob's 300 share the build but are not candidates.
        assert_eq!(out.candidates, 2);
        let old = match_served(&table(), &hint(Some("20250101000000"), None), 1000);
        assert_eq!(old.pid, Some(200));
    }

    #[test]
    fn several_matches_need_the_profile() {
        let mut procs = table();
        procs.push(firefox(400, 1, "20261103151912", "/p/b"));
        let out = match_served(&procs, &hint(Some("20261103151912"), None), 1000);
        assert_eq!((out.found, out.pid), (Found::Ambiguous, None));
        assert!(out.detail.contains("100, 400"), "{}", out.detail);
        assert_eq!(out.pids, [100, 400]);
        let out = match_served(&procs, &hint(Some("20261103151912"), Some("/p/b")), 1000);
        assert_eq!((out.found, out.pid), (Found::Matched, Some(400)));
    }

    #[test]
    fn no_match_and_no_hint_say_so() {
        let out = match_served(&table(), &hint(Some("19990101000000"), None), 1000);
        assert_eq!((out.found, out.pid), (Found::NoMatch, None));
        assert!(
            out.detail.contains("build 19990101000000"),
            "{}",
            out.detail
        );
        // Bob's Firefox is never served to user 1000, even when it alone would match.
        let out = match_served(&table(), &hint(None, Some("/home/bob/p")), 1000);
        assert_eq!(out.found, Found::NoMatch);
        let out = match_served(&table(), &BrowserHint::default(), 1000);
        assert_eq!((out.found, out.pid), (Found::NoHint, None));
        assert!(out.detail.contains("portal"), "{}", out.detail);
    }

    #[test]
    fn the_real_table_reads() {
        let me = std::process::id() as i32;
        assert!(process_table().iter().any(|p| p.pid == me));
    }
}
