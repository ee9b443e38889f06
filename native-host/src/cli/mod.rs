//! The command-line front end: the same library as host mode, with human tables or `--json`.
//! Human output goes to stdout, notes about what was chosen go to stderr (so `--json` output
//! and tables can be piped), progress only when stderr is a terminal.
//!
//! - [`args`]: the clap definitions (the only place that knows clap);
//! - one file per command or small group: [`residency`], [`preload`], [`evict`], [`learn`] (with
//!   `plan`), [`autostart`], [`desktop`], [`install`] (`install`, `uninstall`), [`trace`] (`launch`, `trace`)
//!   and [`launch`] (`launch --prefetch`); [`traces`] (`trace list`, `trace show`: the stored
//!   traces);
//! - [`profile`]: `trace export --format firefox-profiler` and `launch --firefox-profile`'s
//!   collection of Firefox's own profile;
//! - [`target`]: which Firefox and which files (`--firefox`, the paths);
//! - [`render`]: tables, the progress bar, number formatting and `--json` output.

mod args;
mod autostart;
mod desktop;
mod evict;
mod install;
mod launch;
mod learn;
mod preload;
mod profile;
mod relaunch;
mod render;
mod residency;
mod target;
mod telemetry;
mod trace;
mod traces;

use std::ffi::OsString;

use clap::{CommandFactory, FromArgMatches};

use crate::firefox::manifest;
use crate::os::binary::host_binary;

use args::{Cli, Cmd};

/// Parse `args` (usage errors exit with status 2, as clap does) and run the command.
pub fn run<I, T>(args: I) -> anyhow::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    crate::os::sys::default_sigpipe();
    match parse(args).command {
        Cmd::Residency(args) => residency::residency_cmd(&args),
        Cmd::Preload(args) => preload::preload_cmd(&args),
        Cmd::Evict(args) => evict::evict_cmd(&args),
        Cmd::Learn(args) => learn::learn_cmd(&args),
        Cmd::Plan(args) => learn::plan_cmd(&args),
        Cmd::Autostart(cmd) => autostart::autostart_cmd(&cmd),
        Cmd::Desktop(cmd) => desktop::desktop_cmd(&cmd),
        Cmd::Launch(args) => trace::launch_cmd(&args),
        Cmd::Relaunch(args) => relaunch::relaunch_cmd(&args),
        Cmd::Trace(args) => trace::trace_cmd(&args),
        Cmd::Telemetry(args) => telemetry::telemetry_cmd(&args),
        Cmd::Install {
            system,
            extension_id,
        } => install::install_cmd(system, &extension_id),
        Cmd::Uninstall { system } => install::uninstall_cmd(system),
        Cmd::Manifest {
            extension_id,
            binary,
        } => {
            let binary = match binary {
                Some(path) => path,
                None => host_binary()?,
            };
            print!("{}", manifest::render(&binary, &extension_id)?);
            Ok(())
        }
    }
}

/// clap's parse, with the help texts naming this binary as the reader can run it
/// (crate::invocation): the examples and the usage lines, and the trace commands' note on root.
fn parse<I, T>(args: I) -> Cli
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let me = crate::invocation::current();
    let note = trace::privilege_note(&me.as_root);
    let mut command = Cli::command()
        .bin_name(me.plain.clone())
        .after_help(args::examples(&me.plain))
        .mut_subcommand("launch", |c| {
            c.after_help(trace::launch_help(&me.plain, &me.as_root))
        })
        .mut_subcommand("trace", |c| c.after_help(note));
    let matches = command
        .try_get_matches_from_mut(args)
        .unwrap_or_else(|e| e.exit());
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // What clap cannot say in the definitions (a conflict with one value of an option) is the
    // same usage error, exit status 2.
    if let Some(message) = args::value_conflict(&cli) {
        command
            .error(clap::error::ErrorKind::ArgumentConflict, message)
            .exit();
    }
    cli
}
