//! The prefetch's order, pure: the planned pieces in the order the traced starts first needed
//! them, cut into batches, each batch read in disk order.
//!
//! Why batches: reading in first-use order alone is the cold start's own pattern, thousands of
//! small scattered reads bound by the disk's requests per second (12 s at 128 KiB readahead on
//! the benchmark's 150 IOPS); reading the whole plan in disk order is fast (the traced preload,
//! 4.2 s) but hands Firefox the pages it needs first at a random moment of those seconds. A batch
//! is the next slice of first-use order, read in disk order: the first batch is small so that
//! what Firefox needs at once arrives at once, later ones grow (doubling) so that most bytes are
//! read in long disk-ordered runs, and a cap keeps the order coarse but present to the end.

use crate::learn::plan::{split_by_extents, Read};
use crate::os::sys::Extent;

/// A piece of the plan: `len` bytes at `offset` of plan file `file`, first needed at `t` ms
/// after the process start (`NaN`: unknown, as for the learned plan).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    pub file: usize,
    pub offset: u64,
    pub len: u64,
    pub t: f64,
}

/// Batch sizes in bytes: the first, then doubling, never more than `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    pub first: u64,
    pub max: u64,
}

impl Default for Sizes {
    /// 1 MiB (what the 30 MiB/s benchmark disk reads in 0.03 s) doubling to 8 MiB (0.27 s there):
    /// measured against 4 to 32 MiB beside a cold start at 128 KiB readahead, 5.0-5.2 s against
    /// 5.3-5.7 s (docs/benchmarks.md); with the plan cut into chunks the finer order costs no
    /// extra requests.
    fn default() -> Self {
        Sizes {
            first: 1 << 20,
            max: 8 << 20,
        }
    }
}

/// The pieces of each file joined into regions (pieces closer than `gap` bytes read as one,
/// the gap with them), each region split into chunks of at most `chunk` bytes that carry the
/// earliest time of the pieces they hold. First-use order is kept at the grain of a chunk,
/// while a batch still reads long runs: chunks of one region that land in one batch are joined
/// again by [`disk_order`], and a region is never cut below `chunk` (a 1 MiB read costs the
/// throttled disk 33 ms at 30 MiB/s, a 16 KiB piece alone a whole request, 6.7 ms at 150 IOPS).
/// Pure.
#[must_use]
pub fn chunks(mut pieces: Vec<Timed>, gap: u64, chunk: u64) -> Vec<Timed> {
    pieces.sort_by_key(|p| (p.file, p.offset));
    let chunk = chunk.max(1);
    let mut out = Vec::new();
    let mut i = 0;
    while i < pieces.len() {
        // One region: pieces of one file, each starting within `gap` of the region's end.
        let (file, start) = (pieces[i].file, pieces[i].offset);
        let mut end = start + pieces[i].len;
        let mut j = i + 1;
        while j < pieces.len()
            && pieces[j].file == file
            && pieces[j].offset <= end.saturating_add(gap)
        {
            end = end.max(pieces[j].offset + pieces[j].len);
            j += 1;
        }
        let region = &pieces[i..j];
        let mut at = start;
        while at < end {
            let until = (at + chunk).min(end);
            let t = region
                .iter()
                .filter(|p| p.offset < until && p.offset + p.len > at && !p.t.is_nan())
                .map(|p| p.t)
                .fold(f64::NAN, f64::min);
            out.push(Timed {
                file,
                offset: at,
                len: until - at,
                t,
            });
            at = until;
        }
        i = j;
    }
    out
}

/// Cut `pieces` into batches in first-use order (ties and unknown times in file order): the
/// first batch holds `sizes.first` bytes, each next one twice the last, at most `sizes.max`. A
/// piece is never split; a batch closes once it holds its size. Pure.
#[must_use]
pub fn cut(mut pieces: Vec<Timed>, sizes: Sizes) -> Vec<Vec<Timed>> {
    pieces.sort_by(|a, b| {
        let time = |p: &Timed| if p.t.is_nan() { f64::INFINITY } else { p.t };
        time(a)
            .total_cmp(&time(b))
            .then(a.file.cmp(&b.file))
            .then(a.offset.cmp(&b.offset))
    });
    let mut out: Vec<Vec<Timed>> = Vec::new();
    let mut size = sizes.first.max(1);
    let mut held = 0u64;
    for piece in pieces {
        if out.is_empty() || held >= size {
            if !out.is_empty() {
                size = size.saturating_mul(2).min(sizes.max.max(1));
            }
            out.push(Vec::new());
            held = 0;
        }
        held += piece.len;
        out.last_mut().expect("pushed above").push(piece);
    }
    out
}

