//! about:startup's native host: everything the product does with the kernel.
//!
//! `main.rs` only decides between native-messaging mode and the CLI; both call into this library.
//! Folders by concern, from the ground floor up:
//! - [`os`]: the ground floor, what the operating system offers: `sys` (the syscall wrappers),
//!   `beneath` (every requested file is opened beneath a held folder
//!   descriptor, never by path), `proc` (the one reader of `/proc`, bounded, and its pure
//!   parsers), `clock` (wall, monotonic and boot clocks), `binary` (this binary, Firefox's
//!   binary in an install, and the rule for a binary another user or root will run);
//! - [`tracer`]: the one part that runs as root (`about-startup-host tracer`, reached through
//!   pkexec, the sudo split or root's own commands): it arms the kernel's tracing for one process
//!   tree of the invoking user, confined by Landlock, and hands over only that tree's lines over
//!   one typed protocol; `start` decides, before anything is parsed, whether this run is the
//!   tracer, the sudo split, a refusal or the CLI. It uses only `os` and `framing`;
//! - [`state`]: the one home of what the host keeps: the state folder of the user it runs as
//!   (under sudo the command runs as the user: `state::user` finds their `XDG_STATE_HOME`),
//!   held open by descriptor, with bounded reads, atomic writes that follow no symlink, and the
//!   lock;
//! - [`pagecache`]: the page cache, kernel-facing: the `mincore` view of a file, the residency
//!   scan, preload (paced or not), evict;
//! - [`firefox`]: knowing Firefox: the install folder and its files (with confinement), its
//!   `application.ini`, the running process tree, its Telemetry archive and startup profile,
//!   and the native-messaging manifest that registers this host with it (`manifest`);
//! - [`trace`]: the startup I/O trace: the tracer's lines (or, without it, /proc sampling)
//!   turned into which pages of which files the Firefox tree read, when and where on the disk;
//!   stored traces for the page;
//! - [`learn`]: what a start needed (working set), the planned preload built from it (or from
//!   stored traces: `trace::plan_source`) and its status, the launch prefetch, the login-time
//!   preload (autostart, desktop entry) and the record of its last run;
//! - [`export`]: the trace as a profile the Firefox Profiler loads: alone (processed format,
//!   `fxprof-processed-profile`) or merged into Firefox's own startup profile (Gecko format);
//! - [`launch`]: the launch pipeline, as the user: reaching the tracer, the held launcher, a
//!   recorded start and `trace --pid`, Firefox's own profile, the prefetch launch; called
//!   in-process by the CLI and `relaunch`;
//! - [`relaunch`]: "Restart cold": wait for a Firefox to quit, evict its files, start it again
//!   the same way (traced: through the launch pipeline); started detached by the host so it
//!   outlives Firefox, it records each step in the state folder for the page of the restarted
//!   Firefox;
//! - [`host`]: the native-messaging side: the protocol's types, the loop (reader,
//!   dispatch, long commands, writer) and `bench` (the benchmark's `bench_record`);
//! - [`cli`]: the command-line front end: clap's definitions, one file per command (or small
//!   group), and the human rendering (tables, progress bar); the only module that knows clap.
//!
//! Five leaf files are the floor's vocabulary rather than the operating system's, so they stay
//! beside `os`, below it, and use nothing of the crate (but `note`, which writes sizes by the
//! rule of `units`): [`error`] (the library's [`Error`] and
//! the protocol's error codes), [`path_text`] (the one JSON encoding of a path: display text,
//! plus the exact bytes where they are not UTF-8), [`note`] (the codes and params of the notes
//! replies carry, for the extension to word), [`units`] (the one rule for writing megabytes,
//! and for a time given in ms), [`invocation`] (how a person runs this binary: bare name or
//! absolute path, with or without sudo, for every command the page, `--help` and the CLI's
//! notes print) and [`framing`] (length-prefixed frames, of native messaging and of
//! the tracer's protocol). `lib.rs` itself holds only the crate's constants below.
//!
//! The layers, from the ground floor up: `error`, `path_text`, `units`, `note`, `invocation`,
//! `framing`, `os`, `tracer`, `state`, `pagecache`, `firefox`, `trace`, `learn`, `export`,
//! `launch`, `relaunch`, `host`, `cli`. A module may use those before it, never one after it; no
//! two files use each other (a folder's `mod.rs` names its files and re-exports, and no file uses
//! it back); no file but a test imports `super::*`; only `cli` knows clap; `tracer` uses only `os`
//! and `framing` (what runs as root stays small). `tests/layering.rs` checks all five and holds
//! the same list. Today `host` and `cli` do not use each other, and `learn::plan` reads stored
//! traces (`trace::plan_source`) while nothing in `trace` uses `learn`. So a new capability goes
//! in the folder of its concern, and what everything needs goes down to the floor.
//!
//! Tests: a module's unit tests are its `#[cfg(test)] mod tests`, inline or, when long, in
//! `tests.rs` (for a `mod.rs`) or `<name>_tests.rs` (for `<name>.rs`) beside it; black-box tests
//! of the binary are in `native-host/tests/`. `tests/layering.rs` checks that too.

pub mod cli;
pub mod error;
pub mod export;
pub mod firefox;
pub mod framing;
pub mod host;
pub mod invocation;
pub mod launch;
pub mod learn;
pub mod note;
pub mod os;
pub mod pagecache;
pub mod path_text;
pub mod relaunch;
pub mod state;
pub mod trace;
pub mod tracer;
pub mod units;

pub use error::Error;

/// The host's version, reported by `hello` and `--version`.
pub const HOST_VERSION: &str = env!("CARGO_PKG_VERSION");
/// Bumped when a request or reply changes incompatibly (docs/PROTOCOL.md).
pub const PROTOCOL_VERSION: u32 = 1;
/// The native-messaging host name the extension passes to `runtime.connectNative`.
pub const HOST_NAME: &str = "about_startup";
/// The extension's id (`browser_specific_settings.gecko.id`), allowed by the manifest by default.
pub const EXTENSION_ID: &str = "about-startup@startup-lab.dev";
