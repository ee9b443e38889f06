//! `desktop enable|disable|status`: every desktop launch of Firefox through `launch --prefetch`.

use crate::learn::desktop::{self, DesktopStatus, Dirs};
use crate::learn::prefetch::launch::describe;
use crate::os::binary;
use crate::os::clock::now_ms;

use crate::state::StateDir;

use super::args::DesktopCmd;
use super::render::{megabytes, print_json};
use super::target::find_firefox;

fn print_status(s: &DesktopStatus) {
    for note in &s.note_codes {
        println!("note: {}", note.english());
    }
    let state = match (s.enabled, s.outdated) {
        (true, false) => "on",
        (true, true) => "on, but written by a host binary or for a Firefox that moved: run `desktop enable` again",
        (false, _) => "off",
    };
    println!("desktop launch through the prefetch: {state}");
    if let Some(entry) = &s.entry {
        println!("  entry: {}", entry.display());
    }
    if let (true, Some(gone)) = (s.entry_host_missing, &s.entry_host) {
        println!(
            "  the entry runs {}, which is gone (the about-startup package removed?): launching \
             Firefox from the desktop fails. Run `desktop enable` to write it for this host, or \
             `desktop disable` to remove it",
            gone.display()
        );
    }
    if let Some(system) = &s.system_entry {
        println!("  copies: {} (never changed)", system.display());
    }
    if let Some(problem) = &s.problem {
        println!("  cannot enable: {}", problem.message);
    }
    println!("  a launch prefetches: {}", describe(&s.prefetch));
    if let Some(last) = &s.last {
        let ago = now_ms().saturating_sub(last.at_ms) / 1000;
        match &last.failed {
            Some(why) => println!("  last launch ({ago} s ago): no prefetch: {why}"),
            None => println!(
                "  last launch ({ago} s ago): read {} MB, {} MB were cached already, in {} ms",
                megabytes(last.outcome.bytes_read),
                megabytes(last.outcome.bytes_cached),
                last.outcome.elapsed_ms
            ),
        }
        if let Some(c) = &last.compressed {
            println!("    {}", c.line());
        }
        if let Some(image) = &last.image_read {
            println!(
                "    it read {} MB of the image for {} MB of {} files, {} of {} batches by first use ({} MB not mapped, {} MB off the mount left to the start)",
                megabytes(image.bytes_image_read),
                megabytes(image.bytes_files_mapped),
                image.files_mapped,
                image.batches_done,
                image.batches,
                megabytes(image.bytes_unmapped),
                megabytes(image.bytes_outside)
            );
        }
        if let (None, Some(profile)) = (&last.failed, &last.profile) {
            println!(
                "    its plan held {} ({} MB of it read)",
                profile.describe(),
                megabytes(last.outcome.bytes_read_profile)
            );
        }
    }
}

pub(super) fn desktop_cmd(cmd: &DesktopCmd) -> anyhow::Result<()> {
    let (action, target) = match cmd {
        DesktopCmd::Enable(t) => ("enable", t),
        DesktopCmd::Disable(t) => ("disable", t),
        DesktopCmd::Status(t) => ("status", t),
    };
    let firefox = super::args::Target {
        json: target.json,
        firefox: target.firefox.clone(),
        paths: Vec::new(),
    };
    let (install, _) = find_firefox(&firefox, false)?;
    let dirs = Dirs::from_env()?;
    let host = binary::host_binary()?;
    let binary = desktop::HostBinary {
        problem: binary::user_binary_problem(&host),
        path: host.clone(),
    };
    let state = StateDir::existing(&crate::state::locate()?)?;
    match action {
        "enable" => {
            let done = desktop::enable(&dirs, &install.dir, &binary, state.as_ref())
                .map_err(|p| anyhow::anyhow!("cannot enable the desktop launch: {}", p.message))?;
            if target.json {
                return print_json(&done);
            }
            println!(
                "enabled: {} launches Firefox through `{} launch --prefetch`",
                done.entry
                    .as_deref()
                    .unwrap_or(std::path::Path::new("?"))
                    .display(),
                host.display()
            );
            print_status(&done);
        }
        "disable" => {
            let removed = desktop::disable(&dirs, &install.dir)?;
            if target.json {
                return print_json(&serde_json::json!({ "removed": removed }));
            }
            if removed.is_empty() {
                println!("not enabled: nothing to remove");
            }
            for file in removed {
                println!(
                    "removed {} (the system's entry is back in effect)",
                    file.display()
                );
            }
        }
        _ => {
            let s = desktop::status(&dirs, &install.dir, &binary, state.as_ref());
            if target.json {
                return print_json(&s);
            }
            print_status(&s);
        }
    }
    Ok(())
}
