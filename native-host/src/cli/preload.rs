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
    // The next start follows this preload (learn/last_preload.rs): the whole install only.
    if args.target.paths.is_empty() {
        if let Ok(state) = crate::state::open() {
            crate::learn::last_preload::write(&state, &install.dir, summary.bytes, false);
        }
    }
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
    if let Some(line) = planned_line(summary) {
        println!("{line}");
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

/// What a planned preload's plan named, the folder's part set against the folder and what lies
/// outside it (system libraries, the user's profile) said apart: the same split as the page's
/// (extension/lib/wording/preload-text.js) and `plan`'s. `None` for a whole-folder preload.
fn planned_line(summary: &preload::Summary) -> Option<String> {
    let (planned, order) = (summary.bytes_planned?, summary.order?);
    let system = summary.bytes_planned_system.unwrap_or(0);
    let profile = summary.bytes_planned_profile.unwrap_or(0);
    let install = summary
        .bytes_planned_install
        .unwrap_or_else(|| planned.saturating_sub(system).saturating_sub(profile));
    let share = if summary.bytes_install > 0 {
        #[allow(clippy::cast_precision_loss)] // a share of byte counts, shown to 1 %
        let pct = install as f64 * 100.0 / summary.bytes_install as f64;
        format!(" ({pct:.0} %)")
    } else {
        String::new()
    };
    let mut outside = Vec::new();
    if system > 0 {
        outside.push(format!("{} MB of system libraries", megabytes(system)));
    }
    if profile > 0 {
        outside.push(format!("{} MB of your profile", megabytes(profile)));
    }
    Some(format!(
        "planned: {} MB of the folder's {} MB{share}{}, read in {} order",
        megabytes(install),
        megabytes(summary.bytes_install),
        if outside.is_empty() {
            String::new()
        } else {
            format!(", and outside it {}", outside.join(" and "))
        },
        match order {
            plan::Order::Disk => "disk",
            plan::Order::File => "file (no FIEMAP here)",
            plan::Order::Recorded => "the traced start's",
        }
    ))
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
/// (firefox/compressed/ says which and why).
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
            "read {} MB of the image for {} MB of {} files in {} ms ({} of {} batches by first use)",
            megabytes(r.bytes_image_read),
            megabytes(r.bytes_files_mapped),
            r.files_mapped,
            r.elapsed_ms,
            r.batches_done,
            r.batches
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 39 #10: the plan named 193.5 MB, 29.2 MB of it system libraries outside the folder:
    /// the folder's part is 164.3 MB of its 308.4 MB, the rest said apart, never all of it set
    /// against the folder.
    #[test]
    fn the_folders_part_is_set_against_the_folder_and_the_rest_said_apart() {
        let mut s = preload::Summary::whole_folder(Method::Read, 1, false);
        assert_eq!(
            planned_line(&s),
            None,
            "a whole-folder preload names no plan"
        );
        s.planned = true;
        s.bytes_planned = Some(193_500_000);
        s.bytes_planned_system = Some(29_200_000);
        s.bytes_planned_install = Some(164_300_000);
        s.bytes_install = 308_400_000;
        s.order = Some(plan::Order::Disk);
        assert_eq!(
            planned_line(&s).unwrap(),
            "planned: 164.3 MB of the folder's 308.4 MB (53 %), and outside it 29.2 MB of system \
             libraries, read in disk order"
        );
        // A traced plan with the profile: outside the folder too, said apart.
        s.bytes_planned = Some(200_000_000);
        s.bytes_planned_profile = Some(6_500_000);
        assert_eq!(
            planned_line(&s).unwrap(),
            "planned: 164.3 MB of the folder's 308.4 MB (53 %), and outside it 29.2 MB of system \
             libraries and 6.5 MB of your profile, read in disk order"
        );
        // An older host's reply without the folder's part: computed the same way.
        s.bytes_planned_install = None;
        assert!(planned_line(&s)
            .unwrap()
            .starts_with("planned: 164.3 MB of the folder's"));
    }
}
