//! The tracer confines itself once its tracefs instances are made and open: `no_new_privs`,
//! then Landlock (the `landlock` crate, best effort with the ABI this kernel has): `/proc` and
//! tracefs readable, nothing writable, nothing else readable, and one right more, removing a
//! folder beneath tracefs's `instances/`, so that the confined tracer can remove its own two
//! instances at the end (docs/design/privilege.md says why that and not an unconfined parent).
//! Writes to the control files it opened before still work: Landlock checks at open.
//!
//! Without Landlock at ABI 3 at least (Linux 6.2: truncate is covered from there; below it a
//! descriptor-less truncate of any file would stay allowed), or built or booted without it, the
//! tracer refuses to run, unless root's own environment says `ABOUT_STARTUP_TRACER_WITHOUT_LANDLOCK=1`; pkexec
//! clears the environment, and the pkexec route does not look at it anyway, so only root itself
//! or a sudo rule that passes the variable can.

use landlock::{
    path_beneath_rules, Access, AccessFs, LandlockStatus, Ruleset, RulesetAttr, RulesetCreatedAttr,
    ABI,
};

use super::arm::{INSTANCES, TRACEFS};

/// The override for kernels without Landlock (root's own environment only).
pub const WITHOUT_LANDLOCK: &str = "ABOUT_STARTUP_TRACER_WITHOUT_LANDLOCK";

/// Confine this thread (and what it starts later): call before any other thread exists.
/// `may_override`: whether [`WITHOUT_LANDLOCK`] is looked at (not on pkexec's route).
pub fn confine(may_override: bool) -> Result<(), String> {
    rustix::thread::set_no_new_privs(true).map_err(|e| format!("no_new_privs: {e}"))?;
    let landlock = |e: landlock::RulesetError| format!("Landlock: {e}");
    // ABI 6 is the newest this code knows; the crate downgrades to the kernel's. A path that
    // cannot be opened gets no rule: nothing is allowed there.
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(ABI::V6))
        .and_then(|r| r.create())
        .and_then(|r| {
            r.add_rules(path_beneath_rules(
                ["/proc", TRACEFS],
                AccessFs::ReadFile | AccessFs::ReadDir,
            ))
        })
        .and_then(|r| r.add_rules(path_beneath_rules([INSTANCES], AccessFs::RemoveDir)))
        .and_then(|r| r.restrict_self())
        .map_err(landlock)?;
    let allowed = may_override && std::env::var_os(WITHOUT_LANDLOCK).is_some_and(|v| v == "1");
    let enough = matches!(status.landlock, LandlockStatus::Available { effective_abi, .. } if effective_abi >= ABI::V3);
    if !enough && !allowed {
        return Err(format!(
            "this kernel does not enforce Landlock at ABI 3 (Linux 6.2) or later, and the \
             tracer does not run less confined; on such a kernel, root may run it with \
             {WITHOUT_LANDLOCK}=1 in its own environment (docs/design/privilege.md)"
        ));
    }
    Ok(())
}
