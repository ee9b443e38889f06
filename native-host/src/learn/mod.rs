//! Learning and planning: what a Firefox start needed ([`workingset`], kept and merged in the
//! state folder), the planned preload built from it ([`plan`]: ranges, gaps, disk order,
//! `plan_status`), the login-time preload ([`autostart`]) and the record of its last run
//! ([`last_run`]), the prefetch beside a launch ([`prefetch`]) and the desktop entry that sends
//! every launch through it ([`desktop`]). It builds on [`crate::firefox`] and [`crate::pagecache`]; the host and the CLI
//! call into it, never the other way round.

pub mod autostart;
pub mod desktop;
pub mod last_preload;
pub mod last_run;
pub mod pack;
pub mod packing;
pub mod plan;
pub mod prefetch;
pub mod workingset;
