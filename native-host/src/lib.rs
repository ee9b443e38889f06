//! about:startup's native host: everything the product does with the kernel.
//!
//! `main.rs` only decides between native-messaging mode and the CLI; both call into this library.
//! Folders by concern, from the kernel outwards:
//! - [`pagecache`]: the kernel-facing primitives: the `mincore` view of a file, the residency
//!   scan, preload (paced or not), evict, FIEMAP, `beneath` (every requested file is opened
//!   beneath a held folder descriptor, never by path), and `sys`, the only module with `unsafe`;
//! - [`firefox`]: knowing Firefox: the install folder and its files (with confinement), its
//!   `application.ini`, the running process tree and its `/proc` figures;
//! - [`learn`]: what a start needed (working set), the planned preload built from it (or from
//!   stored traces: `trace::plan_source`) and its status, the login-time preload (autostart)
//!   and the record of its last run;
//! - [`trace`]: the startup I/O trace: a private tracefs instance (or, without root, /proc
//!   sampling) turned into which pages of which files the Firefox tree read, when and where on
//!   the disk; stored traces for the page (its `launch`/`trace` commands are in `cli`);
//! - [`export`]: the trace as a profile the Firefox Profiler loads: alone (processed format,
//!   `fxprof-processed-profile`) or merged into Firefox's own startup profile (Gecko format);
//! - [`relaunch`]: "Restart cold": wait for a Firefox to quit, evict its files, start it again
//!   the same way; started detached by the host so it outlives Firefox, it records each step in
//!   the state folder for the page of the restarted Firefox;
//! - [`state`]: the one home of what the host keeps: the state folder of the user it works for
//!   (root under sudo or pkexec acts for the user who asked: `state::user`), held open by
//!   descriptor, with bounded reads, atomic writes that follow no symlink, and the lock;
//! - [`host`]: the native-messaging side: framing, the protocol's types, the loop (reader,
//!   dispatch, long commands, writer), plus `manifest` (the native-messaging manifest that
//!   registers this host with Firefox) and `bench` (the benchmark's `bench_record`): both are
//!   about how Firefox talks to this host, not about the page cache or planning, so they live
//!   here rather than in a folder of their own;
//! - [`cli`]: the command-line front end: clap's definitions, one file per command (or small
//!   group), and the human rendering (tables, progress bar); the only module that knows clap;
//! - [`error`]: the library's [`Error`] and the protocol's error codes, shared by all;
//! - [`note`]: the codes (and params) of the notes replies carry, for the extension to word;
//! - [`invocation`]: how a person runs this binary (bare name or absolute path, with or without
//!   sudo), for every command the page, `--help` and the CLI's notes print;
//! - [`path_text`]: the one JSON encoding of a path (display text, plus the exact bytes where
//!   they are not UTF-8), used by every serialised path field.
//!
//! The dependency rule: `cli`, `host` → `export` → `learn`, `trace` → `firefox` → `state` →
//! `pagecache`; a folder may use any folder to its right, never one to its left, and no two files
//! import each other (a folder's `mod.rs` names its files and imports nothing back from them);
//! `error`, `note`, `path_text`, `invocation` are used by all and use none. `state` is the ground
//! floor every feature keeps its files on: it uses only `pagecache`'s syscall wrappers (`sys`,
//! `beneath`). `learn`, `trace` and `relaunch` sit side by side (`relaunch` runs a traced launch
//! as a separate process, not through `trace`'s code, and asks `host::manifest` the one rule for a
//! binary root may run, a sideways edge like `cli`'s): `learn::plan` reads stored traces
//! (`trace::plan_source`), and nothing in `trace` uses `learn`. The other sideways edge is `cli` →
//! `host::manifest` (the `install` and `manifest` commands write what registers the host). So a
//! new capability (a startup trace) goes in the folder of its concern and touches no cycle.

pub mod cli;
pub mod error;
pub mod export;
pub mod firefox;
pub mod host;
pub mod invocation;
pub mod learn;
pub mod note;
pub mod os;
pub mod pagecache;
pub mod path_text;
pub mod relaunch;
pub mod state;
pub mod trace;

pub use error::Error;

/// The host's version, reported by `hello` and `--version`.
pub const HOST_VERSION: &str = env!("CARGO_PKG_VERSION");
/// Bumped when a request or reply changes incompatibly (docs/PROTOCOL.md).
pub const PROTOCOL_VERSION: u32 = 1;
/// The native-messaging host name the extension passes to `runtime.connectNative`.
pub const HOST_NAME: &str = "about_startup";
/// The extension's id (`browser_specific_settings.gecko.id`), allowed by the manifest by default.
pub const EXTENSION_ID: &str = "about-startup@startup-lab.dev";
