//! Errors of a whole request or CLI run. Per-file problems are not errors here: they are a
//! `status: "error"` on that file's entry, and the run goes on (as vmtouch does).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{} is outside Firefox's install folder {}; name files inside it", path.display(), install_dir.display())]
    OutsideInstallDir { path: PathBuf, install_dir: PathBuf },

    #[error("{} does not exist", path.display())]
    NoSuchFile { path: PathBuf },

    #[error("no Firefox found: {0}")]
    FirefoxNotFound(String),

    #[error("no Firefox profile found: {0}")]
    ProfileNotFound(String),
    #[error("cancelled")]
    Cancelled,

    #[error("the request names {count} files or folders; at most {limit} per request: name their folder instead, or split the request")]
    TooManyFiles { count: usize, limit: usize },

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The stable protocol code for this error (docs/PROTOCOL.md, "Error codes").
    #[must_use]
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::OutsideInstallDir { .. } => ErrorCode::OutsideInstallDir,
            Error::NoSuchFile { .. } => ErrorCode::NoSuchFile,
            Error::FirefoxNotFound(_) => ErrorCode::FirefoxNotFound,
            Error::ProfileNotFound(_) => ErrorCode::ProfileNotFound,
            Error::Cancelled => ErrorCode::Cancelled,
            Error::TooManyFiles { .. } => ErrorCode::TooManyFiles,
            Error::Io { .. } => ErrorCode::IoError,
        }
    }

    /// The values the message names, for the reply's `params`.
    #[must_use]
    pub fn params(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            Error::OutsideInstallDir { path, install_dir } => {
                json!({"path": path, "install_dir": install_dir})
            }
            Error::NoSuchFile { path } => json!({"path": path}),
            Error::FirefoxNotFound(detail) | Error::ProfileNotFound(detail) => {
                json!({"detail": detail})
            }
            Error::Cancelled => json!({}),
            Error::TooManyFiles { count, limit } => json!({"count": count, "limit": limit}),
            Error::Io { context, source } => json!({"detail": format!("{context}: {source}")}),
        }
    }

    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

/// The protocol's error codes live here, beside the errors they name, so that the library's
/// errors need nothing from the host; `host::protocol` re-exports them.
/// Stable, append-only error codes. Never change or reuse a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    BadUtf8,
    BadJson,
    BadRequest,
    UnknownCommand,
    FrameTooLarge,
    TruncatedFrame,
    OutsideInstallDir,
    NoSuchFile,
    FirefoxNotFound,
    Cancelled,
    IoError,
    ReplyTooLarge,
    UnknownRequest,
    NotBenchmarking,
    TooManyFiles,
    Busy,
    NoSuchTrace,
    ProfileNotFound,
    /// `desktop` `enable` refused (params: `reason`, the status's problem code).
    DesktopRefused,
}
