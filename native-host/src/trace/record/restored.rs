//! Whether the recorded start reached sessionRestored, watched while it is recorded from what
//! Firefox writes itself (firefox::checkpoints: the profile's `sessionCheckpoints.json`), so
//! that a recording without the extension neither ends on a quiet moment before the session is
//! restored (a loaded machine: Firefox busy on the CPU for 3 s, reading nothing) nor stores a
//! start that never completed as one. The profile is the one the start uses: Firefox's
//! `-profile` argument, else the `.parentlock` its main process holds once it has locked it.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use crate::firefox::checkpoints::{self, Checkpoints};

/// How often the profile is looked at (a folder open and a read of a tiny file).
const EVERY: Duration = Duration::from_millis(250);

/// The watch of one start.
pub(super) struct Restored {
    pid: i32,
    /// The profile folder, once known.
    pub(super) profile: Option<PathBuf>,
    /// The launch (wall clock): checkpoints written before it are the session before's.
    since: SystemTime,
    pub(super) seen: Checkpoints,
    last: Option<Instant>,
    /// Whether to look at all (`trace --pid`: the start is over before the recording began).
    on: bool,
}

impl Restored {
    /// Not watched (`trace --pid`).
    pub(super) fn off() -> Restored {
        Restored {
            pid: 0,
            profile: None,
            since: SystemTime::UNIX_EPOCH,
            seen: Checkpoints::NotWritten,
            last: None,
            on: false,
        }
    }

    /// The start of Firefox `pid`, launched at `since`, in `profile` where the caller knows it.
    pub(super) fn watch(pid: i32, profile: Option<PathBuf>, since: SystemTime) -> Restored {
        Restored {
            pid,
            profile,
            since,
            seen: Checkpoints::NotWritten,
            last: None,
            on: true,
        }
    }

    /// Look again if it is time; what the profile says now.
    pub(super) fn poll(&mut self) -> Checkpoints {
        if !self.on
            || self.seen == Checkpoints::Restored
            || self.last.is_some_and(|l| l.elapsed() < EVERY)
        {
            return self.seen;
        }
        self.last = Some(Instant::now());
        if self.profile.is_none() {
            self.profile = crate::firefox::process::profile_dir(self.pid);
        }
        if let Some(profile) = &self.profile {
            self.seen = checkpoints::read(profile, self.since);
        }
        self.seen
    }

    /// Whether quiet may end the recording: not while the start is known to be under way (its
    /// checkpoints written, the session not restored yet), nor, where its profile folder is
    /// known, before its first checkpoint is written (a loaded machine: a start from a hot cache
    /// reads nothing and had not written its first checkpoint 3 s in; the recording ended with
    /// Firefox's parent alone, and the profile asked of it then never came or had no child
    /// process). Where nothing can be known (no profile folder) quiet ends it as it always did;
    /// a start that never writes one ends by the recording's limit or Firefox's exit.
    pub(super) fn quiet_may_end(&mut self) -> bool {
        match self.poll() {
            Checkpoints::Started => false,
            Checkpoints::NotWritten => !(self.on && self.profile.is_some()),
            Checkpoints::Restored => true,
        }
    }

    /// What the trace keeps: `Some(true)` restored, `Some(false)` the start got to its profile
    /// and never restored the session, `None` unknown (not watched, or nothing written).
    pub(super) fn reached(&mut self) -> Option<bool> {
        self.last = None;
        match self.poll() {
            Checkpoints::Restored => Some(true),
            Checkpoints::Started => Some(false),
            Checkpoints::NotWritten => None,
        }
    }
}
