//! The prefetch of a compressed install (firefox/compressed/): the plan's ranges of the
//! mount's files, mapped to the squashfs image's data blocks (rdsquashfs `--stat`) and read raw
//! from the image, batch by batch in the plan's first-use order, each batch merged and read in
//! image order (as the plain prefetch reads each batch in disk order: batch.rs says why). Reading
//! the image fills the page cache the loop device reads through, so the mount's decompressor then
//! finds its input cached, and nothing waits behind the prefetch for the mount's one
//! decompressor.
//!
//! Why batches here too: the packed image's file order follows the traced start only file by
//! file (`mksquashfs -sort`), and libxul.so, most of the image's bytes, is one file laid out in
//! its own order; read in image order, the parts of libxul Firefox needs first came at a random
//! moment of the whole read, and Firefox's CPU barely overlapped it.
//!
//! The plan's files outside the mount (system libraries, the profile) and a file's tail kept in
//! a fragment block are not read: counted, and left to the start.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt as _;
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::run::{Ended, Io, KernelIo};
use super::PrefetchPlan;
use crate::firefox::compressed::{self, Compressed, FileBlocks};

/// What the image prefetch mapped and read (`last-prefetch.json`'s `image_read`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageOutcome {
    /// Files of the plan on the mount whose blocks were mapped.
    pub files_mapped: u64,
    /// Image bytes the mapped ranges cover (whole compressed blocks, gaps read through).
    pub bytes_image_planned: u64,
    /// Of them, read.
    pub bytes_image_read: u64,
    /// Plan bytes (of the files, uncompressed) that were mapped.
    pub bytes_files_mapped: u64,
    /// Plan bytes in fragment tails or files rdsquashfs could not map: left to the start.
    pub bytes_unmapped: u64,
    /// Plan bytes of files outside the mount (system libraries, the profile): not read here.
    pub bytes_outside: u64,
    /// Batches of image ranges (the plan's first-use batches, each in image order; a batch whose
    /// blocks an earlier one already holds is dropped), and of them read to the end.
    #[serde(default)]
    pub batches: usize,
    #[serde(default)]
    pub batches_done: usize,
    pub elapsed_ms: u64,
    pub ended: Option<Ended>,
    /// Files that could not be mapped, in English (at most [`MAX_ERRORS`]).
    pub errors: Vec<String>,
}

const MAX_ERRORS: usize = 20;

/// The plan's reads of files under `mount_point`, as batches of image ranges: one per plan batch,
/// in the plan's (first-use) order, each batch's ranges merged and in image order (gaps up to
/// `gap` bytes read through); an image byte is planned once, in the first batch that needs it,
/// and a batch left with nothing is dropped. What was left out is counted into `out`.
/// `blocks_of` maps a path inside the image to its blocks (rdsquashfs in production, a fake in
/// tests).
pub fn map_plan(
    plan: &PrefetchPlan,
    mount_point: &Path,
    block_size: u64,
    gap: u64,
    blocks_of: &mut dyn FnMut(&Path) -> io::Result<FileBlocks>,
    out: &mut ImageOutcome,
) -> Vec<Vec<(u64, u64)>> {
    let mut per_file: Vec<Option<Option<FileBlocks>>> = vec![None; plan.files.len()];
    let mut batches = Vec::new();
    // The image ranges of the batches so far, merged, in image order.
    let mut held: Vec<(u64, u64)> = Vec::new();
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
        }
        let merged = merge(ranges, gap);
        if merged.is_empty() {
            continue;
        }
        // A gap read through may reach into what an earlier batch holds: read it once.
        let merged: Vec<(u64, u64)> = merged
            .into_iter()
            .flat_map(|r| subtract(r, &held))
            .collect();
        held = merge(held.into_iter().chain(merged.iter().copied()).collect(), 0);
        batches.push(merged);
    }
    out.bytes_image_planned = batches.iter().flatten().map(|r| r.1).sum();
    out.batches = batches.len();
    batches
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

