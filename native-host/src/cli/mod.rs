//! The command-line front end: the same library as host mode, with human tables or `--json`.
//! Human output goes to stdout, notes about what was chosen go to stderr (so `--json` output
//! and tables can be piped), progress only when stderr is a terminal.
//!
//! - [`args`]: the clap definitions (the only place that knows clap);
//! - one file per command or small group: [`residency`], [`preload`], [`evict`], [`learn`] (with
//!   `plan`), [`autostart`], [`install`] (`install`, `uninstall`);
//! - [`render`]: tables, the progress bar, and number formatting.

mod args;
mod autostart;
mod evict;
mod install;
mod learn;
mod preload;
mod render;
mod residency;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use clap::Parser;
use serde::Serialize;

use crate::firefox::{self, install::Install};
use crate::host::manifest;

use args::{Cli, Cmd, Target};

/// Parse `args` (usage errors exit with status 2, as clap does) and run the command.
pub fn run<I, T>(args: I) -> anyhow::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    crate::pagecache::sys::default_sigpipe();
    match Cli::parse_from(args).command {
        Cmd::Residency(args) => residency::residency_cmd(&args),
        Cmd::Preload(args) => preload::preload_cmd(&args),
        Cmd::Evict(args) => evict::evict_cmd(&args),
        Cmd::Learn(args) => learn::learn_cmd(&args),
        Cmd::Plan(args) => learn::plan_cmd(&args),
        Cmd::Autostart(cmd) => autostart::autostart_cmd(&cmd),
        Cmd::Install {
            system,
            extension_id,
        } => install::install_cmd(system, &extension_id),
        Cmd::Uninstall { system } => install::uninstall_cmd(system),
        Cmd::Manifest { extension_id } => {
            print!(
                "{}",
                manifest::render(&manifest::host_binary()?, &extension_id)?
            );
            Ok(())
        }
    }
}

/// The install folder to work on, and the running Firefox of that folder if there is one (its
/// mappings are what an ordinary user can see). `want_process`: whether the caller uses that
/// process; looking for it scans all of /proc, which costs more than a residency scan itself, so
/// with `--firefox DIR` it is skipped when nobody needs it.
fn find_firefox(target: &Target, want_process: bool) -> anyhow::Result<(Install, Option<i32>)> {
    let running = if want_process || target.firefox.is_none() {
        firefox::process::find_running()
    } else {
        None
    };
    let install = match &target.firefox {
        Some(dir) => firefox::install::locate(Some(dir), None)?,
        None => firefox::install::locate(None, running)?,
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
    }
    Ok((install, pid))
}

fn select(install: &Install, target: &Target) -> anyhow::Result<Vec<PathBuf>> {
    Ok(firefox::install::select(&install.dir, &target.paths)?)
}

fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    // Buffered: unbuffered pretty JSON costs one write(2) per token.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}
