//! The one typed definition of the native-messaging protocol (docs/PROTOCOL.md).
//! Requests are a serde enum tagged by `command` ([`Command`]); replies ([`Reply`]), events
//! ([`Event`]) and errors ([`ReplyError`]) share one envelope ([`Envelope`]). Keep
//! docs/PROTOCOL.md in step with every change here.
//!
//! Decoding is a pure function, [`decode_request`], so the host loop, the unit tests and the
//! fuzz target all go through exactly the same steps.

use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Value};

pub use crate::error::ErrorCode;
use crate::firefox::kind::InstallKind;
use crate::firefox::process::FirefoxInfo;
pub use crate::firefox::served::BrowserHint;
use crate::firefox::served::Found;
use crate::learn::{plan, workingset};
use crate::pagecache::preload::Method;
use crate::pagecache::residency::{Capabilities, FileReport};
pub use crate::pagecache::Cache;
use crate::pagecache::{evict, preload, residency};
use crate::Error;

/// Largest `id` a request may carry: 2^53 − 1, so JavaScript numbers keep it exact.
pub const MAX_ID: u64 = (1 << 53) - 1;

/// Bounds of `preload`'s `jobs`.
pub const JOBS_RANGE: std::ops::RangeInclusive<usize> = 1..=crate::pagecache::preload::MAX_JOBS;

/// One request: the sender's `id` and the command with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub id: u64,
    pub command: Command,
}

/// Every command of protocol version 1. Unknown fields are ignored (serde's default).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    Hello {
        /// What the extension knows of its Firefox (version, build ID, profile): how the host
        /// finds the Firefox it serves when its parent is not Firefox (the desktop portal).
        #[serde(default)]
        browser: Option<BrowserHint>,
    },
    Firefox,
    Residency {
        #[serde(flatten, with = "crate::path_text::files")]
        files: Option<Vec<PathBuf>>,
        #[serde(default)]
        mapped: Option<bool>,
    },
    Preload {
        #[serde(flatten, with = "crate::path_text::files")]
        files: Option<Vec<PathBuf>>,
        #[serde(default)]
        idle: Option<bool>,
        #[serde(default)]
        method: Option<Method>,
        #[serde(default, deserialize_with = "jobs")]
        jobs: Option<usize>,
        /// Read only the learned working set (plan.rs) instead of the whole folder.
        #[serde(default)]
        plan: Option<bool>,
        /// With `plan`: where the plan's pages come from (default `learned`).
        #[serde(default)]
        source: Option<plan::PlanSource>,
        /// With `plan`: gaps up to this many KiB are read through (default 256).
        #[serde(default)]
        gap_kib: Option<u64>,
        /// Which cache to fill (a squashfs install has two); default `files`.
        #[serde(default)]
        cache: Option<Cache>,
    },
    Evict {
        #[serde(flatten, with = "crate::path_text::files")]
        files: Option<Vec<PathBuf>>,
        /// Which cache to drop; default `all` for the whole folder, `files` for named files.
        #[serde(default)]
        cache: Option<Cache>,
    },
    Cancel {
        target: u64,
    },
    /// Record this start's working set (workingset.rs) and merge it into the state file.
    Learn,
    /// What the plan would read, what changed, what is uncached, and the autostart state.
    PlanStatus {
        /// Which plan (default `learned`).
        #[serde(default)]
        source: Option<plan::PlanSource>,
    },
    /// The startup benchmark's channel (`npm run bench`): the record the extension made of this
    /// start, written by the host to the file named in its environment.
    BenchRecord {
        /// The record as the extension made it (docs/export-format.md, "A record"). An open
        /// `Value` on purpose: the host does not read it, it only hands it to the benchmark,
        /// and the export format (checked by the extension and the benchmark) is its contract.
        record: serde_json::Map<String, Value>,
    },
    /// The stored startup I/O traces (trace/store.rs), newest first.
    TraceList,
    /// One page (under the 1 MiB frame limit) of a stored trace's JSON text.
    TraceFetch {
        trace: String,
        #[serde(default)]
        offset: Option<u64>,
    },
    /// Past sessions' milestones from the parent Firefox profile's archived Telemetry pings
    /// (firefox/telemetry.rs), newest first.
    Telemetry {
        #[serde(default)]
        limit: Option<usize>,
    },
    /// Any other command name: answered with `unknown_command`, not a parse failure.
    #[serde(other)]
    Unknown,
}