/// Read `batches` of ranges of `image` in order, asking `stop` before each read of at most
/// `QUEUE_SLICE` bytes, with up to `ahead` bytes queued ([`Io::queue`], the read waited for
/// included) so that the disk never idles between reads and what comes next, across a batch's
/// end too, is on its way.
pub fn read(
    image: &File,
    batches: &[Vec<(u64, u64)>],
    ahead: u64,
    io: &mut dyn Io,
    stop: &mut dyn FnMut() -> Option<Ended>,
    out: &mut ImageOutcome,
) {
    let begun = Instant::now();
    out.batches = batches.len();
    // Every read as (batch, offset, len), sliced so that stopping acts within a slice.
    let reads: Vec<(usize, u64, u64)> = batches
        .iter()
        .enumerate()
        .flat_map(|(b, ranges)| {
            ranges.iter().flat_map(move |&(offset, len)| {
                (0..len.div_ceil(QUEUE_SLICE)).map(move |i| {
                    let at = offset + i * QUEUE_SLICE;
                    (b, at, (offset + len - at).min(QUEUE_SLICE))
                })
            })
        })
        .collect();
    let (mut queued, mut queued_bytes) = (0, 0u64);
    for (i, &(batch, offset, len)) in reads.iter().enumerate() {
        if let Some(why) = stop() {
            out.ended = Some(why);
            break;
        }
        while queued < reads.len() && (queued == i || queued_bytes < ahead) {
            let (_, o, l) = reads[queued];
            io.queue(image, o, l);
            queued_bytes += l;
            queued += 1;
        }
        queued_bytes = queued_bytes.saturating_sub(len);
        match io.read(image, offset, len) {
            Ok(got) => out.bytes_image_read += got,
            Err(e) => {
                if out.errors.len() < MAX_ERRORS {
                    out.errors
                        .push(format!("reading the image at {offset}: {e}"));
                }
                break;
            }
        }
        if reads.get(i + 1).is_none_or(|&(b, _, _)| b != batch) {
            out.batches_done = batch + 1;
        }
    }
    out.elapsed_ms = u64::try_from(begun.elapsed().as_millis()).unwrap_or(u64::MAX);
    if out.ended.is_none() {
        out.ended = Some(Ended::Done);
    }
}

/// Reads of the image are queued and sliced at this many bytes (readahead(2) reads at most the
/// device's largest request per call: run.rs).
const QUEUE_SLICE: u64 = 1 << 20;

/// Map `plan` through the image of `c` (checked again as it is opened: the image read is the one
/// mounted) and read the ranges batch by batch, up to `ahead` bytes queued, asking `stop` before
/// each read.
pub fn prefetch(
    plan: &PrefetchPlan,
    c: &Compressed,
    gap: u64,
    ahead: u64,
    stop: &mut dyn FnMut() -> Option<Ended>,
) -> ImageOutcome {
    let mut out = ImageOutcome::default();
    let Some(image_path) = c.image.as_deref() else {
        out.errors.push("no image behind the mount".to_owned());
        return out;
    };
    let image = match compressed::open_image(image_path, &c.mount_point, c.format) {
        Ok(f) => f,
        Err(access) => {
            out.errors
                .push(format!("{}: refused ({access:?})", image_path.display()));
            return out;
        }
    };
    let mut head = [0u8; compressed::SUPERBLOCK_BYTES];
    let Some(sb) = image
        .read_exact_at(&mut head, 0)
        .ok()
        .and_then(|()| compressed::Superblock::parse(&head))
    else {
        out.errors
            .push(format!("{}: no squashfs superblock", image_path.display()));
        return out;
    };
    let mut blocks_of = |rel: &Path| compressed::file_blocks(image_path, rel);
    let batches = map_plan(
        plan,
        &c.mount_point,
        u64::from(sb.block_size),
        gap,
        &mut blocks_of,
        &mut out,
    );
    // Read what the batches say, no more: no kernel readahead around it (as run.rs).
    let _ = crate::os::sys::fadvise(&image, 0, 0, crate::os::sys::Advice::Random);
    read(
        &image,
        &batches,
        ahead,
        &mut KernelIo::new(false),
        stop,
        &mut out,
    );
    out
}

