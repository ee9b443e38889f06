//! The clap definitions: every command, its flags, and the help text. The library has no clap;
//! where a flag names a library value (`--method`), the mapping is in [`super::values`].

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::pagecache::preload;
use crate::EXTENSION_ID;

pub use super::values::StrategyArg;
use super::values::{parse_batches, parse_ms, parse_seconds};
pub(super) use super::values::{CacheArg, MethodArg, SourceArg};

/// The examples under `--help`, with `cmd` (how this user runs this binary, crate::invocation)
/// in front of each, so they run as printed.
pub(super) fn examples(cmd: &str) -> String {
    let rows = [
        (
            "residency",
            "which of Firefox's files are in the page cache",
        ),
        (
            "residency -v libxul.so",
            "one file, with a map of its pages",
        ),
        ("residency --json | jq .summary", ""),
        ("evict", "drop Firefox's files from the cache (cold start)"),
        ("preload --idle", "read them back in at idle I/O priority"),
        (
            "relaunch --cold",
            "restart cold: waits for you to quit Firefox, evicts, starts it",
        ),
        ("install", "let the about:startup extension start this host"),
        (
            "desktop enable",
            "launch Firefox from the desktop with a prefetch",
        ),
    ];
    let width = rows
        .iter()
        .map(|(a, _)| cmd.len() + 1 + a.len())
        .max()
        .unwrap_or(0)
        + 2;
    let mut out = String::from("Examples:\n");
    for (args, what) in rows {
        let line = format!("{cmd} {args}");
        if width <= 56 {
            out += format!("  {line:<width$}{what}").trim_end();
        } else if what.is_empty() {
            out += &format!("  {line}");
        } else {
            // A long path: each command on its own line, under what it does.
            out += &format!("  # {what}\n  {line}");
        }
        out.push('\n');
    }
    out += "\nPaths are relative to Firefox's install folder, or absolute inside it; without paths every file
of the folder is used. Without --firefox the running Firefox is used, else the one on PATH.";
    out
}

/// Where `preload --help` lists the knobs only the benchmark (`npm run bench`) turns: apart from
/// the options a person uses.
const BENCH_HEADING: &str =
    "Benchmark options (scripts/bench.mjs turns these; not needed otherwise)";

/// about:startup: measure and control how much of Firefox is in the page cache.
///
/// When Firefox starts this program for the about:startup extension (with a manifest path and an
/// extension id as arguments), it speaks native messaging on stdin/stdout instead; see
/// docs/PROTOCOL.md.
#[derive(Debug, Parser)]
#[command(name = "about-startup-host", version)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Cmd,
}

