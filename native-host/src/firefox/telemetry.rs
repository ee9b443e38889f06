//! Past sessions' startup milestones from the profile's archived Telemetry pings: the one source
//! of Firefox's own milestones that a Release build (no experiment API) leaves to an add-on and
//! its host.
//!
//! Firefox archives every ping it builds in `<profile>/datareporting/archived/YYYY-MM/
//! <ms>.<uuid>.<type>.jsonlz4`, upload enabled or not (`toolkit.telemetry.archive.enabled`,
//! default on). The `main` ping of reason `shutdown` carries `payload.simpleMeasurements`: that
//! session's `main`, `sessionRestored` and other moments in ms since its process start (checked
//! against `Services.startup.getStartupInfo()`, ../shared/NOTES.md). So a session is seen only
//! after it ended: the page shows these as past sessions, labelled with their source.
//!
//! `jsonlz4` ("mozlz4") is the 8 bytes `mozLz40\0`, the decompressed size as a little-endian
//! u32, then one LZ4 block. The parsers are pure and bounded (a profile is another program's
//! folder: sizes are capped before anything is allocated); the folder walk opens each file once,
//! without following symlinks, and skips (and counts) what it cannot read.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::os::beneath::Folder;

use super::mozlz4::decode_mozlz4;

/// Compressed files above this are skipped unread.
pub const MAX_COMPRESSED: u64 = 2 * 1024 * 1024;
/// Decompressed bytes one reading of the archive decodes in all: a few hundred real pings; past
/// it the walk stops and says so (a profile of 2,000 planted pings at the limit took ~60 s).
pub const MAX_TOTAL_DECOMPRESSED: usize = 256 * 1024 * 1024;
/// A text field of a session (ids, dates, versions) longer than this is not Firefox's and is
/// left out: one 3 MB `id` made the reply too large for a frame.
pub const MAX_FIELD: usize = 128;
/// Milestones kept per session (Firefox reports a dozen), and the longest name kept.
pub const MAX_MILESTONES: usize = 48;
pub const MAX_MILESTONE_NAME: usize = 48;
/// Sessions reported by default, newest first, and at most.
pub const DEFAULT_SESSIONS: usize = 20;
pub const MAX_SESSIONS: usize = 200;
/// Archive files looked at, at most (a profile archives a few pings a day; months are kept).
pub const MAX_FILES: usize = 2000;

/// One past session, from its shutdown `main` ping.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Session {
    /// The ping's id (its file name's uuid).
    pub ping_id: String,
    /// When Firefox built the ping (at that session's shutdown), as it wrote it (ISO 8601).
    pub created: Option<String>,
    /// `payload.info.reason`: `shutdown` for a session's last ping.
    pub reason: Option<String>,
    /// When in its session the ping was written, from `reason` ([`written`]): what the CLI and
    /// the page label the row with, so neither files a mid-session ping under "session ended".
    pub written: Written,
    pub session_id: Option<String>,
    /// `payload.info.sessionStartDate`: Firefox rounds it to the hour (privacy), so it dates the
    /// session, it does not time it.
    pub session_start: Option<String>,
    pub version: Option<String>,
    pub build_id: Option<String>,
    pub channel: Option<String>,
    /// Every numeric `simpleMeasurements` entry that is a moment of the start, in ms since the
    /// process started (`uptime`, `totalTime`, `activeTicks` and counters are left out).
    pub milestones: BTreeMap<String, u64>,
    /// The archive file, relative to the profile folder.
    pub file: String,
}

/// When in its session a `main` ping was written (Firefox's `payload.info.reason`, toolkit's
/// Telemetry docs "main ping"): the one labelling of a row, shared by `telemetry` (the CLI) and
/// the page (it words these codes from `_locales`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Written {
    /// `shutdown` (and the older `saved-session`): when the session ended.
    SessionEnd,
    /// `environment-change` (a setting or an add-on changed) or `daily`: during the session,
    /// which went on after it.
    MidSession,
    /// `aborted-session`: saved during the session and kept because it did not end cleanly (a
    /// crash, a kill): its last save, not its end.
    Aborted,
    /// Any other reason, or none.
    Unknown,
}

/// When a main ping of `reason` was written in its session.
#[must_use]
pub fn written(reason: Option<&str>) -> Written {
    match reason {
        Some("shutdown" | "saved-session") => Written::SessionEnd,
        Some("environment-change" | "daily") => Written::MidSession,
        Some("aborted-session") => Written::Aborted,
        _ => Written::Unknown,
    }
}

