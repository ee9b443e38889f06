//! `launch --prefetch`: Firefox at once, the prefetcher beside it (learn/prefetch/launch.rs).
//! Only what is needed to name the binary happens before Firefox starts: no residency scan, no
//! plan, no dpkg lookup when `--firefox` is given.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _};

use crate::firefox::install as files;
use crate::learn::prefetch::{self, launch, strategy, Sizes};
use crate::os::binary::firefox_binary;
use crate::state;

use super::args::LaunchArgs;

/// The install folder and the executable to run: `--firefox` names either (an executable is
/// run as named: the desktop entry's own binary), else the Firefox found as for every command.
fn firefox_of(given: Option<&Path>) -> anyhow::Result<(PathBuf, PathBuf)> {
    let Some(given) = given else {
        let install = files::locate(None, None)?;
        let binary = firefox_binary(&install.dir).with_context(|| {
            format!(
                "no firefox executable in {}; name it with --firefox",
                install.dir.display()
            )
        })?;
        return Ok((install.dir, binary));
    };
    let real = given
        .canonicalize()
        .with_context(|| format!("--firefox {}", given.display()))?;
    let (dir, binary) = if real.is_file() {
        let dir = real.parent().map(Path::to_path_buf).unwrap_or_default();
        (dir, real)
    } else {
        let binary = firefox_binary(&real)
            .with_context(|| format!("no firefox executable in {}", real.display()))?;
        (real, binary)
    };
    if !files::looks_like_firefox(&dir) {
        bail!(
            "{} is not in a Firefox install folder (no application.ini beside it); name the folder \
             Firefox is installed in, or its executable there (not a wrapper script in /usr/bin)",
            given.display()
        );
    }
    Ok((dir, binary))
}

pub(super) fn prefetch_cmd(args: &LaunchArgs) -> anyhow::Result<()> {
    if state::acting_for()?.is_some() {
        bail!(
            "launch --prefetch needs no root and does not start Firefox for another user: run it \
             as yourself, without sudo"
        );
    }
    let (dir, binary) = firefox_of(args.firefox.as_deref())?;
    if args.cold {
        let selected = files::select(&dir, &[])?;
        let summary = crate::pagecache::evict::evict(&selected.folder, &selected.files);
        eprintln!(
            "evicted {} pages of {} files (a cold start)",
            summary.pages_dropped,
            selected.files.len()
        );
    }
    let mut firefox = Command::new(&binary);
    firefox.args(&args.args);
    let state_dir = match state::locate(None) {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("about-startup-host: no prefetch ({e}); starting Firefox without it");
            let err = std::os::unix::process::CommandExt::exec(&mut firefox);
            bail!("could not start {}: {err}", binary.display());
        }
    };
    let defaults = Sizes::default();
    let sizes = args.batches.map_or(defaults, |(first, max)| Sizes {
        first: first << 20,
        max: max << 20,
    });
    let read_ahead_kb = strategy::window_kb(&binary);
    let (strategy, reason) =
        strategy::decide(args.strategy.unwrap_or_default().into(), read_ahead_kb);
    let p = launch::Prefetch {
        strategy,
        reason,
        read_ahead_kb,
        install_dir: dir,
        state_dir,
        paced: args.idle,
        knobs: prefetch::Knobs {
            sizes,
            ahead: args.ahead_mib.map_or(prefetch::AHEAD, |m| m << 20),
            gap: args.gap_kib.map_or(prefetch::GAP, |k| k << 10),
            until_ms: args.until_ms,
            ..prefetch::Knobs::default()
        },
        verbose: true,
    };
    let err = launch::exec_beside(firefox, &p);
    bail!("could not start {}: {err}", binary.display())
}
