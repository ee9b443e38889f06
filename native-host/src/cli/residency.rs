//! `residency`: the table of Firefox's files and how much of each is in the page cache, with
//! a page map under `-v`, or the whole scan as JSON.

use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;

use serde::Serialize;

use crate::firefox::install::Install;
use crate::pagecache::residency;
use crate::pagecache::residency::{FileReport, Group, GroupTotals, Status};

use super::args::ResidencyArgs;
use super::render::{count, display_path, megabytes, percent, print_json, print_table, share, Row};
use super::target::{find_firefox, select};

/// `residency --json`: the whole scan as one object (tests and scripts rely on this shape).
#[derive(Serialize)]
pub(super) struct ResidencyJson<'a> {
    pub(super) install: &'a Install,
    pub(super) files: Vec<FileReport>,
    pub(super) summary: residency::Summary,
}

pub(super) fn residency_cmd(args: &ResidencyArgs) -> anyhow::Result<()> {
    let (install, pid) = find_firefox(&args.target, !args.no_mapped)?;
    let selected = select(&install, &args.target)?;
    // Naming files means "these files": the system libraries come only with the whole folder.
    let opts = residency::ScanOptions {
        pid,
        include_mapped: !args.no_mapped && args.target.paths.is_empty(),
        // A Snap's compressed image is a second cache: shown with the whole folder.
        image: install
            .kind
            .image
            .as_ref()
            .filter(|_| args.target.paths.is_empty())
            .map(|i| i.image.clone()),
        ranges: true,
    };
    let mut reports = Vec::new();
    let summary = residency::scan(
        &selected.folder,
        &selected.files,
        &opts,
        &AtomicBool::new(false),
        &mut |r| {
            reports.push(r.clone());
        },
    )?;
    if args.target.json {
        return print_json(&ResidencyJson {
            install: &install,
            files: reports,
            summary,
        });
    }
    print_residency(&install, &reports, &summary, args.pages);
    Ok(())
}

pub(super) fn print_residency(
    install: &Install,
    reports: &[FileReport],
    summary: &residency::Summary,
    map: bool,
) {
    // Without a running Firefox of this folder there is nothing mapped to show: no column.
    let show_mapped = reports.iter().any(|r| r.mapped.is_some());
    let headers: &[&str] = if show_mapped {
        &["FILE", "MB", "PAGES", "RESIDENT", "MAPPED"]
    } else {
        &["FILE", "MB", "PAGES", "RESIDENT"]
    };
    for group in [Group::Install, Group::Image, Group::System] {
        let in_group: Vec<_> = reports.iter().filter(|r| r.group == group).collect();
        if in_group.is_empty() {
            continue;
        }
        let name = group_name(group);
        println!(
            "\n{name} files{}",
            match group {
                Group::System => " (mapped by Firefox)",
                Group::Image => " (the compressed image behind the squashfs mount: a second cache)",
                Group::Install => "",
            }
        );
        let rows: Vec<Row> = in_group
            .iter()
            .map(|r| residency_row(install, r, map, show_mapped))
            .collect();
        print_table(headers, &rows);
        if let Some(totals) = summary.groups.get(name) {
            println!("{}", group_total(name, totals, summary.page_size));
        }
    }
    let reasons: BTreeSet<_> = reports
        .iter()
        .filter_map(|r| r.hidden_reason.as_deref())
        .collect();
    let any_hidden = !reasons.is_empty();
    for reason in reasons {
        println!("\nhidden: {reason}");
    }
    if any_hidden {
        println!(
            "  for exact numbers run `{}` (root itself sees every file; under plain sudo this host \
             runs as you), or use a Firefox whose files you own; {}",
            crate::invocation::current().run_as_root_itself("residency"),
            if show_mapped {
                "MAPPED shows what the running Firefox has in memory"
            } else {
                "with Firefox running, a MAPPED column shows what it has in memory"
            }
        );
    }
    if map {
        println!("\npage map: each column is 1/{MAP_COLUMNS} of the file; O all pages resident, o some, . none");
    }
    if reports.iter().any(|r| r.mapped.is_some()) {
        println!("MAPPED: pages in the running Firefox's page tables (a lower bound of what is cached; the kernel maps cached neighbours of touched pages too)");
    }
}

pub(super) fn group_name(group: Group) -> &'static str {
    match group {
        Group::Install => "install",
        Group::System => "system",
        Group::Image => "image",
    }
}

