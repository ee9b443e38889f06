//! Which Firefox and which of its files a command works on: `--firefox`, the paths, and the
//! running Firefox when a command wants its mappings.

use std::path::PathBuf;

use crate::firefox::{
    self,
    install::{Install, Selection},
};
use crate::os::beneath::Folders;
use crate::pagecache::Cache;

use super::args::Target;

/// The install folder to work on, and the running Firefox of that folder if there is one (its
/// mappings are what an ordinary user can see). `want_process`: whether the caller uses that
/// process; looking for it scans all of /proc, which costs more than a residency scan itself, so
/// with `--firefox DIR` it is skipped when nobody needs it.
pub(super) fn find_firefox(
    target: &Target,
    want_process: bool,
) -> anyhow::Result<(Install, Option<i32>)> {
    let (install, running) = match &target.firefox {
        // The running Firefox of that install, not the oldest of all (another install's).
        Some(dir) => {
            let install = firefox::install::locate(Some(dir), None)?;
            let running = want_process
                .then(|| firefox::process::find_running_in(Some(&install.dir)))
                .flatten();
            (install, running)
        }
        None => {
            let running = firefox::process::find_running();
            (firefox::install::locate(None, running)?, running)
        }
    };
    let pid = running.filter(|&pid| {
        want_process
            && firefox::process::inspect(pid).is_ok_and(|info| info.install_dir == install.dir)
    });
    if !target.json {
        let version = install.version.as_deref().unwrap_or("of unknown version");
        eprintln!(
            "Firefox {version} in {} (found by {})",
            install.dir.display(),
            install.found_by
        );
        eprintln!("Install: {}", install.kind.describe_line());
    }
    Ok((install, pid))
}

/// The paths a preload or evict of `cache` works on (install::with_cache), the held folders to
/// open them beneath (install::cache_folders), and the cache used.
pub(super) fn select_cache(
    install: &Install,
    target: &Target,
    cache: Cache,
) -> anyhow::Result<(Folders, Vec<PathBuf>, Cache)> {
    let (folder, selected) = if cache == Cache::Image {
        (None, Vec::new())
    } else {
        let selection = select(install, target)?;
        (Some(selection.folder), selection.files)
    };
    let (paths, used) =
        firefox::install::with_cache(install, selected, !target.paths.is_empty(), cache)
            .ok_or_else(|| {
                anyhow::anyhow!(if target.paths.is_empty() {
                    "--cache image: no squashfs image is known behind this install (neither a loop device nor a packed install's squashfuse mount), or the loop device reads its image with direct I/O (never cached)"
                } else {
                    "--cache image acts on the whole image: leave out the paths"
                })
            })?;
    Ok((firefox::install::cache_folders(folder, &paths), paths, used))
}

/// The files of `target` (all of the install folder without paths), confined to it, and the
/// install folder held open to open them beneath.
pub(super) fn select(install: &Install, target: &Target) -> anyhow::Result<Selection> {
    Ok(firefox::install::select(&install.dir, &target.paths)?)
}