/// The English of [`Written`] for the CLI, with the ping's reason.
#[must_use]
pub fn written_words(written: Written, reason: Option<&str>) -> String {
    let reason = reason.unwrap_or("no reason");
    match written {
        Written::SessionEnd => format!("session ended ({reason})"),
        Written::MidSession => format!("mid-session ({reason})"),
        Written::Aborted => format!("last save of a session that did not end cleanly ({reason})"),
        Written::Unknown => format!("unknown ({reason})"),
    }
}

/// Numeric keys of `simpleMeasurements` that are not moments of the start (durations, counters,
/// flags); everything else numeric is one (`main`, `firstPaint`, `sessionRestored`,
/// `delayedStartupFinished`, the add-on manager's `AMI_startup_begin`, …), as
/// `getStartupInfo()` and `TelemetryTimestamps` report them.
const NOT_MILESTONES: &[&str] = &[
    "totalTime",
    "uptime",
    "activeTicks",
    "debuggerAttached",
    "maximalNumberOfConcurrentThreads",
    "startupInterrupted",
];

/// Whether a numeric `simpleMeasurements` key is a moment of the start.
fn is_milestone(key: &str) -> bool {
    !NOT_MILESTONES.contains(&key)
        && !key.ends_with("Bytes")
        && !key.ends_with("Count")
        && !key.ends_with("Counts")
}

#[derive(Deserialize)]
struct Ping {
    #[serde(rename = "type")]
    kind: Option<String>,
    id: Option<String>,
    #[serde(rename = "creationDate")]
    creation_date: Option<String>,
    application: Option<Application>,
    payload: Option<Payload>,
}

#[derive(Deserialize)]
struct Application {
    version: Option<String>,
    #[serde(rename = "displayVersion")]
    display_version: Option<String>,
    #[serde(rename = "buildId")]
    build_id: Option<String>,
    channel: Option<String>,
}

#[derive(Deserialize)]
struct Payload {
    info: Option<Info>,
    #[serde(rename = "simpleMeasurements")]
    simple_measurements: Option<BTreeMap<String, Value>>,
}

#[derive(Deserialize)]
struct Info {
    reason: Option<String>,
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    #[serde(rename = "sessionStartDate")]
    session_start_date: Option<String>,
}

/// A session from a ping's JSON, if it is a `main` ping with startup milestones. Pure.
#[must_use]
pub fn parse_main_ping(json: &[u8], file: &str) -> Option<Session> {
    let ping: Ping = serde_json::from_slice(json).ok()?;
    if ping.kind.as_deref() != Some("main") {
        return None;
    }
    let payload = ping.payload?;
    let milestones: BTreeMap<String, u64> = payload
        .simple_measurements?
        .into_iter()
        .filter(|(k, _)| is_milestone(k) && k.len() <= MAX_MILESTONE_NAME)
        .filter_map(|(k, v)| Some((k, v.as_u64()?)))
        .take(MAX_MILESTONES)
        .collect();
    if milestones.is_empty() {
        return None;
    }
    let info = payload.info;
    let app = ping.application;
    let short = |s: Option<String>| s.filter(|s| s.len() <= MAX_FIELD);
    let reason = short(info.as_ref().and_then(|i| i.reason.clone()));
    Some(Session {
        ping_id: short(ping.id).unwrap_or_default(),
        created: short(ping.creation_date),
        written: written(reason.as_deref()),
        reason,
        session_id: short(info.as_ref().and_then(|i| i.session_id.clone())),
        session_start: short(info.and_then(|i| i.session_start_date)),
        version: short(
            app.as_ref()
                .and_then(|a| a.display_version.clone().or_else(|| a.version.clone())),
        ),
        build_id: short(app.as_ref().and_then(|a| a.build_id.clone())),
        channel: short(app.and_then(|a| a.channel)),
        milestones,
        file: file.to_owned(),
    })
}

/// What [`read_archive`] found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Archive {
    #[serde(flatten, with = "crate::path_text::profile")]
    pub profile: PathBuf,
    /// Whether `datareporting/archived` exists at all (no: archiving off, or a new profile).
    pub archive_found: bool,
    /// Sessions, newest first; one per session id (its last ping, normally the shutdown one).
    pub sessions: Vec<Session>,
    /// `main` ping files looked at.
    pub main_pings: usize,
    /// Files that could not be read or decoded: `[file, why]`, at most 20.
    pub skipped: Vec<[String; 2]>,
    pub skipped_count: usize,
}

/// Files Firefox writes into a profile folder as soon as it starts with it (seen in every
/// profile of ESR 153 here), so a folder with none of them is not a profile: a mistyped
/// `--profile` is then said as such, not as "no Telemetry archive".
pub const PROFILE_FILES: [&str; 3] = ["compatibility.ini", "prefs.js", "times.json"];

