//! `launch` and `trace`: the CLI's recording commands and their human output (per-file table and
//! text access map) or `--json`.

use std::io::Write;

use crate::firefox::install as files;
use crate::launch::traced;
use crate::os::binary::firefox_binary;
use crate::trace::model::{Source, Trace};
use crate::trace::record::{Stop, QUIET_MS};
use crate::trace::store;

use crate::trace::summary::bins;
use crate::trace::summary::files::short_name;
use crate::trace::summary::profile::{ProfileContext, ProfileState, ProfileSummary};
use crate::trace::summary::{summarize_here, Options, Summary};
use crate::units::mb;

use super::args::{LaunchArgs, SummaryArgs, TraceAction, TraceArgs};
use super::render::share;

/// What `--help` and the sampled report say about privileges, with `root_cmd` (how this user
/// runs this binary as root, crate::invocation) so the command runs as printed.
pub fn privilege_note(root_cmd: &str) -> String {
    format!(
        "The exact trace (every page entering the page cache, from the kernel's tracefs) needs root: \
run `{root_cmd} {}`, or install the about-startup package (pkexec then asks for the \
administrator's password). Root only arms the kernel's tracing for your Firefox's processes and \
hands over what they read; everything else runs as you: Firefox, reading the files, storing the \
trace in your state folder (~/.local/state/about-startup/traces). \
Without root the trace falls back to sampling /proc/<pid>/io and major faults of the Firefox tree.",
        store::RECORD_ARGS
    )
}

/// `launch --help`'s note: the prefetch needs no privilege, the trace needs root; with `plain`
/// and `root_cmd` (how this user runs this binary, and as root) so the examples run as printed.
pub fn launch_help(plain: &str, root_cmd: &str) -> String {
    format!(
        "With --prefetch no privilege is needed: the prefetcher reads only files you can read, and \
where the kernel hides page-cache state from you it probes instead (a few non-blocking reads). \
A failing prefetch (no plan, an unreadable state folder, files replaced by an update) never \
stops Firefox: Firefox is started first. Examples:\n  \
{plain} launch --prefetch\n  \
{plain} launch --prefetch --firefox /usr/lib/firefox-esr/firefox-esr -- --new-window\n\n{}",
        privilege_note(root_cmd)
    )
}