/// One batch as reads in disk order: each piece split at its file's extents (`extents[file]`),
/// sorted by physical position (unknown positions last, in file order), and pieces that touch on
/// the disk and in the file joined into one read. Pure.
#[must_use]
pub fn disk_order(batch: &[Timed], extents: &[Vec<Extent>]) -> Vec<Read> {
    let mut reads: Vec<Read> = Vec::new();
    for p in batch {
        let ext = extents.get(p.file).map_or(&[][..], Vec::as_slice);
        for (offset, len, physical) in split_by_extents(p.offset, p.len, ext) {
            reads.push(Read {
                file: p.file,
                offset,
                len,
                physical,
            });
        }
    }
    reads.sort_by_key(|r| (r.physical.is_none(), r.physical, r.file, r.offset));
    let mut joined: Vec<Read> = Vec::with_capacity(reads.len());
    for r in reads {
        match joined.last_mut() {
            Some(last)
                if last.file == r.file
                    && last.offset + last.len == r.offset
                    && match (last.physical, r.physical) {
                        (Some(a), Some(b)) => a + last.len == b,
                        (None, None) => true,
                        _ => false,
                    } =>
            {
                last.len += r.len;
            }
            _ => joined.push(r),
        }
    }
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(file: usize, offset: u64, len: u64, t: f64) -> Timed {
        Timed {
            file,
            offset,
            len,
            t,
        }
    }

    #[test]
    fn batches_follow_first_use_and_grow_to_the_cap() {
        // Ten pieces of 1 MiB, first needed in reverse file order.
        let pieces: Vec<Timed> = (0..10)
            .map(|i| piece(0, i << 20, 1 << 20, 100.0 - i as f64))
            .collect();
        let sizes = Sizes {
            first: 1 << 20,
            max: 4 << 20,
        };
        let batches = cut(pieces, sizes);
        let offsets: Vec<Vec<u64>> = batches
            .iter()
            .map(|b| b.iter().map(|p| p.offset >> 20).collect())
            .collect();
        // 1 MiB, then 2, then 4 (the cap), then the rest: each batch in first-use order.
        assert_eq!(
            offsets,
            [vec![9], vec![8, 7], vec![6, 5, 4, 3], vec![2, 1, 0]]
        );
    }

    #[test]
    fn regions_are_cut_into_chunks_that_carry_their_earliest_time() {
        let pieces = vec![
            piece(0, 0, 100, 30.0),
            piece(0, 100, 50, 5.0), // touches the first: one region
            piece(0, 170, 30, 9.0), // 20 bytes apart: within the gap of 32
            piece(0, 300, 10, f64::NAN),
            piece(1, 0, 10, 1.0),
        ];
        let got: Vec<_> = chunks(pieces, 32, 128)
            .iter()
            .map(|c| (c.file, c.offset, c.len, c.t))
            .collect::<Vec<_>>();
        let want = [(0, 0, 128, 5.0), (0, 128, 72, 5.0), (1, 0, 10, 1.0)];
        assert_eq!(&got[..2], &want[..2]);
        // The lone piece at 300 (no time) is its own region, its time unknown.
        assert_eq!((got[2].1, got[2].2, got[2].3.is_nan()), (300, 10, true));
        assert_eq!(got[3], want[2]);
    }

    #[test]
    fn unknown_times_come_last_in_file_order() {
        let pieces = vec![
            piece(1, 0, 10, f64::NAN),
            piece(0, 50, 10, f64::NAN),
            piece(0, 0, 10, 3.0),
        ];
        let batch = &cut(pieces, Sizes::default())[0];
        let order: Vec<_> = batch.iter().map(|p| (p.file, p.offset)).collect();
        assert_eq!(order, [(0, 0), (0, 50), (1, 0)]);
    }

    #[test]
    fn a_batch_is_read_in_disk_order_with_touching_pieces_joined() {
        let ext = |logical, physical, length| Extent {
            logical,
            physical: Some(physical),
            length,
        };
        // File 0: two extents, the second one first on the disk. File 1: no positions.
        let extents = vec![
            vec![ext(0, 1_000_000, 8192), ext(8192, 10_000, 8192)],
            vec![],
        ];
        let batch = [
            piece(0, 0, 4096, 1.0),
            piece(1, 0, 4096, 2.0),
            piece(0, 4096, 8192, 3.0), // crosses into the second extent
            piece(0, 12288, 4096, 4.0),
        ];
        let reads = disk_order(&batch, &extents);
        let got: Vec<_> = reads
            .iter()
            .map(|r| (r.file, r.offset, r.len, r.physical))
            .collect();
        assert_eq!(
            got,
            [
                // 8192..16384 lies first on the disk: the two pieces there are one read.
                (0, 8192, 8192, Some(10_000)),
                (0, 0, 8192, Some(1_000_000)),
                (1, 0, 4096, None),
            ]
        );
    }
}