impl Command {
    /// The command's wire name, for messages ("preload 4 was cancelled").
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Command::Hello { .. } => "hello",
            Command::Firefox => "firefox",
            Command::Residency { .. } => "residency",
            Command::Preload { .. } => "preload",
            Command::Evict { .. } => "evict",
            Command::Cancel { .. } => "cancel",
            Command::Learn => "learn",
            Command::PlanStatus { .. } => "plan_status",
            Command::BenchRecord { .. } => "bench_record",
            Command::TraceList => "trace_list",
            Command::TraceFetch { .. } => "trace_fetch",
            Command::Telemetry { .. } => "telemetry",
            Command::Unknown => "unknown",
        }
    }
}

/// `jobs`: null/absent, or an integer within [`JOBS_RANGE`].
fn jobs<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<usize>, D::Error> {
    let Some(n) = Option::<u64>::deserialize(deserializer)? else {
        return Ok(None);
    };
    match usize::try_from(n) {
        Ok(n) if JOBS_RANGE.contains(&n) => Ok(Some(n)),
        _ => Err(serde::de::Error::custom(format_args!(
            "jobs must be between {} and {}, got {n}",
            JOBS_RANGE.start(),
            JOBS_RANGE.end()
        ))),
    }
}

/// The error half of a reply: what went wrong, for programs (`code`), people (`message`) and
/// translators (`params`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplyError {
    pub code: ErrorCode,
    pub message: String,
    /// The values `message` names, by name, for the extension to word the message itself. An
    /// open `Value` on purpose: each error names its own few values (docs/PROTOCOL.md's table),
    /// and they are data for a translator, not a reply shape a program reads.
    pub params: Value,
}

impl ReplyError {
    /// Every error reply goes through here, so every echoed value is bounded: the message to
    /// [`MAX_MESSAGE_CHARS`], each string in `params` to [`MAX_ECHO_CHARS`] (a 600 KB path in a
    /// request once made a 1.2 MB error that could not be sent).
    #[must_use]
    pub fn new(code: ErrorCode, message: impl Into<String>, mut params: Value) -> Self {
        clip_strings(&mut params);
        ReplyError {
            code,
            message: clip_to(&message.into(), MAX_MESSAGE_CHARS),
            params,
        }
    }

    /// A malformed request; `detail` is also the message.
    #[must_use]
    pub fn bad_request(detail: impl Into<String>) -> Self {
        let detail = clip(&detail.into());
        let params = json!({ "detail": detail });
        ReplyError::new(ErrorCode::BadRequest, detail, params)
    }

    /// A bug in the host (a panic, a reply that would not serialise), reported as `io_error`
    /// so the extension shows it instead of losing the port.
    #[must_use]
    pub fn internal(detail: &str) -> Self {
        let detail = format!("internal error: {detail}");
        let params = json!({ "detail": detail });
        ReplyError::new(ErrorCode::IoError, detail, params)
    }
}

impl From<&Error> for ReplyError {
    fn from(error: &Error) -> Self {
        ReplyError::new(error.code(), error.to_string(), error.params())
    }
}

impl From<Error> for ReplyError {
    fn from(error: Error) -> Self {
        ReplyError::from(&error)
    }
}

/// Longest piece of a request echoed back in an error (serde quotes offending values). A 1 MiB
/// request echoed twice (message and params) would not fit a 1 MiB reply.
const MAX_ECHO_CHARS: usize = 300;
/// Longest error message: room for two echoed values and the words around them.
const MAX_MESSAGE_CHARS: usize = 1000;

