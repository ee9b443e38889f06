//! The image prefetch's pure part: the plan's reads of the mount's files mapped to batches of
//! image ranges (first-use batches, each merged and in image order, an image byte in the first
//! batch that needs it), and, beside each batch, the file ranges whose image bytes are all read
//! once that batch is (what a FUSE mount can decompress ahead of Firefox: image/warm.rs), through
//! a `blocks_of` given in (rdsquashfs in production, recorded blocks in the tests). No I/O here:
//! image/mod.rs reads.

use std::io;
use std::path::Path;

use super::outcome::{ImageOutcome, MAX_ERRORS};
use crate::firefox::compressed::FileBlocks;
use crate::learn::prefetch::PrefetchPlan;

/// One block of a plan's file (`PrefetchPlan::files[file]`) to read through the mount: a block
/// kept in the file's data blocks (a fragment tail is never one: its block was not read from the
/// image). `ready`: the image offset its batch's read must have passed (the batch is read in
/// image order) for every byte of the block to be read; 0 if earlier batches hold them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Warm {
    pub file: usize,
    pub offset: u64,
    pub len: u64,
    pub ready: u64,
}

/// The plan mapped through the image: `image[b]` the image ranges of batch `b` (in image order),
/// `warm[b]` the file blocks whose image bytes are all read once batches before `b` are and
/// batch `b` is read past each one's `ready` (in `ready` order, first-use order among equals);
/// as many of each. A block goes in the batch of its first use, or a later one if that is where
/// its image bytes are read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mapped {
    pub image: Vec<Vec<(u64, u64)>>,
    pub warm: Vec<Vec<Warm>>,
}

/// The plan's reads of files under `mount_point`, as batches of image ranges: one per plan batch,
/// in the plan's (first-use) order, each batch's ranges merged and in image order (gaps up to
/// `gap` bytes read through); an image byte is planned once, in the first batch that needs it,
/// and a batch left with nothing is dropped. Beside them, the files' blocks to warm ([`Mapped`]).
/// What was left out is counted into `out`. `blocks_of` maps a path inside the image to its
/// blocks (rdsquashfs in production, a fake in tests).
pub fn map_plan(
    plan: &PrefetchPlan,
    mount_point: &Path,
    block_size: u64,
    gap: u64,
    blocks_of: &mut dyn FnMut(&Path) -> io::Result<FileBlocks>,
    out: &mut ImageOutcome,
) -> Mapped {
    let mut per_file: Vec<Option<Option<FileBlocks>>> = vec![None; plan.files.len()];
    let mut mapped = Mapped::default();
    // The image ranges of the batches so far, merged, in image order.
    let mut held: Vec<(u64, u64)> = Vec::new();
    // Per file: the blocks to warm so far; and each block, in first-use order.
    let mut warmed: Vec<std::collections::HashSet<u64>> =
        vec![std::collections::HashSet::new(); plan.files.len()];
    let mut pieces: Vec<Piece> = Vec::new();
    for batch in &plan.batches {
        let mut ranges = Vec::new();
        for read in batch {
            let path = &plan.files[read.file];
            let Ok(rel) = path.strip_prefix(mount_point) else {
                out.bytes_outside += read.len;
                continue;
            };
            let blocks = per_file[read.file].get_or_insert_with(|| match blocks_of(rel) {
                Ok(b) => {
                    out.files_mapped += 1;
                    Some(b)
                }
                Err(e) => {
                    if out.errors.len() < MAX_ERRORS {
                        out.errors.push(format!("{}: {e}", path.display()));
                    }
                    None
                }
            });
            let Some(blocks) = blocks else {
                out.bytes_unmapped += read.len;
                continue;
            };
            let (image, unmapped) = blocks.image_ranges(read.offset, read.len, block_size);
            out.bytes_unmapped += unmapped;
            out.bytes_files_mapped += read.len - unmapped.min(read.len);
            for range in image {
                ranges.extend(subtract(range, &held));
            }
            for (offset, len, image) in whole_blocks(blocks, read.offset, read.len, block_size) {
                if warmed[read.file].insert(offset) {
                    pieces.push(Piece {
                        // The kept batch this one becomes (or, dropped, the one before it).
                        first_use: mapped.image.len(),
                        warm: Warm {
                            file: read.file,
                            offset,
                            len,
                            ready: 0,
                        },
                        image,
                    });
                }
            }
        }
        let merged = merge(ranges, gap);
        if merged.is_empty() {
            // Every image byte of this batch is held by the batches before: its blocks go with
            // the last of them.
            let last = mapped.image.len().saturating_sub(1);
            for piece in pieces.iter_mut().rev() {
                if piece.first_use <= last {
                    break;
                }
                piece.first_use = last;
            }
            continue;
        }
        // A gap read through may reach into what an earlier batch holds: read it once.
        let merged: Vec<(u64, u64)> = merged
            .into_iter()
            .flat_map(|r| subtract(r, &held))
            .collect();
        held = merge(held.into_iter().chain(merged.iter().copied()).collect(), 0);
        mapped.image.push(merged);
    }
    mapped.warm = vec![Vec::new(); mapped.image.len()];
    for Piece {
        first_use,
        warm,
        image: (start, size),
    } in pieces
    {
        // The last batch that reads a byte of the block: not after its first use.
        let read_in = mapped
            .image
            .iter()
            .rposition(|b| size > 0 && subtract((start, size), b) != [(start, size)])
            .unwrap_or(0);
        let Some(list) = mapped.warm.get_mut(first_use.max(read_in)) else {
            continue;
        };
        let ready = if read_in >= first_use && size > 0 {
            start + size
        } else {
            0
        };
        list.push(Warm { ready, ..warm });
    }
    for list in &mut mapped.warm {
        list.sort_by_key(|w| w.ready);
    }
    out.bytes_image_planned = mapped.image.iter().flatten().map(|r| r.1).sum();
    out.batches = mapped.image.len();
    out.bytes_warm_planned = mapped.warm.iter().flatten().map(|w| w.len).sum();
    mapped
}

