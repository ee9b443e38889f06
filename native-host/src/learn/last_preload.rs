//! `last-preload.json` in the state folder: the last preload of Firefox's files (the page's or
//! the popup's Preload, `preload`, `preload --plan`, the login preload), so that the start that
//! follows it is recorded `preloaded` (issue 39: a start's class is a fact recorded with the
//! start; a start after a preload read little from disk and was filed "hot", pulling the hot
//! starts' mean).
//!
//! The rule, one for the CLI, the host and the page: a start is **preloaded** when the last
//! preload read the install it runs from, of the same build, in this boot, ended before the
//! start's process began, no evict came after it (every evict of the host forgets the record:
//! `launch --cold`, "Restart cold", `evict`), and no earlier start claimed it. The first start asked about claims
//! it (its pid and start time are written into the record), so only the next start after a
//! preload is preloaded, and asking again about that start gives the same answer.

use serde::{Deserialize, Serialize};

use crate::firefox::process::Preloaded;
use crate::state::StateDir;

pub const LAST_PRELOAD_FILE: &str = "last-preload.json";
/// A record larger than this is not ours (a few numbers, a path and two ids).
const MAX_BYTES: u64 = 16 * 1024;
/// The process start is known to the clock tick (10 ms): a preload that ended within it of the
/// start is taken to have ended before it.
const TICK_MS: u64 = 10;

/// The start that claimed a preload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    pub pid: i32,
    pub started_at_ms: u64,
}

/// One preload of Firefox's files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastPreload {
    /// Wall clock (ms since the epoch) when the preload ended.
    pub at_ms: u64,
    /// The boot it ran in (`/proc/sys/kernel/random/boot_id`).
    pub boot_id: Option<String>,
    /// The install folder it read (canonical), and its build.
    pub install_dir: String,
    pub build_id: Option<String>,
    /// Bytes it read (cached ones included), and whether it read the plan (else the whole
    /// folder).
    pub bytes: u64,
    pub planned: bool,
    /// The start that claimed it, once one has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_by: Option<Claim>,
}

/// The start a record is asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start<'a> {
    pub pid: i32,
    pub started_at_ms: u64,
    pub install_dir: &'a str,
    pub build_id: Option<&'a str>,
    pub boot_id: Option<&'a str>,
}

impl LastPreload {
    /// Whether `start` follows this preload by the rule above, and the claim to write when it
    /// does and none is written yet. Pure.
    #[must_use]
    pub fn for_start(&self, start: &Start) -> (Option<Preloaded>, Option<Claim>) {
        let claim = Claim {
            pid: start.pid,
            started_at_ms: start.started_at_ms,
        };
        let same_boot = self.boot_id.is_some() && self.boot_id.as_deref() == start.boot_id;
        let follows = same_boot
            && self.install_dir == start.install_dir
            && self.build_id.as_deref() == start.build_id
            && self.at_ms <= start.started_at_ms + TICK_MS;
        let preloaded = Preloaded {
            at_ms: self.at_ms,
            bytes: self.bytes,
            planned: self.planned,
        };
        match &self.claimed_by {
            Some(c) if *c == claim => (follows.then_some(preloaded), None),
            Some(_) => (None, None),
            None if follows => (Some(preloaded), Some(claim)),
            None => (None, None),
        }
    }
}

/// Record a preload of `install_dir` that read `bytes` (best effort: a read-only state folder
/// must not fail the preload itself).
pub fn write(state: &StateDir, install_dir: &std::path::Path, bytes: u64, planned: bool) {
    let dir = install_dir
        .canonicalize()
        .unwrap_or_else(|_| install_dir.to_path_buf());
    let (_, build_id) = crate::firefox::app_ini::read(&dir);
    let record = LastPreload {
        at_ms: crate::os::clock::now_ms(),
        boot_id: crate::os::proc::boot_id(),
        install_dir: dir.to_string_lossy().into_owned(),
        build_id,
        bytes,
        planned,
        claimed_by: None,
    };
    save(state, &record);
}

fn save(state: &StateDir, record: &LastPreload) {
    if let Ok(bytes) = serde_json::to_vec(record) {
        let _ = state.write(LAST_PRELOAD_FILE, &bytes);
    }
}

/// Forget the last preload: an evict undid it (best effort, as [`write`]).
pub fn forget(state: &StateDir) {
    let _ = state.remove(LAST_PRELOAD_FILE);
}

/// [`forget`] in the user's state folder, where there is one.
pub fn forget_here() {
    if let Ok(state) = crate::state::open() {
        forget(&state);
    }
}

/// The last preload recorded in `state`, if any, readable and well-formed.
#[must_use]
pub fn read(state: &StateDir) -> Option<LastPreload> {
    serde_json::from_slice(&state.read(LAST_PRELOAD_FILE, MAX_BYTES).ok()??).ok()
}

