//! about:startup's native host: everything the product does with the kernel.
//!
//! `main.rs` only decides between native-messaging mode and the CLI; both call into this library.
//! Modules, from the wire inwards:
//! - [`framing`]: length-prefixed frames over any `Read`/`Write`;
//! - [`protocol`]: the typed requests (`Command`), replies (`Reply`), events (`Event`) and error
//!   codes (see docs/PROTOCOL.md);
//! - [`host`]: the native-messaging loop: its reader loop, quick-command dispatch, long commands
//!   on threads with cancel flags, and the locked writer that keeps every frame under 1 MiB;
//! - [`cli`]: the command-line front end (clap, human tables, `--json`);
//! - [`install`]: the native-messaging manifest (install, uninstall, print);
//! - [`firefox`]: the Firefox process (parent or running): version, start time, I/O;
//! - [`files`]: which Firefox install folder, which files, and confinement to it;
//! - [`residency`], [`preload`], [`evict`]: the page-cache work;
//! - [`workingset`]: what a start needed (`learn`), kept and merged in the state folder;
//! - [`plan`]: the planned preload (ranges, gaps, disk order) and `plan_status`;
//! - [`autostart`]: the login-time preload (systemd user unit or XDG autostart);
//! - [`sys`]: the thin unsafe wrappers around the syscalls those three need;
//! - [`bench`]: the startup benchmark's `bench_record` (a record written to a file).

pub mod autostart;
pub mod bench;
pub mod cli;
pub mod error;
pub mod evict;
pub mod files;
pub mod firefox;
pub mod framing;
pub mod host;
pub mod install;
pub mod pace;
pub mod plan;
pub mod preload;
pub mod protocol;
pub mod residency;
pub mod sys;
pub mod trace;
pub mod workingset;

pub use error::Error;

/// The host's version, reported by `hello` and `--version`.
pub const HOST_VERSION: &str = env!("CARGO_PKG_VERSION");
/// Bumped when a request or reply changes incompatibly (docs/PROTOCOL.md).
pub const PROTOCOL_VERSION: u32 = 1;
/// The native-messaging host name the extension passes to `runtime.connectNative`.
pub const HOST_NAME: &str = "about_startup";
/// The extension's id (`browser_specific_settings.gecko.id`), allowed by the manifest by default.
pub const EXTENSION_ID: &str = "about-startup@startup-lab.dev";