/// A block to warm as first planned: the kept batch of its first use, and its image range.
struct Piece {
    first_use: usize,
    warm: Warm,
    image: (u64, u64),
}

/// The blocks of a file that `offset..offset + len` touches, of the part of the file kept in
/// data blocks (the fragment tail's block is not among the image ranges read), each as its
/// `(offset, len, (image offset, image len))`.
fn whole_blocks(
    blocks: &FileBlocks,
    offset: u64,
    len: u64,
    block_size: u64,
) -> Vec<(u64, u64, (u64, u64))> {
    if block_size == 0 {
        return Vec::new();
    }
    let mapped_end = (blocks.blocks.len() as u64 * block_size).min(blocks.file_size);
    let end = (offset + len).min(mapped_end);
    if offset >= end {
        return Vec::new();
    }
    let (first, last) = (offset / block_size, (end - 1) / block_size);
    let mut at = blocks.blocks_start + blocks.blocks[..first as usize].iter().sum::<u64>();
    (first..=last)
        .map(|k| {
            let size = blocks.blocks[k as usize];
            let start = k * block_size;
            let piece = (start, block_size.min(mapped_end - start), (at, size));
            at += size;
            piece
        })
        .collect()
}

/// The parts of `(offset, len)` outside `held` (merged ranges in image order), in image order.
fn subtract((offset, len): (u64, u64), held: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let end = offset + len;
    let mut out = Vec::new();
    let mut at = offset;
    // The first held range that ends after `offset`.
    let first = held.partition_point(|&(o, l)| o + l <= offset);
    for &(o, l) in &held[first..] {
        if o >= end {
            break;
        }
        if o > at {
            out.push((at, o - at));
        }
        at = at.max(o + l);
    }
    if at < end {
        out.push((at, end - at));
    }
    out
}

/// Sort `(offset, len)` ranges and merge those that overlap or lie within `gap` bytes.
#[must_use]
pub fn merge(mut ranges: Vec<(u64, u64)>, gap: u64) -> Vec<(u64, u64)> {
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (o, l) in ranges {
        match out.last_mut() {
            Some((po, pl)) if o <= *po + *pl + gap => *pl = (*pl).max(o + l - *po),
            _ => out.push((o, l)),
        }
    }
    out
}

#[cfg(test)]
#[path = "map_tests.rs"]
mod tests;
