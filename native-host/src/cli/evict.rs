//! `evict`: drop Firefox's files from the page cache (a cold start), one row per file.

use crate::firefox::install::Install;
use crate::pagecache::evict;
use crate::pagecache::residency::Status;
use crate::pagecache::Cache;

use super::args::EvictArgs;
use super::render::{count, display_path, percent, print_json, print_table, Row};
use super::target::{find_firefox, select_cache};

pub(super) fn evict_cmd(args: &EvictArgs) -> anyhow::Result<()> {
    let target = &args.target;
    let (install, _) = find_firefox(target, false)?;
    let default = if target.paths.is_empty() {
        Cache::All
    } else {
        Cache::Files
    };
    let (folders, selected, used) =
        select_cache(&install, target, args.cache.map_or(default, Cache::from))?;
    let mut summary = evict::evict(&folders, &selected);
    crate::learn::last_preload::forget_here(); // the next start follows no preload
    summary.cache = used;
    if target.json {
        return print_json(&summary);
    }
    let rows: Vec<Row> = summary
        .files
        .iter()
        .map(|f| evict_row(&install, f))
        .collect();
    print_table(&["FILE", "PAGES", "BEFORE", "AFTER"], &rows);
    let exact = summary.files.iter().filter(|f| f.status == Status::Exact);
    match exact.count() {
        // Every file hidden: 0 would be a made-up number.
        0 => println!("\ndropped: unknown (no file could be measured)"),
        n => println!(
            "\ndropped {} pages of the {}",
            summary.pages_dropped,
            count(n as u64, "exactly measured file")
        ),
    }
    if summary.files.iter().any(|f| f.status == Status::Hidden) {
        println!("hidden: the kernel hides page-cache state of files you neither own nor may write; they were evicted anyway");
    }
    if used != Cache::Files || install.kind.image.is_some() {
        println!("{}", cache_line(used, "dropped"));
    }
    println!("note: pages mapped by a running process (a running Firefox keeps its libraries mapped) stay in the cache, and so do pages written but not yet on disk (run sync first)");
    Ok(())
}

/// Which cache a preload filled or an evict dropped, in words.
pub(super) fn cache_line(cache: Cache, verb: &str) -> String {
    match cache {
        Cache::Files => format!("cache {verb}: the files' pages"),
        Cache::Image => format!(
            "cache {verb}: the compressed image behind the squashfs mount only (its files' decompressed pages are a separate cache)"
        ),
        Cache::All => format!(
            "cache {verb}: the files' decompressed pages and the compressed image behind the squashfs mount"
        ),
    }
}

pub(super) fn evict_row(install: &Install, file: &evict::FileResult) -> Row {
    let path = display_path(install, &file.path);
    let cells = match file.status {
        Status::Exact => {
            let show = |n: Option<u64>| n.map_or("?".into(), |n| percent(n, file.pages));
            vec![
                path,
                file.pages.to_string(),
                show(file.resident_before),
                show(file.resident_after),
            ]
        }
        Status::Hidden => vec![
            path,
            file.pages.to_string(),
            "hidden".into(),
            "hidden".into(),
        ],
        Status::Error => {
            vec![
                path,
                format!(
                    "error: {}",
                    file.problem
                        .as_ref()
                        .map_or("unknown error", |p| p.error.as_str())
                ),
            ]
        }
    };
    Row { cells, extra: None }
}
