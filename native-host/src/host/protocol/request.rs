//! Requests: the typed commands, decoded from a frame's JSON by one pure function; the error a reply carries.

use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Value};

pub use crate::error::ErrorCode;
pub use crate::firefox::served::BrowserHint;
use crate::learn::plan;
use crate::pagecache::preload::Method;
pub use crate::pagecache::Cache;
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
        /// Only the final reply's totals: no `file` events, and no page maps made for them
        /// (the popup's and the export's cached MB).
        #[serde(default)]
        summary_only: Option<bool>,
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
        /// Read only the learned working set (learn/plan/) instead of the whole folder.
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
    /// Record this start's working set (learn/workingset/record.rs) and merge it into the state
    /// file; with the start's sessionRestored (ms since the process started), which a trace of
    /// this start keeps (the launch prefetch leaves out what was first needed after it).
    Learn {
        #[serde(default, deserialize_with = "ms")]
        session_restored_ms: Option<f64>,
    },
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
        /// The trace as it may leave the machine: the profile's files named by their part
        /// (trace/summary/redact.rs), for an export.
        #[serde(default)]
        redact: Option<bool>,
    },
    /// Every figure the page shows of a trace (trace/summary/), stored or uploaded.
    TraceSummary {
        /// A stored trace's id, or a completed `trace_upload`'s.
        trace: String,
        /// ms since the process start where the page's milestones end the start.
        #[serde(default, deserialize_with = "ms")]
        axis_end_ms: Option<f64>,
        /// The file whose access pattern to draw (an index into the trace's `files`).
        #[serde(default)]
        file: Option<u32>,
    },
    /// One page of an imported trace's JSON text, for `trace_summary`.
    TraceUpload {
        /// The upload under way (from the previous page's reply); absent on the first page.
        #[serde(default)]
        upload: Option<String>,
        /// Bytes (UTF-8) of the text sent before this page, and of the whole text.
        offset: u64,
        total: u64,
        data: String,
    },
    /// A stored trace as a profile for the Firefox Profiler (issue 21): merged into the
    /// Firefox profile stored with it, else alone; written for `trace_profile_fetch`.
    TraceProfile {
        trace: String,
    },
    /// One page (under the 1 MiB frame limit) of what `trace_profile` wrote.
    TraceProfileFetch {
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
    /// The desktop entry that sends every desktop launch of this Firefox through `launch
    /// --prefetch` (learn/desktop/): its state, or turn it on (`enable`) or off (`disable`).
    Desktop {
        #[serde(default)]
        action: Option<DesktopAction>,
    },
    /// "Restart cold": start the detached `relaunch` of the served Firefox (relaunch/), which
    /// waits for it to quit, evicts (with `cold`) and starts it again; the extension then quits
    /// Firefox. Replies at once.
    Relaunch {
        #[serde(default)]
        cold: Option<bool>,
        /// With `cold`: trace the start; root's tracer through pkexec (docs/design/privilege.md).
        #[serde(default)]
        trace: Option<bool>,
        /// A URL the restarted Firefox opens (one more argument), where session restore will
        /// not bring the page back.
        #[serde(default)]
        open: Option<String>,
        /// How long to wait for Firefox to quit (1-3600 s, default 120).
        #[serde(default)]
        timeout_s: Option<u64>,
    },
    /// The last restart's record (relaunch/status.rs), `null` without one.
    RelaunchStatus,
    /// Turn the login-time preload on or off (learn/autostart.rs, as `autostart enable|disable`);
    /// replies with its status afterwards.
    Autostart {
        enable: bool,
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
            Command::Learn { .. } => "learn",
            Command::PlanStatus { .. } => "plan_status",
            Command::BenchRecord { .. } => "bench_record",
            Command::TraceList => "trace_list",
            Command::TraceFetch { .. } => "trace_fetch",
            Command::TraceSummary { .. } => "trace_summary",
            Command::TraceUpload { .. } => "trace_upload",
            Command::TraceProfile { .. } => "trace_profile",
            Command::TraceProfileFetch { .. } => "trace_profile_fetch",
            Command::Telemetry { .. } => "telemetry",
            Command::Desktop { .. } => "desktop",
            Command::Relaunch { .. } => "relaunch",
            Command::RelaunchStatus => "relaunch_status",
            Command::Autostart { .. } => "autostart",
            Command::Unknown => "unknown",
        }
    }
}

/// `desktop`'s `action` (default `status`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DesktopAction {
    #[default]
    Status,
    Enable,
    Disable,
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

/// A time in ms since the process start (`learn`'s `session_restored_ms`, `trace_summary`'s
/// `axis_end_ms`): null/absent, or a number [`crate::units::check_ms`] accepts. JSON has no
/// `Infinity` or `NaN`, but a number too large for an `f64` would read as one.
fn ms<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(deserializer)?
        .map(crate::units::check_ms)
        .transpose()
        .map_err(serde::de::Error::custom)
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
                     residency, preload, evict, cancel, bench_record, learn, plan_status, trace_list, trace_fetch, trace_summary, trace_upload, trace_profile, trace_profile_fetch, telemetry, desktop, relaunch, relaunch_status and autostart",
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

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