/// `launch`.
pub fn launch_cmd(args: &LaunchArgs) -> anyhow::Result<()> {
    if args.prefetch {
        return super::launch::prefetch_cmd(args);
    }
    let install = files::to_launch(args.firefox.as_deref())?;
    let binary = firefox_binary(&install.dir).ok_or_else(|| {
        anyhow::anyhow!(
            "no firefox executable in {}; name the install folder with --firefox DIR",
            install.dir.display()
        )
    })?;
    eprintln!(
        "starting {} {}({})",
        binary.display(),
        if args.cold { "(cold) " } else { "" },
        super::launch::chosen_by(&install.found_by),
    );
    let extra = if args.firefox_profile {
        crate::firefox::startup_profile::env()
    } else {
        Vec::new()
    };
    let spec = traced::Spec {
        program: traced::firefox_program(&binary, &args.args, &extra),
        install,
        cold: if args.cold {
            traced::Cold::Evict
        } else {
            traced::Cold::No
        },
        trace: args.trace,
        faults: args.trace && !args.no_fault_sites,
    };
    let stop = Stop {
        seconds: args.seconds,
        quiet_ms: QUIET_MS,
    };
    let mut launched = traced::launch(&spec, stop, traced::Tracer::Connect)?;
    if let Some(why) = launched.failed() {
        let hint = traced::failure_hint(&args.args, |k| std::env::var_os(k))
            .map(|h| format!("; {h}"))
            .unwrap_or_default();
        let said = launched
            .firefox_said()
            .map(|s| format!("\nFirefox said:\n{s}"))
            .unwrap_or_default();
        anyhow::bail!(
            "{why}: not a start, so nothing was stored and no plan learns from it{hint}{said}"
        );
    }
    // A start that never restored its session is not one: its profile would wait in vain too.
    let not_a_start = traced::not_a_start(&mut launched.trace, args.seconds.is_some());
    let gecko = if args.firefox_profile && !not_a_start {
        crate::launch::profile::collect(&mut launched.trace)
    } else {
        None
    };
    if not_a_start {
        // The report, with the note that says why; `--json` gets the error object alone (one
        // JSON object on stdout, cli::run), which says the same.
        if !args.json {
            print_trace(&launched.trace, false)?;
        }
        anyhow::bail!(
            "Firefox (pid {}) never reached sessionRestored while it was recorded ({}): the \
             trace is printed above but not stored as a start. Look at that Firefox (a dialog \
             waiting for an answer? run it without --headless to see), then launch again",
            launched.firefox.pid,
            launched.trace.ended_by
        );
    }
    // With `--json` and Firefox's profile, the trace is printed only once the merged profile is
    // written: stdout holds one JSON document, the trace or (cli::run) the error.
    let defer = args.json && gecko.is_some();
    let id = store_trace(&launched.trace)?;
    if !defer || id.is_none() {
        print_trace(&launched.trace, args.json)?;
    }
    if let (Some(gecko), Some(id)) = (gecko, id) {
        let stored =
            crate::launch::profile::store(&id, &launched.trace, gecko, args.profile_out.as_deref())
                .map_err(|e| {
                    e.context(format!(
                        "the trace is stored as {id}, Firefox's profile is not"
                    ))
                })?;
        if defer {
            print_trace(&launched.trace, true)?;
        }
        eprintln!(
            "Firefox's own profile kept with the trace: {}",
            stored.gecko.display()
        );
        super::profile::report(&stored.merged, &stored.exported, stored.took, false)?;
    }
    Ok(())
}

/// `trace --pid`, or `trace export` (`trace list` and `show` are cli/traces.rs).
pub fn trace_cmd(args: &TraceArgs) -> anyhow::Result<()> {
    match &args.action {
        Some(TraceAction::Export(e)) => return super::profile::export_cmd(e),
        Some(TraceAction::Summary(s)) => return summary_cmd(s),
        // cli/mod.rs sends these to cli/traces.rs.
        Some(TraceAction::List { .. } | TraceAction::Show { .. }) | None => {}
    }
    let (Some(pid), Some(seconds)) = (args.pid, args.seconds) else {
        anyhow::bail!(
            "trace needs --pid and --seconds (or a subcommand: export, list, show, summary)"
        );
    };
    check_pid(pid)?;
    let install = files::locate(None, Some(pid))?;
    let stop = Stop {
        seconds: Some(seconds),
        quiet_ms: QUIET_MS,
    };
    let trace = traced::attach(pid, &install, true, !args.no_fault_sites, stop)?;
    finish(&trace, args.json).map(drop)
}

/// `trace summary`: every figure of a stored or given trace, as JSON (`trace show` is the report).
fn summary_cmd(args: &SummaryArgs) -> anyhow::Result<()> {
    let state = crate::state::open()?;
    let dir = store::in_state(&state)?;
    let (id, trace) = super::profile::load(args.trace.as_deref(), &dir)?;
    let file = match &args.file {
        None => None,
        Some(name) => Some(
            trace
                .files
                .iter()
                .position(|f| f.path == *name || f.path.ends_with(&format!("/{name}")))
                .and_then(|i| u32::try_from(i).ok())
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "no file {name} in this trace (its files are in `trace summary`)"
                    )
                })?,
        ),
    };
    let opts = Options {
        axis_end_ms: args.axis_end,
        file,
    };
    // A stored trace is of this machine: its profile is read here. A given file may be another
    // machine's: only what it carries is used.
    let summary = if id.is_some() {
        summarize_here(&trace, opts)
    } else {
        crate::trace::summary::summarize(&trace, opts, &ProfileContext::from_files(&trace))
    };
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &summary)?;
    writeln!(out)?;
    Ok(())
}

