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
mod tests {
    use super::*;
    use crate::learn::plan::Read;
    use crate::os::beneath::Folders;
    use std::path::PathBuf;

    fn plan(files: &[&str], reads: Vec<Vec<(usize, u64, u64)>>) -> PrefetchPlan {
        PrefetchPlan {
            files: files.iter().map(PathBuf::from).collect(),
            identities: vec![(0, 0); files.len()],
            profile_mtimes: vec![None; files.len()],
            batches: reads
                .into_iter()
                .map(|b| {
                    b.into_iter()
                        .map(|(file, offset, len)| Read {
                            file,
                            offset,
                            len,
                            physical: None,
                        })
                        .collect()
                })
                .collect(),
            bytes_planned: 0,
            profile: None,
            folders: Folders::default(),
        }
    }

    #[test]
    fn ranges_merge_in_image_order() {
        assert_eq!(
            merge(vec![(100, 10), (0, 10), (12, 5), (50, 1)], 2),
            [(0, 17), (50, 1), (100, 10)]
        );
        assert_eq!(merge(vec![(0, 100), (10, 5)], 0), [(0, 100)]);
        assert_eq!(merge(vec![], 16), []);
    }

    #[test]
    fn a_plan_maps_to_image_blocks_and_counts_what_it_leaves_out() {
        let p = plan(
            &[
                "/mnt/ff/libxul.so",
                "/usr/lib/x86_64-linux-gnu/libc.so.6",
                "/mnt/ff/omni.ja",
                "/mnt/ff/gone",
            ],
            // Two batches: libxul's second block first (first-use order), then its first; libc
            // (outside the mount); omni.ja's tail in a fragment; a file rdsquashfs does not know.
            vec![
                vec![(0, 10_000, 10), (1, 0, 4096)],
                vec![(0, 0, 10), (2, 0, 20), (3, 0, 7)],
            ],
        );
        let mut calls = Vec::new();
        let mut blocks_of = |rel: &Path| {
            calls.push(rel.to_path_buf());
            match rel.to_str() {
                Some("ff/libxul.so") => Ok(FileBlocks {
                    file_size: 20_000,
                    blocks_start: 5_000,
                    blocks: vec![300, 400],
                    fragment: false,
                }),
                Some("ff/omni.ja") => Ok(FileBlocks {
                    file_size: 30,
                    blocks_start: 0,
                    blocks: vec![],
                    fragment: true,
                }),
                _ => Err(io::Error::from(io::ErrorKind::NotFound)),
            }
        };
        let mut out = ImageOutcome::default();
        let batches = map_plan(&p, Path::new("/mnt"), 8192, 0, &mut blocks_of, &mut out).image;
        // Block 1 (5300..5700) in the first batch, block 0 (5000..5300) in the second: the
        // plan's first-use order, not image order.
        assert_eq!(batches, [vec![(5_300, 400)], vec![(5_000, 300)]]);
        assert_eq!(out.batches, 2);
        assert_eq!(
            calls,
            [
                PathBuf::from("ff/libxul.so"),
                "ff/omni.ja".into(),
                "ff/gone".into()
            ],
            "each file mapped once"
        );
        assert_eq!(out.files_mapped, 2);
        assert_eq!(out.bytes_outside, 4096);
        assert_eq!(out.bytes_unmapped, 20 + 7);
        assert_eq!(out.bytes_files_mapped, 20);
        assert_eq!(out.bytes_image_planned, 700);
        assert_eq!(out.errors.len(), 1);
    }

    #[test]
    fn an_image_byte_is_planned_once_in_the_first_batch_that_needs_it() {
        let p = plan(
            &["/mnt/a", "/mnt/b"],
            vec![
                vec![(0, 8192, 8192)],            // a's block 1
                vec![(0, 0, 16384), (1, 0, 100)], // a's blocks 0 and 1, b's block 0
                vec![(0, 8192, 10)],              // a's block 1 again: nothing left
            ],
        );
        let mut blocks_of = |rel: &Path| {
            Ok(match rel.to_str() {
                Some("a") => FileBlocks {
                    file_size: 16384,
                    blocks_start: 1000,
                    blocks: vec![100, 100],
                    fragment: false,
                },
                _ => FileBlocks {
                    file_size: 100,
                    blocks_start: 1230,
                    blocks: vec![50],
                    fragment: false,
                },
            })
        };
        let mut out = ImageOutcome::default();
        // A gap of 200 reads 1100..1230 through, between a's block 0 and b's block 0; the gap
        // holds a's block 1 (1100..1200), which the first batch already holds: not read twice.
        let batches = map_plan(&p, Path::new("/mnt"), 8192, 200, &mut blocks_of, &mut out).image;
        assert_eq!(
            batches,
            [vec![(1100, 100)], vec![(1000, 100), (1200, 80)]],
            "the third batch has nothing new and is dropped"
        );
        assert_eq!((out.batches, out.bytes_image_planned), (2, 280));
    }

