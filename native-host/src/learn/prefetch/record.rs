//! `last-prefetch.json` in the state folder: what the last launch prefetch did (one small file,
//! replaced at each launch). The page shows it beside the desktop entry's state; the benchmark
//! reads it after each `launch-prefetch` run.

use serde::{Deserialize, Serialize};

use super::run::Outcome;
use super::strategy::Strategy;
use super::PrefetchStatus;
use crate::state::StateDir;

pub const LAST_PREFETCH_FILE: &str = "last-prefetch.json";
/// A record larger than this is not ours (it holds at most 20 short errors).
const MAX_BYTES: u64 = 64 * 1024;

/// One launch's prefetch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LastPrefetch {
    /// Wall clock (ms since the epoch) when the launch began.
    pub at_ms: u64,
    /// The Firefox process it prefetched for.
    pub firefox_pid: i32,
    /// Which plan, and why not the traced one.
    pub plan: PrefetchStatus,
    pub bytes_planned: u64,
    /// ms from the launch to the plan being ready (the prefetcher starts reading then).
    pub plan_ms: u64,
    /// Beside the start, or first (absent in records of an older host: beside).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
    /// The readahead window of the disk holding Firefox, KiB, when known (why `first`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u64>,
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The user's profile in the plan: its bytes and files, what changed since the traces and
    /// was skipped, or why it was left out (learn/plan/profile.rs); absent where the plan says
    /// nothing of a profile (the learned plan, an older host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::learn::plan::profile::ProfilePlan>,
    /// Set when the plan could not be made (the launch went on without a prefetch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// The install is on a compressed mount (firefox/compressed/): what the prefetch did there
    /// (read the image's ranges, or left off and why); absent for a plain install.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compressed: Option<crate::firefox::compressed::Compressed>,
    /// What the image prefetch mapped and read (learn/prefetch/image/mod.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_read: Option<super::image::ImageOutcome>,
}

/// How long after a process began its launch may have begun and still be its own: the
/// launcher is the very process that becomes Firefox, so its record's `at_ms` follows the
/// process start by the time it takes to read its arguments; a record from a process that got
/// the same pid later is further off.
const SAME_START_MS: u64 = 60_000;

impl LastPrefetch {
    /// What this prefetch did for the start of Firefox `pid` begun at `started_at_ms` (whose
    /// clock tick is 10 ms), or `None` when the record is of another start (another pid, or the
    /// same pid reused), failed, or had nothing to read.
    #[must_use]
    pub fn for_start(
        &self,
        pid: i32,
        started_at_ms: u64,
    ) -> Option<crate::firefox::process::Prefetched> {
        let ours = self.firefox_pid == pid
            && self.at_ms + 1000 >= started_at_ms
            && self.at_ms <= started_at_ms + SAME_START_MS;
        (ours && self.failed.is_none() && self.plan.source.is_some()).then(|| {
            crate::firefox::process::Prefetched {
                at_ms: self.at_ms,
                strategy: self.strategy.map(|s| match s {
                    Strategy::First => "first".to_owned(),
                    Strategy::Beside => "beside".to_owned(),
                }),
                bytes_planned: self.bytes_planned,
                bytes_read: self.outcome.bytes_read,
                bytes_cached: self.outcome.bytes_cached,
            }
        })
    }
}

/// The last record in the state folder, if there is a readable one (bounded, never through a
/// symlink or from a FIFO: state/dir.rs).
#[must_use]
pub fn read(state: &StateDir) -> Option<LastPrefetch> {
    serde_json::from_slice(&state.read(LAST_PREFETCH_FILE, MAX_BYTES).ok()??).ok()
}

/// [`read`] for the readers that report to someone (the desktop status, on the page and in
/// the CLI): a file that is not a record is set aside as `last-prefetch.json.corrupt.<ms>`, and
/// the note says so (crate::state::aside).
pub fn read_or_set_aside(state: &StateDir) -> (Option<LastPrefetch>, Option<crate::note::Note>) {
    crate::state::aside::read_or_set_aside(state, LAST_PREFETCH_FILE, MAX_BYTES, |b| {
        serde_json::from_slice(b).ok()
    })
}

