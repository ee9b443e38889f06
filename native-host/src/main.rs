//! Decides, before anything is parsed, how this run starts (`tracer::entry`, where all of root's
//! part is): root's tracer (pkexec's route, or root's own), the sudo split (root stays the
//! tracer, the command runs as the user), a refusal, or native-messaging mode or the CLI;
//! everything else is in the library.

use std::ffi::OsString;
use std::process::ExitCode;

use about_startup_host::tracer;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    // Root's part is all inside `entry` (and the line above): it returns only where the CLI or
    // the host runs next, as the user (the sudo split's child, after its drop, with the tracer's
    // socket) or as whoever ran it. tests/layering.rs counts what runs as root from `main`'s
    // first line to this statement.
    let started = tracer::entry(&args);
    match started {
        Err(code) => return code,
        Ok(Some((socket, user))) => {
            about_startup_host::os::account::adopt_environment(&user);
            about_startup_host::state::user::adopt_session_state_home();
            about_startup_host::launch::connect::inherit(socket);
        }
        Ok(None) => {}
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
