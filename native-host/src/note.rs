//! Notes the host attaches to its results (why a file is hidden, what stayed cached after an
//! evict, what a trace missed), as a code and named params, for the extension to word from its
//! own `_locales`; `english()` words them for the CLI and for the older English fields the
//! replies keep beside the codes (`hidden_reason`, `note`, `notes`). The codes are append-only:
//! never change or reuse one (docs/PROTOCOL.md, "Notes"). Like [`crate::error`], used by every
//! folder and using none (but `units`, for the English of a size).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One note: `{"code": "...", "params": {...}}` on the wire (`params` omitted when empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Note {
    pub code: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, Value>,
}

/// The kernel reports page-cache state only for files the caller owns or can write (Linux ≥ 5.2).
pub const HIDDEN_NOT_OWNER: &str = "hidden_not_owner";
/// Evicted, but the kernel hides the result from this user.
pub const EVICTED_HIDDEN: &str = "evicted_hidden";
/// Pages mapped by a running process, or written and not yet on disk, stayed in the cache.
pub const PAGES_STAYED: &str = "pages_stayed";
/// A DAMON kdamond with a pageout scheme runs: a login-time preload is undone a minute later.
pub const DAMON_PAGEOUT: &str = "damon_pageout";
/// Trace: no exact trace (params: `reason`, one of the `NO_TRACE_*` codes); /proc was sampled.
pub const NO_EXACT_TRACE: &str = "no_exact_trace";
/// Trace: the install folder changed while recording.
pub const INSTALL_CHANGED: &str = "install_changed";
/// Trace: `count` files could not be named.
pub const UNRESOLVED_FILES: &str = "unresolved_files";
/// Trace: `count` events lost (ring buffer overrun).
pub const LOST_EVENTS: &str = "lost_events";
/// Trace: cold start, `files` files of the install folder evicted first, `pages` dropped.
pub const COLD_EVICTED: &str = "cold_evicted";
/// Trace: the start was meant cold, but after the evict pages of the install stayed cached,
/// kept by running processes that map the files (params: `bytes`, what stayed, `null` where the
/// kernel hides it from this user; `hidden_files`; `files`, the largest `[{path, bytes}]`;
/// `processes`, `[{pid, exe}]` of this user's processes mapping the install's files).
pub const COLD_HELD: &str = "cold_held";
/// Trace: the start got to its profile (`profile`) and never reached sessionRestored while it
/// was recorded (Firefox's checkpoints in the profile say so): not a whole start.
pub const START_NOT_RESTORED: &str = "start_not_restored";
/// Trace: Firefox was started as root.
pub const STARTED_AS_ROOT: &str = "started_as_root";
/// Trace: Firefox exited before the start completed (params: `exit_code` or `signal`, if known).
pub const START_INCOMPLETE: &str = "start_incomplete";
/// Trace: attached `ms` after the process started: reads before that are missed.
pub const ATTACHED_LATE: &str = "attached_late";

/// Trace: the zip archive `path` (omni.ja) could not be read for its entries (`detail`, English).
pub const ARCHIVE_UNREADABLE: &str = "archive_unreadable";
/// Trace: Firefox's own startup profile was asked for but is missing or unusable (`detail`,
/// English; `reason`: `gone`, `not_written`, `truncated`, `refused`, `io` or `clock`).
pub const FIREFOX_PROFILE_MISSING: &str = "firefox_profile_missing";

/// Trace: which read pages were then used is unknown (params: `reason`, one of the
/// `PAGE_USE_*` codes; `os_error` for [`PAGE_USE_KPAGEFLAGS`] where there is one; `detail`, the
/// same in English).
pub const PAGE_USE_UNKNOWN: &str = "page_use_unknown";

/// A state file could not be read (not JSON of the host's, or past its size bound) and was set
/// aside, never deleted (params: `file`, its name in the state folder; `folder`; `moved_to`, the
/// name it has now, or `error` where it could not be moved, English). What it held is not used.
pub const STATE_FILE_SET_ASIDE: &str = "state_file_set_aside";

/// The English of [`HIDDEN_NOT_OWNER`] (also the reply's `hidden_reason`).
pub const HIDDEN_NOT_OWNER_EN: &str =
    "the kernel reports page-cache state only for files you own or can write (Linux ≥ 5.2)";