    #[test]
    fn subtracting_what_is_held_leaves_the_rest_in_order() {
        let held = [(10, 10), (30, 5), (50, 10)];
        assert_eq!(
            subtract((0, 100), &held),
            [(0, 10), (20, 10), (35, 15), (60, 40)]
        );
        assert_eq!(subtract((12, 5), &held), []);
        assert_eq!(subtract((15, 20), &held), [(20, 10)]);
        assert_eq!(subtract((70, 5), &held), [(70, 5)]);
        assert_eq!(subtract((0, 5), &[]), [(0, 5)]);
    }

    /// A recorded real plan (tests/fixtures/packed/: a traced cold start of the packed ESR 153.8,
    /// libxul.so and both omni.ja, with their real blocks in the image): the first batches hold
    /// what Firefox needed first (libxul's end, at 244 ms, lies near the end of its 86 MB in the
    /// image; omni.ja came at 2.4 s), not the image's start; every image byte of the plan is read
    /// once, the same bytes as the whole plan merged in image order.
    #[test]
    fn a_recorded_plan_reads_what_firefox_needed_first_first() {
        #[derive(serde::Deserialize)]
        struct Recorded {
            files: Vec<RecordedFile>,
            pieces: Vec<(usize, u64, u64, Option<f64>)>,
        }
        #[derive(serde::Deserialize)]
        struct RecordedFile {
            path: String,
            file_size: u64,
            blocks_start: u64,
            fragment: bool,
            blocks: Vec<u64>,
        }
        let r: Recorded = serde_json::from_str(include_str!(
            "../../../../tests/fixtures/packed/esr153-zstd-128k-plan.json"
        ))
        .unwrap();
        let pieces = r
            .pieces
            .iter()
            .map(
                |&(file, offset, len, t)| crate::learn::prefetch::batch::Timed {
                    file,
                    offset,
                    len,
                    t: t.unwrap_or(f64::NAN),
                },
            )
            .collect();
        let cut =
            crate::learn::prefetch::batch::cut(pieces, crate::learn::prefetch::Sizes::default());
        let files: Vec<String> = r.files.iter().map(|f| format!("/mnt/{}", f.path)).collect();
        let mut p = plan(
            &files.iter().map(String::as_str).collect::<Vec<_>>(),
            vec![],
        );
        p.batches = cut
            .iter()
            .map(|b| crate::learn::prefetch::batch::disk_order(b, &[]))
            .collect();
        let mut blocks_of = |rel: &Path| {
            let f = r.files.iter().find(|f| Path::new(&f.path) == rel).unwrap();
            Ok(FileBlocks {
                file_size: f.file_size,
                blocks_start: f.blocks_start,
                blocks: f.blocks.clone(),
                fragment: f.fragment,
            })
        };
        let mut out = ImageOutcome::default();
        let mapped = map_plan(
            &p,
            Path::new("/mnt"),
            128 << 10,
            crate::learn::prefetch::GAP,
            &mut blocks_of,
            &mut out,
        );
        let batches = &mapped.image;
        assert!(batches.len() > 10, "{} batches", batches.len());
        // The first batch holds the blocks of what libxul needed first (at 244 ms, 176 MB into
        // the file) and not those of its first used pages (2.9 MB in, needed at 953 ms), which
        // image order would read first.
        let xul = blocks_of(Path::new("libxul.so")).unwrap();
        let in_batch = |b: &[(u64, u64)], (offset, len): (u64, u64)| {
            let (image, _) = xul.image_ranges(offset, len, 128 << 10);
            image.iter().all(|&r| subtract(r, b).is_empty())
        };
        assert!(
            in_batch(&batches[0], (175_996_928, 65_536)),
            "{:?}",
            batches[0]
        );
        let first_used = (2_883_584, 4096);
        let at = batches
            .iter()
            .position(|b| in_batch(b, first_used))
            .unwrap();
        assert!(at > 0, "libxul's first used pages in batch {at}");
        // omni.ja (first needed at 2.4 s) only after the first batches.
        let omni = &r.files[1];
        let in_omni = |&(o, _): &(u64, u64)| {
            o >= omni.blocks_start && o < omni.blocks_start + omni.blocks.iter().sum::<u64>()
        };
        let first_omni = batches.iter().position(|b| b.iter().any(in_omni)).unwrap();
        assert!(first_omni >= 3, "omni.ja in batch {first_omni}");
        // Within a batch, image order; across batches, no byte twice; all of it, the same bytes
        // as the plan merged whole.
        for b in batches {
            assert!(b.windows(2).all(|w| w[0].0 + w[0].1 < w[1].0), "{b:?}");
        }
        let all: Vec<(u64, u64)> = batches.iter().flatten().copied().collect();
        let total: u64 = all.iter().map(|r| r.1).sum();
        assert_eq!(
            total,
            merge(all.clone(), 0).iter().map(|r| r.1).sum::<u64>()
        );
        let mut whole = ImageOutcome::default();
        let mut one = plan(
            &files.iter().map(String::as_str).collect::<Vec<_>>(),
            vec![],
        );
        one.batches = vec![p.batches.concat()];
        let whole = map_plan(
            &one,
            Path::new("/mnt"),
            128 << 10,
            0,
            &mut blocks_of,
            &mut whole,
        );
        let covered = merge(all, 0);
        for (o, l) in whole.image.into_iter().flatten() {
            assert!(subtract((o, l), &covered).is_empty(), "({o}, {l}) not read");
        }
        assert_eq!(out.bytes_outside + out.bytes_unmapped, 0);
        // What is warmed in batch b: its image blocks all read once batch b is read up to its
        // `ready` (in image order); every planned byte warmed once, in whole blocks.
        assert_eq!(mapped.warm.len(), batches.len());
        let bs = 128 << 10;
        let mut warmed: Vec<Vec<(u64, u64)>> = vec![Vec::new(); r.files.len()];
        for (b, warm) in mapped.warm.iter().enumerate() {
            assert!(
                warm.windows(2).all(|p| p[0].ready <= p[1].ready),
                "batch {b}"
            );
            for w in warm {
                let read_by_then = merge(
                    batches[..b]
                        .concat()
                        .into_iter()
                        .chain(
                            batches[b]
                                .iter()
                                .filter(|&&(o, _)| o < w.ready)
                                .map(|&(o, l)| (o, l.min(w.ready - o))),
                        )
                        .collect(),
                    0,
                );
                let f = &r.files[w.file];
                assert_eq!(w.offset % bs, 0, "{w:?}");
                assert!(w.len == bs || w.offset + w.len == f.file_size, "{w:?}");
                let blocks = FileBlocks {
                    file_size: f.file_size,
                    blocks_start: f.blocks_start,
                    blocks: f.blocks.clone(),
                    fragment: f.fragment,
                };
                for range in blocks.image_ranges(w.offset, w.len, bs).0 {
                    assert!(
                        subtract(range, &read_by_then).is_empty(),
                        "{w:?} in batch {b}"
                    );
                }
                assert_eq!(
                    subtract((w.offset, w.len), &warmed[w.file]),
                    [(w.offset, w.len)],
                    "{w:?} twice"
                );
                warmed[w.file] = merge(
                    warmed[w.file]
                        .iter()
                        .copied()
                        .chain([(w.offset, w.len)])
                        .collect(),
                    0,
                );
            }
        }
        for read in p.batches.iter().flatten() {
            assert!(
                subtract((read.offset, read.len), &warmed[read.file]).is_empty(),
                "{read:?} not warmed"
            );
        }
        assert_eq!(
            out.bytes_warm_planned,
            warmed.iter().flatten().map(|r| r.1).sum::<u64>()
        );
    }

