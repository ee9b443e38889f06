//! The prefetch of a compressed install (firefox/compressed/): the plan's ranges of the
//! mount's files, mapped to the squashfs image's data blocks (rdsquashfs `--stat`), merged and
//! read raw from the image in image order. Reading the image fills the page cache the loop
//! device reads through, so the mount's decompressor then finds its input cached, and nothing
//! waits behind the prefetch for the mount's one decompressor.
//!
//! The plan's files outside the mount (system libraries, the profile) and a file's tail kept in
//! a fragment block are not read: counted, and left to the start.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt as _;
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::run::Ended;
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
    pub elapsed_ms: u64,
    pub ended: Option<Ended>,
    /// Files that could not be mapped, in English (at most [`MAX_ERRORS`]).
    pub errors: Vec<String>,
}

const MAX_ERRORS: usize = 20;

/// The plan's reads of files under `mount_point`, as merged image ranges in image order (gaps up
/// to `gap` bytes read through), with what was left out counted into `out`. `blocks_of` maps a
/// path inside the image to its blocks (rdsquashfs in production, a fake in tests).
pub fn map_plan(
    plan: &PrefetchPlan,
    mount_point: &Path,
    block_size: u64,
    gap: u64,
    blocks_of: &mut dyn FnMut(&Path) -> io::Result<FileBlocks>,
    out: &mut ImageOutcome,
) -> Vec<(u64, u64)> {
    let mut per_file: Vec<Option<Option<FileBlocks>>> = vec![None; plan.files.len()];
    let mut ranges = Vec::new();
    for read in plan.batches.iter().flatten() {
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
        ranges.extend(image);
    }
    let merged = merge(ranges, gap);
    out.bytes_image_planned = merged.iter().map(|r| r.1).sum();
    merged
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

/// Read `ranges` of `image` with plain reads of at most `chunk` bytes, in order, asking `stop`
/// before each; returns the bytes read.
pub fn read(
    image: &File,
    ranges: &[(u64, u64)],
    chunk: u64,
    stop: &mut dyn FnMut() -> Option<Ended>,
    out: &mut ImageOutcome,
) {
    let begun = Instant::now();
    let chunk = chunk.clamp(4096, 16 << 20);
    let mut buf = vec![0u8; usize::try_from(chunk).unwrap_or(1 << 20)];
    'ranges: for &(offset, len) in ranges {
        let mut at = offset;
        while at < offset + len {
            if let Some(why) = stop() {
                out.ended = Some(why);
                break 'ranges;
            }
            let n = usize::try_from((offset + len - at).min(chunk)).unwrap_or(buf.len());
            match image.read_at(&mut buf[..n], at) {
                Ok(0) => break,
                Ok(got) => {
                    out.bytes_image_read += got as u64;
                    at += got as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    if out.errors.len() < MAX_ERRORS {
                        out.errors.push(format!("reading the image at {at}: {e}"));
                    }
                    break;
                }
            }
        }
    }
    out.elapsed_ms = u64::try_from(begun.elapsed().as_millis()).unwrap_or(u64::MAX);
    if out.ended.is_none() {
        out.ended = Some(Ended::Done);
    }
}

/// Map `plan` through the image of `c` (checked again as it is opened: the image read is the one
/// mounted) and read the ranges, asking `stop` before each read.
pub fn prefetch(
    plan: &PrefetchPlan,
    c: &Compressed,
    gap: u64,
    chunk: u64,
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
    let ranges = map_plan(
        plan,
        &c.mount_point,
        u64::from(sb.block_size),
        gap,
        &mut blocks_of,
        &mut out,
    );
    read(&image, &ranges, chunk, stop, &mut out);
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
        let ranges = map_plan(&p, Path::new("/mnt"), 8192, 0, &mut blocks_of, &mut out);
        // Block 1 (5300..5700) then block 0 (5000..5300) merge into one range in image order.
        assert_eq!(ranges, [(5_000, 700)]);
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
    fn reading_stops_when_told_and_counts_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("img");
        std::fs::write(&path, vec![7u8; 100_000]).unwrap();
        let f = File::open(&path).unwrap();
        let mut out = ImageOutcome::default();
        read(
            &f,
            &[(0, 10_000), (50_000, 60_000)],
            4096,
            &mut || None,
            &mut out,
        );
        // The second range runs past the end: 50,000 bytes are there.
        assert_eq!(out.bytes_image_read, 60_000);
        assert_eq!(out.ended, Some(Ended::Done));
        let mut asked = 0;
        let mut out = ImageOutcome::default();
        read(
            &f,
            &[(0, 100_000)],
            4096,
            &mut || {
                asked += 1;
                (asked > 2).then_some(Ended::FirefoxExited)
            },
            &mut out,
        );
        assert_eq!(out.bytes_image_read, 8192);
        assert_eq!(out.ended, Some(Ended::FirefoxExited));
    }
}
