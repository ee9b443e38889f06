//! `install`, `uninstall` (and `manifest`, in `run`): the native-messaging manifest that lets the
//! about:startup extension start this host.

use crate::firefox::manifest;

pub(super) fn install_cmd(system: bool, extension_id: &str) -> anyhow::Result<()> {
    let done = manifest::install(system, extension_id)?;
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
    let (manifest, removed) = manifest::uninstall(system)?;
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
