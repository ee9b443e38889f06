//! `launch` and `trace`: the CLI's recording commands and their human output (per-file table and
//! text access map) or `--json`.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::firefox::install as files;
use crate::state::user;
use crate::trace::model::{Source, Trace};
use crate::trace::record::{self, Launch, Stop, QUIET_MS};
use crate::trace::store;

/// What `--help` says about privileges (also on the page).
pub const PRIVILEGE_NOTE: &str = "The exact trace (every page entering the page cache, from the kernel's tracefs) needs root: \
run `sudo about-startup-host launch --cold --trace` (or pkexec). Firefox is still started as you, never as root, \
and the trace is stored in your state folder (~/.local/state/about-startup/traces), owned by you. \
Without root the trace falls back to sampling /proc/<pid>/io and major faults of the Firefox tree.";

#[derive(Debug, Args)]
#[command(after_help = PRIVILEGE_NOTE)]
pub struct LaunchArgs {
    /// Evict Firefox's install folder from the page cache first (a selectively cold start).
    #[arg(long)]
    pub cold: bool,
    /// Record which pages of which files the start reads (root: tracefs; else /proc sampling).
    #[arg(long)]
    pub trace: bool,
    /// Print the trace as one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Firefox's install folder (the one holding application.ini), instead of finding it.
    #[arg(long, value_name = "DIR")]
    pub firefox: Option<PathBuf>,
    /// Stop after N seconds instead of when the tree has read nothing for 3 s.
    #[arg(long, value_name = "N")]
    pub seconds: Option<f64>,
    /// Arguments for Firefox (after `--`), e.g. `-- --headless -profile /tmp/p`.
    #[arg(last = true, value_name = "FIREFOX_ARGS")]
    pub args: Vec<OsString>,
    /// Root's side of a user's "Restart cold and trace" (run by pkexec): start the Firefox the
    /// user's own `relaunch --cold --trace` described in their state folder, as that user, and
    /// print one JSON line (pid, trace id, evict). Refuses anything else (docs/design/pkexec.md).
    #[arg(long, requires_all = ["cold", "trace"], conflicts_with_all = ["firefox", "args", "json"])]
    pub relaunch: bool,
}

#[derive(Debug, Args)]
#[command(after_help = PRIVILEGE_NOTE)]
pub struct TraceArgs {
    /// The Firefox (parent) process to attach to; reads before attaching are missed.
    #[arg(long, value_name = "PID")]
    pub pid: i32,
    /// How long to record.
    #[arg(long, value_name = "N")]
    pub seconds: f64,
    /// Print the trace as one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// `launch`.
pub fn launch_cmd(args: &LaunchArgs) -> anyhow::Result<()> {
    if args.relaunch {
        return relaunch_launch(args.seconds);
    }
    let install = files::locate(args.firefox.as_deref(), None)?;
    let binary = record::firefox_binary(&install.dir).ok_or_else(|| {
        anyhow::anyhow!(
            "no firefox executable in {}; name the install folder with --firefox DIR",
            install.dir.display()
        )
    })?;
    let owner = crate::state::acting_for()?;
    eprintln!(
        "starting {} {}{}",
        binary.display(),
        if args.cold { "(cold) " } else { "" },
        owner
            .as_ref()
            .map_or(String::new(), |u| format!("as {}", u.name))
    );
    let opts = Launch {
        install,
        binary,
        args: args.args.clone(),
        cold: args.cold,
        trace: args.trace,
        user: owner.clone(),
        env: None,
        cwd: None,
    };
    let stop = Stop {
        seconds: args.seconds,
        quiet_ms: QUIET_MS,
    };
    let (trace, _child) = record::launch(&opts, stop)?;
    finish(&trace, owner.as_ref(), args.json)
}

/// `launch --cold --trace --relaunch`: the one privileged step of the traced restart. Root acts
/// only for the user pkexec (or sudo) names, only on the request in that user's own state
/// folder, only once it is accepted (relaunch/request.rs); Firefox runs as that user; the trace
/// is stored in their state folder, owned by them.
fn relaunch_launch(seconds: Option<f64>) -> anyhow::Result<()> {
    let Some(owner) = crate::state::acting_for()? else {
        anyhow::bail!(
            "--relaunch is root's side of a user's \"Restart cold and trace\": it runs under \
             pkexec (or sudo) for that user, and never starts Firefox as root"
        );
    };
    let request = crate::relaunch::request::take(&owner)?;
    let ok = crate::relaunch::request::check(&request, &owner)?;
    let opts = Launch {
        install: ok.install,
        binary: ok.binary,
        args: ok.args,
        cold: true,
        trace: true,
        user: Some(owner.clone()),
        env: Some(ok.env),
        cwd: Some(ok.cwd),
    };
    let stop = Stop {
        seconds,
        quiet_ms: QUIET_MS,
    };
    let (trace, _child) = record::launch(&opts, stop)?;
    let stored = store::open(Some(&owner)).and_then(|d| store::save(&d, &trace));
    let evicted = trace
        .note_codes
        .iter()
        .find(|n| n.code == crate::note::COLD_EVICTED)
        .map(|n| n.params.clone());
    let line = serde_json::json!({
        "pid": trace.pid,
        "trace_id": stored.as_ref().ok().map(|(id, _)| id),
        "store_error": stored.as_ref().err().map(ToString::to_string),
        "evicted": evicted,
        "source": trace.source,
    });
    println!("{line}");
    Ok(())
}

/// `trace --pid`.
pub fn trace_cmd(args: &TraceArgs) -> anyhow::Result<()> {
    let install = files::locate(None, Some(args.pid))?;
    let owner = crate::state::acting_for()?;
    let stop = Stop {
        seconds: Some(args.seconds),
        quiet_ms: QUIET_MS,
    };
    let trace = record::attach(args.pid, &install, true, stop)?;
    finish(&trace, owner.as_ref(), args.json)
}

fn finish(trace: &Trace, owner: Option<&user::User>, json: bool) -> anyhow::Result<()> {
    let stored = store::open(owner).and_then(|d| store::save(&d, trace));
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer(&mut out, trace)?;
        writeln!(out)?;
    } else {
        print_human(&mut out, trace)?;
    }
    match stored {
        Ok((id, path)) => eprintln!("stored as {id}: {}", path.display()),
        Err(e) => eprintln!("about-startup-host: warning: the trace was not stored: {e}"),
    }
    Ok(())
}

