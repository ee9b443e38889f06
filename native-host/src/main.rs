//! Decides only between native-messaging mode and the CLI; everything else is in the library.

use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("about-startup-host: error: {}", chain_text(&error));
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
