//! The command-line front end: the same library as host mode, with human tables or `--json`.
//! Human output goes to stdout, notes about what was chosen go to stderr (so `--json` output
//! and tables can be piped), progress only when stderr is a terminal.
//!
//! - [`args`]: the clap definitions (the only place that knows clap);
//! - one file per command or small group: [`residency`], [`preload`], [`evict`], [`learn`] (with
//!   `plan`), [`autostart`], [`desktop`], [`install`] (`install`, `uninstall`), [`trace`] (`launch`, `trace`)
//!   and [`launch`] (`launch --prefetch`); [`traces`] (`trace list`, `trace show`: the stored
//!   traces); [`costs`] (a recorded start's add-ons and session restore, from an export);
//! - [`profile`]: `trace export --format firefox-profiler` and `launch --firefox-profile`'s
//!   collection of Firefox's own profile;
//! - [`target`]: which Firefox and which files (`--firefox`, the paths);
//! - [`render`]: tables, the progress bar, number formatting and `--json` output;
//! - [`manpages`]: the manual pages of the Debian package, from the same definitions.

mod args;
mod autostart;
mod costs;
mod desktop;
mod evict;
mod install;
mod launch;
mod learn;
mod manpages;
mod pack;
mod preload;
mod profile;
mod relaunch;
mod render;
mod residency;
mod target;
mod telemetry;
mod trace;
mod traces;
mod values;

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
    let command = parse(args).command;
    let json = command.json();
    let result = dispatch(command);
    if let (true, Err(error)) = (json, &result) {
        // A program reading `--json` gets the failure as JSON as well, in the protocol's error
        // shape; the person still reads it on stderr (main).
        println!("{}", error_json(error));
    }
    result
}

/// The whole chain of `error` on one line, "what failed: why: root cause", each cause once: the
/// library's errors already end with their cause's words (`Error::Io` is "context: source"),
/// which anyhow's `{:#}` would print again ("…: entity not found: entity not found").
#[must_use]
pub fn error_text(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let words = cause.to_string();
        if !text.ends_with(&words) {
            text.push_str(": ");
            text.push_str(&words);
        }
    }
    text
}

/// A failed `--json` command's output: `{"status": "error", "code", "message", "params"}` as the
/// protocol's error replies (docs/PROTOCOL.md), `code` and `params` from the library's error
/// where the failure is one (else `null` and `{}`).
#[must_use]
pub fn error_json(error: &anyhow::Error) -> serde_json::Value {
    let known = error.chain().find_map(|c| c.downcast_ref::<crate::Error>());
    serde_json::json!({
        "status": "error",
        "code": known.map(crate::Error::code),
        "message": error_text(error),
        "params": known.map_or_else(|| serde_json::json!({}), crate::Error::params),
    })
}

fn dispatch(command: Cmd) -> anyhow::Result<()> {
    match command {
        Cmd::Residency(args) => residency::residency_cmd(&args),
        Cmd::Preload(args) => preload::preload_cmd(&args),
        Cmd::Evict(args) => evict::evict_cmd(&args),
        Cmd::Learn(args) => learn::learn_cmd(&args),
        Cmd::Plan(args) => learn::plan_cmd(&args),
        Cmd::Autostart(cmd) => autostart::autostart_cmd(&cmd),
        Cmd::Desktop(cmd) => desktop::desktop_cmd(&cmd),
        Cmd::Launch(args) => trace::launch_cmd(&args),
        Cmd::Pack(args) => pack::pack_cmd(&args),
        Cmd::Unpack { json } => pack::unpack_cmd(json),
        Cmd::Relaunch(args) => relaunch::relaunch_cmd(&args),
        Cmd::Trace(args) => match &args.action {
            Some(args::TraceAction::List { json }) => traces::list_cmd(*json),
            Some(args::TraceAction::Show { id, json }) => traces::show_cmd(id, *json),
            _ => trace::trace_cmd(&args),
        },
        Cmd::Telemetry(args) => telemetry::telemetry_cmd(&args),
        Cmd::Costs(args) => costs::costs_cmd(&args),
        Cmd::Install {
            system,
            extension_id,
        } => install::install_cmd(system, &extension_id),
        Cmd::Uninstall { system } => install::uninstall_cmd(system),
        Cmd::Manpages { dir } => {
            // As a user of the package reads them: the bare name (it is on PATH), sudo for root.
            let name = crate::invocation::NAME;
            manpages::write(&cli_command(name, &format!("sudo {name}")), &dir)
        }
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

/// clap's command with the help texts naming this binary as `plain` (and `as_root`, how it runs
/// as root): the examples, the usage lines, and the trace commands' note on root.
fn cli_command(plain: &str, as_root: &str) -> clap::Command {
    Cli::command()
        .bin_name(plain.to_owned())
        .after_help(args::examples(plain))
        .mut_subcommand("launch", |c| {
            c.after_help(trace::launch_help(plain, as_root))
        })
        .mut_subcommand("trace", |c| c.after_help(trace::privilege_note(as_root)))
}

/// clap's parse, with the help texts naming this binary as the reader can run it
/// (crate::invocation): the examples and the usage lines, and the trace commands' note on root.
fn parse<I, T>(args: I) -> Cli
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let me = crate::invocation::current();
    let mut command = cli_command(&me.plain, &me.as_root);
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let error = anyhow::Error::from(crate::Error::io("no stored trace", io));
        assert_eq!(
            super::error_text(&error),
            "no stored trace: entity not found"
        );
        let wrapped = error.context("preload --plan");
        assert_eq!(
            super::error_text(&wrapped),
            "preload --plan: no stored trace: entity not found"
        );
    }

    #[test]
    fn a_json_error_has_the_protocols_shape_with_the_librarys_code_where_there_is_one() {
        let error = anyhow::Error::from(crate::Error::FirefoxNotFound("none running".into()))
            .context("plan");
        let v = super::error_json(&error);
        assert_eq!(v["status"], "error");
        assert_eq!(v["code"], "firefox_not_found");
        assert_eq!(v["params"]["detail"], "none running");
        assert_eq!(v["message"], "plan: no Firefox found: none running");
        let plain = super::error_json(&anyhow::anyhow!("something else"));
        assert!(plain["code"].is_null());
        assert_eq!(plain["params"], serde_json::json!({}));
    }
}
