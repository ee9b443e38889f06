//! A command's outcome: its final message, and panics caught so one bug does not take the host
//! (and the extension's port) down.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::log::log;
use super::protocol::{Envelope, Reply, ReplyError};

/// The final message of request `id`.
pub(super) fn finish(id: u64, result: Result<Reply, ReplyError>) -> Envelope {
    match result {
        Ok(data) => Envelope::ok(id, data),
        Err(error) => Envelope::error(Some(id), error),
    }
}

/// Run `f`, turning a panic into an `io_error` reply: a bug in one command must not take the
/// whole host (and the extension's port) down with it.
pub(super) fn guarded<T>(f: impl FnOnce() -> Result<T, ReplyError>) -> Result<T, ReplyError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let message = panic_message(panic.as_ref());
        log(&format!("a command panicked: {message}"));
        Err(ReplyError::internal(&message))
    })
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}
