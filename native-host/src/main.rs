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
            eprintln!(
                "about-startup-host: error: {}",
                about_startup_host::cli::error_text(&error)
            );
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

/// Firefox starts a host as `path /path/to/manifest.json extension-id`; no CLI command looks
/// like that.
fn is_native_messaging(args: &[OsString]) -> bool {
    args.len() >= 3 && args[1].to_string_lossy().ends_with(".json")
}
