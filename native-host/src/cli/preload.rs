//! `preload`: read Firefox's files (or only the planned ranges) into the page cache, with a
//! progress bar on a terminal and a one-line summary.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;

use crate::firefox::install;
use crate::learn::{plan, workingset};
use crate::pagecache::preload;
use crate::pagecache::preload::Method;

use super::args::PreloadArgs;
use super::render::{count, megabytes, print_json, ProgressBar};
use super::target::{find_firefox, select_cache};

/// The install folder of the newest learned start, if it is still a Firefox install.
fn learned_install() -> Option<install::Install> {
    let state = workingset::load(&crate::state::open().ok()?);
    let dir = state.install_dir()?.to_path_buf();
    let mut found = install::locate(Some(&dir), None).ok()?;
    found.found_by = "the Firefox learned last".to_owned();
    Some(found)
}

pub(super) fn preload_cmd(args: &PreloadArgs) -> anyhow::Result<()> {
    // A planned preload without --firefox (the login entry runs exactly that) reads the plan
    // of the Firefox it learned last, not whichever Firefox PATH names first.
    let learned = if args.plan && args.target.firefox.is_none() {
        learned_install()
    } else {
        None
    };
    let install = match learned {
        Some(found) => found,
        None => find_firefox(&args.target, false)?.0,
    };
    let mut bar = std::io::stderr()
        .is_terminal()
        .then_some(ProgressBar { install: &install });
    let mut on_progress = |p: &preload::Progress| {
        if let Some(bar) = &mut bar {
            bar.draw(p);
        }
    };
    if args.plan {
        let state_dir = crate::state::open()?;
        // A compressed install (a Snap, a packed Firefox): never through the mount.
        if let Some(c) = crate::firefox::compressed::detect(
            &install.dir,
            crate::learn::pack::image_for(&install.dir).as_deref(),
        ) {
            return preload_compressed(&install.dir, &state_dir, &c, args.target.json);
        }
        let summary = plan::preload_planned(
            &install.dir,
            &state_dir,
            args.idle,
            plan::Knobs {
                source: args.source.into(),
                gap: args.gap_kib.map(|k| k.saturating_mul(1024)),
                mapped_only: args.mapped_only,
                file_order: args.file_order,
                recorded_order: args.recorded_order,
            },
            &AtomicBool::new(false),
            &mut on_progress,
        );
        if std::io::stderr().is_terminal() {
            eprint!("\r\x1b[K");
        }
        return print_preload(&summary?, args.target.json);
    }
    let (folders, selected, used) = select_cache(&install, &args.target, args.cache.into())?;
    let opts = preload::Options {
        method: args.method.into(),
        idle: args.idle,
        jobs: args.jobs.map(usize::from),
    };
    let summary = preload::preload(
        &folders,
        &selected,
        &opts,
        &AtomicBool::new(false),
        &mut on_progress,
    );
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[K");
    }
    let mut summary = summary?;
    summary.cache = used;
    print_preload(&summary, args.target.json)?;
    if used == crate::pagecache::Cache::Files && install.kind.image.is_some() && !args.target.json {
        println!(
            "the compressed image behind the squashfs mount was not read (--cache image or all)"
        );
    }
    Ok(())
}

pub(super) fn print_preload(summary: &preload::Summary, json: bool) -> anyhow::Result<()> {
    for error in &summary.errors {
        eprintln!("warning: {}: {}", error.path.display(), error.problem.error);
    }
    if json {
        return print_json(summary);
    }
    if let (Some(planned), Some(order)) = (summary.bytes_planned, summary.order) {
        println!(
            "planned: {} MB of the folder's {} MB, read in {} order",
            megabytes(planned),
            megabytes(summary.bytes_install),
            match order {
                plan::Order::Disk => "disk",
                plan::Order::File => "file (no FIEMAP here)",
                plan::Order::Recorded => "the traced start's",
            }
        );
    }
    println!(
        "preloaded {}, {} MB in {} ms ({:.1} MB/s), method {}, {}{}",
        count(summary.files, "file"),
        megabytes(summary.bytes),
        summary.elapsed_ms,
        summary.mb_per_s,
        method_name(summary.method),
        count(summary.jobs as u64, "job"),
        if summary.idle {
            ", idle I/O priority"
        } else {
            ""
        }
    );
    if summary.cache != crate::pagecache::Cache::Files {
        println!("{}", super::evict::cache_line(summary.cache, "filled"));
    }
    if let Some(profile) = summary.bytes_planned_profile {
        let changed = summary.profile_changed_files.unwrap_or(0);
        println!(
            "of the plan, {} MB are of your profile{}",
            megabytes(profile),
            if changed > 0 {
                format!(
                    "; {} of its files Firefox wrote or replaced since the trace were not read",
                    changed
                )
            } else {
                String::new()
            }
        );
    }
    if let Some(cached) = summary.bytes_cached.filter(|b| *b > 0) {
        println!(
            "{} MB of the plan was cached already: not read again",
            megabytes(cached)
        );
    }
    if let Some(pace) = summary.pace {
        if !pace.pressure_available {
            println!("not paced: this kernel reports no I/O pressure (/proc/pressure/io)");
        } else if pace.busy_probes == 0 {
            println!(
                "no other program was waiting on the disk: no pauses ({} ms spent checking)",
                pace.probed_ms
            );
        } else {
            println!(
                "paused {} ms in all to let other programs use the disk ({} times they were waiting; {} ms spent checking)",
                pace.yielded_ms, pace.busy_probes, pace.probed_ms
            );
        }
    }
    Ok(())
}

pub(super) fn method_name(method: Method) -> &'static str {
    match method {
        Method::Auto => "auto",
        Method::Read => "read",
        Method::Readahead => "readahead",
        Method::Fadvise => "fadvise",
    }
}

/// `preload --plan` of an install on a compressed mount: its image's ranges raw, or nothing
/// (firefox/compressed.rs says which and why).
fn preload_compressed(
    dir: &std::path::Path,
    state: &crate::state::StateDir,
    c: &crate::firefox::compressed::Compressed,
    json: bool,
) -> anyhow::Result<()> {
    use crate::firefox::compressed::Verdict;
    let read = match c.verdict {
        Verdict::LeftOff => None,
        Verdict::ImageRanges => Some(crate::learn::prefetch::image::preload(dir, state, c)?),
    };
    if json {
        return print_json(&serde_json::json!({ "compressed": c, "image_read": read }));
    }
    println!("{}", c.line());
    if let Some(r) = read {
        println!(
            "read {} MB of the image for {} MB of {} files in {} ms",
            megabytes(r.bytes_image_read),
            megabytes(r.bytes_files_mapped),
            r.files_mapped,
            r.elapsed_ms
        );
    }
    Ok(())
}
