//! The command-line front end: the same library as host mode, with human tables or `--json`.
//! Human output goes to stdout, notes about what was chosen go to stderr (so `--json` output
//! and tables can be piped), progress only when stderr is a terminal.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use clap::{Args, Parser, Subcommand};
use serde::Serialize;

use crate::files::{self, Install};
use crate::preload::Method;
use crate::residency::{FileReport, Group, GroupTotals, Status};
use crate::{
    autostart, evict, firefox, install, plan, preload, residency, workingset, EXTENSION_ID,
};

const EXAMPLES: &str = "\
Examples:
  about-startup-host residency                  which of Firefox's files are in the page cache
  about-startup-host residency -v libxul.so     one file, with a map of its pages
  about-startup-host residency --json | jq .summary
  about-startup-host evict                      drop Firefox's files from the cache (cold start)
  about-startup-host preload --idle             read them back in at idle I/O priority
  about-startup-host install                    let the about:startup extension start this host

Paths are relative to Firefox's install folder, or absolute inside it; without paths every file
of the folder is used. Without --firefox the running Firefox is used, else the one on PATH.";

/// about:startup: measure and control how much of Firefox is in the page cache.
///
/// When Firefox starts this program for the about:startup extension (with a manifest path and an
/// extension id as arguments), it speaks native messaging on stdin/stdout instead; see
/// docs/PROTOCOL.md.
#[derive(Debug, Parser)]
#[command(name = "about-startup-host", version, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Show which pages of Firefox's files are in the page cache.
    ///
    /// Without root, the kernel (Linux >= 5.2) reports residency only for files you own or may
    /// write; other files are shown as "hidden" with the reason, never as a made-up 100%.
    Residency(ResidencyArgs),
    /// Read Firefox's files into the page cache, so the next start is warm.
    Preload(PreloadArgs),
    /// Drop Firefox's files from the page cache, so the next start is cold.
    ///
    /// Pages mapped by a running process (a running Firefox keeps libxul.so mapped) stay.
    Evict(Target),
    /// Record what the running Firefox's start needed (its working set) for `preload --plan`.
    ///
    /// Reads the pages the Firefox process tree has mapped (and, where the kernel reports it
    /// exactly and the start read from disk, the page cache) and merges them with the last
    /// starts in $XDG_STATE_HOME/about-startup/working-set.json.
    Learn(LearnArgs),
    /// Show the preload plan: what `preload --plan` would read, what changed, what is uncached.
    Plan(PlanArgs),
    /// Run `preload --plan --idle` after every login, so the first launch of the day is warm.
    #[command(subcommand)]
    Autostart(AutostartCmd),
    /// Start Firefox (optionally cold) and record which pages of which files its start reads.
    Launch(crate::trace::cli::LaunchArgs),
    /// Record the reads of a Firefox started some other way, for N seconds.
    Trace(crate::trace::cli::TraceArgs),
    /// Install the native-messaging manifest so Firefox can start this host.
    Install {
        /// Install for every user (/usr/lib/mozilla/native-messaging-hosts; needs root).
        #[arg(long)]
        system: bool,
        /// The add-on id allowed to talk to the host.
        #[arg(long, value_name = "ID", default_value = EXTENSION_ID)]
        extension_id: String,
    },
    /// Remove the installed native-messaging manifest.
    Uninstall {
        /// Remove the system-wide manifest instead of your own.
        #[arg(long)]
        system: bool,
    },
    /// Print the native-messaging manifest for this binary (without installing it).
    Manifest {
        /// The add-on id allowed to talk to the host.
        #[arg(long, value_name = "ID", default_value = EXTENSION_ID)]
        extension_id: String,
    },
}

