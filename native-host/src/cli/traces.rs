//! `trace list` and `trace show ID`: the stored traces (the state folder's `traces/`), as the
//! page lists them, so nobody has to `ls` the state folder to find an id.

use std::io::Write;

use crate::os::clock::now_ms;
use crate::trace::store;

use super::render::{megabytes, print_json, print_table, Row};

/// How long ago `at_ms` (ms since the epoch) was, in the largest whole unit: "42 s ago",
/// "3 min ago", "5 h ago", "2 d ago".
fn ago(at_ms: u64, now: u64) -> String {
    let s = now.saturating_sub(at_ms) / 1000;
    match s {
        0..=119 => format!("{s} s ago"),
        120..=7199 => format!("{} min ago", s / 60),
        7200..=172_799 => format!("{} h ago", s / 3600),
        _ => format!("{} d ago", s / 86400),
    }
}

/// The traces folder of this user (under sudo the command runs as the user who asked).
fn traces_dir() -> anyhow::Result<crate::state::StateDir> {
    Ok(store::open()?)
}

/// `trace list`.
pub fn list_cmd(json: bool) -> anyhow::Result<()> {
    let dir = traces_dir()?;
    let listing = store::listing(&dir, None);
    if json {
        return print_json(&listing);
    }
    for note in &listing.note_codes {
        println!("note: {}", note.english());
    }
    if listing.traces.is_empty() {
        println!(
            "no stored trace in {}: record one with `{}`",
            listing.dir, listing.record_command
        );
        return Ok(());
    }
    let now = now_ms();
    let rows: Vec<Row> = listing
        .traces
        .iter()
        .map(|m| Row {
            cells: vec![
                m.id.clone(),
                ago(m.recorded_at_ms, now),
                format!(
                    "{} ({})",
                    m.firefox_version.as_deref().unwrap_or("?"),
                    m.build_id.as_deref().unwrap_or("build ?")
                ),
                match m.source {
                    crate::trace::model::Source::Tracefs => "tracefs".to_owned(),
                    crate::trace::model::Source::ProcSampler => "/proc only".to_owned(),
                },
                format!("{} MB", megabytes(m.traced_read_bytes)),
                m.tree_read_bytes
                    .map_or_else(|| "unknown".to_owned(), |b| format!("{} MB", megabytes(b))),
            ],
            extra: None,
        })
        .collect();
    print_table(
        &[
            "id",
            "recorded",
            "Firefox",
            "source",
            "traced read",
            "/proc read_bytes",
        ],
        &rows,
    );
    println!(
        "in {}, newest first; `{} trace show ID` for one, `{} trace export ID` for the Firefox Profiler",
        listing.dir,
        crate::invocation::current().plain,
        crate::invocation::current().plain
    );
    Ok(())
}

/// `trace show ID`.
pub fn show_cmd(id: &str, json: bool) -> anyhow::Result<()> {
    let dir = traces_dir()?;
    let (trace, set_aside) = store::read_or_set_aside(&dir, id);
    let trace =
        trace.ok_or_else(|| anyhow::anyhow!(store::unread_error(&dir, id, set_aside.as_ref())))?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer(&mut out, &trace)?;
        writeln!(out)?;
        return Ok(());
    }
    let summary =
        crate::trace::summary::summarize_here(&trace, crate::trace::summary::Options::default());
    super::trace::print_human(
        &mut out,
        &trace,
        &summary,
        &crate::invocation::current().as_root,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn ages_read_in_the_largest_whole_unit() {
        let now = 1_000_000_000;
        assert_eq!(super::ago(now - 5_000, now), "5 s ago");
        assert_eq!(super::ago(now - 180_000, now), "3 min ago");
        assert_eq!(super::ago(now - 5 * 3_600_000, now), "5 h ago");
        assert_eq!(super::ago(now - 49 * 3_600_000, now), "2 d ago");
        assert_eq!(super::ago(now + 5_000, now), "0 s ago", "a clock set back");
    }
}