fn mb(b: u64) -> String {
    format!("{:.1} MB", b as f64 / 1e6)
}

/// The human report: summary, the agreement with /proc, per-file table, access maps.
pub fn print_human(out: &mut impl Write, t: &Trace) -> std::io::Result<()> {
    writeln!(
        out,
        "Firefox {} (build {}), pid {}: recorded {:.0}–{:.0} ms after its start, ended by {}",
        t.firefox_version.as_deref().unwrap_or("?"),
        t.build_id.as_deref().unwrap_or("?"),
        t.pid,
        t.attached_ms.max(0.0),
        t.ended_ms,
        t.ended_by
    )?;
    if t.source == Source::ProcSampler {
        writeln!(out, "source: /proc sampling only (no per-file trace)")?;
        writeln!(out, "{PRIVILEGE_NOTE}")?;
    }
    if t.source == Source::ProcSampler {
        writeln!(
            out,
            "read from disk (read_bytes of the Firefox tree): {}; major faults: {}",
            t.tree_read_bytes.map_or("unknown".into(), mb),
            t.samples.last().map_or(0, |s| s.majflt)
        )?;
        for n in &t.notes {
            writeln!(out, "note: {n}")?;
        }
        return Ok(());
    }
    let reads = t.events.len();
    writeln!(
        out,
        "read from disk: {} in {reads} reads from {} files; /proc read_bytes of the tree: {}{}",
        mb(t.traced_read_bytes),
        t.files.iter().filter(|f| !f.written).count(),
        t.tree_read_bytes.map_or("unknown".into(), mb),
        t.agreement().map_or(String::new(), |a| format!(
            " (trace/proc = {:.1}%)",
            a * 100.0
        ))
    )?;
    writeln!(
        out,
        "lost events: {}; written during the start (not disk reads): {}; block requests: {}",
        t.lost_events,
        mb(t.written_bytes),
        t.block.len()
    )?;
    for n in &t.notes {
        writeln!(out, "note: {n}")?;
    }
    let rows = t.file_rows();
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:>10} {:>6} {:>6} {:>8} {:>8}  FILE",
        "READ", "SHARE", "READS", "FIRST", "LAST"
    )?;
    for r in rows.iter().take(40) {
        writeln!(
            out,
            "{:>10} {:>6} {:>6} {:>8.0} {:>8.0}  {}{}",
            mb(r.bytes_read),
            r.share.map_or("?".into(), |s| format!("{:.0}%", s * 100.0)),
            r.requests,
            r.first_ms,
            r.last_ms,
            short(&r.path, &t.install_dir),
            if r.written { " (written)" } else { "" }
        )?;
    }
    if rows.len() > 40 {
        writeln!(out, "… and {} more files (--json has all)", rows.len() - 40)?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "access map (64 columns across each file; digit = tenth of the recording in which that part was first read, '.' = not read):"
    )?;
    for r in rows.iter().filter(|r| !r.written).take(10) {
        if let Some(i) = t.files.iter().position(|f| f.path == r.path) {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            writeln!(
                out,
                "  |{}|  {}",
                t.access_map(i, 64),
                short(&r.path, &t.install_dir)
            )?;
        }
    }
    Ok(())
}

fn short(path: &str, install: &str) -> String {
    path.strip_prefix(install)
        .map_or(path, |p| p.trim_start_matches('/'))
        .to_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn human_report_has_table_and_map() {
        let t = crate::trace::model::tests::fake();
        let mut out = Vec::new();
        super::print_human(&mut out, &t).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.contains("trace/proc = 100.0%"), "{s}");
        assert!(s.contains("libxul.so"));
        assert!(s.contains("(written)"));
        assert!(s.contains("|0"));
    }

    #[test]
    fn sampled_report_says_root_is_needed_and_shows_read_bytes() {
        let mut t = crate::trace::model::tests::fake();
        t.source = crate::trace::model::Source::ProcSampler;
        t.samples.push(crate::trace::model::Sample {
            t: 10.0,
            read_bytes: 16384,
            majflt: 3,
        });
        let mut out = Vec::new();
        super::print_human(&mut out, &t).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(
            s.contains("sudo about-startup-host launch --cold --trace"),
            "{s}"
        );
        assert!(
            s.contains("read_bytes of the Firefox tree): 0.0 MB; major faults: 3"),
            "{s}"
        );
        assert!(!s.contains("trace/proc"));
    }
}