/// `trace --pid N` for a process that is not there (or a zombie: it has exited) says so, not
/// "no Firefox found: cannot read the executable …".
fn check_pid(pid: i32) -> anyhow::Result<()> {
    if pid <= 0 || !crate::os::proc::alive(pid) {
        anyhow::bail!(
            "no such process: {pid} (`pgrep -a firefox` lists the running Firefox processes)"
        );
    }
    Ok(())
}

/// Print and store the trace; its id when stored.
fn finish(trace: &Trace, json: bool) -> anyhow::Result<Option<String>> {
    let id = store_trace(trace)?;
    print_trace(trace, json)?;
    Ok(id)
}

/// Store the trace; its id when stored (a failure is a warning: the trace is still printed).
fn store_trace(trace: &Trace) -> anyhow::Result<Option<String>> {
    let stored = store::open().and_then(|d| store::save(&d, trace));
    match stored {
        Ok((id, path)) => {
            eprintln!("stored as {id}: {}", path.display());
            Ok(Some(id))
        }
        Err(e) => {
            eprintln!("about-startup-host: warning: the trace was not stored: {e}");
            Ok(None)
        }
    }
}

/// Print the trace: one JSON object, or the human report.
fn print_trace(trace: &Trace, json: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer(&mut out, trace)?;
        writeln!(out)?;
    } else {
        let summary = summarize_here(trace, Options::default());
        print_human(
            &mut out,
            trace,
            &summary,
            &crate::invocation::current().as_root,
        )?;
    }
    Ok(())
}

/// The human report: summary, the agreement with /proc, the profile's share, per-file table,
/// access maps; every figure from the trace's [`Summary`] (what the page shows too).
pub fn print_human(
    out: &mut impl Write,
    t: &Trace,
    s: &Summary,
    root_cmd: &str,
) -> std::io::Result<()> {
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
    let a = &s.agreement;
    if t.source == Source::ProcSampler {
        writeln!(out, "source: /proc sampling only (no per-file trace)")?;
        writeln!(out, "{}", privilege_note(root_cmd))?;
        writeln!(
            out,
            "read from disk (read_bytes of the Firefox tree): {}; major faults: {}",
            a.tree_read_bytes.map_or("unknown".into(), mb),
            t.samples.last().map_or(0, |s| s.majflt)
        )?;
        for n in &t.notes {
            writeln!(out, "note: {n}")?;
        }
        return Ok(());
    }
    writeln!(
        out,
        "read from disk: {} in {} reads from {} files; /proc read_bytes of the tree: {}{}",
        mb(a.traced_bytes),
        t.events.len(),
        a.read_files,
        a.tree_read_bytes.map_or("unknown".into(), mb),
        a.ratio.map_or(String::new(), |r| format!(
            " (trace/proc = {:.1}%)",
            r * 100.0
        ))
    )?;
    writeln!(
        out,
        "lost events: {}; written during the start (not disk reads): {}; block requests: {}",
        a.lost_events,
        mb(a.written_bytes),
        t.block.len()
    )?;
    for n in &t.notes {
        writeln!(out, "note: {n}")?;
    }
    print_profile(out, &s.profile)?;
    // Files the start wrote are kept apart: their pages entered the cache without a disk read.
    let (rows, written): (Vec<_>, Vec<_>) = s.files.iter().partition(|r| !r.written);
    if rows.is_empty() && written.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:>10} {:>6} {:>6} {:>8} {:>8}  FILE READ FROM DISK",
        "READ", "SHARE", "READS", "FIRST", "LAST"
    )?;
    for r in rows.iter().take(40) {
        writeln!(
            out,
            "{:>10} {:>6} {:>6} {:>8.0} {:>8.0}  {}",
            mb(r.bytes_read),
            r.share.map_or("?".into(), |v| format!("{:.0}%", v * 100.0)),
            r.requests,
            r.first_ms,
            r.last_ms,
            short_name(&r.path, &t.install_dir),
        )?;
    }
    if rows.len() > 40 {
        writeln!(out, "… and {} more files (--json has all)", rows.len() - 40)?;
    }
    if !written.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "files written during the start (their pages entered the cache without a disk read):"
        )?;
        for r in written.iter().take(20) {
            writeln!(
                out,
                "{:>10}  {}",
                mb(r.bytes_read),
                short_name(&r.path, &t.install_dir)
            )?;
        }
        if written.len() > 20 {
            writeln!(out, "… and {} more (--json has all)", written.len() - 20)?;
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "access map (64 columns across each file; digit = tenth of the start, 0 to {:.0} ms, in which that part was first read; '.' = not read):",
        s.span_ms
    )?;
    for r in rows.iter().take(10) {
        if let Some(p) = bins::pattern(t, r.index, s.span_ms, 10, 64) {
            writeln!(
                out,
                "  |{}|  {}",
                bins::text_map(&p),
                short_name(&r.path, &t.install_dir)
            )?;
        }
    }
    Ok(())
}

