//! The tracer confines itself once its tracefs instances are made and open: `no_new_privs`,
//! then Landlock (the `landlock` crate, best effort with the ABI this kernel has): `/proc` and
//! tracefs readable, nothing writable, nothing else readable, and one right more, removing a
//! folder beneath tracefs's `instances/`, so that the confined tracer can remove its own two
//! instances at the end (docs/design/privilege.md says why that and not an unconfined parent).
//! Writes to the control files it opened before still work: Landlock checks at open.
//!
//! Without Landlock (a kernel before 5.13, or built or booted without it) the tracer refuses to
//! run, unless root's own environment says `ABOUT_STARTUP_TRACER_WITHOUT_LANDLOCK=1`; pkexec
//! clears the environment, so only root itself or a sudo rule that passes the variable can.

use landlock::{
    Access, AccessFs, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, ABI,
};

use super::arm::{INSTANCES, TRACEFS};

/// The override for kernels without Landlock (root's own environment only).
pub const WITHOUT_LANDLOCK: &str = "ABOUT_STARTUP_TRACER_WITHOUT_LANDLOCK";

/// How confined the tracer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confined {
    Fully,
    /// Landlock with fewer rights handled than asked (an older ABI).
    Partly,
    /// No Landlock, by root's own override.
    NoLandlock,
}

/// The newest ABI this code knows; the crate downgrades to the kernel's.
const ABI_WANTED: ABI = ABI::V6;

/// Confine this thread (and what it starts later): call before any other thread exists.
/// `allow_without` is the override's value, read by the caller from root's own environment.
pub fn confine(allow_without: bool) -> Result<Confined, String> {
    rustix::thread::set_no_new_privs(true).map_err(|e| format!("no_new_privs: {e}"))?;
    let read: BitFlags<AccessFs> = AccessFs::ReadFile | AccessFs::ReadDir;
    let rule = |path: &str, access: BitFlags<AccessFs>| {
        PathFd::new(path)
            .map(|fd| PathBeneath::new(fd, access))
            .map_err(|e| format!("Landlock: {path}: {e}"))
    };
    let rules = [
        rule("/proc", read)?,
        rule(TRACEFS, read)?,
        rule(INSTANCES, AccessFs::RemoveDir.into())?,
    ];
    let landlock = |e: landlock::RulesetError| format!("Landlock: {e}");
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(ABI_WANTED))
        .map_err(landlock)?
        .create()
        .map_err(landlock)?;
    for r in rules {
        ruleset = ruleset.add_rule(r).map_err(landlock)?;
    }
    let status = ruleset.restrict_self().map_err(landlock)?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok(Confined::Fully),
        RulesetStatus::PartiallyEnforced => Ok(Confined::Partly),
        RulesetStatus::NotEnforced if allow_without => Ok(Confined::NoLandlock),
        RulesetStatus::NotEnforced => Err(format!(
            "this kernel does not enforce Landlock, and the tracer does not run unconfined; \
             on a kernel without Landlock, root may run it with {WITHOUT_LANDLOCK}=1 in its own \
             environment (docs/design/privilege.md)"
        )),
    }
}
