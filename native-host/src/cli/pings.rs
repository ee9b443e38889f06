//! `pings`: past sessions' startup milestones from a profile's archived Telemetry pings.

use std::path::Path;

use crate::firefox::{pings, process, served};

use super::render::{print_json, print_table, Row};

/// The milestones shown as columns, in start order (any other numbers stay in `--json`).
const COLUMNS: [&str; 4] = ["start", "main", "firstPaint", "sessionRestored"];

pub(super) fn pings_cmd(profile: Option<&Path>, json: bool) -> anyhow::Result<()> {
    let profile = match profile {
        Some(dir) => dir.to_path_buf(),
        None => {
            let pid = process::find_running().ok_or_else(|| {
                anyhow::anyhow!(
                    "no running Firefox to take the profile from: name it (--profile DIR)"
                )
            })?;
            served::profile_of(pid).ok_or_else(|| {
                anyhow::anyhow!(
                    "cannot tell the profile folder of Firefox {pid}: name it (--profile DIR)"
                )
            })?
        }
    };
    let found = pings::read_profile(&profile, crate::pagecache::sys::geteuid(), pings::MAX_PINGS)?;
    for error in &found.errors {
        eprintln!("warning: {}: {}", error.file.display(), error.error);
    }
    if json {
        return print_json(&found);
    }
    println!("profile {}", found.profile.display());
    if found.pings.is_empty() {
        println!("no archived main ping (Firefox writes one when a session ends; toolkit.telemetry.archive.enabled must be true)");
        return Ok(());
    }
    let rows: Vec<Row> = found
        .pings
        .iter()
        .map(|p| {
            let mut cells = vec![
                p.created.clone().unwrap_or_else(|| "?".into()),
                p.version.clone().unwrap_or_else(|| "?".into()),
                p.reason.clone().unwrap_or_else(|| "?".into()),
            ];
            cells.extend(COLUMNS.iter().map(|k| {
                p.simple_measurements
                    .get(*k)
                    .map_or("—".into(), |v| format!("{v:.0}"))
            }));
            Row { cells, extra: None }
        })
        .collect();
    let mut headers = vec!["ENDED", "VERSION", "REASON"];
    headers.extend(COLUMNS);
    print_table(&headers, &rows);
    println!(
        "ms since the process started, from payload.simpleMeasurements of each session's main ping"
    );
    Ok(())
}