/// What every file command works on.
#[derive(Debug, Args)]
struct Target {
    /// Print one JSON object on stdout instead of a table.
    #[arg(long)]
    json: bool,
    /// Firefox's install folder (the one holding application.ini), instead of finding it.
    #[arg(long, value_name = "DIR")]
    firefox: Option<PathBuf>,
    /// Files to work on, relative to the install folder or absolute inside it [default: all].
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
struct ResidencyArgs {
    #[command(flatten)]
    target: Target,
    /// Leave out the files the running Firefox maps from outside its folder (GTK, fonts, …);
    /// they are only included when no PATH is named.
    #[arg(long)]
    no_mapped: bool,
    /// Draw a map of each file's pages under its row.
    #[arg(short = 'v', long = "pages")]
    pages: bool,
}

#[derive(Debug, Args)]
struct PreloadArgs {
    #[command(flatten)]
    target: Target,
    /// Read at the idle I/O priority class (like `ionice -c3`), out of other programs' way.
    #[arg(long)]
    idle: bool,
    /// How to read.
    #[arg(long, value_enum, default_value_t = Method::Auto)]
    method: Method,
    /// Files read at once [default: chosen by the host].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=preload::MAX_JOBS as i64))]
    jobs: Option<u16>,
    /// Read only what the learned starts needed (see `learn`), in disk order; files changed
    /// since (a Firefox update) or never learned are read whole.
    #[arg(long, conflicts_with_all = ["paths", "method", "jobs"])]
    plan: bool,
    /// With --plan: use only the pages Firefox had mapped, as a user who cannot see page-cache
    /// residency would (for the benchmark).
    #[arg(long, requires = "plan")]
    mapped_only: bool,
    /// With --plan: read in file order even where the filesystem gives disk positions (for the
    /// benchmark).
    #[arg(long, requires = "plan")]
    file_order: bool,
}

#[derive(Debug, Args)]
struct PlanArgs {
    /// Print one JSON object on stdout instead of sentences.
    #[arg(long)]
    json: bool,
    /// Firefox's install folder (the one holding application.ini), instead of finding it.
    #[arg(long, value_name = "DIR")]
    firefox: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum AutostartCmd {
    /// Install and enable the login-time preload (systemd user unit, else XDG autostart).
    Enable {
        #[arg(long)]
        json: bool,
    },
    /// Disable and remove it.
    Disable {
        #[arg(long)]
        json: bool,
    },
    /// Whether it is on, and what its last run read.
    Status {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
struct LearnArgs {
    /// Print one JSON object on stdout instead of a sentence.
    #[arg(long)]
    json: bool,
    /// The Firefox (main) process to learn from [default: your running Firefox].
    #[arg(long, value_name = "PID")]
    pid: Option<i32>,
}

/// Parse `args` (usage errors exit with status 2, as clap does) and run the command.
pub fn run<I, T>(args: I) -> anyhow::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    crate::sys::default_sigpipe();
    match Cli::parse_from(args).command {
        Cmd::Residency(args) => residency_cmd(&args),
        Cmd::Preload(args) => preload_cmd(&args),
        Cmd::Evict(args) => evict_cmd(&args),
        Cmd::Learn(args) => learn_cmd(&args),
        Cmd::Plan(args) => plan_cmd(&args),
        Cmd::Autostart(cmd) => autostart_cmd(&cmd),
        Cmd::Launch(args) => crate::trace::cli::launch_cmd(&args),
        Cmd::Trace(args) => crate::trace::cli::trace_cmd(&args),
        Cmd::Install {
            system,
            extension_id,
        } => install_cmd(system, &extension_id),
        Cmd::Uninstall { system } => uninstall_cmd(system),
        Cmd::Manifest { extension_id } => {
            print!(
                "{}",
                install::render(&install::host_binary()?, &extension_id)?
            );
            Ok(())
        }
    }
}

/// The install folder to work on, and the running Firefox of that folder if there is one (its
/// mappings are what an ordinary user can see). `want_process`: whether the caller uses that
/// process; looking for it scans all of /proc, which costs more than a residency scan itself, so
/// with `--firefox DIR` it is skipped when nobody needs it.
fn find_firefox(target: &Target, want_process: bool) -> anyhow::Result<(Install, Option<i32>)> {
    let running = if want_process || target.firefox.is_none() {
        firefox::find_running()
    } else {
        None
    };
    let install = match &target.firefox {
        Some(dir) => files::locate(Some(dir), None)?,
        None => files::locate(None, running)?,
    };
    let pid = running.filter(|&pid| {
        want_process && firefox::inspect(pid).is_ok_and(|info| info.install_dir == install.dir)
    });
    if !target.json {
        let version = install.version.as_deref().unwrap_or("of unknown version");
        eprintln!(
            "Firefox {version} in {} (found by {})",
            install.dir.display(),
            install.found_by
        );
    }
    Ok((install, pid))
}

fn select(install: &Install, target: &Target) -> anyhow::Result<Vec<PathBuf>> {
    Ok(files::select(&install.dir, &target.paths)?)
}

fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    // Buffered: unbuffered pretty JSON costs one write(2) per token.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// residency

/// `residency --json`: the whole scan as one object (tests and scripts rely on this shape).
#[derive(Serialize)]
struct ResidencyJson<'a> {
    install: &'a Install,
    files: Vec<FileReport>,
    summary: residency::Summary,
}

fn residency_cmd(args: &ResidencyArgs) -> anyhow::Result<()> {
    let (install, pid) = find_firefox(&args.target, !args.no_mapped)?;
    let selected = select(&install, &args.target)?;
    // Naming files means "these files": the system libraries come only with the whole folder.
    let opts = residency::ScanOptions {
        pid,
        include_mapped: !args.no_mapped && args.target.paths.is_empty(),
    };
    let mut reports = Vec::new();
    let summary = residency::scan(
        &install.dir,
        &selected,
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

fn print_residency(
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
    for group in [Group::Install, Group::System] {
        let in_group: Vec<_> = reports.iter().filter(|r| r.group == group).collect();
        if in_group.is_empty() {
            continue;
        }
        let name = group_name(group);
        println!(
            "\n{name} files{}",
            if group == Group::System {
                " (mapped by Firefox)"
            } else {
                ""
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
            "  for exact numbers run this as root (sudo); {}",
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
        println!("MAPPED: pages the running Firefox has mapped and touched (a lower bound of what is cached)");
    }
}

fn group_name(group: Group) -> &'static str {
    match group {
        Group::Install => "install",
        Group::System => "system",
    }
}

fn residency_row(install: &Install, report: &FileReport, map: bool, show_mapped: bool) -> Row {
    let path = display_path(install, &report.path);
    let resident = match report.status {
        Status::Exact => report
            .resident_pages
            .map_or("?".into(), |r| percent(r, report.pages)),
        // Never a percentage: the kernel's numbers for this file are not true.
        Status::Hidden => "hidden".into(),
        Status::Error => {
            let error = report.error.as_deref().unwrap_or("unknown error");
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

fn group_total(name: &str, totals: &GroupTotals, page_size: u64) -> String {
    let head = format!(
        "{name}: {}, {} MB",
        count(totals.files, "file"),
        megabytes(totals.size)
    );
    let resident = match totals.resident_pages {
        Some(pages) => format!(
            "{} resident ({} of {} pages)",
            percent(pages, totals.pages),
            pages,
            totals.pages
        ),
        None if totals.exact_files == 0 => {
            format!(
                "residency hidden for all {}",
                count(totals.hidden_files, "file")
            )
        }
        None => format!(
            "residency hidden for {}; the {} exact have {} MB resident",
            count(totals.hidden_files, "file"),
            totals.exact_files,
            megabytes(totals.exact_pages * page_size)
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
const MAP_COLUMNS: u64 = 60;

/// One character per slice of the file: `O` every page resident, `o` some, `.` none.
/// `ranges` are `[first, count]` in units of `unit` pages.
fn page_map(pages: u64, ranges: &[[u64; 2]], unit: u64) -> String {
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

// ---------------------------------------------------------------------------------------------
// preload

fn preload_cmd(args: &PreloadArgs) -> anyhow::Result<()> {
    let (install, _) = find_firefox(&args.target, false)?;
    let mut bar = std::io::stderr()
        .is_terminal()
        .then_some(ProgressBar { install: &install });
    let mut on_progress = |p: &preload::Progress| {
        if let Some(bar) = &mut bar {
            bar.draw(p);
        }
    };
    if args.plan {
        let state_dir = workingset::state_dir()?;
        let summary = plan::preload_planned(
            &install.dir,
            &state_dir,
            args.idle,
            plan::Knobs {
                mapped_only: args.mapped_only,
                file_order: args.file_order,
            },
            &AtomicBool::new(false),
            &mut on_progress,
        );
        if std::io::stderr().is_terminal() {
            eprint!("\r\x1b[K");
        }
        return print_preload(&summary?, args.target.json);
    }
    let selected = select(&install, &args.target)?;
    let opts = preload::Options {
        method: args.method,
        idle: args.idle,
        jobs: args.jobs.map(usize::from),
    };
    let summary = preload::preload(&selected, &opts, &AtomicBool::new(false), &mut on_progress);
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[K");
    }
    print_preload(&summary?, args.target.json)
}

fn print_preload(summary: &preload::Summary, json: bool) -> anyhow::Result<()> {
    for error in &summary.errors {
        eprintln!("warning: {}: {}", error.path.display(), error.error);
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
    if let Some(pace) = summary.pace {
        if pace.pressure_available {
            println!(
                "yielded {} ms to others' I/O ({} busy probes, {} ms probing)",
                pace.yielded_ms, pace.busy_probes, pace.probed_ms
            );
        } else {
            println!("not paced: this kernel reports no I/O pressure (/proc/pressure/io)");
        }
    }
    Ok(())
}

fn method_name(method: Method) -> &'static str {
    match method {
        Method::Auto => "auto",
        Method::Read => "read",
        Method::Readahead => "readahead",
        Method::Fadvise => "fadvise",
    }
}

/// A one-line progress bar on stderr (redrawn in place; only used on a terminal).
struct ProgressBar<'a> {
    install: &'a Install,
}

impl ProgressBar<'_> {
    fn draw(&mut self, p: &preload::Progress) {
        const WIDTH: u64 = 30;
        let filled = (p.bytes_done.min(p.bytes_total) * WIDTH)
            .checked_div(p.bytes_total)
            .unwrap_or(WIDTH);
        let bar: String = (0..WIDTH)
            .map(|i| if i < filled { '#' } else { '-' })
            .collect();
        let file = p
            .current_file
            .as_deref()
            .map(|f| display_path(self.install, f))
            .unwrap_or_default();
        eprint!(
            "\r\x1b[K[{bar}] {}/{} MB  {}/{} files  {file}",
            megabytes(p.bytes_done),
            megabytes(p.bytes_total),
            p.files_done,
            p.files_total
        );
        let _ = std::io::stderr().flush();
    }
}

// ---------------------------------------------------------------------------------------------
// evict

fn evict_cmd(target: &Target) -> anyhow::Result<()> {
    let (install, _) = find_firefox(target, false)?;
    let selected = select(&install, target)?;
    let summary = evict::evict(&selected);
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
    println!("note: pages mapped by a running process (a running Firefox keeps its libraries mapped) stay in the cache, and so do pages written but not yet on disk (run sync first)");
    Ok(())
}

fn evict_row(install: &Install, file: &evict::FileResult) -> Row {
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
                    file.error.as_deref().unwrap_or("unknown error")
                ),
            ]
        }
    };
    Row { cells, extra: None }
}

// ---------------------------------------------------------------------------------------------
// learn

fn learn_cmd(args: &LearnArgs) -> anyhow::Result<()> {
    let pid = match args.pid {
        Some(pid) => pid,
        None => firefox::find_running().ok_or_else(|| {
            crate::Error::FirefoxNotFound(
                "no running Firefox of yours; start Firefox, let it finish starting, then run learn"
                    .into(),
            )
        })?,
    };
    let info = firefox::inspect(pid)?;
    let state_dir = workingset::state_dir()?;
    let summary = workingset::learn(pid, &info.install_dir, &state_dir, &AtomicBool::new(false))?;
    if args.json {
        return print_json(&summary);
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

// ---------------------------------------------------------------------------------------------
// plan and autostart

fn plan_cmd(args: &PlanArgs) -> anyhow::Result<()> {
    let target = Target {
        json: args.json,
        firefox: args.firefox.clone(),
        paths: Vec::new(),
    };
    let (install, _) = find_firefox(&target, false)?;
    let status = plan::status(&install.dir, &workingset::state_dir()?)?;
    if args.json {
        return print_json(&status);
    }
    if status.learned {
        println!(
            "plan: {} MB in {} of the folder's {} MB, learned from {}",
            megabytes(status.planned_bytes),
            count(status.planned_files, "file"),
            megabytes(status.install_bytes),
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
        Some(files) => {
            let bytes: u64 = files.iter().map(|f| f.size).sum();
            println!("uncached files: {} ({} MB): the next start reads them from disk", files.len(), megabytes(bytes));
        }
    }
    print_autostart(&status.autostart);
    Ok(())
}

fn print_autostart(status: &autostart::Status) {
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
            workingset::now_ms().saturating_sub(last.at_ms) / 1000
        );
    }
    if let Some(note) = &status.note {
        println!("  note: {note}");
    }
}

fn autostart_cmd(cmd: &AutostartCmd) -> anyhow::Result<()> {
    let dirs = autostart::Dirs::from_env()?;
    match cmd {
        AutostartCmd::Enable { json } => {
            let done = autostart::enable(&dirs, &install::host_binary()?, &autostart::systemctl)?;
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

// ---------------------------------------------------------------------------------------------
// install

fn install_cmd(system: bool, extension_id: &str) -> anyhow::Result<()> {
    let done = install::install(system, extension_id)?;
    println!(
        "installed the native-messaging manifest {}",
        done.manifest.display()
    );
    println!("  host binary: {}", done.binary.display());
    println!("  allowed extension: {extension_id}");
    println!("Firefox reads it when the extension next connects; keep the binary where it is (or run install again after moving it).");
    Ok(())
}

fn uninstall_cmd(system: bool) -> anyhow::Result<()> {
    let (manifest, removed) = install::uninstall(system)?;
    if removed {
        println!("removed {}", manifest.display());
    } else {
        println!(
            "not installed: {} does not exist, nothing to remove",
            manifest.display()
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// formatting

/// A table row; a row with fewer cells than the header ends with one free-form cell (an error).
struct Row {
    cells: Vec<String>,
    /// A line printed under the row (the page map).
    extra: Option<String>,
}

/// First column left-aligned, the others right-aligned.
fn print_table(headers: &[&str], rows: &[Row]) {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        let full = row.cells.len() == headers.len();
        for (i, cell) in row.cells.iter().enumerate() {
            if i == 0 || full {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
    }
    let header: Vec<String> = headers.iter().map(|h| (*h).to_owned()).collect();
    println!("{}", format_row(&header, &widths));
    for row in rows {
        println!("{}", format_row(&row.cells, &widths));
        if let Some(extra) = &row.extra {
            println!("{extra}");
        }
    }
}

fn format_row(cells: &[String], widths: &[usize]) -> String {
    let full = cells.len() == widths.len();
    let mut line = String::new();
    for (i, cell) in cells.iter().enumerate() {
        let w = widths[i];
        let piece = match (i, full) {
            (0, _) => format!("{cell:<w$}"),
            (_, true) => format!("  {cell:>w$}"),
            (_, false) => format!("  {cell}"),
        };
        line += &piece;
    }
    line.trim_end().to_owned()
}

/// `path` relative to the install folder when inside it.
fn display_path(install: &Install, path: &Path) -> String {
    path.strip_prefix(&install.dir)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Decimal megabytes with one decimal, as `du --si` and the docs count them.
fn megabytes(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // display only; f64 is exact far beyond any file size
    let mb = bytes as f64 / 1e6;
    format!("{mb:.1}")
}

/// "1 file", "2 files".
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    #[allow(clippy::cast_precision_loss)] // display only
    let pct = part as f64 * 100.0 / whole as f64;
    format!("{pct:.1}%")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

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

    #[test]
    fn numbers_are_formatted_for_people() {
        assert_eq!(megabytes(308_500_000), "308.5");
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(percent(0, 0), "-");
        assert_eq!(count(1, "file"), "1 file");
        assert_eq!(count(0, "file"), "0 files");
    }

    #[test]
    fn error_rows_keep_the_columns_of_full_rows() {
        let widths = [4, 2];
        assert_eq!(format_row(&["a".into(), "1".into()], &widths), "a      1");
        assert_eq!(
            format_row(&["a".into(), "error: x".into()], &widths),
            "a     error: x"
        );
    }
}
