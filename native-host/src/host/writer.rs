//! The one writer: frames go out whole, one at a time, behind a mutex, and none is over
//! Firefox's limit ([`MAX_OUTGOING`]): a message that would be is replaced by a
//! `reply_too_large` error for the same id.

use std::io::{self, Write};
use std::sync::Mutex;

use serde_json::json;

use super::log::{lock, log};
use crate::framing::{self, MAX_OUTGOING};
use crate::host::protocol::{Envelope, ErrorCode, Event, ReplyError};

/// stdout (or a test's sink), shared by the reader loop and the workers.
pub(super) struct Writer<W>(Mutex<W>);

impl<W: Write> Writer<W> {
    pub(super) fn new(out: W) -> Self {
        Writer(Mutex::new(out))
    }

    /// Serialise and write one final message. A message over Firefox's limit is replaced by a
    /// `reply_too_large` error for the same id (one that will not serialise, by an `io_error`).
    pub(super) fn send(&self, envelope: &Envelope) -> io::Result<()> {
        // Serialise before taking the lock: other threads' frames need not wait for it.
        let bytes = final_body(envelope);
        framing::write_frame(&mut *lock(&self.0), &bytes)
    }

    /// Like [`Self::send`], with the message made while the writer is held: whatever `make`
    /// does happens-before any other frame.
    pub(super) fn send_with(&self, make: impl FnOnce() -> Envelope) -> io::Result<()> {
        let mut out = lock(&self.0);
        framing::write_frame(&mut *out, &final_body(&make()))
    }

    /// Write one event of request `id`. `Ok(Some(error))` when it is over the limit: nothing is
    /// written, and `error` is for the request's final message (an event must not end it).
    /// An event that will not serialise (no path can make one any more: path_text.rs; kept as a
    /// guard) is logged and dropped: `Ok(None)`, as when it was written.
    pub(super) fn send_event(&self, id: u64, event: Event) -> io::Result<Option<ReplyError>> {
        let bytes = match encode(&Envelope::event(id, event)) {
            Ok(Encoded::Fits(bytes)) => bytes,
            Ok(Encoded::TooLarge(error)) => return Ok(Some(error)),
            Err(e) => {
                log(&format!(
                    "could not serialise an event of request {id}: {e}"
                ));
                return Ok(None);
            }
        };
        framing::write_frame(&mut *lock(&self.0), &bytes)?;
        Ok(None)
    }
}

/// A message serialised for the wire.
#[derive(Debug)]
enum Encoded {
    /// Its frame body, within [`MAX_OUTGOING`].
    Fits(Vec<u8>),
    /// It is over [`MAX_OUTGOING`]: the `reply_too_large` error that stands for it.
    TooLarge(ReplyError),
}

/// Serialise `envelope` once and check the size of the bytes.
fn encode(envelope: &Envelope) -> serde_json::Result<Encoded> {
    let bytes = serde_json::to_vec(envelope)?;
    let size = bytes.len();
    if size <= MAX_OUTGOING {
        return Ok(Encoded::Fits(bytes));
    }
    log(&format!(
        "a reply of {size} bytes is over the {MAX_OUTGOING}-byte limit"
    ));
    Ok(Encoded::TooLarge(ReplyError::new(
        ErrorCode::ReplyTooLarge,
        format!(
            "the reply would be {size} bytes, over Firefox's {MAX_OUTGOING}-byte limit; this \
             is a bug in the host, please report it"
        ),
        json!({ "size": size }),
    )))
}

