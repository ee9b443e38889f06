//! The trace's charts, aggregated into bins so a start that reads 75,000 pages is a few hundred
//! shapes: bytes read over time, seed 000's access pattern of one file (time × file offset, ELF
//! sections shaded) and its text form for the CLI, and seed 003's disk view (time × disk
//! position). Every bin is over `[0, span]` ms since the process started; the page only turns
//! bins into pixels.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::trace::model::{FileEntry, Trace};

const PAGE: u64 = 4096;

/// When the start's last read from disk was (ms since the process began): the last traced read
/// of a file that was read (not written), else, without events (the /proc sampler), the last
/// sample in which read_bytes grew; `None` when nothing was read.
#[must_use]
pub fn last_read_ms(t: &Trace) -> Option<f64> {
    let last = t
        .events
        .iter()
        .filter(|e| t.files.get(e.f as usize).is_some_and(|f| !f.written))
        .map(|e| e.t)
        .max_by(f64::total_cmp);
    if last.is_some() {
        return last;
    }
    let mut previous = 0;
    let mut last = None;
    for s in &t.samples {
        if s.read_bytes > previous {
            last = Some(s.t);
            previous = s.read_bytes;
        }
    }
    last
}

/// The span the charts share: 0 to the end of the start. `axis_end` is where the viewer's
/// milestones end the start (the page's `startSpanEnd`: sessionRestored, else the last
/// milestone); the start's last read stretches it; without either, the recording's end.
#[must_use]
pub fn span(t: &Trace, axis_end: Option<f64>) -> f64 {
    let axis_end = axis_end.filter(|v| v.is_finite() && *v >= 0.0);
    let read = last_read_ms(t).filter(|v| *v > 0.0);
    let end = match (axis_end, read) {
        (None, None) => t.ended_ms,
        (a, r) => a.unwrap_or(0.0).max(r.unwrap_or(0.0)),
    };
    end.max(1.0)
}

/// One time bin of bytes read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeBin {
    pub t0: f64,
    pub t1: f64,
    pub bytes: u64,
    pub cumulative: u64,
}

/// Bytes read per time bin over `[0, span]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadOverTime {
    /// "events" (the traced reads, written files left out) or "samples" (the /proc sampler's
    /// read_bytes, where no read was traced).
    pub source: &'static str,
    pub bins: Vec<TimeBin>,
    pub total: u64,
    /// The largest bin's bytes (0 when nothing was read).
    pub max: u64,
}

#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)] // bin indices of finite ms
fn bin_of(t: f64, width: f64, bins: usize) -> usize {
    ((t / width).floor().max(0.0) as usize).min(bins - 1)
}

/// [`ReadOverTime`] of `t` in `bins` bins over `[0, span]`.
#[must_use]
pub fn read_over_time(t: &Trace, span: f64, bins: usize) -> ReadOverTime {
    let bins = bins.max(1);
    #[allow(clippy::cast_precision_loss)]
    let width = span / bins as f64;
    #[allow(clippy::cast_precision_loss)]
    let mut out: Vec<TimeBin> = (0..bins)
        .map(|i| TimeBin {
            t0: i as f64 * width,
            t1: (i + 1) as f64 * width,
            bytes: 0,
            cumulative: 0,
        })
        .collect();
    let mut source = "events";
    let mut any = false;
    for e in &t.events {
        if t.files.get(e.f as usize).is_some_and(|f| !f.written) {
            any = true;
            out[bin_of(e.t, width, bins)].bytes += e.n * PAGE;
        }
    }
    if !any {
        source = "samples";
        let mut previous = 0u64;
        for s in &t.samples {
            out[bin_of(s.t, width, bins)].bytes += s.read_bytes.saturating_sub(previous);
            previous = previous.max(s.read_bytes);
        }
    }
    let mut sum = 0;
    for b in &mut out {
        sum += b.bytes;
        b.cumulative = sum;
    }
    ReadOverTime {
        source,
        max: out.iter().map(|b| b.bytes).max().unwrap_or(0),
        bins: out,
        total: sum,
    }
}