/// Whether the Firefox start `start` follows the last preload (the rule above); the first start
/// asked about claims it, in the record.
pub fn claim(state: &StateDir, start: &Start) -> Option<Preloaded> {
    let mut record = read(state)?;
    let (preloaded, claim) = record.for_start(start);
    if let Some(claim) = claim {
        record.claimed_by = Some(claim);
        save(state, &record);
    }
    preloaded
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOT: &str = "6c1e5f8a-1d2b-4c3d-9e8f-0a1b2c3d4e5f";

    fn record() -> LastPreload {
        LastPreload {
            at_ms: 1_000_000,
            boot_id: Some(BOOT.into()),
            install_dir: "/usr/lib/firefox-esr".into(),
            build_id: Some("20261201120000".into()),
            bytes: 193_500_000,
            planned: true,
            claimed_by: None,
        }
    }

    fn start(pid: i32, started_at_ms: u64) -> Start<'static> {
        Start {
            pid,
            started_at_ms,
            install_dir: "/usr/lib/firefox-esr",
            build_id: Some("20261201120000"),
            boot_id: Some(BOOT),
        }
    }

    /// The next start after a preload is preloaded and claims it; the same start asked again
    /// stays preloaded; the start after it is not.
    #[test]
    fn only_the_next_start_after_a_preload_is_preloaded() {
        let mut last = record();
        let (preloaded, claim) = last.for_start(&start(42, 1_060_000));
        assert_eq!(
            preloaded,
            Some(Preloaded {
                at_ms: 1_000_000,
                bytes: 193_500_000,
                planned: true
            })
        );
        last.claimed_by = claim;
        assert_eq!(
            last.for_start(&start(42, 1_060_000)),
            (preloaded.clone(), None),
            "the same start, asked again"
        );
        assert_eq!(
            last.for_start(&start(43, 2_000_000)),
            (None, None),
            "the start after"
        );
    }

    #[test]
    fn a_start_of_another_build_install_or_boot_or_one_before_the_preload_ended_is_not() {
        let last = record();
        let running = start(42, 990_000);
        assert_eq!(
            last.for_start(&running),
            (None, None),
            "the Firefox that ran while it preloaded"
        );
        let mut other = start(42, 1_060_000);
        other.build_id = Some("20261103151912");
        assert_eq!(
            last.for_start(&other),
            (None, None),
            "another build (updated since)"
        );
        let mut other = start(42, 1_060_000);
        other.install_dir = "/opt/firefox";
        assert_eq!(last.for_start(&other), (None, None), "another install");
        let mut other = start(42, 1_060_000);
        other.boot_id = Some("another-boot");
        assert_eq!(last.for_start(&other), (None, None), "after a reboot");
        let mut unknown = record();
        unknown.boot_id = None;
        assert_eq!(
            unknown.for_start(&start(42, 1_060_000)),
            (None, None),
            "boot unknown"
        );
    }

    /// The record a real `preload` wrote (tests/fixtures/host/last-preload.json) reads, and
    /// names the next start of its install and build in its boot, in the `firefox` reply's
    /// words (the unit tests' fake of `preloaded` is made from the same file).
    #[test]
    fn the_recorded_record_reads_and_names_the_next_start() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/host/last-preload.json"
        ))
        .unwrap();
        let fixture: serde_json::Value = serde_json::from_str(&text).unwrap();
        let last: LastPreload = serde_json::from_value(fixture["reply"].clone()).unwrap();
        let start = Start {
            pid: 4242,
            started_at_ms: last.at_ms + 60_000,
            install_dir: &last.install_dir,
            build_id: last.build_id.as_deref(),
            boot_id: last.boot_id.as_deref(),
        };
        let (preloaded, claim) = last.for_start(&start);
        assert!(claim.is_some());
        assert_eq!(
            serde_json::to_value(preloaded).unwrap(),
            serde_json::json!({
                "at_ms": fixture["reply"]["at_ms"],
                "bytes": fixture["reply"]["bytes"],
                "planned": fixture["reply"]["planned"],
            })
        );
    }

    #[test]
    fn the_record_is_claimed_in_the_state_folder() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::create_at(dir.path()).unwrap();
        assert_eq!(claim(&state, &start(42, 1_060_000)), None, "no record");
        save(&state, &record());
        assert!(claim(&state, &start(42, 1_060_000)).is_some());
        assert_eq!(
            read(&state).unwrap().claimed_by,
            Some(Claim {
                pid: 42,
                started_at_ms: 1_060_000
            })
        );
        assert!(
            claim(&state, &start(42, 1_060_000)).is_some(),
            "asked again"
        );
        assert_eq!(claim(&state, &start(43, 2_000_000)), None);
        save(&state, &record());
        forget(&state);
        assert_eq!(
            claim(&state, &start(42, 1_060_000)),
            None,
            "an evict came after it"
        );
        std::fs::write(dir.path().join(LAST_PRELOAD_FILE), b"{\"at_ms\": 1").unwrap();
        assert_eq!(read(&state), None, "a damaged record is no preload");
    }
}