#[derive(Debug, Subcommand)]
pub(super) enum Cmd {
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
    Evict(EvictArgs),
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
    /// Launch Firefox from the desktop through `launch --prefetch` (a copy of the system's
    /// desktop entry in ~/.local/share/applications; the system's entry is never changed).
    #[command(subcommand)]
    Desktop(DesktopCmd),
    /// Start Firefox (optionally cold) and record which pages of which files its start reads,
    /// or (--prefetch) start it at once with what its start needs read beside it.
    Launch(LaunchArgs),
    /// Pack your Firefox install into a compressed read-only image (mksquashfs, in the state
    /// folder), mounted as you (squashfuse_ll) at the next `launch --prefetch`, which starts Firefox
    /// from it while the image is of the install's build (else the plain install).
    ///
    /// Costs disk space (the image), a rebuild after every Firefox update, and memory: the
    /// image's pages and the decompressed pages are cached both.
    Pack(PackArgs),
    /// Unmount and remove the packed image: the system as before `pack`.
    Unpack {
        /// Print one JSON object on stdout instead of sentences.
        #[arg(long)]
        json: bool,
    },
    /// Restart your running Firefox (cold with --cold): wait for it to quit, evict its files,
    /// start it again with the same arguments and environment.
    Relaunch(super::relaunch::RelaunchArgs),
    /// Record the reads of a Firefox started some other way, for N seconds.
    Trace(TraceArgs),
    /// Show past sessions' startup milestones from a profile's archived Telemetry pings.
    ///
    /// Firefox writes a `main` ping at every shutdown into <profile>/datareporting/archived,
    /// upload enabled or not; its simpleMeasurements hold that session's `main`,
    /// `sessionRestored` and other moments in ms since its process start. The source of
    /// milestones on a Firefox without the experiment API (Release).
    Telemetry(TelemetryArgs),
    /// Show where a recorded start's time went beyond the disk: each add-on's startup and
    /// session restore, as the page recorded them (from the file the page's Export wrote).
    Costs(super::costs::CostsArgs),
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
    /// Write the manual pages (about-startup-host.1 and one per command) into DIR, rendered
    /// from these definitions; for packaging (scripts/package.mjs), so hidden.
    #[command(hide = true)]
    Manpages {
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// Print the native-messaging manifest for this binary (without installing it).
    Manifest {
        /// The add-on id allowed to talk to the host.
        #[arg(long, value_name = "ID", default_value = EXTENSION_ID)]
        extension_id: String,
        /// Name this path instead of this binary's (a package names where it installs the host).
        #[arg(long, value_name = "PATH")]
        binary: Option<std::path::PathBuf>,
    },
}

/// What every file command works on.
#[derive(Debug, Args)]
pub(super) struct Target {
    /// Print one JSON object on stdout instead of a table.
    #[arg(long)]
    pub(super) json: bool,
    /// Firefox's install folder (the one holding application.ini), instead of finding it.
    #[arg(long, value_name = "DIR")]
    pub(super) firefox: Option<PathBuf>,
    /// Files to work on, relative to the install folder or absolute inside it [default: all].
    #[arg(value_name = "PATH")]
    pub(super) paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub(super) struct ResidencyArgs {
    #[command(flatten)]
    pub(super) target: Target,
    /// Leave out the files the running Firefox maps from outside its folder (GTK, fonts, …);
    /// they are only included when no PATH is named.
    #[arg(long)]
    pub(super) no_mapped: bool,
    /// Draw a map of each file's pages under its row.
    #[arg(short = 'v', long = "pages")]
    pub(super) pages: bool,
}

#[derive(Debug, Args)]
pub(super) struct PreloadArgs {
    #[command(flatten)]
    pub(super) target: Target,
    /// Read at the idle I/O priority class (like `ionice -c3`), out of other programs' way.
    #[arg(long)]
    pub(super) idle: bool,
    /// How to read.
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub(super) method: MethodArg,
    /// Files read at once [default: chosen by the host].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=preload::MAX_JOBS as i64))]
    pub(super) jobs: Option<u16>,
    /// Read only what the learned starts needed (see `learn`), in disk order; files changed
    /// since (a Firefox update) or never learned are read whole.
    #[arg(long, conflicts_with_all = ["paths", "method", "jobs"])]
    pub(super) plan: bool,
    /// With --plan: use only the pages Firefox had mapped, as a user who cannot see page-cache
    /// residency would (for the benchmark).
    #[arg(long, help_heading = BENCH_HEADING, requires = "plan")]
    pub(super) mapped_only: bool,
    /// With --plan: read in file order even where the filesystem gives disk positions (for the
    /// benchmark).
    #[arg(long, help_heading = BENCH_HEADING, requires = "plan")]
    pub(super) file_order: bool,
    /// With --plan: where the plan's pages come from: `learned` (the working set `learn`
    /// records), `trace` (the pages the last traced cold starts of this Firefox build read
    /// from disk and then used; record them with `launch --cold --trace` as root, see
    /// `launch --help`), or `trace-reads` (every page the newest trace read: the replay).
    #[arg(long, value_enum, default_value_t = SourceArg::Learned, requires = "plan")]
    pub(super) source: SourceArg,
    /// With --plan: gaps between needed ranges up to this many KiB are read through rather
    /// than skipped [default: 256 for the learned plan; 0 for traced ones, swept in
    /// docs/benchmarks.md].
    #[arg(long, help_heading = BENCH_HEADING, value_name = "KIB", requires = "plan")]
    pub(super) gap_kib: Option<u64>,
    /// With --plan --source trace-reads: read in the order the traced start read, not in disk
    /// order (the replay of the benchmark).
    #[arg(long, help_heading = BENCH_HEADING, requires = "plan", conflicts_with = "file_order")]
    pub(super) recorded_order: bool,
    /// Which cache to fill: a squashfs install (a Snap) has two, the files' decompressed pages
    /// and the compressed image behind its loop device.
    #[arg(long, value_enum, default_value_t = CacheArg::Files, conflicts_with = "plan")]
    pub(super) cache: CacheArg,
}

#[derive(Debug, Args)]
pub(super) struct EvictArgs {
    #[command(flatten)]
    pub(super) target: Target,
    /// Which cache to drop [default: all for the whole folder (a squashfs install's image too),
    /// files for named files].
    #[arg(long, value_enum)]
    pub(super) cache: Option<CacheArg>,
}

#[derive(Debug, Args)]
pub struct LaunchArgs {
    /// Evict Firefox's install folder from the page cache first (a selectively cold start).
    #[arg(long)]
    pub cold: bool,
    /// Record which pages of which files the start reads (the kernel's tracing, through root's
    /// tracer: sudo, or pkexec with the package; else /proc sampling).
    #[arg(long)]
    pub trace: bool,
    /// Start Firefox at once and read what its start needs beside it: the traced plan of this
    /// build in first-use order (else the learned plan, saying so). This process becomes
    /// Firefox; the prefetcher runs detached and records what it did in last-prefetch.json.
    /// On a compressed mount it reads the image's ranges raw; on pack's own FUSE mount
    /// (squashfuse_ll) it also reads the planned file ranges through the mount as their image
    /// bytes come in, so the mount decompresses them before Firefox needs them.
    #[arg(long, conflicts_with_all = ["trace", "json", "seconds"])]
    pub prefetch: bool,
    /// With --prefetch: yield to others' I/O (pressure stall information), as `preload --idle`.
    #[arg(long, requires = "prefetch")]
    pub idle: bool,
    /// With --prefetch: batch sizes in MiB, the first and the largest (first-use order is cut
    /// into batches, each read in disk order; each twice the last) [default: 1:8].
    #[arg(long, value_name = "FIRST:MAX", requires = "prefetch", value_parser = parse_batches)]
    pub batches: Option<(u64, u64)>,
    /// With --prefetch: MiB kept queued ahead of the read being waited for [default: 2].
    #[arg(long, value_name = "MIB", requires = "prefetch", value_parser = clap::value_parser!(u64).range(0..=1024))]
    pub ahead_mib: Option<u64>,
    /// With --prefetch: gaps between planned ranges up to this many KiB are read through
    /// [default: 16].
    #[arg(long, value_name = "KIB", requires = "prefetch", value_parser = clap::value_parser!(u64).range(0..=65536))]
    pub gap_kib: Option<u64>,
    /// With --prefetch: read beside the start (Firefox at once), or first (the plan, then
    /// Firefox: faster where the disk's readahead window is large, as each page Firefox faults
    /// in before the prefetch reached it brings the whole window); auto: first where the window
    /// of the disk holding Firefox is over 1 MiB [default: auto].
    #[arg(long, value_enum, requires = "prefetch")]
    pub strategy: Option<StrategyArg>,
    /// With --prefetch (experiments): leave out pages the traced starts first needed after this
    /// many ms.
    #[arg(long, value_name = "MS", requires = "prefetch", hide = true, value_parser = parse_ms, allow_negative_numbers = true)]
    pub until_ms: Option<f64>,
    /// With --prefetch (experiments): on pack's FUSE mount, read the image raw only, without
    /// decompressing the plan ahead through the mount (to compare).
    #[arg(long, requires = "prefetch", hide = true)]
    pub no_warm: bool,
    /// Print the trace as one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Firefox's install folder (the one holding application.ini), or its executable [default:
    /// the installed Firefox you start by name: the first of firefox, firefox-esr,
    /// firefox-developer-edition, firefox-nightly on PATH, else the usual folders; never a running
    /// Firefox's install].
    #[arg(long, value_name = "DIR")]
    pub firefox: Option<PathBuf>,
    /// Stop after N seconds instead of when the tree has read nothing for 3 s.
    #[arg(long, value_name = "N", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub seconds: Option<f64>,
    /// Also record Firefox's own startup profile (its Gecko profiler from the first instant:
    /// js, stackwalk, cpu, fileio), collect it without quitting once the start is recorded, and
    /// write one profile for the Firefox Profiler with the trace merged in, on one clock.
    #[arg(long)]
    pub firefox_profile: bool,
    /// Where to write that merged profile [default: the state folder's profiles/<id>.profile.json].
    #[arg(long, value_name = "FILE", requires = "firefox_profile")]
    pub profile_out: Option<PathBuf>,
    /// Leave out which code faulted each page in (exceptions:page_fault_user, ~100k events in a
    /// start): the trace then costs less.
    #[arg(long)]
    pub no_fault_sites: bool,
    /// Arguments for Firefox (after `--`), e.g. `-- --headless -profile /tmp/p`.
    #[arg(last = true, value_name = "FIREFOX_ARGS")]
    pub args: Vec<OsString>,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct TraceArgs {
    #[command(subcommand)]
    pub action: Option<TraceAction>,
    /// The Firefox (parent) process to attach to; reads before attaching are missed.
    #[arg(long, value_name = "PID", required = true)]
    pub pid: Option<i32>,
    /// How long to record.
    #[arg(long, value_name = "N", required = true, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub seconds: Option<f64>,
    /// Print the trace as one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Leave out which code faulted each page in (exceptions:page_fault_user): the trace then
    /// costs less (the benchmark's cold-traced-no-faults).
    #[arg(long)]
    pub no_fault_sites: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum TraceAction {
    /// Write a stored or given trace as a profile for the Firefox Profiler
    /// (`--format firefox-profiler`): merged into Firefox's own startup profile where
    /// `launch --firefox-profile` recorded one, else the trace alone.
    Export(super::profile::ExportArgs),
    /// List the stored traces (your state folder's traces/), newest first, with their ids.
    List {
        /// Print one JSON object on stdout instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one stored trace as `launch --trace` reported it (the per-file table and access
    /// maps), or (--json) the whole trace.
    Show {
        /// The trace's id (`trace list` lists them).
        #[arg(value_name = "ID")]
        id: String,
        /// Print the trace as one JSON object instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Every figure the page shows of a stored or given trace, as one JSON object (the
    /// protocol's `trace_summary`: file rows, charts as bins, code regions, entries, the
    /// profile's share); `trace show` prints the same as a report.
    Summary(SummaryArgs),
}

#[derive(Debug, Args)]
pub struct SummaryArgs {
    /// A stored trace's id, a trace JSON file or an about:startup export holding one
    /// [default: the newest stored trace].
    #[arg(value_name = "ID|FILE")]
    pub trace: Option<String>,
    /// The file whose access pattern the JSON carries: a path, or the end of one
    /// (`libxul.so`) [default: libxul.so, else the file read the most].
    #[arg(long, value_name = "NAME")]
    pub file: Option<String>,
    /// Where the start ends on the charts' axis, in ms since the process start (the page's
    /// sessionRestored) [default: the trace's own sessionRestored, else its last read].
    #[arg(long, value_name = "MS", value_parser = parse_ms, allow_negative_numbers = true)]
    pub axis_end: Option<f64>,
}

impl Cmd {
    /// Whether the command was asked for `--json`: then a failure is a JSON error object on
    /// stdout too (cli::run), not only a line on stderr.
    pub(super) fn json(&self) -> bool {
        match self {
            Cmd::Residency(a) => a.target.json,
            Cmd::Preload(a) => a.target.json,
            Cmd::Evict(a) => a.target.json,
            Cmd::Learn(a) => a.json,
            Cmd::Plan(a) => a.json,
            Cmd::Autostart(
                AutostartCmd::Enable { json }
                | AutostartCmd::Disable { json }
                | AutostartCmd::Status { json },
            ) => *json,
            Cmd::Desktop(
                DesktopCmd::Enable(a) | DesktopCmd::Disable(a) | DesktopCmd::Status(a),
            ) => a.json,
            Cmd::Launch(a) => a.json,
            Cmd::Pack(a) => a.json,
            Cmd::Unpack { json } => *json,
            Cmd::Relaunch(a) => a.json,
            Cmd::Trace(a) => match &a.action {
                None => a.json,
                Some(TraceAction::Export(e)) => e.json,
                Some(TraceAction::List { json } | TraceAction::Show { json, .. }) => *json,
                Some(TraceAction::Summary(_)) => true,
            },
            Cmd::Telemetry(a) => a.json,
            Cmd::Costs(a) => a.json,
            Cmd::Install { .. }
            | Cmd::Uninstall { .. }
            | Cmd::Manifest { .. }
            | Cmd::Manpages { .. } => false,
        }
    }
}

/// A conflict between flags and one value of an option, which clap's definitions cannot say:
/// `trace export --json -o -` would print the profile and then the summary on one stdout.
pub(super) fn value_conflict(cli: &Cli) -> Option<String> {
    match &cli.command {
        Cmd::Trace(TraceArgs {
            action: Some(TraceAction::Export(e)),
            ..
        }) if e.json && e.output.as_deref() == Some(std::path::Path::new("-")) => Some(
            "'trace export --json' prints the export's summary on stdout, where '-o -' writes the \
             profile: write the profile to a file (-o FILE), or leave out --json"
                .to_owned(),
        ),
        _ => None,
    }
}

#[derive(Debug, Args)]
pub(super) struct PlanArgs {
    /// Print one JSON object on stdout instead of sentences.
    #[arg(long)]
    pub(super) json: bool,
    /// Firefox's install folder (the one holding application.ini), instead of finding it.
    #[arg(long, value_name = "DIR")]
    pub(super) firefox: Option<PathBuf>,
    /// Which plan to show (see `preload --source`).
    #[arg(long, value_enum, default_value_t = SourceArg::Learned)]
    pub(super) source: SourceArg,
}

#[derive(Debug, Subcommand)]
pub(super) enum AutostartCmd {
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

#[derive(Debug, Subcommand)]
pub(super) enum DesktopCmd {
    /// Write the entry: the system's entry for this Firefox with every Exec through
    /// `about-startup-host launch --prefetch`, under the same name in your applications folder.
    Enable(DesktopArgs),
    /// Remove the entry `enable` wrote (nothing else); the system's entry is in effect again.
    Disable(DesktopArgs),
    /// Whether it is on, which plan a launch would prefetch (stale after an update?), and what
    /// the last launch's prefetch did.
    Status(DesktopArgs),
}

#[derive(Debug, Args)]
pub(super) struct DesktopArgs {
    /// Print one JSON object on stdout instead of sentences.
    #[arg(long)]
    pub(super) json: bool,
    /// Firefox's install folder (the one holding application.ini), instead of finding it.
    #[arg(long, value_name = "DIR")]
    pub(super) firefox: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(super) struct PackArgs {
    /// Print one JSON object on stdout instead of sentences.
    #[arg(long)]
    pub(super) json: bool,
    /// Firefox's install folder (the one holding application.ini), instead of finding it.
    #[arg(long, value_name = "DIR")]
    pub(super) firefox: Option<PathBuf>,
    /// Only say what is packed, of which build, whether it is current and what it costs, and what
    /// packing saves on this machine's traced start (bytes needed from the image vs plain).
    #[arg(long)]
    pub(super) status: bool,
    /// mksquashfs's compressor: gzip, lzo, lz4, xz, zstd, lzma.
    #[arg(long, value_name = "NAME", default_value = "zstd")]
    pub(super) comp: String,
    /// The compressor's level (mksquashfs -Xcompression-level: gzip and lzo 1-9, zstd 1-22)
    /// [default: 19 for zstd, else the compressor's own].
    #[arg(long, value_name = "N")]
    pub(super) level: Option<u32>,
    /// Block size in KiB (a power of two, 4 to 1024).
    #[arg(long, value_name = "KIB", default_value_t = 128)]
    pub(super) block_kib: u32,
    /// Do not order the image by the traced start (mksquashfs -sort).
    #[arg(long)]
    pub(super) no_sort: bool,
}

#[derive(Debug, Args)]
pub(super) struct LearnArgs {
    /// Print one JSON object on stdout instead of a sentence.
    #[arg(long)]
    pub(super) json: bool,
    /// The Firefox (main) process to learn from [default: your running Firefox].
    #[arg(long, value_name = "PID")]
    pub(super) pid: Option<i32>,
}

#[derive(Debug, Args)]
pub(super) struct TelemetryArgs {
    /// Print one JSON object on stdout instead of a table.
    #[arg(long)]
    pub(super) json: bool,
    /// The profile folder [default: the profile of your running Firefox].
    #[arg(long, value_name = "DIR", conflicts_with = "pid")]
    pub(super) profile: Option<PathBuf>,
    /// The running Firefox whose profile to read.
    #[arg(long, value_name = "PID")]
    pub(super) pid: Option<i32>,
    /// Sessions to show, newest first (1-200).
    #[arg(long, value_name = "N", default_value_t = 20,
          value_parser = clap::value_parser!(u16).range(1..=200))]
    pub(super) limit: u16,
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
