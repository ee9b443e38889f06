//! The one typed definition of the native-messaging protocol (docs/PROTOCOL.md).
//! Requests are a serde enum tagged by `command` ([`Command`]), decoded here; replies
//! ([`Reply`]), events ([`Event`]) and errors ([`ReplyError`]) share one envelope ([`Envelope`],
//! in `reply.rs`). Keep docs/PROTOCOL.md in step with every change here.
//!
//! Decoding is a pure function, [`decode_request`], so the host loop, the unit tests and the
//! fuzz target all go through exactly the same steps.

mod reply;
mod request;
pub use reply::*;

pub use request::{
    decode_request, BrowserHint, Cache, Command, DecodeError, DesktopAction, ErrorCode, ReplyError,
    Request, JOBS_RANGE, MAX_ID,
};
