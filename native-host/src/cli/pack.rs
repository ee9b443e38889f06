//! `pack` and `unpack`: Firefox from a compressed image of its own install (learn/pack.rs).

use crate::firefox::install;
use crate::learn::pack::{self, Options, Packed};
use crate::state::StateDir;

use super::args::PackArgs;
use super::render::{megabytes, print_json};

fn seconds(ms: u64) -> String {
    format!("{:.1}", ms as f64 / 1000.0)
}

/// The costs, said every time a pack is shown.
fn print_costs(p: &Packed) {
    println!(
        "  costs: {} MB of disk for the image ({} MB of files packed, {:.0}%); {} s of mksquashfs \
         after every Firefox update (until then launches start the plain install); while Firefox \
         runs from it, the image's pages and the decompressed pages are both in the page cache",
        megabytes(p.bytes_image),
        megabytes(p.bytes_install),
        if p.bytes_install == 0 {
            0.0
        } else {
            100.0 * p.bytes_image as f64 / p.bytes_install as f64
        },
        seconds(p.build_ms)
    );
}

fn print_packed(p: &Packed, current: Result<(), pack::NotUsed>) {
    println!(
        "packed: {} (build {}) as {} ({}, {} KiB blocks, {})",
        p.install_dir.display(),
        p.build_id.as_deref().unwrap_or("unknown"),
        p.image.display(),
        p.compressor,
        p.block_size / 1024,
        if p.sorted_files > 0 {
            format!("{} files in the traced start's order", p.sorted_files)
        } else {
            "in mksquashfs's own order: no trace of this build".to_owned()
        }
    );
    match current {
        Ok(()) => println!(
            "  in use: `launch --prefetch` (the desktop entry's command) starts Firefox from {}",
            p.mount_point.display()
        ),
        Err(why) => println!("  not in use: {why}"),
    }
    println!(
        "  mounted now: {}",
        if pack::is_mounted_at(&p.mount_point) {
            "yes"
        } else {
            "no (the next launch mounts it)"
        }
    );
    print_costs(p);
}

pub(super) fn pack_cmd(args: &PackArgs) -> anyhow::Result<()> {
    let state = crate::state::open()?;
    if args.status {
        let Some(p) = pack::read(&state) else {
            if args.json {
                return print_json(&serde_json::json!({ "packed": null }));
            }
            println!(
                "not packed: `about-startup-host pack` packs your Firefox into a compressed image"
            );
            return Ok(());
        };
        let current = pack::check(&p, &p.install_dir);
        if args.json {
            return print_json(&serde_json::json!({
                "packed": p,
                "current": current.is_ok(),
                "not_used": current.as_ref().err().map(ToString::to_string),
                "mounted": pack::is_mounted_at(&p.mount_point),
            }));
        }
        print_packed(&p, current);
        return Ok(());
    }
    let found = install::locate(args.firefox.as_deref(), None)?;
    let opts = Options {
        compressor: args.comp.clone(),
        block_size: args.block_kib.saturating_mul(1024),
        sort: !args.no_sort,
    };
    if !args.json {
        eprintln!(
            "packing {} with mksquashfs ({}, {} KiB blocks)…",
            found.dir.display(),
            opts.compressor,
            args.block_kib
        );
    }
    let p = pack::pack(&state, &found.dir, &opts)?;
    let saving = needed(&state, &p);
    if args.json {
        return print_json(&serde_json::json!({ "packed": p, "traced_start": saving }));
    }
    print_packed(&p, pack::check(&p, &p.install_dir));
    match saving {
        Some(s) => println!(
            "  this machine's traced start read {} MB of the install's files; from the image it needs {} MB ({:.2}x the bytes){}",
            megabytes(s.bytes_files_mapped),
            megabytes(s.bytes_image_planned),
            if s.bytes_files_mapped == 0 { 0.0 } else { s.bytes_image_planned as f64 / s.bytes_files_mapped as f64 },
            if s.bytes_unmapped > 0 { format!(", {} MB not mapped (fragments)", megabytes(s.bytes_unmapped)) } else { String::new() }
        ),
        None => println!("  what it saves on reads: unknown until a traced start (`launch --cold --trace`) of this build"),
    }
    println!("  `about-startup-host unpack` removes it all");
    Ok(())
}

/// The traced start's file bytes against the image bytes they need (the plan mapped through
/// the new image's blocks), or `None` without a traced plan of this build.
fn needed(state: &StateDir, p: &Packed) -> Option<crate::learn::prefetch::image::ImageOutcome> {
    use crate::learn::prefetch::{self, image, Source};
    let launched = crate::learn::plan::profile::Launched::Default;
    let (plan, status) =
        prefetch::choose(&p.install_dir, state, prefetch::Knobs::default(), &launched).ok()?;
    let plan = plan.filter(|_| status.source == Some(Source::Trace))?;
    let mut out = image::ImageOutcome::default();
    let mut blocks_of =
        |rel: &std::path::Path| crate::firefox::compressed::file_blocks(&p.image, rel);
    image::map_plan(
        &plan,
        &p.install_dir,
        u64::from(p.block_size),
        prefetch::GAP,
        &mut blocks_of,
        &mut out,
    );
    (out.files_mapped > 0).then_some(out)
}

pub(super) fn unpack_cmd(json: bool) -> anyhow::Result<()> {
    let state = crate::state::open()?;
    let done = pack::unpack(&state)?;
    if json {
        return print_json(&done);
    }
    if done.removed.is_empty() {
        println!("not packed: nothing to remove");
        return Ok(());
    }
    if done.unmounted {
        println!("unmounted the packed image");
    }
    for r in &done.removed {
        println!("removed {r}");
    }
    println!(
        "{} MB freed; launches start the plain install",
        megabytes(done.bytes_freed)
    );
    Ok(())
}