/// How an access-pattern cell is drawn: most of its pages came without a readahead window (a
/// page fault, or a read seen neither way) or through one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    Fault,
    Window,
}

/// One cell of a grid: `[column, row, value]` (a compact list: a grid may have thousands).
pub type Cell = (u32, u32, u64);

/// An ELF section to shade, as fractions of the file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Band {
    pub name: String,
    pub from: f64,
    pub to: f64,
}

/// Seed 000's access pattern of one file: `cols` time bins × `rows` offset bins.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pattern {
    /// The file (its index in the trace's `files`) and its path.
    pub file: u32,
    pub path: String,
    pub cols: u32,
    pub rows: u32,
    /// The grid's extent in bytes: the file's whole pages (up to its last read page where its
    /// size is unknown).
    pub size: u64,
    /// The file's size as the trace has it (`None`: unknown).
    pub file_size: Option<u64>,
    pub reads: usize,
    pub bytes_read: u64,
    /// `[column, row, pages]` of every cell with a read.
    pub cells: Vec<Cell>,
    /// Parallel to `cells`: how each is drawn.
    pub marks: Vec<Mark>,
    /// The sections to shade.
    pub bands: Vec<Band>,
}

/// Sections seed 000 names: shaded even when small.
pub const NAMED_SECTIONS: [&str; 8] = [
    ".rela.dyn",
    ".rel.dyn",
    ".relr.dyn",
    ".text",
    ".rodata",
    ".data.rel.ro",
    ".data",
    ".eh_frame",
];

/// The sections of `file` covering at least `min_share` of it, and the named ones covering
/// 0.2%, as fractions of the file; none where its size is unknown.
#[must_use]
#[allow(clippy::cast_precision_loss)] // fractions of a file
pub fn bands(file: &FileEntry, min_share: f64) -> Vec<Band> {
    let Some(size) = file.size.filter(|s| *s > 0) else {
        return Vec::new();
    };
    let size = size as f64;
    file.sections
        .iter()
        .filter(|s| {
            let share = s.size as f64 / size;
            share >= min_share || (NAMED_SECTIONS.contains(&s.name.as_str()) && share >= 0.002)
        })
        .map(|s| Band {
            name: s.name.clone(),
            from: s.offset as f64 / size,
            to: (s.offset + s.size) as f64 / size,
        })
        .collect()
}

/// The access pattern of file `f` over `[0, span]`: a read of pages `[o, o+n)` counts in every
/// offset row its bytes overlap, its pages shared among them; `None` for no such file.
#[must_use]
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
pub fn pattern(t: &Trace, f: u32, span: f64, cols: u32, rows: u32) -> Option<Pattern> {
    let file = t.files.get(f as usize)?;
    let (cols, rows) = (cols.max(1), rows.max(1));
    let events: Vec<_> = t.events.iter().filter(|e| e.f == f).collect();
    let pages = file
        .size
        .map(|s| s.div_ceil(PAGE))
        .unwrap_or_else(|| events.iter().map(|e| e.o + e.n).max().unwrap_or(1))
        .max(1);
    let mut cells: BTreeMap<(u32, u32), (u64, u64)> = BTreeMap::new();
    for e in &events {
        let col = ((e.t / span * f64::from(cols)).floor().max(0.0) as u32).min(cols - 1);
        let (o, end) = (u128::from(e.o), u128::from(e.o + e.n.max(1)));
        let (p, r) = (u128::from(pages), u128::from(rows));
        let r0 = ((o * r / p) as u32).min(rows - 1);
        let r1 = (((end * r).div_ceil(p)) as u32)
            .saturating_sub(1)
            .clamp(r0, rows - 1);
        let share = ((e.n as f64 / f64::from(r1 - r0 + 1)).round() as u64).max(1);
        let without_window = matches!(e.k.as_str(), "fault" | "read");
        for row in r0..=r1 {
            let cell = cells.entry((col, row)).or_default();
            cell.0 += share;
            if without_window {
                cell.1 += share;
            }
        }
    }
    let (cells, marks) = cells
        .into_iter()
        .map(|((c, r), (pages, faults))| {
            let mark = if faults * 2 > pages {
                Mark::Fault
            } else {
                Mark::Window
            };
            ((c, r, pages), mark)
        })
        .unzip();
    Some(Pattern {
        file: f,
        path: file.path.clone(),
        cols,
        rows,
        size: pages * PAGE,
        file_size: file.size,
        reads: events.len(),
        bytes_read: file.bytes_read,
        cells,
        marks,
        bands: bands(file, 0.02),
    })
}