fn clip(text: &str) -> String {
    clip_to(text, MAX_ECHO_CHARS)
}

fn clip_to(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// Clips every string inside `value` (params are small objects of strings and numbers).
fn clip_strings(value: &mut Value) {
    match value {
        Value::String(s) if s.chars().nth(MAX_ECHO_CHARS).is_some() => *s = clip(s),
        Value::Array(items) => items.iter_mut().for_each(clip_strings),
        Value::Object(map) => map.values_mut().for_each(clip_strings),
        _ => {}
    }
}

/// A request that could not be decoded: the `id` if it could be read, and the error to send.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    pub id: Option<u64>,
    pub error: ReplyError,
}

/// bytes → UTF-8 → JSON object → `id` → command. Each step has its own error code.
pub fn decode_request(body: &[u8]) -> Result<Request, DecodeError> {
    let fail = |id, error| DecodeError { id, error };
    let text = std::str::from_utf8(body).map_err(|e| {
        let error = ReplyError::new(
            ErrorCode::BadUtf8,
            format!("the request is not valid UTF-8 ({e}); send JSON text"),
            json!({}),
        );
        fail(None, error)
    })?;
    let value: Value =
        serde_json::from_str(text).map_err(|e| fail(None, bad_json(&e.to_string())))?;
    if !value.is_object() {
        let kind = match value {
            Value::Array(_) => "an array",
            Value::String(_) => "a string",
            Value::Number(_) => "a number",
            Value::Bool(_) => "a boolean",
            _ => "null",
        };
        return Err(fail(None, bad_json(&format!("got {kind}"))));
    }
    let id = request_id(&value).map_err(|error| fail(None, error))?;
    let command = decode_command(value).map_err(|error| fail(Some(id), error))?;
    Ok(Request { id, command })
}

fn bad_json(detail: &str) -> ReplyError {
    let detail = clip(detail);
    ReplyError::new(
        ErrorCode::BadJson,
        format!("the request is not a JSON object: {detail}"),
        json!({ "detail": detail }),
    )
}

/// `id` must be an integer 0 ..= 2^53 − 1 (not a float, string or negative number).
fn request_id(request: &Value) -> Result<u64, ReplyError> {
    let Some(raw) = request.get("id") else {
        return Err(ReplyError::bad_request(
            "the request has no \"id\"; add an integer id",
        ));
    };
    match raw.as_u64() {
        Some(id) if id <= MAX_ID => Ok(id),
        _ => Err(ReplyError::bad_request(format!(
            "\"id\" must be an integer from 0 to {MAX_ID}, got {raw}"
        ))),
    }
}

fn decode_command(request: Value) -> Result<Command, ReplyError> {
    let name = request
        .get("command")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let command = Command::deserialize(request).map_err(|e| {
        let what = name
            .as_deref()
            .map_or("request".to_owned(), |n| format!("{n} request"));
        ReplyError::bad_request(format!("invalid {what}: {e}"))
    })?;
    match command {
        Command::Unknown => {
            // serde(other) forgets the name; `name` is Some because an unknown command is a
            // string tag by construction.
            let name = clip(&name.unwrap_or_default());
            Err(ReplyError::new(
                ErrorCode::UnknownCommand,
                format!(
                    "unknown command {name:?}; this host (protocol {}) knows hello, firefox, \
                     residency, preload, evict, cancel, bench_record, learn, plan_status, trace_list and trace_fetch",
                    crate::PROTOCOL_VERSION
                ),
                json!({ "command": name }),
            ))
        }
        Command::Residency {
            files: Some(ref f), ..
        }
        | Command::Preload {
            files: Some(ref f), ..
        }
        | Command::Evict {
            files: Some(ref f), ..
        } if f.is_empty() => {
            // An empty list is almost always an empty selection in the UI; treating it as
            // "every file" would evict or preload the whole folder by accident.
            Err(ReplyError::bad_request(
                "\"files\" is an empty list; leave it out or send null to mean every file",
            ))
        }
        command => Ok(command),
    }
}

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
    /// Success: the request's final message.
    Ok { data: Reply },
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
    Telemetry(crate::firefox::telemetry::Archive),
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
            body: Body::Ok { data },
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
}

