//! The native-messaging side: the protocol's types and the loop (frames: `crate::framing`), plus `manifest` (the
//! native-messaging manifest that registers this host with Firefox) and `bench` (the benchmark's
//! `bench_record`).
//!
//! This file only names the parts; none of them imports anything back from here:
//! - `serve`: [`run_stdio`] and [`serve`], the reader loop;
//! - `shared`: what the loop's parts share (the connection's state, the long command's shape);
//! - `log`: the log line and the lock that ignores poisoning;
//! - `running`: the cancel flags of the running long commands and their bound;
//! - `guard`: a command's final message, and panics caught;
//! - `context`: the Firefox being served ([`Context`]);
//! - `dispatch`: quick commands, answered on the reader's thread;
//! - [`imports`]: imported traces sent in pages, and the redacted text being fetched;
//! - `work`: long commands on their own threads, with cancel flags;
//! - `runner`: the real work of the long commands ([`run_long`]);
//! - `writer`: the locked frame writer and its size guard;
//! - [`protocol`]: the typed requests, replies, events and error codes (docs/PROTOCOL.md);
//! - [`bench`]: `bench_record`, the startup benchmark's record written to a file;
//! - [`manifest`]: the native-messaging manifest that registers this host with Firefox.

pub mod bench;
mod context;
mod dispatch;
mod guard;
pub mod imports;
mod log;
pub mod protocol;
mod runner;
mod running;
mod serve;
mod shared;
#[cfg(test)]
mod test_support;
mod work;
mod writer;

pub use context::Context;
pub use runner::run_long;
pub use serve::{run_stdio, serve, serve_with};
pub use shared::{Emit, LongRunner};