/// The profile's share of the start, and its largest parts.
fn print_profile(out: &mut impl Write, p: &ProfileSummary) -> std::io::Result<()> {
    match p.state {
        ProfileState::NoPerFileTrace => return Ok(()),
        ProfileState::NotFound => {
            return writeln!(
                out,
                "profile: unknown (the trace names no profile folder and its files point at none)"
            );
        }
        ProfileState::Ready => {}
    }
    writeln!(
        out,
        "profile{}: {} of the {} read ({}), {} of the {} reads a thread waited for ({}){}",
        p.dir.as_deref().map_or(String::new(), |d| format!(" {d}")),
        mb(p.bytes.profile),
        mb(p.bytes.total),
        share(p.bytes.profile, p.bytes.total),
        p.sync_reads.profile,
        p.sync_reads.total,
        share(p.sync_reads.profile, p.sync_reads.total),
        p.block_ms.map_or(String::new(), |b| format!(
            "; {:.0} of {:.0} ms of block time",
            b.profile, b.total
        )),
    )?;
    for r in p.parts.iter().take(8) {
        writeln!(
            out,
            "{:>10}  {} ({} reads, {} waited for)",
            mb(r.bytes),
            r.label,
            r.reads,
            r.sync_reads
        )?;
    }
    if let Some(session) = p.session {
        writeln!(
            out,
            "  session: {} tabs in {} windows ({} pinned), {}",
            session.tabs,
            session.windows,
            session.pinned,
            if session.restore_on_demand {
                "restored on demand (browser.sessionstore.restore_on_demand)"
            } else {
                "every tab restored at the start (browser.sessionstore.restore_on_demand is false)"
            }
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_missing_process_is_no_such_process() {
        // pid_max is at most 2^22 on Linux: this one never exists.
        let e = super::check_pid(i32::MAX).unwrap_err().to_string();
        assert!(e.starts_with("no such process: 2147483647"), "{e}");
        assert!(super::check_pid(0).is_err());
        assert!(super::check_pid(i32::try_from(std::process::id()).unwrap()).is_ok());
    }

    #[test]
    fn human_report_has_table_and_map() {
        let t = crate::trace::model::tests::fake();
        let mut out = Vec::new();
        let s = crate::trace::summary::summarize(&t, Default::default(), &Default::default());
        super::print_human(&mut out, &t, &s, "sudo about-startup-host").unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.contains("trace/proc = 100.0%"), "{s}");
        assert!(s.contains("libxul.so"));
        assert!(s.contains("files written during the start"), "{s}");
        // A written file is not in the table of reads.
        let reads = s.split("files written during").next().unwrap();
        let written: Vec<_> = t
            .files
            .iter()
            .filter(|f| f.written)
            .map(|f| f.path.clone())
            .collect();
        assert!(!written.is_empty());
        for path in written {
            let name = path.rsplit('/').next().unwrap().to_owned();
            assert!(!reads.contains(&name), "{name} among the reads: {s}");
        }
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
        let s = crate::trace::summary::summarize(&t, Default::default(), &Default::default());
        super::print_human(&mut out, &t, &s, "sudo about-startup-host").unwrap();
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