    /// The file ranges to decompress ahead: a batch's reads in whole blocks, once their image
    /// bytes are read (a batch with nothing new goes with the one before), never a fragment
    /// tail or a byte twice.
    #[test]
    fn file_ranges_are_warmed_after_the_batch_that_reads_their_blocks() {
        let p = plan(
            &["/mnt/a", "/mnt/b", "/usr/lib/c"],
            vec![
                vec![(0, 8200, 10), (2, 0, 10)], // a's block 1 (and c, off the mount)
                vec![(1, 100, 20_000)],          // b: block 0 and its fragment tail
                vec![(0, 8192, 100)],            // a's block 1 again: nothing new
                vec![(0, 0, 16384)],             // a's blocks 0 and 1
            ],
        );
        let mut blocks_of = |rel: &Path| {
            Ok(match rel.to_str() {
                Some("a") => FileBlocks {
                    file_size: 16384,
                    blocks_start: 1000,
                    blocks: vec![100, 100],
                    fragment: false,
                },
                _ => FileBlocks {
                    file_size: 9000,
                    blocks_start: 1200,
                    blocks: vec![50],
                    fragment: true,
                },
            })
        };
        let mut out = ImageOutcome::default();
        let mapped = map_plan(&p, Path::new("/mnt"), 8192, 0, &mut blocks_of, &mut out);
        assert_eq!(
            mapped.image,
            [vec![(1100, 100)], vec![(1200, 50)], vec![(1000, 100)]]
        );
        let w = |file, offset, len, ready| Warm {
            file,
            offset,
            len,
            ready,
        };
        assert_eq!(
            mapped.warm,
            [
                // a's block 1 once the first batch is read past its image bytes' end.
                vec![w(0, 8192, 8192, 1200)],
                // b's block 0 only: its tail (8192..9000) is in a fragment, not read.
                vec![w(1, 0, 8192, 1250)],
                // The fourth batch: a's block 0; its block 1 was warmed after the first.
                vec![w(0, 0, 8192, 1100)],
            ]
        );
        assert_eq!(out.bytes_warm_planned, 3 * 8192);
    }
}
