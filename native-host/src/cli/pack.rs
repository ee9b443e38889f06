//! `pack` and `unpack`: Firefox from a compressed image of its own install (learn/pack.rs).

use crate::firefox::install;
use crate::learn::pack::{self, Options, Packed};
use crate::learn::packing::{self, Basis, Saving};
use crate::state::StateDir;

use super::args::PackArgs;
use super::render::{megabytes, print_json, share};

/// "zstd level 19", or the compressor alone at its own default.
fn compression(compressor: &str, level: Option<u32>) -> String {
    level.map_or_else(
        || compressor.to_owned(),
        |l| format!("{compressor} level {l}"),
    )
}

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
        compression(&p.compressor, p.level),
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

/// One sentence on what this machine's traced start needs plain and from an image.
#[must_use]
pub fn saving_line(s: &Saving) -> String {
    let share = share(
        s.bytes_plain + s.bytes_unmapped,
        s.bytes_plain + s.bytes_unmapped + s.bytes_outside,
    );
    let head = format!(
        "this machine's traced start of build {} ({} trace{}) needs {} MB of the install's files \
         ({share} of the bytes it needs; {} MB elsewhere: system libraries, the profile)",
        s.build_id.as_deref().unwrap_or("unknown"),
        s.traces,
        if s.traces == 1 { "" } else { "s" },
        megabytes(s.bytes_plain),
        megabytes(s.bytes_outside),
    );
    let unmapped = if s.bytes_unmapped > 0 {
        format!(
            "; {} MB not counted (files replaced since the trace, fragment tails)",
            megabytes(s.bytes_unmapped)
        )
    } else {
        String::new()
    };
    let Some(c) = s.bytes_compressed else {
        let why = s
            .left_off
            .and_then(|l| serde_json::to_value(l).ok())
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "unknown".to_owned());
        return format!(
            "{head}; what its compressed image holds of them is missing ({why}: the image is not read here){unmapped}"
        );
    };
    let ratio = s
        .ratio()
        .map_or_else(|| "-".to_owned(), |r| format!("{r:.2}"));
    let from = match s.basis {
        Basis::Image => format!(
            "its squashfs image ({}, {} KiB blocks) holds them in {} MB",
            s.compressor,
            s.block_size / 1024,
            megabytes(c)
        ),
        Basis::Estimate => format!(
            "a squashfs image ({}, {} KiB blocks; {} MB of whole blocks, each compressed here) would hold them in {} MB, at most: zstd, pack's default, needs less",
            s.compressor,
            s.block_size / 1024,
            megabytes(s.bytes_blocks.unwrap_or(0)),
            megabytes(c)
        ),
    };
    format!("{head}; {from}: {ratio}x the bytes{unmapped}")
}

fn print_saving(saving: Option<&Saving>) {
    match saving {
        Some(s) => println!("  {}", saving_line(s)),
        None => println!(
            "  what packing saves on reads: unknown until a traced start (`launch --cold --trace`) of this build"
        ),
    }
}

/// What packing saves for `install_dir` (the traced start's bytes, plain and compressed).
fn saving_of(
    state: &StateDir,
    install_dir: &std::path::Path,
    packed: Option<&Packed>,
) -> Option<Saving> {
    let on_mount = crate::firefox::compressed::detect(
        install_dir,
        crate::firefox::packed::image_for(install_dir).as_deref(),
    );
    packing::saving(state, install_dir, on_mount.as_ref(), packed)
}

pub(super) fn pack_cmd(args: &PackArgs) -> anyhow::Result<()> {
    let state = crate::state::open()?;
    if args.status {
        let packed = pack::read(&state);
        let install_dir = match &packed {
            Some(p) if args.firefox.is_none() => p.install_dir.clone(),
            _ => install::locate(args.firefox.as_deref(), None)?.dir,
        };
        let saving = saving_of(&state, &install_dir, packed.as_ref());
        let Some(p) = packed else {
            if args.json {
                return print_json(&serde_json::json!({ "packed": null, "saving": saving }));
            }
            println!(
                "not packed: `about-startup-host pack` packs your Firefox into a compressed image"
            );
            print_saving(saving.as_ref());
            return Ok(());
        };
        let current = pack::check(&p, &p.install_dir);
        if args.json {
            return print_json(&serde_json::json!({
                "packed": p,
                "current": current.is_ok(),
                "not_used": current.as_ref().err().map(ToString::to_string),
                "mounted": pack::is_mounted_at(&p.mount_point),
                "saving": saving,
            }));
        }
        print_packed(&p, current);
        print_saving(saving.as_ref());
        return Ok(());
    }
    let found = install::locate(args.firefox.as_deref(), None)?;
    let opts = Options {
        compressor: args.comp.clone(),
        level: args.level.or_else(|| pack::default_level(&args.comp)),
        block_size: args.block_kib.saturating_mul(1024),
        sort: !args.no_sort,
    };
    if !args.json {
        eprintln!(
            "packing {} with mksquashfs ({}, {} KiB blocks)…",
            found.dir.display(),
            compression(&opts.compressor, opts.level),
            args.block_kib
        );
    }
    let p = pack::pack(&state, &found.dir, &opts)?;
    let saving = saving_of(&state, &p.install_dir, Some(&p));
    if args.json {
        return print_json(&serde_json::json!({ "packed": p, "saving": saving }));
    }
    print_packed(&p, pack::check(&p, &p.install_dir));
    print_saving(saving.as_ref());
    println!("  `about-startup-host unpack` removes it all");
    Ok(())
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
