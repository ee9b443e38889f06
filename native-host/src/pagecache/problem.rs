//! A problem with one file of a residency, preload or evict run (the run goes on, as vmtouch
//! does): a stable code with named params for the extension to word from its own `_locales`,
//! and the English the CLI prints and older extensions show (`error`). On the wire it is three
//! fields of the file's entry: `error`, `error_code`, `error_params` (docs/PROTOCOL.md,
//! "Per-file error codes"). The codes are append-only: never change or reuse one.

use std::io;

use serde::{Deserialize, Serialize};

/// What went wrong with one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileErrorCode {
    /// The file is gone: not there when opened, or removed while scanned (a Firefox update).
    Vanished,
    /// Its size, mtime or inode changed while it was scanned (a Firefox update).
    Changed,
    /// Refused: its path does not stay inside its folder (a symlink or `..` on the way).
    Escaped,
    /// Not a regular file (a folder, FIFO or device where a file was expected).
    NotRegular,
    /// It could not be opened (params: `os_error`, `detail`).
    OpenFailed,
    /// Reading it failed part way (params: `os_error`, `detail`).
    ReadFailed,
    /// mincore(2) failed on it (params: `os_error`, `detail`).
    MincoreFailed,
    /// fadvise(DONTNEED) failed on it (params: `os_error`, `detail`).
    FadviseFailed,
}

/// The params of a [`Problem`]: for the codes from a failed system call, its errno and the
/// system's English text for it (shown by the extension only for an errno it has no words for).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_error: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Params {
    fn is_empty(&self) -> bool {
        self.os_error.is_none() && self.detail.is_none()
    }

    fn of(e: &io::Error) -> Self {
        Params {
            os_error: e.raw_os_error(),
            detail: Some(e.to_string()),
        }
    }
}

/// One file's problem; flattened into its entry (`#[serde(flatten)]` on an `Option<Problem>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// English, for the CLI and older extensions; `error_code` is what to word.
    pub error: String,
    pub error_code: FileErrorCode,
    #[serde(skip_serializing_if = "Params::is_empty")]
    pub error_params: Params,
}

impl Problem {
    /// A problem without params.
    #[must_use]
    pub fn new(code: FileErrorCode, english: impl Into<String>) -> Self {
        Problem {
            error: english.into(),
            error_code: code,
            error_params: Params::default(),
        }
    }

    /// A failed open (or stat): a vanished file is what a Firefox update looks like; a path that
    /// leaves its folder is refused ([`crate::os::beneath::Escape`]).
    #[must_use]
    pub fn open(e: &io::Error) -> Self {
        if let Some(escape) = crate::os::beneath::escape_of(e) {
            return Problem::new(FileErrorCode::Escaped, escape.to_string());
        }
        match e.kind() {
            io::ErrorKind::NotFound => {
                Problem::new(FileErrorCode::Vanished, "vanished (Firefox updated?)")
            }
            _ => Problem {
                error: format!("cannot open: {e}"),
                error_code: FileErrorCode::OpenFailed,
                error_params: Params::of(e),
            },
        }
    }

    /// A system call that failed on an open file; `english` is the CLI's words for it.
    #[must_use]
    pub fn io(code: FileErrorCode, english: String, e: &io::Error) -> Self {
        Problem {
            error: english,
            error_code: code,
            error_params: Params::of(e),
        }
    }

    /// A read that failed part way.
    #[must_use]
    pub fn read(e: &io::Error) -> Self {
        Problem::io(FileErrorCode::ReadFailed, e.to_string(), e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_failed_open_is_a_code_with_its_errno_and_english_beside_it() {
        let denied = Problem::open(&io::Error::from_raw_os_error(13));
        assert_eq!(denied.error_code, FileErrorCode::OpenFailed);
        assert!(
            denied.error.starts_with("cannot open: "),
            "{}",
            denied.error
        );
        let wire = serde_json::to_value(&denied).unwrap();
        assert_eq!(wire["error_code"], json!("open_failed"));
        assert_eq!(wire["error_params"]["os_error"], json!(13));
        assert!(wire["error_params"]["detail"].is_string());

        let gone = Problem::open(&io::Error::from(io::ErrorKind::NotFound));
        assert_eq!(
            serde_json::to_value(&gone).unwrap(),
            json!({"error": "vanished (Firefox updated?)", "error_code": "vanished"})
        );
    }

    #[test]
    fn an_escape_is_refused_with_its_own_code() {
        let e = io::Error::other(crate::os::beneath::Escape {
            path: "/i/lib".into(),
            folder: "/i".into(),
        });
        let p = Problem::open(&e);
        assert_eq!(p.error_code, FileErrorCode::Escaped);
        assert!(p.error.starts_with("refused: "), "{}", p.error);
        assert_eq!(p.error_params, Params::default());
    }

    #[test]
    fn the_codes_are_the_documented_strings() {
        // Append-only (docs/PROTOCOL.md, "Per-file error codes"): a rename breaks old add-ons.
        let all = [
            (FileErrorCode::Vanished, "vanished"),
            (FileErrorCode::Changed, "changed"),
            (FileErrorCode::Escaped, "escaped"),
            (FileErrorCode::NotRegular, "not_regular"),
            (FileErrorCode::OpenFailed, "open_failed"),
            (FileErrorCode::ReadFailed, "read_failed"),
            (FileErrorCode::MincoreFailed, "mincore_failed"),
            (FileErrorCode::FadviseFailed, "fadvise_failed"),
        ];
        for (code, text) in all {
            assert_eq!(serde_json::to_value(code).unwrap(), json!(text));
        }
    }
}
