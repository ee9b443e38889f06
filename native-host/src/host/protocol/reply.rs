//! What the host sends: the envelope of every reply, event and error, and the typed replies.

use crate::firefox::kind::InstallKind;
use crate::firefox::process::FirefoxInfo;
use crate::firefox::served::Found;
use crate::host::protocol::ReplyError;
use crate::learn::{plan, workingset};
use crate::pagecache::residency::{Capabilities, FileReport};
use crate::pagecache::{evict, preload, residency};
use serde::Serialize;
use std::path::PathBuf;

/// Every host → browser message: `{"id", "status", …}` (docs/PROTOCOL.md, "one envelope").
#[derive(Debug, Clone, Serialize)]
pub struct Envelope {
    /// `None` (`null`) when the request's own id could not be read.
    pub id: Option<u64>,
    #[serde(flatten)]
    pub body: Body,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Body {
    /// Success: the request's final message. Boxed: a reply (the install's kind with its
    /// compressed mount, the last prefetch) is several times an event's size, and every event
    /// of a long command would carry that size otherwise.
    Ok { data: Box<Reply> },
    /// Failure: also final.
    Error(ReplyError),
    /// Progress while a long command runs; zero or more before the final message.
    Event(Event),
}

/// A success's `data`, one variant per command. Untagged: `data` is the command's object as it
/// is, since the sender knows the command from the `id`.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Reply {
    Hello(Hello),
    Firefox(FirefoxInfo),
    Residency(residency::Summary),
    Preload(preload::Summary),
    Evict(evict::Summary),
    Cancel(Cancelled),
    BenchRecord(BenchWritten),
    Learn(workingset::LearnSummary),
    PlanStatus(Box<plan::PlanStatus>),
    TraceList(crate::trace::store::Listing),
    TraceFetch(crate::trace::store::Chunk),
    TraceSummary(Box<crate::trace::summary::Summary>),
    TraceUpload(crate::host::imports::Uploaded),
    TraceProfile(Box<crate::export::StoredExport>),
    TraceProfileFetch(crate::trace::store::Chunk),
    Telemetry(crate::firefox::telemetry::Archive),
    Desktop(Box<crate::learn::desktop::DesktopStatus>),
    Relaunch(Relaunching),
    RelaunchStatus(Box<LastRelaunch>),
    Autostart(crate::learn::autostart::Status),
}

/// `relaunch`'s reply: the detached helper runs; Firefox may quit now.
#[derive(Debug, Clone, Serialize)]
pub struct Relaunching {
    pub helper_pid: u32,
    pub firefox_pid: i32,
    pub cold: bool,
    pub trace: bool,
}

/// `relaunch_status`'s reply.
#[derive(Debug, Clone, Serialize)]
pub struct LastRelaunch {
    pub last: Option<crate::relaunch::status::Status>,
    /// Whether "Restart cold and trace" can run from the page here (pkexec, the polkit action,
    /// a system-wide host, an agent), and the command to run otherwise.
    pub trace_ready: crate::launch::connect::Readiness,
    /// What the page must say: `relaunch.json` was damaged and set aside by this request
    /// (crate::state::aside); absent when empty (appended).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub note_codes: Vec<crate::note::Note>,
}

/// Most entries a list of a final reply carries (`evict`'s `files`, `preload`'s `errors`,
/// `plan_status`'s `changed_files` and `uncached_files`); the rest is counted in `*_omitted`.
pub const MAX_LIST_ENTRIES: usize = 1000;
/// Most bytes of paths such a list carries, whatever the count: with at most two lists per reply
/// and a few hundred bytes of other fields per entry, a reply stays well under 1 MiB.
pub const MAX_LIST_PATH_BYTES: usize = 256 * 1024;

