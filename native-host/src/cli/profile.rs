//! The Firefox Profiler side of the CLI (issue 21): `trace export --format firefox-profiler`,
//! and the report of what was written (also after `launch --firefox-profile`, whose collecting,
//! storing and merging is the launch pipeline's: launch/profile.rs).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use serde_json::Value;

use crate::export::{self, Exported};
use crate::firefox::startup_profile;
use crate::state::StateDir;
use crate::trace::model::Trace;
use crate::trace::{profiles, store};

/// Export formats.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    /// A profile for the Firefox Profiler (profiler.firefox.com): the trace merged into
    /// Firefox's own startup profile when one was recorded with it, else the trace alone.
    FirefoxProfiler,
}

/// What the CLI and the docs say about opening the file.
pub const HOW_TO_OPEN: &str = "open https://profiler.firefox.com and drop the file on it \
(or \"Load a profile from file\"); offline, any copy of the Profiler loads it the same way";

/// A trace file larger than this is refused (the store keeps at most 512 MiB in all; a cold
/// start's trace is a few MB).
pub const MAX_TRACE_BYTES: u64 = 256 * 1024 * 1024;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A stored trace's id (`trace list` lists them, as the page does), a trace
    /// JSON file (`launch --json` output, a stored trace) or an about:startup export holding one
    /// [default: the newest stored trace].
    #[arg(value_name = "ID|FILE")]
    pub trace: Option<String>,
    /// The format to write.
    #[arg(long, value_enum, default_value = "firefox-profiler")]
    pub format: ExportFormat,
    /// Firefox's own (Gecko-format) profile of the same start to merge with [default: the one
    /// stored with the trace by `launch --firefox-profile`, if any].
    #[arg(long, value_name = "FILE")]
    pub firefox_profile: Option<PathBuf>,
    /// Leave Firefox's profile out even where one is stored: the trace alone.
    #[arg(long, conflicts_with = "firefox_profile")]
    pub trace_only: bool,
    /// Where to write the profile (`-` for stdout) [default: about-startup-<id>.profile.json].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print what the export holds as one JSON object on stdout (not with `-o -`).
    #[arg(long)]
    pub json: bool,
}

/// Read at most `max` bytes of `path` (a regular file), or say why not.
fn read_bounded(path: &Path, max: u64) -> anyhow::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("open {}", path.display()))?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    if meta.len() > max {
        bail!(
            "{} is {} MB, more than the {} MB this command reads: not a trace this host wrote",
            path.display(),
            meta.len() / 1_000_000,
            max / 1_000_000
        );
    }
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A trace from JSON: the trace itself, or an about:startup export document with `trace`.
pub fn parse_trace(bytes: &[u8]) -> anyhow::Result<Trace> {
    let value: Value = serde_json::from_slice(bytes).context("not JSON (cut short?)")?;
    let inner = if value.get("format").and_then(Value::as_str) == Some("about-startup-export") {
        value
            .get("trace")
            .filter(|t| !t.is_null())
            .cloned()
            .context("this about:startup export holds no trace")?
    } else {
        value
    };
    let version = inner.get("version").and_then(Value::as_u64);
    if version.is_some_and(|v| v > u64::from(crate::trace::TRACE_VERSION)) {
        bail!(
            "a trace of version {} from a newer host (this one reads up to {}): update about-startup-host",
            version.unwrap_or(0),
            crate::trace::TRACE_VERSION
        );
    }
    serde_json::from_value(inner)
        .context("not an about:startup trace (fields missing or of the wrong kind)")
}

