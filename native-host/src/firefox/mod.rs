//! Knowing Firefox: which install folder and which of its files ([`install`], with the
//! confinement that keeps every path inside it), what its `application.ini` says ([`app_ini`]),
//! the running Firefox's process tree and `/proc` figures ([`process`]), and past sessions'
//! milestones from the profile's archived Telemetry pings ([`telemetry`]). It depends only on
//! [`crate::pagecache::sys`] (euid, clock ticks); learning, the host and the CLI build on it.

pub mod app_ini;
pub mod install;
pub mod process;
pub mod telemetry;