/// The frame body of a final message: `envelope`, or the error that stands for it for the same
/// id when it is too large or will not serialise (that error is tiny, so always fits).
fn final_body(envelope: &Envelope) -> Vec<u8> {
    let error = match encode(envelope) {
        Ok(Encoded::Fits(bytes)) => return bytes,
        Ok(Encoded::TooLarge(error)) => error,
        Err(e) => ReplyError::internal(&format!("serialising a reply: {e}")),
    };
    let fallback = Envelope::error(envelope.id, error);
    serde_json::to_vec(&fallback).expect("a small error envelope serialises")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    use std::path::PathBuf;
    use std::sync::atomic::Ordering;

    use serde_json::json;

    use super::MAX_OUTGOING;
    use crate::host::protocol::{Event, Reply};
    use crate::host::test_support::{request, run};
    use crate::host::LongRunner;
    use crate::pagecache::residency::{self, FileReport, Group, Status};
    use crate::Error;

    /// A `residency` event for a file named `path`.
    fn file_event(path: impl Into<PathBuf>) -> Event {
        Event::File(FileReport {
            path: path.into(),
            group: Group::Install,
            size: 0,
            pages: 0,
            status: Status::Exact,
            hidden_reason: None,
            hidden_code: None,
            problem: None,
            resident_pages: Some(0),
            resident_ranges: Some(Vec::new()),
            range_unit_pages: 1,
            mapped: None,
        })
    }

    /// `residency`'s reply for an install folder named `install_dir`, with no files.
    fn scanned(install_dir: impl Into<PathBuf>) -> Reply {
        Reply::Residency(residency::Summary {
            install_dir: install_dir.into(),
            page_size: 4096,
            groups: BTreeMap::new(),
            elapsed_ms: 0,
        })
    }

    #[test]
    fn an_oversized_final_reply_becomes_reply_too_large() {
        let runner: Box<LongRunner> =
            Box::new(|_, _, _, _| Ok(scanned("x".repeat(MAX_OUTGOING + 10))));
        let (result, replies) = run(&request(&json!({"id": 1, "command": "evict"})), runner);
        result.unwrap();
        assert_eq!(replies.len(), 1);
        assert_eq!(replies[0]["code"], json!("reply_too_large"));
        assert!(replies[0]["params"]["size"].as_u64().unwrap() > MAX_OUTGOING as u64);
    }

    #[test]
    fn an_oversized_event_cancels_and_ends_the_request_with_reply_too_large() {
        let runner: Box<LongRunner> = Box::new(|_, _, cancel, emit| {
            emit(file_event("small"));
            emit(file_event("x".repeat(MAX_OUTGOING)));
            emit(file_event("never sent"));
            assert!(cancel.load(Ordering::Relaxed));
            Err(Error::Cancelled.into())
        });
        let (result, replies) = run(&request(&json!({"id": 1, "command": "residency"})), runner);
        result.unwrap();
        let statuses: Vec<_> = replies.iter().map(|r| r["status"].clone()).collect();
        assert_eq!(statuses, vec![json!("event"), json!("error")]);
        assert_eq!(replies[1]["code"], json!("reply_too_large"));
    }

    /// Issue 10 #6: a file name that is not UTF-8 used to make its event unserialisable
    /// (dropped, while the totals counted it) and the final reply an internal error. Both now
    /// carry the display text and the exact bytes (path_text.rs).
    #[test]
    fn paths_that_are_not_utf8_are_sent_with_their_bytes() {
        let runner: Box<LongRunner> = Box::new(|_, _, cancel, emit| {
            emit(file_event(OsString::from_vec(b"bad\xff".to_vec())));
            emit(file_event("good"));
            assert!(!cancel.load(Ordering::Relaxed));
            Ok(scanned(OsString::from_vec(b"/ff\xfe".to_vec())))
        });
        let (result, replies) = run(&request(&json!({"id": 1, "command": "residency"})), runner);
        result.unwrap();
        let statuses: Vec<_> = replies.iter().map(|r| r["status"].clone()).collect();
        assert_eq!(statuses, vec![json!("event"), json!("event"), json!("ok")]);
        assert_eq!(replies[0]["data"]["path"], json!("bad\u{fffd}"));
        assert_eq!(replies[0]["data"]["path_b64"], json!("YmFk/w=="));
        assert_eq!(replies[1]["data"]["path"], json!("good"));
        assert!(replies[1]["data"].get("path_b64").is_none());
        assert_eq!(replies[2]["data"]["install_dir"], json!("/ff\u{fffd}"));
        assert_eq!(replies[2]["data"]["install_dir_b64"], json!("L2Zm/g=="));
    }
}
