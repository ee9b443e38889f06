//! The native-messaging side (see `serve.rs` for the loop).

pub mod bench;
mod context;
mod dispatch;
pub mod framing;
pub mod manifest;
pub mod protocol;
mod runner;
mod serve;
#[cfg(test)]
mod test_support;
mod work;
mod writer;

pub use serve::*;
use serve::{finish, guarded, lock, log, Shared};