/// Whether `dir` holds any of [`PROFILE_FILES`].
#[must_use]
pub fn looks_like_profile(dir: &Path) -> bool {
    PROFILE_FILES
        .iter()
        .any(|f| std::fs::symlink_metadata(dir.join(f)).is_ok_and(|m| m.is_file()))
}

/// The newest `limit` sessions in `profile`'s archive; `Err(Cancelled)` as soon as `cancel`
/// is set (checked before each file).
pub fn read_archive(
    profile: &Path,
    limit: usize,
    cancel: &AtomicBool,
) -> Result<Archive, crate::Error> {
    read_archive_within(profile, limit, cancel, MAX_TOTAL_DECOMPRESSED)
}

fn read_archive_within(
    profile: &Path,
    limit: usize,
    cancel: &AtomicBool,
    budget: usize,
) -> Result<Archive, crate::Error> {
    let limit = limit.clamp(1, MAX_SESSIONS);
    let root = profile.join("datareporting").join("archived");
    let mut archive = Archive {
        profile: profile.to_path_buf(),
        archive_found: is_real_dir(&root),
        ..Archive::default()
    };
    if !archive.archive_found {
        return Ok(archive);
    }
    let Ok(folder) = Folder::open(profile) else {
        archive.archive_found = false;
        return Ok(archive);
    };
    let mut decoded = 0usize;
    let mut files = main_ping_files(&root);
    // `<ms>.<uuid>.main.jsonlz4`: newest first by the ms Firefox put in the name.
    files.sort_by_key(|(ms, _)| std::cmp::Reverse(*ms));
    let mut seen_sessions = std::collections::HashSet::new();
    let total = files.len();
    for (n, (_, path)) in files.into_iter().enumerate() {
        if archive.sessions.len() >= limit {
            break;
        }
        if cancel.load(Ordering::Relaxed) {
            return Err(crate::Error::Cancelled);
        }
        // Opened relative to the held profile folder; named (lossily) relative to it too.
        let inside = path.strip_prefix(profile).unwrap_or(&path);
        let rel = inside.to_string_lossy().into_owned();
        if decoded >= budget {
            archive.skipped_count += total - n;
            archive.skipped.push([
                rel,
                format!(
                    "not read, nor the {} older: this reading's {budget}-byte budget of decoded pings is spent",
                    total - n - 1
                ),
            ]);
            break;
        }
        archive.main_pings += 1;
        match read_bounded(&folder, inside)
            .map_err(|e| e.to_string())
            .and_then(|bytes| decode_mozlz4(&bytes).map_err(|e| e.to_string()))
            .inspect(|json| decoded += json.len())
        {
            Ok(json) => {
                if let Some(session) = parse_main_ping(&json, &rel) {
                    // A session that ran past midnight or an environment change has several
                    // main pings; the newest (its shutdown ping) holds all its milestones.
                    let key = session
                        .session_id
                        .clone()
                        .unwrap_or(session.ping_id.clone());
                    if seen_sessions.insert(key) {
                        archive.sessions.push(session);
                    }
                }
            }
            Err(why) => {
                archive.skipped_count += 1;
                if archive.skipped.len() < 20 {
                    archive.skipped.push([rel, why]);
                }
            }
        }
    }
    Ok(archive)
}

fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// `(ms, path)` of every `*.main.jsonlz4` one level below `root` (the `YYYY-MM` folders), not
/// following symlinks, at most [`MAX_FILES`].
fn main_ping_files(root: &Path) -> Vec<(u64, PathBuf)> {
    let mut out = Vec::new();
    let Ok(months) = std::fs::read_dir(root) else {
        return out;
    };
    for month in months.flatten() {
        if !month.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(month.path()) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if !name.ends_with(".main.jsonlz4") || !entry.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            if let Some(ms) = name.split('.').next().and_then(|s| s.parse().ok()) {
                out.push((ms, entry.path()));
                if out.len() >= MAX_FILES {
                    return out;
                }
            }
        }
    }
    out
}

/// The file's bytes: opened once beneath the held profile folder (no symlink anywhere, a FIFO
/// does not block, a regular file only: `os::beneath`), at most [`MAX_COMPRESSED`].
fn read_bounded(profile: &Folder, path: &Path) -> std::io::Result<Vec<u8>> {
    let (file, meta) = profile.open_file(path)?;
    if meta.len() > MAX_COMPRESSED {
        return Err(std::io::Error::other(format!(
            "{} bytes, more than the {MAX_COMPRESSED} allowed",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_COMPRESSED).read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
#[path = "telemetry_tests.rs"]
mod tests;