/// The login preload of a compressed install (`preload --plan`): left off where a prefetch is
/// (the same [`Compressed::verdict`]), else the chosen plan read from the image, to the end.
pub fn preload(
    install_dir: &Path,
    state: &crate::state::StateDir,
    c: &Compressed,
) -> Result<ImageOutcome, crate::Error> {
    let launched = crate::learn::plan::profile::Launched::Default;
    let (plan, _) = super::choose(install_dir, state, super::Knobs::default(), &launched)?;
    let Some(plan) = plan else {
        return Ok(ImageOutcome {
            ended: Some(Ended::Done),
            ..ImageOutcome::default()
        });
    };
    Ok(prefetch(&plan, c, super::GAP, super::AHEAD, &mut || None))
}

/// The page's planned preload (`preload` with `plan: true`) of a compressed install: what
/// `preload --plan` does ([`preload`]: the image's ranges raw, or nothing), as a preload reply:
/// `bytes` the image bytes read, `files` the files mapped, `cache` `image`, and `compressed` the
/// verdict, so that the page can say why nothing was read. Never through the mount.
pub fn preload_summary(
    install_dir: &Path,
    state: &crate::state::StateDir,
    c: &Compressed,
    idle: bool,
) -> Result<crate::pagecache::preload::Summary, crate::Error> {
    use crate::pagecache::preload::{Method, Summary};
    let mut summary = Summary::whole_folder(Method::Read, 1, idle);
    summary.planned = true;
    summary.cache = crate::pagecache::Cache::Image;
    if c.verdict == compressed::Verdict::ImageRanges {
        let read = preload(install_dir, state, c)?;
        summary.files = read.files_mapped;
        summary.bytes = read.bytes_image_read;
        summary.elapsed_ms = read.elapsed_ms;
        summary.mb_per_s = crate::pagecache::preload::mb_per_s(
            read.bytes_image_read,
            std::time::Duration::from_millis(read.elapsed_ms),
        );
        summary.bytes_planned = Some(read.bytes_image_planned);
    }
    summary.compressed = serde_json::to_value(c).ok();
    Ok(summary)
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

    /// The page's planned preload of a Snap whose image this user may not read: a preload reply
    /// that read nothing, says it is the image's cache and carries the verdict and its reason.
    #[test]
    fn the_pages_planned_preload_of_an_unreadable_snap_reads_nothing_and_says_why() {
        let tmp = tempfile::tempdir().unwrap();
        let state = crate::state::StateDir::create_at(tmp.path()).unwrap();
        let c = compressed::judge(&compressed::Facts {
            format: compressed::Format::Squashfs,
            mount_point: "/snap/firefox/5000".into(),
            image: Some("/var/lib/snapd/snaps/firefox_5000.snap".into()),
            direct_io: false,
            access: compressed::Access::NotReadable,
            rdsquashfs: true,
        });
        let s = preload_summary(Path::new("/snap/firefox/5000"), &state, &c, true).unwrap();
        assert_eq!((s.files, s.bytes, s.planned, s.idle), (0, 0, true, true));
        assert_eq!(s.cache, crate::pagecache::Cache::Image);
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["compressed"]["verdict"], "left_off", "{v}");
        assert_eq!(v["compressed"]["left_off"], "image_not_readable", "{v}");
        // Nothing of the plan was even looked up: no plan, no bytes planned.
        assert!(v["bytes_planned"].is_null(), "{v}");
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
        let batches = map_plan(&p, Path::new("/mnt"), 8192, 0, &mut blocks_of, &mut out);
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
        let batches = map_plan(&p, Path::new("/mnt"), 8192, 200, &mut blocks_of, &mut out);
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
            "../../../tests/fixtures/packed/esr153-zstd-128k-plan.json"
        ))
        .unwrap();
        let pieces = r
            .pieces
            .iter()
            .map(|&(file, offset, len, t)| super::super::batch::Timed {
                file,
                offset,
                len,
                t: t.unwrap_or(f64::NAN),
            })
            .collect();
        let cut = super::super::batch::cut(pieces, super::super::Sizes::default());
        let files: Vec<String> = r.files.iter().map(|f| format!("/mnt/{}", f.path)).collect();
        let mut p = plan(
            &files.iter().map(String::as_str).collect::<Vec<_>>(),
            vec![],
        );
        p.batches = cut
            .iter()
            .map(|b| super::super::batch::disk_order(b, &[]))
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
        let batches = map_plan(
            &p,
            Path::new("/mnt"),
            128 << 10,
            super::super::GAP,
            &mut blocks_of,
            &mut out,
        );
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
        for b in &batches {
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
        for (o, l) in whole.into_iter().flatten() {
            assert!(subtract((o, l), &covered).is_empty(), "({o}, {l}) not read");
        }
        assert_eq!(out.bytes_outside + out.bytes_unmapped, 0);
    }

    /// What the fake reader was asked, in order.
    #[derive(Default)]
    struct Asked(Vec<(char, u64, u64)>);

    impl Io for Asked {
        fn queue(&mut self, _: &File, offset: u64, len: u64) {
            self.0.push(('q', offset, len));
        }
        fn read(&mut self, _: &File, offset: u64, len: u64) -> io::Result<u64> {
            self.0.push(('r', offset, len));
            Ok(len)
        }
    }

    #[test]
    fn batches_are_read_in_order_with_the_next_reads_queued() {
        let f = tempfile::tempfile().unwrap();
        let mib = 1 << 20;
        // Batch 0: 1.5 MiB at 10 MiB (two slices); batch 1: 1 MiB at 0.
        let batches = [vec![(10 * mib, mib + mib / 2)], vec![(0, mib)]];
        let mut io = Asked::default();
        let mut out = ImageOutcome::default();
        read(&f, &batches, mib + mib / 2, &mut io, &mut || None, &mut out);
        assert_eq!(
            io.0,
            [
                // 1.5 MiB ahead: the first slice and the second queued, then read.
                ('q', 10 * mib, mib),
                ('q', 11 * mib, mib / 2),
                ('r', 10 * mib, mib),
                // One slice read: the next batch's first queued before the second is read.
                ('q', 0, mib),
                ('r', 11 * mib, mib / 2),
                ('r', 0, mib),
            ]
        );
        assert_eq!((out.batches, out.batches_done), (2, 2));
        assert_eq!(out.bytes_image_read, 2 * mib + mib / 2);
        assert_eq!(out.ended, Some(Ended::Done));
    }

    #[test]
    fn reading_stops_when_told_and_counts_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("img");
        std::fs::write(&path, vec![7u8; 100_000]).unwrap();
        let f = File::open(&path).unwrap();
        let mut out = ImageOutcome::default();
        let mut io = KernelIo::new(false);
        read(
            &f,
            &[vec![(0, 10_000)], vec![(50_000, 60_000)]],
            4096,
            &mut io,
            &mut || None,
            &mut out,
        );
        // The second range runs past the end: 50,000 bytes are there.
        assert_eq!(out.bytes_image_read, 60_000);
        assert_eq!((out.ended, out.batches_done), (Some(Ended::Done), 2));
        let mib = 1 << 20;
        let batches = [vec![(0, 3 * mib)], vec![(5 * mib, mib)]];
        let mut asked = 0;
        let mut out = ImageOutcome::default();
        read(
            &f,
            &batches,
            mib,
            &mut Asked::default(),
            &mut || {
                asked += 1;
                (asked > 2).then_some(Ended::FirefoxExited)
            },
            &mut out,
        );
        assert_eq!(out.bytes_image_read, 2 * mib);
        assert_eq!((out.batches, out.batches_done), (2, 0));
        assert_eq!(out.ended, Some(Ended::FirefoxExited));
    }
}
