//! about:startup's native host: everything the product does with the kernel.
//!
//! `main.rs` only decides between native-messaging mode and the CLI; both call into this library.
//! Folders by concern, from the kernel outwards:
//! - [`pagecache`]: the kernel-facing primitives: the `mincore` view of a file, the residency
//!   scan, preload (paced or not), evict, FIEMAP, and `sys`, the only module with `unsafe`;
//! - [`firefox`]: knowing Firefox: the install folder and its files (with confinement), its
//!   `application.ini`, the running process tree and its `/proc` figures;
//! - [`learn`]: what a start needed (working set), the planned preload built from it and its
//!   status, the login-time preload (autostart) and the record of its last run;
//! - [`host`]: the native-messaging side: framing, the protocol's types, the loop (reader,
//!   dispatch, long commands, writer), plus the two things only it needs: the native-messaging
//!   manifest that registers it with Firefox (`manifest`) and the benchmark's `bench_record`
//!   (`bench`), both answers to "how does Firefox talk to this host";
//! - [`cli`]: the command-line front end: clap's definitions, one file per command (or small
//!   group), and the human rendering (tables, progress bar); the only module that knows clap;
//! - [`error`]: the library's [`Error`] and the protocol's error codes, shared by all.
//!
//! The dependency rule: `cli`, `host` → `learn` → `firefox` → `pagecache`; `error` is used by
//! all and uses none. Nothing points back up (the host's protocol types are read by the CLI's
//! `--json` output, the only sideways edge), so a new capability (a startup trace) goes in the
//! folder of its concern and touches no cycle.

pub mod cli;
pub mod error;
pub mod firefox;
pub mod host;
pub mod learn;
pub mod pagecache;

pub use error::Error;

/// The host's version, reported by `hello` and `--version`.
pub const HOST_VERSION: &str = env!("CARGO_PKG_VERSION");
/// Bumped when a request or reply changes incompatibly (docs/PROTOCOL.md).
pub const PROTOCOL_VERSION: u32 = 1;
/// The native-messaging host name the extension passes to `runtime.connectNative`.
pub const HOST_NAME: &str = "about_startup";
/// The extension's id (`browser_specific_settings.gecko.id`), allowed by the manifest by default.
pub const EXTENSION_ID: &str = "about-startup@startup-lab.dev";