/// `hello`'s `firefox_found`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FirefoxFound {
    pub how: Found,
    /// English: what was compared, or why nothing matched.
    pub detail: Option<String>,
    /// This user's running Firefox main processes looked at (only when matching was tried).
    pub candidates: Option<usize>,
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
mod tests {
    use super::*;

    fn evict_reply(n: usize, path_len: usize) -> Reply {
        let file = evict::FileResult {
            path: PathBuf::from(format!("/{}", "x".repeat(path_len - 1))),
            pages: 1,
            status: residency::Status::Error,
            resident_before: None,
            resident_after: None,
            note: Some("a note as long as the longest the host writes, give or take".into()),
            note_code: Some(crate::note::EVICTED_HIDDEN),
            error: Some("cannot open: Permission denied (os error 13)".into()),
        };
        Reply::Evict(evict::Summary {
            files: vec![file; n],
            files_omitted: 0,
            pages_dropped: 0,
            elapsed_ms: 0,
            cache: crate::pagecache::Cache::Files,
        })
    }

    fn frame_len(reply: Reply) -> usize {
        serde_json::to_vec(&Envelope::ok(1, reply)).unwrap().len()
    }

    #[test]
    fn long_lists_are_cut_and_counted() {
        let Reply::Evict(s) = evict_reply(1500, 40).bounded() else {
            unreachable!()
        };
        assert_eq!((s.files.len(), s.files_omitted), (MAX_LIST_ENTRIES, 500));
        let Reply::Evict(s) = evict_reply(999, 40).bounded() else {
            unreachable!()
        };
        assert_eq!((s.files.len(), s.files_omitted), (999, 0));
        // Long paths: the byte budget cuts first.
        let Reply::Evict(s) = evict_reply(1500, 4096).bounded() else {
            unreachable!()
        };
        assert_eq!(s.files.len(), MAX_LIST_PATH_BYTES / 4096);
        assert_eq!(s.files_omitted, 1500 - s.files.len() as u64);
    }

    #[test]
    fn bounded_replies_fit_a_frame_even_with_the_longest_paths() {
        for path_len in [40, 255, 4096] {
            let size = frame_len(evict_reply(5000, path_len).bounded());
            assert!(
                size < crate::host::framing::MAX_OUTGOING,
                "{path_len}: {size}"
            );
        }
        let uncached = |n, len: usize| {
            (0..n)
                .map(|_| plan::Uncached {
                    path: PathBuf::from("y".repeat(len)),
                    size: u64::MAX,
                })
                .collect::<Vec<_>>()
        };
        for len in [40, 4096] {
            let status = plan::PlanStatus {
                learned: true,
                starts: 5,
                planned_bytes: 0,
                planned_files: 0,
                install_bytes: 0,
                planned_install_bytes: 0,
                planned_system_bytes: 0,
                changed_files: vec![PathBuf::from("z".repeat(len)); 5000],
                changed_files_omitted: 0,
                uncached_files: Some(uncached(5000, len)),
                uncached_files_omitted: 0,
                autostart: crate::learn::autostart::Status {
                    enabled: false,
                    kind: None,
                    last_run: None,
                    note: None,
                    damon_pageout: false,
                    note_code: None,
                },
                source: plan::PlanSource::Learned,
                build_id: None,
                learned_build_id: None,
                stale: false,
            };
            let Reply::PlanStatus(s) = Reply::PlanStatus(Box::new(status)).bounded() else {
                unreachable!()
            };
            assert_eq!(s.changed_files.len() as u64 + s.changed_files_omitted, 5000);
            assert_eq!(
                s.uncached_files.as_ref().unwrap().len() as u64 + s.uncached_files_omitted,
                5000
            );
            assert!(s.uncached_files_omitted > 0);
            let size = frame_len(Reply::PlanStatus(s));
            assert!(size < crate::host::framing::MAX_OUTGOING, "{len}: {size}");
        }
    }

