//! The tracer's one protocol, both directions, typed: frames of [`crate::framing`] (a 4-byte
//! native-endian length, then JSON), one serde enum per direction. The user's side sends
//! [`Request`]s, the tracer sends [`Reply`]s (docs/PROTOCOL.md, "The tracer"). Anything that is
//! not exactly one of these requests is refused and ends the session. Only what the user's side
//! uses is said: when the tracer was armed, the user's side reads from its own clock on `Armed`.

use serde::{Deserialize, Serialize};

/// Bumped when a message changes incompatibly; the user's side refuses a tracer of another
/// version (the packaged tracer and a host built from source may differ). 2: `ready` without
/// `uid`, `armed` without fields. 3: `done.ended` may be `lost`; `page_flags` only for frames
/// that still show a page of the page cache.
pub const VERSION: u32 = 3;

/// The largest request frame the tracer reads: a request is a few dozen bytes.
pub const MAX_REQUEST: usize = 4096;

/// Largest `Lines` frame the tracer sends (well under the framing's limit): lines are batched
/// into frames of about this much text.
pub const LINES_PER_FRAME_BYTES: usize = 256 * 1024;

/// User → tracer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Follow process `pid` (one of the invoking user's) and its descendants; with `faults`
    /// also which instruction faulted each page in.
    Follow { pid: i32, faults: bool },
    /// Stop: the tracer drains, sends the page frames' flags and `Done`, and ends. (A struct
    /// variant: serde refuses unknown fields only there.)
    Stop {},
}

/// Why a session ended (`Done.ended`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// The user's side sent `Stop`.
    Stop,
    /// The user's side went away (its end closed).
    Eof,
    /// The hard limit (time or bytes), which no input changes.
    Limit,
    /// The tracer was told to end (SIGTERM).
    Signal,
    /// A request was refused.
    Refused,
    /// The kernel's buffers lost lines the proof of which task is the tree's depends on: nothing
    /// recorded after them was handed over.
    Lost,
}

/// Why a request was refused (`Refused.code`; append-only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// The process is not wholly the invoking user's (a uid, gid or capability differs).
    NotYours,
    /// No such process (or it exited, or is a zombie).
    NoProcess,
    /// A second `Follow`.
    OutOfOrder,
    /// Not a request of this protocol (unknown, malformed, too large).
    Malformed,
    /// The kernel's tracing could not be armed (an event missing, Landlock, an I/O error).
    Unavailable,
    /// tracefs is not there and could not be mounted.
    NoTracefs,
    /// Another trace of the same user is being recorded, or the machine's most at once are.
    InstanceTaken,
}

/// Tracer → user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// Started, armed as far as it can be without a pid, and confined.
    Ready {
        version: u32,
    },
    /// Following: the tree's events are recorded from now on.
    Armed,
    Refused {
        code: Refusal,
        message: String,
    },
    /// Trace lines of the followed tree, filtered and rewritten (tracer/filter.rs), in the
    /// kernel's order; `lost`: events the kernel or the filter could not deliver since the last.
    Lines {
        lines: Vec<String>,
        lost: u64,
    },
    /// After `Stop`: each page frame token's `/proc/kpageflags` word (possibly in several
    /// frames), for the frames that still show a page of the page cache.
    PageFlags {
        flags: Vec<(u64, u64)>,
    },
    /// The last message.
    Done {
        lost_events: u64,
        ended: Ended,
    },
}

/// A request's bytes, or why they are none. Pure: the fuzz target drives it.
pub fn decode(body: &[u8]) -> Result<Request, String> {
    if body.len() > MAX_REQUEST {
        return Err(format!("a request of {} bytes", body.len()));
    }
    serde_json::from_slice(body).map_err(|e| e.to_string())
}

/// A reply as JSON bytes.
#[must_use]
pub fn encode(reply: &Reply) -> Vec<u8> {
    serde_json::to_vec(reply).expect("a reply is plain data")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_requests_decode_and_nothing_else_does() {
        assert_eq!(
            decode(br#"{"type":"follow","pid":42,"faults":true}"#),
            Ok(Request::Follow {
                pid: 42,
                faults: true
            })
        );
        assert_eq!(decode(br#"{"type":"stop"}"#), Ok(Request::Stop {}));
        for bad in [
            &br#"{"type":"follow","pid":42}"#[..],
            br#"{"type":"follow","pid":42,"faults":true,"path":"/etc/shadow"}"#,
            br#"{"type":"follow","pid":"42","faults":true}"#,
            br#"{"type":"follow","pid":1e400,"faults":true}"#,
            br#"{"type":"arm","pid":42}"#,
            br#"{"type":"stop","x":1}"#,
            b"\xff",
            b"",
        ] {
            assert!(decode(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        let long = format!(r#"{{"type":"stop"{}}}"#, " ".repeat(MAX_REQUEST));
        assert!(decode(long.as_bytes()).is_err());
    }

    #[test]
    fn replies_round_trip() {
        for reply in [
            Reply::Ready { version: 1 },
            Reply::Armed,
            Reply::Refused {
                code: Refusal::NotYours,
                message: "no".into(),
            },
            Reply::Lines {
                lines: vec!["x".into()],
                lost: 2,
            },
            Reply::PageFlags {
                flags: vec![(1, 0x2c)],
            },
            Reply::Done {
                lost_events: 0,
                ended: Ended::Eof,
            },
        ] {
            let bytes = encode(&reply);
            assert_eq!(serde_json::from_slice::<Reply>(&bytes).unwrap(), reply);
        }
        assert_eq!(encode(&Reply::Armed), br#"{"type":"armed"}"#);
    }
}
