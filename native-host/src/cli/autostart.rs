//! `autostart enable|disable|status`: the login-time preload.

use crate::learn::autostart;
use crate::os::binary;
use crate::os::clock::now_ms;

use super::args::AutostartCmd;
use super::render::{megabytes, print_json};

pub(super) fn print_autostart(status: &autostart::Status) {
    let how = match status.kind {
        Some(autostart::Kind::Systemd) => " (systemd user unit)",
        Some(autostart::Kind::Xdg) => " (XDG autostart entry)",
        None => "",
    };
    println!(
        "autostart: {}{how}",
        if status.enabled { "on" } else { "off" }
    );
    if let Some(last) = &status.last_run {
        println!(
            "  last planned preload: {} MB in {} ms, {} s ago",
            megabytes(last.bytes),
            last.elapsed_ms,
            now_ms().saturating_sub(last.at_ms) / 1000
        );
    }
    if let Some(note) = &status.note {
        println!("  note: {note}");
    }
}

pub(super) fn autostart_cmd(cmd: &AutostartCmd) -> anyhow::Result<()> {
    let dirs = autostart::Dirs::from_env()?;
    match cmd {
        AutostartCmd::Enable { json } => {
            let binary = binary::host_binary()?;
            binary::check_user_binary(&binary, "login-time preload")?;
            let done = autostart::enable(&dirs, &binary, &autostart::systemctl)?;
            if *json {
                return print_json(&done);
            }
            println!(
                "enabled: {} runs `preload --plan --idle` after login",
                done.file.display()
            );
        }
        AutostartCmd::Disable { json } => {
            let removed = autostart::disable(&dirs, &autostart::systemctl)?;
            if *json {
                return print_json(&serde_json::json!({ "removed": removed }));
            }
            if removed.is_empty() {
                println!("not enabled: nothing to remove");
            }
            for file in removed {
                println!("removed {}", file.display());
            }
        }
        AutostartCmd::Status { json } => {
            let status = autostart::status_in(&dirs);
            if *json {
                return print_json(&status);
            }
            print_autostart(&status);
        }
    }
    Ok(())
}
