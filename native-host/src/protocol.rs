//! The one typed definition of the native-messaging protocol (docs/PROTOCOL.md).
//! OWNER: protocol helper. Requests are a serde enum tagged by `command`; replies/events share
//! one envelope. Keep docs/PROTOCOL.md in step with every change here.

use serde::{Deserialize, Serialize};

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
}
