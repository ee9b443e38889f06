//! `telemetry`: past sessions' startup milestones from a profile's archived Telemetry pings.

use crate::firefox::{process, telemetry};

use super::args::TelemetryArgs;
use super::render::{print_json, print_table, Row};

pub(super) fn telemetry_cmd(args: &TelemetryArgs) -> anyhow::Result<()> {
    let profile = match &args.profile {
        Some(dir) => {
            if !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
                anyhow::bail!(
                    "{} is not a folder; name a Firefox profile folder",
                    dir.display()
                );
            }
            if !telemetry::looks_like_profile(dir) {
                return Err(crate::Error::ProfileNotFound(format!(
                    "{} is not a Firefox profile (it has none of {}, which Firefox writes into \
                     every profile it starts with): name the profile folder, which about:profiles \
                     shows as \"Root Directory\"",
                    dir.display(),
                    telemetry::PROFILE_FILES.join(", ")
                ))
                .into());
            }
            dir.clone()
        }
        None => {
            let pid = match args.pid {
                Some(pid) => process::require_firefox(pid)?,
                None => process::find_running().ok_or_else(|| {
                    crate::Error::FirefoxNotFound(
                        "no running Firefox of yours; name the profile with --profile DIR".into(),
                    )
                })?,
            };
            process::profile_dir(pid).ok_or_else(|| {
                crate::Error::ProfileNotFound(format!(
                    "Firefox {pid} holds no profile lock open; name it with --profile DIR"
                ))
            })?
        }
    };
    let archive = telemetry::read_archive(
        &profile,
        usize::from(args.limit),
        &std::sync::atomic::AtomicBool::new(false),
    )?;
    if args.json {
        return print_json(&archive);
    }
    let folder = profile.join("datareporting/archived");
    if !archive.archive_found {
        println!(
            "{}: no Telemetry archive (archiving is off: toolkit.telemetry.archive.enabled, or \
             this profile never shut down cleanly)",
            folder.display()
        );
        return Ok(());
    }
    println!(
        "past sessions from Firefox's archived Telemetry pings in {} (ms since each process \
         started; \"written\" says when in its session each ping was: at its end, or mid-session)",
        folder.display()
    );
    let ms = |s: &telemetry::Session, key: &str| {
        s.milestones
            .get(key)
            .map_or_else(|| "missing".to_owned(), u64::to_string)
    };
    let rows: Vec<Row> = archive
        .sessions
        .iter()
        .map(|s| Row {
            cells: vec![
                s.created.clone().unwrap_or_else(|| "?".into()),
                s.version.clone().unwrap_or_else(|| "?".into()),
                s.build_id.clone().unwrap_or_else(|| "?".into()),
                telemetry::written_words(s.written, s.reason.as_deref()),
                ms(s, "main"),
                ms(s, "firstPaint"),
                ms(s, "sessionRestored"),
            ],
            extra: None,
        })
        .collect();
    if rows.is_empty() {
        println!(
            "no main ping with startup milestones yet ({} read)",
            archive.main_pings
        );
    } else {
        print_table(
            &[
                "ping written",
                "version",
                "build",
                "written",
                "main",
                "firstPaint",
                "sessionRestored",
            ],
            &rows,
        );
    }
    if archive.skipped_count > 0 {
        println!("{} file(s) could not be read:", archive.skipped_count);
        for [file, why] in &archive.skipped {
            println!("  {file}: {why}");
        }
    }
    Ok(())
}