pub(super) fn residency_row(
    install: &Install,
    report: &FileReport,
    map: bool,
    show_mapped: bool,
) -> Row {
    let path = display_path(install, &report.path);
    let resident = match report.status {
        Status::Exact => report
            .resident_pages
            .map_or("?".into(), |r| percent(r, report.pages)),
        // Never a percentage: the kernel's numbers for this file are not true.
        Status::Hidden => "hidden".into(),
        Status::Error => {
            let error = report
                .problem
                .as_ref()
                .map_or("unknown error", |p| p.error.as_str());
            return Row {
                cells: vec![path, format!("error: {error}")],
                extra: None,
            };
        }
    };
    let mut cells = vec![
        path,
        megabytes(report.size),
        report.pages.to_string(),
        resident,
    ];
    if show_mapped {
        let mapped = report.mapped.as_ref();
        cells.push(mapped.map_or("-".into(), |m| percent(m.pages, report.pages)));
    }
    let extra = match (&report.resident_ranges, map, report.status) {
        (Some(ranges), true, Status::Exact) if report.pages > 0 => Some(format!(
            "  [{}]",
            page_map(report.pages, ranges, report.range_unit_pages)
        )),
        _ => None,
    };
    Row { cells, extra }
}

pub(super) fn group_total(name: &str, totals: &GroupTotals, page_size: u64) -> String {
    let head = format!("{name}: {}", count(totals.files, "file"));
    // The page's and the popup's words and figures: "281.6 MB cached of 308.4 MB (91%)",
    // from the same fields (docs/PROTOCOL.md, residency's group totals); of the exact files
    // (all of them when none is hidden; unreadable ones are counted apart).
    let resident = match totals.resident_pages {
        Some(pages) => format!(
            "{} MB cached of {} MB ({}; {} of {} pages)",
            megabytes(totals.exact_cached_bytes),
            megabytes(totals.exact_size),
            share(totals.exact_cached_bytes, totals.exact_size),
            pages,
            totals.exact_total_pages
        ),
        None if totals.exact_files == 0 => {
            format!(
                "{} MB, residency hidden for all {}",
                megabytes(totals.size),
                count(totals.hidden_files, "file")
            )
        }
        None => format!(
            "{} MB, residency hidden for {}; the {} exact have {} MB cached of {} MB",
            megabytes(totals.size),
            count(totals.hidden_files, "file"),
            totals.exact_files,
            megabytes(totals.exact_cached_bytes),
            megabytes(totals.exact_size)
        ),
    };
    let mut parts = vec![head, resident];
    if totals.mapped_pages > 0 {
        let mapped = megabytes(totals.mapped_pages * page_size);
        parts.push(format!("{mapped} MB mapped by Firefox"));
    }
    if totals.error_files > 0 {
        parts.push(format!("{} unreadable", count(totals.error_files, "file")));
    }
    parts.join(", ")
}

/// Width of the page map (like `vmtouch -v`).
pub(super) const MAP_COLUMNS: u64 = 60;

/// One character per slice of the file: `O` every page resident, `o` some, `.` none.
/// `ranges` are `[first, count]` in units of `unit` pages.
pub(super) fn page_map(pages: u64, ranges: &[[u64; 2]], unit: u64) -> String {
    let unit = unit.max(1);
    let columns = MAP_COLUMNS.min(pages);
    (0..columns)
        .map(|c| {
            let (start, end) = (c * pages / columns, (c + 1) * pages / columns);
            let resident: u64 = ranges
                .iter()
                .map(|&[first, count]| {
                    let (a, b) = (first * unit, (first + count) * unit);
                    b.min(end).saturating_sub(a.max(start))
                })
                .sum();
            match resident {
                0 => '.',
                n if n >= end - start => 'O',
                _ => 'o',
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_map_marks_full_partial_and_empty_slices() {
        // 120 pages, 2 per column: column 0 full, column 1 half, the rest empty.
        let map = page_map(120, &[[0, 3]], 1);
        assert_eq!(map.len(), 60);
        assert!(map.starts_with("Oo."));
        assert_eq!(map.matches('.').count(), 58);
        // Fewer pages than columns: one column per page.
        assert_eq!(page_map(3, &[[1, 1]], 1), ".O.");
        // Ranges in units of 4 pages.
        assert_eq!(page_map(8, &[[1, 1]], 4), "....OOOO");
        assert_eq!(page_map(120, &[[0, 120]], 1), "O".repeat(60));
    }
}