/// The English of [`PAGES_STAYED`] (also evict's `note`).
pub const PAGES_STAYED_EN: &str =
    "pages mapped by a running process, or written and not yet on disk, stay in the cache";

/// Reasons of [`NO_EXACT_TRACE`].
pub const NO_TRACE_NOT_ASKED: &str = "not_asked";
pub const NO_TRACE_NOT_ROOT: &str = "not_root";
pub const NO_TRACE_NO_TRACEFS: &str = "no_tracefs";
pub const NO_TRACE_INSTANCE_TAKEN: &str = "instance_taken";
pub const NO_TRACE_IO: &str = "io";

/// Reasons of [`PAGE_USE_UNKNOWN`]: the trace events carry no page frame number (pfn) ...
pub const PAGE_USE_NO_PFN: &str = "no_pfn";
/// ... or /proc/kpageflags could not be read (params: `os_error`).
pub const PAGE_USE_KPAGEFLAGS: &str = "kpageflags";

impl Note {
    /// A note without params.
    #[must_use]
    pub fn new(code: &str) -> Self {
        Note {
            code: code.to_owned(),
            params: BTreeMap::new(),
        }
    }

    /// This note with one more param.
    #[must_use]
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.params.insert(name.to_owned(), value.into());
        self
    }

    fn param(&self, name: &str) -> String {
        match self.params.get(name) {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => "?".to_owned(),
        }
    }

    /// The note in English, for the CLI and the English fields kept for older readers.
    #[must_use]
    pub fn english(&self) -> String {
        let p = |name: &str| self.param(name);
        match self.code.as_str() {
            HIDDEN_NOT_OWNER => HIDDEN_NOT_OWNER_EN.to_owned(),
            EVICTED_HIDDEN => format!("evicted, but {HIDDEN_NOT_OWNER_EN}"),
            PAGES_STAYED => PAGES_STAYED_EN.to_owned(),
            DAMON_PAGEOUT => "a DAMON kdamond pages out page cache left idle for about a minute: a \
                              preload at login is undone unless Firefox starts within a minute or so"
                .to_owned(),
            NO_EXACT_TRACE => format!(
                "no exact trace: {}; only /proc/<pid>/io and major faults of the tree were sampled",
                match self.param("reason").as_str() {
                    NO_TRACE_NOT_ASKED => "--trace not given".to_owned(),
                    NO_TRACE_NOT_ROOT => "tracing needs root".to_owned(),
                    NO_TRACE_NO_TRACEFS => "tracefs is not available".to_owned(),
                    NO_TRACE_INSTANCE_TAKEN =>
                        "another about-startup-host trace is running (its tracefs instance exists)"
                            .to_owned(),
                    _ => p("detail"),
                }
            ),
            INSTALL_CHANGED => "the install folder changed during the recording (an update?): paths \
                                and sections may not match what was read"
                .to_owned(),
            UNRESOLVED_FILES => format!(
                "{} files could not be named (outside the install folder, the profile and what the \
                 tree maps or holds open)",
                p("count")
            ),
            LOST_EVENTS => format!(
                "{} trace events were lost (ring buffer overrun): bytes read are undercounted",
                p("count")
            ),
            COLD_EVICTED => format!(
                "cold start: {} files of the install folder evicted first ({} pages dropped where \
                 measurable)",
                p("files"),
                p("pages")
            ),
            COLD_HELD => {
                let list = |name: &str, each: &dyn Fn(&Value) -> String| match self.params.get(name)
                {
                    Some(Value::Array(items)) if !items.is_empty() => {
                        items.iter().map(each).collect::<Vec<_>>().join(", ")
                    }
                    _ => "none of yours seen (another user's, or pages written and not yet on \
                          disk)"
                        .to_owned(),
                };
                let files = list("files", &|f| {
                    let bytes = f["bytes"].as_u64().unwrap_or(0);
                    format!(
                        "{} ({})",
                        f["path"].as_str().unwrap_or("?"),
                        crate::units::mb(bytes)
                    )
                });
                let processes = list("processes", &|m| {
                    format!(
                        "pid {} ({})",
                        m["pid"],
                        m["exe"].as_str().filter(|e| !e.is_empty()).unwrap_or("?")
                    )
                });
                let what = match self.params.get("bytes").and_then(Value::as_u64) {
                    Some(b) => format!("{} of Firefox's files", crate::units::mb(b)),
                    None => "part of Firefox's files (how much, the kernel hides from you)"
                        .to_owned(),
                };
                format!(
                    "not a cold start: after the evict {what} stayed cached ({files}), held by \
                     processes that map them: {processes}. Quit them (a second Firefox?) and \
                     start again for a cold start"
                )
            }
            START_NOT_RESTORED => format!(
                "Firefox never reached sessionRestored while it was recorded (the checkpoints in \
                 its profile {} have no restored session): not a whole start",
                p("profile")
            ),
            STARTED_AS_ROOT => {
                "Firefox was started as root (no SUDO_UID/PKEXEC_UID to start it as)".to_owned()
            }
            // `status` as the launch words it ("exit status 1"; Rust's "exit status: 1" in
            // traces of an older host). It once read `signal`/`exit_code`, which no note had:
            // "firefox exited (exit code ?)" beside "ended by firefox exited (exit status: 1)".
            START_INCOMPLETE => format!(
                "firefox exited ({}): the start did not complete, so the trace stops there",
                p("status")
            ),
            ATTACHED_LATE => format!(
                "attached {} ms after the process started: reads before that are missed, and \
                 read_bytes counts only what came after",
                p("ms")
            ),
            PAGE_USE_UNKNOWN => format!("which read pages were used is unknown: {}", p("detail")),
            ARCHIVE_UNREADABLE => format!(
                "the entries of {} are unknown: {}",
                p("path"),
                p("detail")
            ),
            FIREFOX_PROFILE_MISSING => format!(
                "Firefox's own profile is missing, the trace stands alone: {}",
                p("detail")
            ),
            STATE_FILE_SET_ASIDE if self.params.contains_key("moved_to") => format!(
                "{} in {} was damaged (not a file this host wrote): it was set aside as {}, not \
                 deleted, and what it held is not used",
                p("file"),
                p("folder"),
                p("moved_to")
            ),
            STATE_FILE_SET_ASIDE => format!(
                "{} in {} was damaged (not a file this host wrote) and could not be set aside ({}): \
                 what it held is not used; move it away yourself",
                p("file"),
                p("folder"),
                p("error")
            ),
            other => other.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 39 #3: the note's English read params no note had ("firefox exited (exit code ?)",
    /// beside "ended by firefox exited (exit status: 1)").
    #[test]
    fn start_incomplete_says_how_firefox_ended() {
        let n = Note::new(START_INCOMPLETE).with("status", "exit status 1");
        assert_eq!(
            n.english(),
            "firefox exited (exit status 1): the start did not complete, so the trace stops there"
        );
    }

    #[test]
    fn serialises_as_code_and_params_and_words_english() {
        let n = Note::new(LOST_EVENTS).with("count", 12);
        assert_eq!(
            serde_json::to_value(&n).unwrap(),
            serde_json::json!({"code": "lost_events", "params": {"count": 12}})
        );
        assert_eq!(
            serde_json::to_value(Note::new(STARTED_AS_ROOT)).unwrap(),
            serde_json::json!({"code": "started_as_root"})
        );
        assert!(n.english().starts_with("12 trace events were lost"));
        let back: Note = serde_json::from_str(r#"{"code":"install_changed"}"#).unwrap();
        assert_eq!(back, Note::new(INSTALL_CHANGED));
        assert!(Note::new(NO_EXACT_TRACE)
            .with("reason", NO_TRACE_NOT_ROOT)
            .english()
            .contains("needs root"));
    }

    #[test]
    fn page_use_unknown_has_a_reason_code_beside_its_english_detail() {
        let n = Note::new(PAGE_USE_UNKNOWN)
            .with("reason", PAGE_USE_KPAGEFLAGS)
            .with("os_error", 13)
            .with(
                "detail",
                "/proc/kpageflags (Permission denied (os error 13))",
            );
        assert_eq!(
            serde_json::to_value(&n).unwrap()["params"],
            serde_json::json!({
                "reason": "kpageflags",
                "os_error": 13,
                "detail": "/proc/kpageflags (Permission denied (os error 13))"
            })
        );
        assert!(n
            .english()
            .ends_with("unknown: /proc/kpageflags (Permission denied (os error 13))"));
    }
}
