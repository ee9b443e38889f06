//! Decides, before anything is parsed, how this run starts (tracer/mod.rs `start`): root's
//! tracer (pkexec's route, or root's own), the sudo split (root stays the tracer, the command
//! runs as the user), a refusal, or native-messaging mode or the CLI; everything else is in the
//! library.

use std::ffi::OsString;
use std::process::ExitCode;

use about_startup_host::tracer::{self, Start};

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let start = tracer::start(
        &args,
        rustix::process::geteuid().as_raw(),
        std::env::var_os("SUDO_UID").as_deref(),
        std::env::var_os("PKEXEC_UID").as_deref(),
    );
    match start {
        Start::Refuse(why) => {
            eprintln!("about-startup-host: refusing: {why}");
            return ExitCode::from(2);
        }
        Start::Tracer { route, uid } => return tracer::run(route, uid),
        Start::SudoSplit { uid } => match tracer::split::split(uid) {
            // This process is the user's now; root stays in the parent as its tracer.
            Ok(socket) => {
                about_startup_host::state::user::adopt_session_state_home();
                about_startup_host::launch::connect::inherit(socket);
            }
            Err(code) => return code,
        },
        Start::Cli => {}
    }
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("about-startup-host: error: {}", chain_text(&error));
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<OsString>) -> anyhow::Result<()> {
    if is_native_messaging(&args) {
        about_startup_host::host::run_stdio()
    } else {
        about_startup_host::cli::run(args)
    }
}

/// The whole chain on one line, "what failed: why: root cause", each cause once: the library's
/// errors already end with their cause's words (`Error::Io` is "context: source"), which
/// anyhow's `{:#}` would print again ("…: entity not found: entity not found").
fn chain_text(error: &anyhow::Error) -> String {
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

/// Firefox starts a host as `path /path/to/manifest.json extension-id`; no CLI command looks
/// like that.
fn is_native_messaging(args: &[OsString]) -> bool {
    args.len() >= 3 && args[1].to_string_lossy().ends_with(".json")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let error = anyhow::Error::from(about_startup_host::Error::io("no stored trace", io));
        assert_eq!(
            super::chain_text(&error),
            "no stored trace: entity not found"
        );
        let wrapped = error.context("preload --plan");
        assert_eq!(
            super::chain_text(&wrapped),
            "preload --plan: no stored trace: entity not found"
        );
    }
}
