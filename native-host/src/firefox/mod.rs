//! Knowing Firefox: which install folder and which of its files ([`install`], with the
//! confinement that keeps every path inside it), what its `application.ini` says ([`app_ini`]),
//! what kind of install it is ([`kind`]: package, tarball, Snap, Flatpak; from who owns it and
//! the mount it is on, [`mount`], with a Snap's loop image), the running Firefox's process tree
//! and `/proc` figures ([`process`]), which Firefox the host serves when its parent is not
//! Firefox ([`served`]), and past sessions' milestones from the profile's archived Telemetry
//! pings ([`telemetry`], their mozlz4 files [`mozlz4`]); the parts of a user's profile a start reads ([`profile_parts`]: the
//! session, places, each add-on, the startup cache…) and what the profile says about its
//! add-ons and session ([`profile_facts`], read as the profile's owner); the entries of its `omni.ja` archives ([`omni`], a bounded zip directory
//! parser) and its own startup profile ([`startup_profile`]: the Gecko profiler's environment, the
//! signal that dumps it, and reading the dump); whether a start reached sessionRestored, from the
//! checkpoints Firefox writes in the profile ([`checkpoints`]). It depends only on [`crate::os::sys`] (euid, clock ticks);
//! learning, the host and the CLI build on it.

pub mod app_ini;
pub mod checkpoints;
pub mod compressed;
pub mod install;
pub mod kind;
pub mod manifest;
pub mod mount;
pub mod mozlz4;
pub mod omni;
pub mod packed;
pub mod process;
pub mod profile_facts;
pub mod profile_parts;
pub mod profiles_ini;
pub mod served;
pub mod startup_profile;
pub mod telemetry;
