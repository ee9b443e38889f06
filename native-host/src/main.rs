//! Decides only between native-messaging mode and the CLI; everything else is in the library.

use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
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

fn run() -> anyhow::Result<()> {
    let args: Vec<OsString> = std::env::args_os().collect();
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
