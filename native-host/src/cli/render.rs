//! What a person sees: the table printer, the progress bar, and the formatting of paths, sizes,
//! counts and percentages. No command logic; the commands call these.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use crate::firefox::install::Install;
use crate::pagecache::preload;

/// A table row; a row with fewer cells than the header ends with one free-form cell (an error).
pub(super) struct Row {
    pub(super) cells: Vec<String>,
    /// A line printed under the row (the page map).
    pub(super) extra: Option<String>,
}

/// First column left-aligned, the others right-aligned.
pub(super) fn print_table(headers: &[&str], rows: &[Row]) {
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

pub(super) fn format_row(cells: &[String], widths: &[usize]) -> String {
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
pub(super) fn display_path(install: &Install, path: &Path) -> String {
    path.strip_prefix(&install.dir)
        .unwrap_or(path)
        .display()
        .to_string()
}

pub(super) use crate::units::megabytes;

/// `part` of `whole` as a whole percentage by the page's rule (lib/wording/format.js
/// `formatShare`): rounded half up on the integers, but never "0%" for something nor "100%" for less than
/// all ("<1%", ">99%"), so a few pages never read as nothing or as everything. "-" for 0 of 0.
pub(super) fn share(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    let (part, whole) = (u128::from(part.min(whole)), u128::from(whole));
    if part > 0 && part * 100 < whole {
        return "<1%".into();
    }
    if part < whole && part * 100 > whole * 99 {
        return ">99%".into();
    }
    format!("{}%", (part * 200 + whole) / (whole * 2))
}

/// "1 file", "2 files".
pub(super) fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub(super) fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    #[allow(clippy::cast_precision_loss)] // display only
    let pct = part as f64 * 100.0 / whole as f64;
    format!("{pct:.1}%")
}

/// A one-line progress bar on stderr (redrawn in place; only used on a terminal).
pub(super) struct ProgressBar<'a> {
    pub(super) install: &'a Install,
}

impl ProgressBar<'_> {
    pub(super) fn draw(&mut self, p: &preload::Progress) {
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

/// One value as pretty JSON on stdout (`--json`).
pub(super) fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    // Buffered: unbuffered pretty JSON costs one write(2) per token.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_formatted_for_people() {
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(percent(0, 0), "-");
    }

    #[test]
    fn shares_follow_the_pages_percent_rule() {
        assert_eq!(share(0, 0), "-");
        assert_eq!(share(0, 10), "0%");
        assert_eq!(share(1, 1000), "<1%");
        assert_eq!(share(10, 1000), "1%");
        assert_eq!(share(5, 1000), "<1%");
        assert_eq!(share(15, 1000), "2%", "half up");
        assert_eq!(share(994, 1000), ">99%");
        assert_eq!(share(990, 1000), "99%");
        assert_eq!(share(1000, 1000), "100%");
        assert_eq!(share(2_810_000, 3_084_000), "91%");
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
