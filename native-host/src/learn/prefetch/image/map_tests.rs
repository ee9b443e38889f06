//! Tests of the plan's map through a compressed image: the image batches and the blocks to warm.

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
    let cut = crate::learn::prefetch::batch::cut(pieces, crate::learn::prefetch::Sizes::default());
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
