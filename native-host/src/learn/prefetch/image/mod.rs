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
//!
//! The mapping is pure (map.rs: the plan to batches of image ranges, through a `blocks_of` given
//! in); here is what reads: the image, rdsquashfs, the state folder.

use std::fs::File;
use std::os::unix::fs::FileExt as _;
use std::path::Path;
use std::time::Instant;

use super::run::{Ended, Io, KernelIo};
use super::PrefetchPlan;
use crate::firefox::compressed::{self, Compressed};

mod map;
mod outcome;
mod warm;
pub use map::{map_plan, merge, Mapped, Warm};
pub use outcome::ImageOutcome;
use outcome::MAX_ERRORS;

/// Read `batches` of ranges of `image` in order, asking `stop` before each read of at most
/// `QUEUE_SLICE` bytes, with up to `ahead` bytes queued ([`Io::queue`], the read waited for
/// included) so that the disk never idles between reads and what comes next, across a batch's
/// end too, is on its way; `progress` is told after each read the batch and the image offset
/// it read up to (a batch is read in image order: all of its ranges before that offset are in).
pub fn read(
    image: &File,
    batches: &[Vec<(u64, u64)>],
    ahead: u64,
    io: &mut dyn Io,
    stop: &mut dyn FnMut() -> Option<Ended>,
    progress: &mut dyn FnMut(usize, u64),
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
            Ok(got) => {
                out.bytes_image_read += got;
                progress(batch, offset + len);
            }
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
/// each read; with `warm`, on a FUSE mount, the plan's blocks read through the mount behind them
/// ([`warm_ahead`]).
pub fn prefetch(
    plan: &PrefetchPlan,
    c: &Compressed,
    gap: u64,
    ahead: u64,
    warm: bool,
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
    let mapped = map_plan(
        plan,
        &c.mount_point,
        u64::from(sb.block_size),
        gap,
        &mut blocks_of,
        &mut out,
    );
    // Read what the batches say, no more: no kernel readahead around it (as run.rs).
    let _ = crate::os::sys::fadvise(&image, 0, 0, crate::os::sys::Advice::Random);
    let mut io = KernelIo::new(false);
    // On a FUSE mount, decompress ahead behind the image read (warm.rs); never on the kernel's.
    let warmer = if warm && warm_ahead(c.format) {
        let started = warm::start(
            plan.folders.clone(),
            plan.files.clone(),
            plan.identities.clone(),
            mapped.warm,
        );
        started
            .map_err(|e| {
                out.errors
                    .push(format!("no warming through the mount: {e}"));
            })
            .ok()
    } else {
        out.bytes_warm_planned = 0;
        None
    };
    let Some(warmer) = warmer else {
        read(
            &image,
            &mapped.image,
            ahead,
            &mut io,
            stop,
            &mut |_, _| {},
            &mut out,
        );
        return out;
    };
    let begun = Instant::now();
    let sender = warmer.done;
    read(
        &image,
        &mapped.image,
        ahead,
        &mut io,
        stop,
        &mut |b, at| {
            let _ = sender.send((b, at));
        },
        &mut out,
    );
    drop(sender);
    if out.ended != Some(Ended::Done) {
        warmer
            .stop
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
    // The warming ends after the image read: the rule that stops a prefetch stops it too.
    while !warmer.thread.is_finished() {
        if let Some(why) = stop() {
            warmer
                .stop
                .store(true, std::sync::atomic::Ordering::Relaxed);
            if out.ended == Some(Ended::Done) {
                out.warm_ended = Some(why);
            }
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    match warmer.thread.join() {
        Ok(w) => {
            out.bytes_warmed = w.bytes;
            for e in w.errors {
                if out.errors.len() < MAX_ERRORS {
                    out.errors.push(e);
                }
            }
        }
        Err(_) => out
            .errors
            .push("the warming through the mount failed".to_owned()),
    }
    out.warm_ms = Some(u64::try_from(begun.elapsed().as_millis()).unwrap_or(u64::MAX));
    out
}

/// Whether the prefetch of an install on a mount of `format` reads the plan's file ranges
/// through the mount behind the image read: only a FUSE mount, whose daemon otherwise idles
/// while the image comes in; the kernel's mount decompresses on one decompressor that a read
/// ahead of Firefox would hold (issue 41: the start was slower).
#[must_use]
pub fn warm_ahead(format: compressed::Format) -> bool {
    matches!(format, compressed::Format::Squashfuse)
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
    // Not warmed: the decompression ahead was measured for a launch's prefetch only (beside the
    // start); a preload keeps reading the image alone.
    Ok(prefetch(
        &plan,
        c,
        super::GAP,
        super::AHEAD,
        false,
        &mut || None,
    ))
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
    use std::io;

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
        let mut said = Vec::new();
        read(
            &f,
            &batches,
            mib + mib / 2,
            &mut io,
            &mut || None,
            &mut |b, at| said.push((b, at)),
            &mut out,
        );
        assert_eq!(
            said,
            [(0, 11 * mib), (0, 11 * mib + mib / 2), (1, mib)],
            "after each read: the batch and how far it is read"
        );
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
            &mut |_, _| {},
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
            &mut |_, _| {},
            &mut out,
        );
        assert_eq!(out.bytes_image_read, 2 * mib);
        assert_eq!((out.batches, out.batches_done), (2, 0));
        assert_eq!(out.ended, Some(Ended::FirefoxExited));
    }
}
