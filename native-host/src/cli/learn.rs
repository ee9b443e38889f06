//! `learn` and `plan`: record what a running Firefox's start needed, and show the planned
//! preload built from it.

use std::sync::atomic::AtomicBool;

use crate::firefox::process;
use crate::learn::{plan, workingset};

use super::args::{LearnArgs, PlanArgs, Target};
use super::autostart::print_autostart;
use super::render::{count, display_path, megabytes, print_json};
use super::target::find_firefox;

pub(super) fn learn_cmd(args: &LearnArgs) -> anyhow::Result<()> {
    let pid = match args.pid {
        Some(pid) => process::require_firefox(pid)?,
        None => process::find_running().ok_or_else(|| {
            crate::Error::FirefoxNotFound(
                "no running Firefox of yours; start Firefox, let it finish starting, then run learn"
                    .into(),
            )
        })?,
    };
    let info = process::inspect(pid)?;
    let state_dir = crate::state::open()?;
    let summary = workingset::learn(pid, &info.install_dir, &state_dir, &AtomicBool::new(false))?;
    if args.json {
        return print_json(&summary);
    }
    for note in &summary.note_codes {
        println!("note: {}", note.english());
    }
    println!(
        "learned the start of Firefox {pid}: {} MB in {} (merged over {}) -> {}",
        megabytes(summary.bytes),
        count(summary.files, "file"),
        count(summary.starts_kept as u64, "start"),
        summary.state_file.display()
    );
    println!(
        "sources: pagemap for {}, page cache too for {}",
        count(summary.sources.mapped, "file"),
        summary.sources.resident
    );
    Ok(())
}

pub(super) fn plan_cmd(args: &PlanArgs) -> anyhow::Result<()> {
    let target = Target {
        json: args.json,
        firefox: args.firefox.clone(),
        paths: Vec::new(),
    };
    let (install, _) = find_firefox(&target, false)?;
    let source: plan::PlanSource = args.source.into();
    let status = plan::status_of(&install.dir, &crate::state::open()?, source)?;
    if args.json {
        return print_json(&status);
    }
    for note in &status.note_codes {
        println!("note: {}", note.english());
    }
    let build = |b: &Option<String>| b.clone().unwrap_or_else(|| "unknown".into());
    if status.stale {
        println!(
            "plan is stale: learned for Firefox build {}, this is build {} (an update); {}",
            build(&status.learned_build_id),
            build(&status.build_id),
            if source == plan::PlanSource::Learned {
                "changed files are read whole until the next start is learned"
            } else {
                "record a trace of this build"
            }
        );
    }
    if source != plan::PlanSource::Learned {
        if status.learned {
            println!(
                "plan from {}: {} MB in {}: {} MB of the install folder's {} MB + {} MB of system libraries{}",
                count(status.starts as u64, "trace"),
                megabytes(status.planned_bytes),
                count(status.planned_files, "file"),
                megabytes(status.planned_install_bytes),
                megabytes(status.install_bytes),
                megabytes(status.planned_system_bytes),
                status
                    .profile
                    .as_ref()
                    .filter(|p| p.left_out.is_none())
                    .map_or(String::new(), |p| format!(" + {} MB of your profile", megabytes(p.bytes)))
            );
            if let Some(profile) = &status.profile {
                println!("  the profile: {}", profile.describe());
            }
        } else {
            println!(
                "plan: no trace of this build (with page use); record one: {}",
                crate::trace::store::record_command()
            );
        }
    } else if status.learned {
        // The install part against the folder, the system libraries apart: together they can
        // be more than the folder holds.
        println!(
            "plan: {} MB in {}: {} MB of the install folder's {} MB + {} MB of system libraries, learned from {}",
            megabytes(status.planned_bytes),
            count(status.planned_files, "file"),
            megabytes(status.planned_install_bytes),
            megabytes(status.install_bytes),
            megabytes(status.planned_system_bytes),
            count(status.starts as u64, "start")
        );
    } else {
        println!("plan: nothing learned yet; `preload --plan` reads the whole folder ({} MB) until `learn` runs with Firefox started", megabytes(status.install_bytes));
    }
    for path in &status.changed_files {
        println!(
            "  changed since learned (read whole, re-learned next time): {}",
            display_path(&install, path)
        );
    }
    match &status.uncached_files {
        None => println!("uncached files: hidden (the kernel reports page-cache state only for files you own or can write)"),
        Some(files) if files.is_empty() => println!("uncached files: none"),
        // Nothing learned: no file is known to be one the starts read (`planned` is null), so
        // none is counted as such (the page's planUncachedAny says the same).
        Some(files) if !status.learned => {
            let bytes: u64 = files.iter().map(|f| f.size).sum();
            println!(
                "uncached files of Firefox: {} ({} MB): a start that needs them reads them from disk; which ones a start needs is known once {}",
                files.len(),
                megabytes(bytes),
                if source == plan::PlanSource::Learned {
                    "a start is learned"
                } else {
                    "a start of this build is traced"
                }
            );
        }
        Some(files) => {
            // Only the files the learned starts read make the next start read from disk; a file
            // no start touched (a `vulkantest` probe) is listed apart, without the alarm.
            let (needed, unused): (Vec<_>, Vec<_>) =
                files.iter().partition(|f| f.planned != Some(false));
            let bytes: u64 = needed.iter().map(|f| f.size).sum();
            if needed.is_empty() {
                println!("uncached files the starts read: none");
            } else {
                println!("uncached files the starts read: {} ({} MB): the next start reads them from disk", needed.len(), megabytes(bytes));
            }
            if !unused.is_empty() {
                println!("uncached files no learned start read: {} (not needed to start)", unused.len());
            }
        }
    }
    print_autostart(&status.autostart);
    Ok(())
}