/// The access pattern as one line of text, one character per offset row: the tenth of the
/// span (0–9) in which that part of the file was first read, or '.' (not read). `p` should
/// have 10 columns.
#[must_use]
pub fn text_map(p: &Pattern) -> String {
    let mut first = vec![None::<u32>; p.rows as usize];
    for &(col, row, _) in &p.cells {
        let slot = &mut first[row as usize];
        if slot.is_none_or(|c| col < c) {
            *slot = Some(col);
        }
    }
    first
        .into_iter()
        .map(|c| {
            c.map_or('.', |c| {
                char::from_digit((c * 10 / p.cols).min(9), 10).unwrap_or('?')
            })
        })
        .collect()
}

/// Seed 003's disk view: where on the disk the reads were, against time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disk {
    /// "block" (the tree's own block requests) or "extents" (reads placed through each file's
    /// extents, where the block requests cover under half of the traced bytes).
    pub source: &'static str,
    pub cols: u32,
    pub rows: u32,
    /// The lowest and highest disk byte drawn.
    pub min: u64,
    pub max: u64,
    /// Jumps of more than 1 MiB from one read's end to the next read's start.
    pub seeks: u64,
    /// `[column, row, bytes]`.
    pub cells: Vec<Cell>,
}

/// The disk view of `t` over `[0, span]`.
#[must_use]
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
pub fn disk(t: &Trace, span: f64, cols: u32, rows: u32) -> Disk {
    let (cols, rows) = (cols.max(1), rows.max(1));
    // (t, disk byte, length)
    let mut points: Vec<(f64, u64, u64)>;
    let mut source = "block";
    // Block requests count only where the tree issued them itself; under blk-throttle a kernel
    // worker dispatches most, so below half the traced bytes the extents tell more.
    let block_bytes: u64 = t.block.iter().map(|b| b.len).sum();
    if block_bytes > 0 && block_bytes * 2 >= t.traced_read_bytes {
        points = t.block.iter().map(|b| (b.t, b.pos, b.len)).collect();
    } else {
        source = "extents";
        points = Vec::new();
        for e in &t.events {
            let Some(file) = t.files.get(e.f as usize) else {
                continue;
            };
            let ofs = e.o * PAGE;
            if let Some([logical, physical, _]) = file
                .extents
                .iter()
                .find(|[logical, _, len]| ofs >= *logical && ofs < logical + len)
            {
                points.push((e.t, physical + (ofs - logical), e.n * PAGE));
            }
        }
    }
    if points.is_empty() {
        return Disk {
            source,
            cols,
            rows,
            min: 0,
            max: 0,
            seeks: 0,
            cells: Vec::new(),
        };
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let min = points.iter().map(|p| p.1).min().unwrap_or(0);
    let max = points.iter().map(|p| p.1 + p.2).max().unwrap_or(0);
    let range = (max - min).max(1) as f64;
    let mut cells: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    let mut seeks = 0;
    let mut end: Option<u64> = None;
    for &(time, pos, len) in &points {
        if end.is_some_and(|end| pos.abs_diff(end) > 1024 * 1024) {
            seeks += 1;
        }
        end = Some(pos + len);
        let col = ((time / span * f64::from(cols)).floor().max(0.0) as u32).min(cols - 1);
        let row = (((pos - min) as f64 / range * f64::from(rows)).floor() as u32).min(rows - 1);
        *cells.entry((col, row)).or_default() += len;
    }
    Disk {
        source,
        cols,
        rows,
        min,
        max,
        seeks,
        cells: cells.into_iter().map(|((c, r), b)| (c, r, b)).collect(),
    }
}

#[cfg(test)]
#[path = "bins_tests.rs"]
mod tests;
