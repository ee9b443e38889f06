//! `launch` and `trace`: the CLI's recording commands and their human output (per-file table and
//! text access map) or `--json`.

use std::io::Write;

use crate::firefox::install as files;
use crate::launch::traced;
use crate::os::binary::firefox_binary;
use crate::trace::model::{Source, Trace};
use crate::trace::record::{Stop, QUIET_MS};
use crate::trace::store;

use super::args::{LaunchArgs, TraceAction, TraceArgs};

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
    let install = files::locate(args.firefox.as_deref(), None)?;
    let binary = firefox_binary(&install.dir).ok_or_else(|| {
        anyhow::anyhow!(
            "no firefox executable in {}; name the install folder with --firefox DIR",
            install.dir.display()
        )
    })?;
    eprintln!(
        "starting {} {}",
        binary.display(),
        if args.cold { "(cold) " } else { "" },
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
    let gecko = if args.firefox_profile {
        crate::launch::profile::collect(&mut launched.trace)
    } else {
        None
    };
    let id = finish(&launched.trace, args.json)?;
    if let (Some(gecko), Some(id)) = (gecko, id) {
        let stored = crate::launch::profile::store(
            &id,
            &launched.trace,
            gecko,
            args.profile_out.as_deref(),
        )?;
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
    if let Some(TraceAction::Export(e)) = &args.action {
        return super::profile::export_cmd(e);
    }
    let (Some(pid), Some(seconds)) = (args.pid, args.seconds) else {
        anyhow::bail!("trace needs --pid and --seconds (or a subcommand: export, list, show)");
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

/// `trace --pid N` for a process that is not there says so, not "no Firefox found: cannot read
/// the executable …".
fn check_pid(pid: i32) -> anyhow::Result<()> {
    if pid <= 0 || !crate::os::proc::exists(pid) {
        anyhow::bail!(
            "no such process: {pid} (`pgrep -a firefox` lists the running Firefox processes)"
        );
    }
    Ok(())
}

/// Print and store the trace; its id when stored.
fn finish(trace: &Trace, json: bool) -> anyhow::Result<Option<String>> {
    let stored = store::open().and_then(|d| store::save(&d, trace));
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer(&mut out, trace)?;
        writeln!(out)?;
    } else {
        print_human(&mut out, trace, &crate::invocation::current().as_root)?;
    }
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

fn mb(b: u64) -> String {
    format!("{:.1} MB", b as f64 / 1e6)
}

/// The human report: summary, the agreement with /proc, per-file table, access maps.
pub fn print_human(out: &mut impl Write, t: &Trace, root_cmd: &str) -> std::io::Result<()> {
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
        writeln!(out, "{}", privilege_note(root_cmd))?;
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
    // Files the start wrote are kept apart: their pages entered the cache without a disk read.
    let (rows, written): (Vec<_>, Vec<_>) = t.file_rows().into_iter().partition(|r| !r.written);
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
            r.share.map_or("?".into(), |s| format!("{:.0}%", s * 100.0)),
            r.requests,
            r.first_ms,
            r.last_ms,
            short(&r.path, &t.install_dir),
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
                short(&r.path, &t.install_dir)
            )?;
        }
        if written.len() > 20 {
            writeln!(out, "… and {} more (--json has all)", written.len() - 20)?;
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "access map (64 columns across each file; digit = tenth of the recording in which that part was first read, '.' = not read):"
    )?;
    for r in rows.iter().take(10) {
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
        super::print_human(&mut out, &t, "sudo about-startup-host").unwrap();
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
        super::print_human(&mut out, &t, "sudo about-startup-host").unwrap();
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
