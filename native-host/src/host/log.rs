//! The log line (stderr: Firefox shows it in the Browser Console) and the lock that ignores
//! poisoning, used by every part of the loop.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Lock, ignoring poisoning: a panic elsewhere never leaves these maps or the writer half-done
/// (a frame is written under the lock by code that does not panic).
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A line for the Browser Console. Never `eprintln!`: it panics when stderr is broken (a closed
/// pipe, a hung-up terminal), and a log line must never stop the host.
pub(super) fn log(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "about-startup-host: {message}");
}