impl Reply {
    /// The reply with its per-file lists cut to [`MAX_LIST_ENTRIES`] entries and
    /// [`MAX_LIST_PATH_BYTES`] of paths, first entries kept, the rest counted in the matching
    /// `*_omitted` field. Residency needs none: it streams one `file` event per file.
    #[must_use]
    pub fn bounded(self) -> Self {
        match self {
            Reply::Preload(mut s) => {
                s.errors_omitted += bound(&mut s.errors, |e| &e.path);
                Reply::Preload(s)
            }
            Reply::Evict(mut s) => {
                s.files_omitted += bound(&mut s.files, |f| &f.path);
                Reply::Evict(s)
            }
            Reply::PlanStatus(mut s) => {
                s.changed_files_omitted += bound(&mut s.changed_files, |p| p);
                if let Some(list) = s.uncached_files.as_mut() {
                    s.uncached_files_omitted += bound(list, |u| &u.path);
                }
                Reply::PlanStatus(s)
            }
            other => other,
        }
    }
}

/// Keep the first entries of `list` within [`MAX_LIST_ENTRIES`] and [`MAX_LIST_PATH_BYTES`] of
/// paths; returns how many were dropped.
fn bound<T>(list: &mut Vec<T>, path: impl Fn(&T) -> &std::path::Path) -> u64 {
    let mut bytes = 0usize;
    let keep = list
        .iter()
        .take(MAX_LIST_ENTRIES)
        .take_while(|e| {
            bytes += path(e).as_os_str().len();
            bytes <= MAX_LIST_PATH_BYTES
        })
        .count();
    let dropped = list.len() - keep;
    list.truncate(keep);
    dropped as u64
}

/// An event of a long command, as `"event": <name>, "data": {…}` in the envelope.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum Event {
    /// One file of `residency`.
    File(FileReport),
    /// `preload` progress.
    Progress(preload::Progress),
}

impl Envelope {
    #[must_use]
    pub fn ok(id: u64, data: Reply) -> Self {
        Envelope {
            id: Some(id),
            body: Body::Ok {
                data: Box::new(data),
            },
        }
    }

    #[must_use]
    pub fn error(id: Option<u64>, error: ReplyError) -> Self {
        Envelope {
            id,
            body: Body::Error(error),
        }
    }

    #[must_use]
    pub fn event(id: u64, event: Event) -> Self {
        Envelope {
            id: Some(id),
            body: Body::Event(event),
        }
    }

    /// Whether this is the last message of its request.
    #[must_use]
    pub fn is_final(&self) -> bool {
        !matches!(self.body, Body::Event(_))
    }
}

/// `hello`'s data.
#[derive(Debug, Clone, Serialize)]
pub struct Hello {
    pub host_version: &'static str,
    pub protocol_version: u32,
    #[serde(flatten)]
    pub capabilities: Capabilities,
    pub firefox_pid: Option<i32>,
    /// The kind of the install the host serves, `null` without one (appended: fields are only
    /// added at the end).
    pub install_kind: Option<InstallKind>,
    /// How the served Firefox was found (its parent, or matched from `browser`), or why not.
    pub firefox_found: FirefoxFound,
    /// How this user runs this binary from a shell, and how as root (appended): the page prints
    /// its commands with these, so they run as printed.
    pub cli: crate::invocation::Invocation,
}

/// `hello`'s `firefox_found`. `how` is the code to word; with `candidates` and `pids` it says
/// what `detail` says in English (kept for the CLI's log and older extensions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FirefoxFound {
    pub how: Found,
    /// English: what was compared, or why nothing matched.
    pub detail: Option<String>,
    /// This user's running Firefox main processes looked at (only when matching was tried).
    pub candidates: Option<usize>,
    /// The processes that matched: one for `matched`, several for `ambiguous`, else none
    /// (appended: fields are only added at the end).
    pub pids: Vec<i32>,
}

/// `cancel`'s data.
#[derive(Debug, Clone, Serialize)]
pub struct Cancelled {
    pub target: u64,
}

/// `bench_record`'s data: where the record went.
#[derive(Debug, Clone, Serialize)]
pub struct BenchWritten {
    #[serde(flatten, with = "crate::path_text::path")]
    pub path: PathBuf,
}

#[cfg(test)]
#[path = "reply_tests.rs"]
mod tests;
