//! `relaunch`: restart a running Firefox, cold with `--cold`: wait for it to quit, evict, start
//! it again the same way (relaunch/). The page runs the same command detached (`--pid`).

use std::ffi::OsString;
use std::time::Duration;

use clap::Args;

use super::render::{megabytes, print_json};
use crate::firefox::process;
use crate::os::clock::now_ms;
use crate::relaunch::status::{self, Stage, Status};
use crate::relaunch::{self, Options};

#[derive(Debug, Args)]
#[command(after_help = "\
Quit Firefox yourself once this waits for it (the page's \"Restart cold\" button quits it for you,
and asks Firefox to restore your tabs). Nothing in the profile is touched. Each step is recorded
in $XDG_STATE_HOME/about-startup/relaunch.json, and the page of the restarted Firefox shows it.")]
pub struct RelaunchArgs {
    /// Evict Firefox's install folder from the page cache before starting it again (a cold
    /// start).
    #[arg(long)]
    pub cold: bool,
    /// With --cold: trace the start; root's only part, the kernel's tracing of your Firefox,
    /// runs through pkexec (the password in the desktop's dialog) or sudo; Firefox and
    /// everything else still run as you (docs/design/privilege.md).
    #[arg(long, requires = "cold")]
    pub trace: bool,
    /// The Firefox (main) process to restart [default: your running Firefox].
    #[arg(long, value_name = "PID")]
    pub pid: Option<i32>,
    /// How long to wait for Firefox to quit.
    #[arg(long, value_name = "SECONDS", default_value_t = relaunch::DEFAULT_TIMEOUT_S,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// One more argument for the restarted Firefox (a URL to open).
    #[arg(long, value_name = "URL")]
    pub open: Option<OsString>,
    /// Print the last restart's record and exit.
    #[arg(long, conflicts_with_all = ["cold", "trace", "pid", "open"])]
    pub status: bool,
    /// Print the final record as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn relaunch_cmd(args: &RelaunchArgs) -> anyhow::Result<()> {
    let state_dir = crate::state::locate()?;
    if args.status {
        let (last, set_aside) = status::read_at_or_set_aside(&state_dir);
        if args.json {
            // The record's own shape on stdout, as before; the note beside it on stderr.
            if let Some(note) = &set_aside {
                eprintln!("about-startup-host: note: {}", note.english());
            }
            return print_json(&last);
        }
        if let Some(note) = &set_aside {
            println!("note: {}", note.english());
        }
        match last {
            Some(s) => print_human(&s),
            None => println!("no restart recorded in {}", state_dir.display()),
        }
        return Ok(());
    }
    let pid = match args.pid {
        Some(pid) => pid,
        None => process::find_running().ok_or_else(|| {
            anyhow::anyhow!("no running Firefox of yours found; start it, or name it with --pid")
        })?,
    };
    let snap = match relaunch::capture(pid) {
        Ok(snap) => snap,
        Err(e) => {
            // Recorded too: the page of the next start says why nothing happened.
            let record = Status {
                version: status::STATUS_VERSION,
                stage: Stage::Failed,
                cold: args.cold,
                trace: args.trace,
                requested_at_ms: now_ms(),
                updated_at_ms: now_ms(),
                old_pid: pid,
                install_dir: String::new(),
                profile: None,
                working_folder: None,
                waited_ms: None,
                evicted: None,
                new_pid: None,
                error: Some(status::Failure {
                    code: status::CAPTURE_FAILED.into(),
                    message: e.to_string(),
                    params: serde_json::json!({ "detail": e.to_string() }),
                }),
                trace_id: None,
            };
            let _ = status::write(&state_dir, &record);
            return Err(e.into());
        }
    };
    let opts = Options {
        cold: args.cold,
        timeout: Duration::from_secs(args.timeout),
        open: args.open.iter().cloned().collect(),
        state_dir: Some(state_dir),
    };
    let quiet = args.json;
    let mut progress = |s: &Status| {
        if !quiet && s.stage == Stage::Tracing {
            eprintln!("tracing the start (pkexec asks for the administrator password)…");
        }
        if !quiet && s.stage == Stage::Waiting {
            eprintln!(
                "waiting for Firefox {} ({}) to quit: quit it now (up to {} s)…",
                snap.pid,
                snap.exe.display(),
                args.timeout
            );
        }
    };
    let done = if args.trace {
        relaunch::traced::run(&snap, &opts, &mut progress)
    } else {
        relaunch::run(&snap, &opts, &mut progress)
    };
    if args.json {
        print_json(&done)?;
    } else {
        print_human(&done);
    }
    match &done.error {
        Some(e) if done.stage == Stage::Failed => anyhow::bail!("{}", e.message),
        _ => Ok(()),
    }
}

fn print_human(s: &Status) {
    if let Some(ms) = s.waited_ms {
        println!(
            "Firefox {} quit after {:.1} s",
            s.old_pid,
            ms as f64 / 1000.0
        );
    }
    if let Some(e) = &s.evicted {
        println!(
            "evicted {} files of {} in {} ms: {} pages dropped from the {} files whose cache you may see",
            e.files, s.install_dir, e.elapsed_ms, e.pages_dropped, e.exact_files
        );
        if e.hidden_files > 0 {
            println!(
                "  {} files are hidden: the kernel shows what stayed only for files you own or can write; \
                 evict dropped every page of them that no running process maps",
                e.hidden_files
            );
        }
        for stayed in &e.stayed {
            println!(
                "  still cached: {} ({} MB)",
                stayed.path,
                megabytes(stayed.pages * crate::os::sys::page_size() as u64)
            );
        }
        if e.mapped_by.is_empty() {
            println!("  no process of yours maps these files any more");
        }
        for m in &e.mapped_by {
            println!(
                "  process {} ({}) maps some of them: their pages stay cached while it runs",
                m.pid, m.exe
            );
        }
        if e.failed > 0 {
            println!(
                "  {} files could not be evicted: {}",
                e.failed,
                e.failed_files.join(", ")
            );
        }
    }
    if let Some(said) = &s.working_folder {
        println!("note: {said}");
    }
    if let Some(id) = &s.trace_id {
        println!("trace stored as {id}");
    }
    match (&s.stage, s.new_pid, &s.error) {
        (Stage::Started, Some(pid), error) => {
            println!("started Firefox again: process {pid}");
            if let Some(e) = error {
                println!("  note: {}", e.message);
            }
        }
        (_, _, Some(e)) => println!("failed: {}", e.message),
        (stage, _, None) => println!("stopped while {stage:?}"),
    }
}