    #[test]
    fn preload_errors_keep_the_first_ones() {
        let errors = (0..1200)
            .map(|i| preload::FileError {
                path: PathBuf::from(format!("/f/{i}")),
                error: "vanished (Firefox updated?)".into(),
            })
            .collect();
        let summary = preload::Summary {
            files: 0,
            bytes: 0,
            elapsed_ms: 0,
            mb_per_s: 0.0,
            method: preload::Method::Read,
            jobs: 1,
            idle: false,
            errors,
            errors_omitted: 0,
            planned: false,
            bytes_planned: None,
            bytes_planned_system: None,
            bytes_install: 0,
            order: None,
            pace: None,
            cache: crate::pagecache::Cache::Files,
        };
        let Reply::Preload(s) = Reply::Preload(summary).bounded() else {
            unreachable!()
        };
        assert_eq!((s.errors.len(), s.errors_omitted), (1000, 200));
        // The first ones are kept, in order.
        assert_eq!(s.errors[999].path, PathBuf::from("/f/999"));
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["errors_omitted"], 200);
        let Reply::Evict(s) = evict_reply(3, 40).bounded() else {
            unreachable!()
        };
        let json = serde_json::to_value(&s).unwrap();
        assert!(json.get("files_omitted").is_none(), "{json}");
    }

    fn decode(text: &str) -> Result<Request, DecodeError> {
        decode_request(text.as_bytes())
    }

    fn code_of(text: &str) -> (Option<u64>, ErrorCode) {
        let err = decode(text).unwrap_err();
        (err.id, err.error.code)
    }

    #[test]
    fn hello_decodes() {
        let req = decode(r#"{"id": 1, "command": "hello"}"#).unwrap();
        assert_eq!(
            req,
            Request {
                id: 1,
                command: Command::Hello { browser: None }
            }
        );
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let req = decode(r#"{"id": 1, "command": "hello", "extra": [1, 2]}"#).unwrap();
        assert_eq!(req.command, Command::Hello { browser: None });
        let req = decode(
            r#"{"id": 1, "command": "hello", "browser": {"version": "153.7.0", "build_id": "2026"}}"#,
        )
        .unwrap();
        let Command::Hello {
            browser: Some(hint),
        } = req.command
        else {
            panic!("no hint");
        };
        assert_eq!(hint.build_id.as_deref(), Some("2026"));
        assert_eq!(hint.profile, None);
    }

    #[test]
    fn residency_with_and_without_parameters() {
        let req = decode(r#"{"id": 3, "command": "residency", "files": null, "mapped": true}"#);
        assert_eq!(
            req.unwrap().command,
            Command::Residency {
                files: None,
                mapped: Some(true)
            }
        );
        let req = decode(r#"{"id": 3, "command": "residency", "files": ["libxul.so"]}"#);
        assert_eq!(
            req.unwrap().command,
            Command::Residency {
                files: Some(vec!["libxul.so".into()]),
                mapped: None
            }
        );
    }

    #[test]
    fn preload_parameters() {
        let req = decode(
            r#"{"id": 4, "command": "preload", "files": null, "idle": true, "method": "fadvise", "jobs": 2}"#,
        );
        assert_eq!(
            req.unwrap().command,
            Command::Preload {
                files: None,
                idle: Some(true),
                method: Some(Method::Fadvise),
                jobs: Some(2),
                plan: None,
                source: None,
                gap_kib: None,
                cache: None,
            }
        );
        let req = decode(r#"{"id": 4, "command": "preload", "jobs": null}"#).unwrap();
        assert!(matches!(req.command, Command::Preload { jobs: None, .. }));
        let req = decode(
            r#"{"id": 4, "command": "preload", "plan": true, "source": "trace", "gap_kib": 64}"#,
        )
        .unwrap();
        assert!(matches!(
            req.command,
            Command::Preload {
                plan: Some(true),
                source: Some(plan::PlanSource::Trace),
                gap_kib: Some(64),
                ..
            }
        ));
        // plan_status with and without a source; an unknown source is a bad request.
        let req = decode(r#"{"id": 4, "command": "plan_status"}"#).unwrap();
        assert_eq!(req.command, Command::PlanStatus { source: None });
        let req = decode(r#"{"id": 4, "command": "plan_status", "source": "trace_reads"}"#);
        assert_eq!(
            req.unwrap().command,
            Command::PlanStatus {
                source: Some(plan::PlanSource::TraceReads)
            }
        );
        assert!(decode(r#"{"id": 4, "command": "plan_status", "source": "guess"}"#).is_err());
    }

    #[test]
    fn evict_and_cancel() {
        let req = decode(r#"{"id": 5, "command": "evict", "files": ["a"]}"#).unwrap();
        assert_eq!(
            req.command,
            Command::Evict {
                files: Some(vec!["a".into()]),
                cache: None
            }
        );
        let req = decode(r#"{"id": 5, "command": "evict", "cache": "image"}"#).unwrap();
        assert_eq!(
            req.command,
            Command::Evict {
                files: None,
                cache: Some(Cache::Image)
            }
        );
        let req = decode(r#"{"id": 6, "command": "cancel", "target": 4}"#).unwrap();
        assert_eq!(req.command, Command::Cancel { target: 4 });
        let req = decode(r#"{"id": 7, "command": "telemetry", "limit": 3}"#).unwrap();
        assert_eq!(req.command, Command::Telemetry { limit: Some(3) });
        let req = decode(r#"{"id": 8, "command": "telemetry"}"#).unwrap();
        assert_eq!(req.command, Command::Telemetry { limit: None });
        assert!(decode(r#"{"id": 9, "command": "telemetry", "limit": "all"}"#).is_err());
    }

    #[test]
    fn bench_record_wants_an_object() {
        let req = decode(r#"{"id": 8, "command": "bench_record", "record": {"id": "full-1"}}"#);
        let Command::BenchRecord { record } = req.unwrap().command else {
            panic!("not a bench_record");
        };
        assert_eq!(record["id"], json!("full-1"));
        for text in [
            r#"{"id": 8, "command": "bench_record"}"#,
            r#"{"id": 8, "command": "bench_record", "record": null}"#,
            r#"{"id": 8, "command": "bench_record", "record": [1]}"#,
        ] {
            assert_eq!(code_of(text), (Some(8), ErrorCode::BadRequest), "{text}");
        }
    }

    #[test]
    fn invalid_utf8() {
        let err = decode_request(b"{\"id\": 1, \"command\": \"\xff\"}").unwrap_err();
        assert_eq!((err.id, err.error.code), (None, ErrorCode::BadUtf8));
    }

    #[test]
    fn invalid_json_and_non_objects() {
        for text in [
            "",
            "{",
            "{\"id\": 1,}",
            "nul",
            "[1, 2]",
            "[]",
            "7",
            "\"hello\"",
            "null",
        ] {
            assert_eq!(code_of(text), (None, ErrorCode::BadJson), "{text}");
        }
    }

    #[test]
    fn bad_ids_reply_with_null_id() {
        for text in [
            r#"{"command": "hello"}"#,
            r#"{"id": null, "command": "hello"}"#,
            r#"{"id": "1", "command": "hello"}"#,
            r#"{"id": -1, "command": "hello"}"#,
            r#"{"id": 1.5, "command": "hello"}"#,
            r#"{"id": 1.0, "command": "hello"}"#,
            r#"{"id": 9007199254740992, "command": "hello"}"#,
            r#"{"id": 18446744073709551616, "command": "hello"}"#,
        ] {
            assert_eq!(code_of(text), (None, ErrorCode::BadRequest), "{text}");
        }
        // serde_json itself refuses a number beyond f64: that is not JSON it can represent.
        let huge = r#"{"id": 1e400, "command": "hello"}"#;
        assert_eq!(code_of(huge), (None, ErrorCode::BadJson));
        assert!(decode(r#"{"id": 9007199254740991, "command": "hello"}"#).is_ok());
        assert!(decode(r#"{"id": 0, "command": "hello"}"#).is_ok());
    }

    #[test]
    fn unknown_command_names_it() {
        let err = decode(r#"{"id": 2, "command": "format_disk"}"#).unwrap_err();
        assert_eq!(
            (err.id, err.error.code),
            (Some(2), ErrorCode::UnknownCommand)
        );
        assert_eq!(err.error.params, json!({"command": "format_disk"}));
    }

    #[test]
    fn missing_or_non_string_command_is_bad_request() {
        for text in [
            r#"{"id": 2}"#,
            r#"{"id": 2, "command": 5}"#,
            r#"{"id": 2, "command": null}"#,
        ] {
            assert_eq!(code_of(text), (Some(2), ErrorCode::BadRequest), "{text}");
        }
    }

    #[test]
    fn fields_of_the_wrong_type_are_bad_request() {
        for text in [
            r#"{"id": 3, "command": "residency", "files": 5}"#,
            r#"{"id": 3, "command": "residency", "files": [5]}"#,
            r#"{"id": 3, "command": "residency", "mapped": "yes"}"#,
            r#"{"id": 4, "command": "preload", "jobs": 1000000000000}"#,
            r#"{"id": 4, "command": "preload", "jobs": 0}"#,
            r#"{"id": 4, "command": "preload", "jobs": 17}"#,
            r#"{"id": 4, "command": "preload", "jobs": -1}"#,
            r#"{"id": 4, "command": "preload", "jobs": 2.5}"#,
            r#"{"id": 4, "command": "preload", "method": "mmap"}"#,
            r#"{"id": 6, "command": "cancel"}"#,
            r#"{"id": 6, "command": "cancel", "target": "4"}"#,
            r#"{"id": 5, "command": "evict", "files": []}"#,
            r#"{"id": 5, "command": "evict", "cache": "loop"}"#,
            r#"{"id": 4, "command": "preload", "cache": 1}"#,
        ] {
            let err = decode(text).unwrap_err();
            assert_eq!(err.error.code, ErrorCode::BadRequest, "{text}");
            assert!(err.id.is_some(), "{text}");
            assert!(err.error.params["detail"].is_string(), "{text}");
        }
    }

    #[test]
    fn errors_about_huge_values_stay_small() {
        let huge = "x".repeat(900_000);
        for text in [
            json!({"id": huge, "command": "hello"}),
            json!({"id": 1, "command": huge}),
            json!({"id": 1, "command": "cancel", "target": huge}),
            json!({"id": 1, "command": "residency", "files": [[huge]]}),
        ] {
            let err = decode_request(&serde_json::to_vec(&text).unwrap()).unwrap_err();
            let reply = serde_json::to_vec(&Envelope::error(err.id, err.error)).unwrap();
            assert!(reply.len() < 2000, "{}", reply.len());
        }
    }

    #[test]
    fn errors_that_echo_request_paths_stay_small() {
        // A path the request named, inside a host error (not a decoding error).
        let huge = std::path::PathBuf::from(format!("/{}", "p".repeat(600_000)));
        for error in [
            Error::NoSuchFile { path: huge.clone() },
            Error::OutsideInstallDir {
                path: huge.clone(),
                install_dir: huge.clone(),
            },
        ] {
            let reply = ReplyError::from(&error);
            let bytes = serde_json::to_vec(&Envelope::error(Some(3), reply.clone())).unwrap();
            assert!(bytes.len() < 4000, "{}", bytes.len());
            assert!(reply.message.ends_with('…'), "{}", &reply.message[..50]);
            assert_eq!(reply.code, error.code());
        }
    }

    #[test]
    fn jobs_detail_names_the_range() {
        let err = decode(r#"{"id": 4, "command": "preload", "jobs": 1000000000000}"#).unwrap_err();
        assert!(
            err.error.message.contains("between 1 and 16"),
            "{}",
            err.error.message
        );
    }

    #[test]
    fn envelopes_serialise_as_documented() {
        let ok = serde_json::to_value(Envelope::ok(7, Reply::Cancel(Cancelled { target: 4 })));
        assert_eq!(
            ok.unwrap(),
            json!({"id": 7, "status": "ok", "data": {"target": 4}})
        );

        let err = ReplyError::new(ErrorCode::Cancelled, "preload 4 was cancelled", json!({}));
        let err = serde_json::to_value(Envelope::error(Some(4), err)).unwrap();
        assert_eq!(
            err,
            json!({"id": 4, "status": "error", "code": "cancelled",
                   "message": "preload 4 was cancelled", "params": {}})
        );

        let ev = serde_json::to_value(Envelope::event(7, Event::Progress(progress()))).unwrap();
        assert_eq!(
            ev,
            json!({"id": 7, "status": "event", "event": "progress", "data": {
                "bytes_done": 1, "bytes_total": 2, "files_done": 0, "files_total": 1,
                "current_file": null}})
        );

        let null_id = serde_json::to_string(&Envelope::error(None, ReplyError::bad_request("x")));
        assert!(null_id
            .unwrap()
            .starts_with(r#"{"id":null,"status":"error""#));
    }

    fn progress() -> preload::Progress {
        preload::Progress {
            bytes_done: 1,
            bytes_total: 2,
            files_done: 0,
            files_total: 1,
            current_file: None,
        }
    }

    /// The bytes on the wire, key order included: `data` holds the command's object with no
    /// variant name around it, and an event's name sits beside its `data`.
    #[test]
    fn typed_replies_and_events_keep_the_wire_shape() {
        let hello = Reply::Hello(Hello {
            host_version: "0.1.0",
            protocol_version: 1,
            capabilities: Capabilities {
                kernel: "6.18.44".into(),
                euid: 1000,
                root: false,
                mincore_exact: "owned_or_writable",
                cachestat: true,
            },
            firefox_pid: Some(4242),
            install_kind: None,
            firefox_found: FirefoxFound {
                how: Found::Parent,
                detail: None,
                candidates: None,
            },
        });
        assert_eq!(
            serde_json::to_string(&Envelope::ok(1, hello)).unwrap(),
            r#"{"id":1,"status":"ok","data":{"host_version":"0.1.0","protocol_version":1,"#
                .to_owned()
                + r#""kernel":"6.18.44","euid":1000,"root":false,"#
                + r#""mincore_exact":"owned_or_writable","cachestat":true,"firefox_pid":4242,"#
                + r#""install_kind":null,"firefox_found":{"how":"parent","detail":null,"#
                + r#""candidates":null}}}"#
        );
        let cancel = Envelope::ok(6, Reply::Cancel(Cancelled { target: 4 }));
        assert_eq!(
            serde_json::to_string(&cancel).unwrap(),
            r#"{"id":6,"status":"ok","data":{"target":4}}"#
        );
        let event = Envelope::event(4, Event::Progress(progress()));
        assert_eq!(
            serde_json::to_string(&event).unwrap(),
            r#"{"id":4,"status":"event","event":"progress","data":{"bytes_done":1,"#.to_owned()
                + r#""bytes_total":2,"files_done":0,"files_total":1,"current_file":null}}"#
        );
        assert!(!event.is_final() && cancel.is_final());
    }

    #[test]
    fn error_codes_are_snake_case() {
        let codes = serde_json::to_value([
            ErrorCode::OutsideInstallDir,
            ErrorCode::ReplyTooLarge,
            ErrorCode::NotBenchmarking,
        ]);
        assert_eq!(
            codes.unwrap(),
            json!(["outside_install_dir", "reply_too_large", "not_benchmarking"])
        );
    }
}