/// Replace the record (best effort: a read-only state folder must not matter to a launch).
pub fn write(state: &StateDir, record: &LastPrefetch) {
    if let Ok(bytes) = serde_json::to_vec(record) {
        let _ = state.write(LAST_PREFETCH_FILE, &bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_a_foreign_file_reads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::create_at(dir.path()).unwrap();
        assert_eq!(read(&state), None);
        let record = LastPrefetch {
            at_ms: 1,
            firefox_pid: 42,
            plan: PrefetchStatus {
                source: Some(super::super::Source::Trace),
                build_id: Some("2026".into()),
                traces: 3,
                fallback: None,
                learned_stale: false,
            },
            bytes_planned: 100,
            plan_ms: 5,
            strategy: Some(Strategy::First),
            read_ahead_kb: Some(8192),
            outcome: Outcome {
                bytes_read: 60,
                bytes_cached: 40,
                ..Outcome::default()
            },
            profile: Some(crate::learn::plan::profile::ProfilePlan {
                bytes: 30,
                files: 2,
                ..Default::default()
            }),
            failed: None,
            // A Snap's: left off, and why (round-trips with its paths and codes).
            compressed: Some(crate::firefox::compressed::judge(
                &crate::firefox::compressed::Facts {
                    format: crate::firefox::compressed::Format::Squashfs,
                    mount_point: "/snap/firefox/5000".into(),
                    image: Some("/var/lib/snapd/snaps/firefox_5000.snap".into()),
                    direct_io: false,
                    access: crate::firefox::compressed::Access::NotReadable,
                    rdsquashfs: true,
                },
            )),
            image_read: Some(super::super::image::ImageOutcome {
                files_mapped: 2,
                bytes_image_planned: 9,
                ..Default::default()
            }),
        };
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["compressed"]["left_off"], "image_not_readable");
        assert_eq!(json["compressed"]["access"]["code"], "not_readable");
        assert_eq!(
            json["compressed"]["image"],
            "/var/lib/snapd/snaps/firefox_5000.snap"
        );
        assert_eq!(json["compressed"]["mount_point"], "/snap/firefox/5000");
        write(&state, &record);
        assert_eq!(read(&state), Some(record));
        std::fs::write(dir.path().join(LAST_PREFETCH_FILE), vec![b' '; 100_000]).unwrap();
        assert_eq!(read(&state), None);
        std::fs::remove_file(dir.path().join(LAST_PREFETCH_FILE)).unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.path().join(LAST_PREFETCH_FILE)).unwrap();
        assert_eq!(read(&state), None);
    }

    /// Issue 39 #1: `evict; launch --prefetch` was filed as a cold start. The record names the
    /// start it read for (pid, when the launch began); any other start, a failed prefetch or one
    /// with nothing to read is not prefetched.
    #[test]
    fn a_record_belongs_to_the_start_of_its_pid_and_time_only() {
        let record = LastPrefetch {
            at_ms: 1_000_250,
            firefox_pid: 42,
            plan: PrefetchStatus {
                source: Some(super::super::Source::Trace),
                build_id: Some("2026".into()),
                traces: 1,
                fallback: None,
                learned_stale: false,
            },
            bytes_planned: 207_900_000,
            plan_ms: 5,
            strategy: Some(Strategy::First),
            read_ahead_kb: None,
            outcome: Outcome {
                bytes_read: 207_000_000,
                bytes_cached: 900_000,
                ended: Some(super::super::run::Ended::Done),
                ..Outcome::default()
            },
            profile: None,
            failed: None,
            compressed: None,
            image_read: None,
        };
        let mine = record.for_start(42, 1_000_000).expect("its own start");
        assert_eq!(
            (
                mine.strategy.as_deref(),
                mine.bytes_read,
                mine.bytes_cached,
                mine.bytes_planned
            ),
            (Some("first"), 207_000_000, 900_000, 207_900_000)
        );
        assert_eq!(record.for_start(43, 1_000_000), None, "another pid");
        assert_eq!(
            record.for_start(42, 5_000_000),
            None,
            "the pid reused later"
        );
        assert_eq!(
            record.for_start(42, 900_000),
            None,
            "a start long before the launch"
        );
        let failed = LastPrefetch {
            failed: Some("no plan".into()),
            ..record.clone()
        };
        assert_eq!(failed.for_start(42, 1_000_000), None);
        let nothing = LastPrefetch {
            plan: PrefetchStatus {
                source: None,
                ..record.plan.clone()
            },
            ..record.clone()
        };
        assert_eq!(nothing.for_start(42, 1_000_000), None);
    }
}