/// Which trace: (id if stored, the trace). A stored one is read from the state folder (held
/// open, the user's own files only); a FILE as named on the command line, bounded.
pub(super) fn load(arg: Option<&str>, dir: &StateDir) -> anyhow::Result<(Option<String>, Trace)> {
    let stored_id = |id: String| -> anyhow::Result<(Option<String>, Trace)> {
        let (trace, set_aside) = store::read_or_set_aside(dir, &id);
        let trace = trace
            .ok_or_else(|| anyhow::anyhow!(store::unread_error(dir, &id, set_aside.as_ref())))?;
        Ok((Some(id), trace))
    };
    match arg {
        None => stored_id({
            let (metas, notes) = store::list_checked(dir);
            for note in &notes {
                eprintln!("note: {}", note.english());
            }
            metas.first().map(|m| m.id.clone()).with_context(|| {
                format!(
                    "no stored trace in {}: record one with `{}`",
                    dir.path().display(),
                    store::record_command()
                )
            })?
        }),
        Some(a) if store::valid_id(a) && !Path::new(a).exists() => stored_id(a.to_owned()),
        Some(a) => {
            let path = Path::new(a);
            let bytes = read_bounded(path, MAX_TRACE_BYTES)?;
            let trace = parse_trace(&bytes)
                .with_context(|| format!("read the trace {}", path.display()))?;
            Ok((None, trace))
        }
    }
}

/// `trace export`.
pub fn export_cmd(args: &ExportArgs) -> anyhow::Result<()> {
    let ExportFormat::FirefoxProfiler = args.format;
    let state = crate::state::open()?;
    let dir = store::in_state(&state)?;
    let (id, trace) = load(args.trace.as_deref(), &dir)?;
    let bytes = match (&args.firefox_profile, &id) {
        _ if args.trace_only => None,
        (Some(p), _) => Some(read_bounded(p, startup_profile::MAX_BYTES)?),
        (None, Some(id)) => {
            profiles::read(&profiles::in_state(&state)?, id, startup_profile::MAX_BYTES)?
        }
        (None, None) => None,
    };
    let firefox = bytes
        .map(|b| startup_profile::parse(&b).map_err(|e| anyhow::anyhow!("Firefox's profile: {e}")))
        .transpose()?;
    let started = std::time::Instant::now();
    let exported = export::firefox_profiler(&trace, firefox, &BTreeMap::new())?;
    let name = id
        .clone()
        .unwrap_or_else(|| format!("{}-{}", trace.recorded_at_ms, trace.pid));
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("about-startup-{name}.profile.json")));
    crate::launch::profile::write_out(&out, &exported)?;
    report(&out, &exported, started.elapsed(), args.json)
}

pub(super) fn report(
    out: &Path,
    e: &Exported,
    took: std::time::Duration,
    json: bool,
) -> anyhow::Result<()> {
    if json {
        let mut o = serde_json::to_value(&e.summary)?;
        o["file"] = Value::from(out.to_string_lossy().into_owned());
        o["bytes_written"] = Value::from(e.json.len());
        o["elapsed_ms"] = Value::from(took.as_millis() as u64);
        println!("{o}");
        return Ok(());
    }
    let s = &e.summary;
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "wrote {} ({:.1} MB, {} ms): {}, {} I/O markers ({:.1} MB read) in {} processes, {} milestones",
        out.display(),
        e.json.len() as f64 / 1e6,
        took.as_millis(),
        if s.kind == "merged" { "Firefox's own profile with the trace merged in" } else { "the trace alone" },
        s.markers,
        s.bytes as f64 / 1e6,
        s.processes,
        s.milestones
    )?;
    for (region, bytes) in s.top_code.iter().take(5) {
        writeln!(
            err,
            "  faulted in {:>6.1} MB: {region}",
            *bytes as f64 / 1e6
        )?;
    }
    for (archive, entry, bytes) in s.top_entries.iter().take(5) {
        writeln!(
            err,
            "  read {:>6.2} MB of {archive}: {entry}",
            *bytes as f64 / 1e6
        )?;
    }
    for m in &s.missing {
        writeln!(err, "  missing: {m}")?;
    }
    if out != Path::new("-") {
        writeln!(err, "To see it: {HOW_TO_OPEN}.")?;
    }
    Ok(())
}
