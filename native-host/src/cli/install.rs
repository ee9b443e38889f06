//! `install`, `uninstall` (and `manifest`, in `run`): the native-messaging manifest that lets the
//! about:startup extension start this host.

use anyhow::Context as _;

use crate::firefox::manifest;

/// What a system-wide (un)install that is not root itself is told: under sudo this host runs
/// the command as the user who asked (tracer/split.rs).
fn needs_root_itself(what: &str) -> String {
    format!(
        "{what} writes for every user, as root itself: run `{}` (under plain sudo this host \
         runs commands as you)",
        crate::invocation::current().run_as_root_itself(what)
    )
}

pub(super) fn install_cmd(system: bool, extension_id: &str) -> anyhow::Result<()> {
    let done = manifest::install(system, extension_id).with_context(|| {
        if system && crate::os::sys::geteuid() != 0 {
            needs_root_itself("install --system")
        } else {
            "install".to_owned()
        }
    })?;
    println!(
        "installed the native-messaging manifest {}",
        done.manifest.display()
    );
    println!("  host binary: {}", done.binary.display());
    println!("  allowed extension: {extension_id}");
    println!("Firefox reads it when the extension next connects; keep the binary where it is (or run install again after moving it).");
    Ok(())
}

pub(super) fn uninstall_cmd(system: bool) -> anyhow::Result<()> {
    let (manifest, removed) = manifest::uninstall(system).with_context(|| {
        if system && crate::os::sys::geteuid() != 0 {
            needs_root_itself("uninstall --system")
        } else {
            "uninstall".to_owned()
        }
    })?;
    if removed {
        println!("removed {}", manifest.display());
    } else {
        println!(
            "not installed: {} does not exist, nothing to remove",
            manifest.display()
        );
    }
    Ok(())
}
