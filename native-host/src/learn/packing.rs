//! What packing would save on this machine (issue 41): the bytes this machine's own traced
//! start needs from the install's files, against the bytes it would need from a compressed
//! image of them. No timing: bytes, from the traced plan of this build.
//!
//! Three ways to the compressed figure, best first:
//! - the install runs from a compressed mount whose image this user may read (a packed Firefox,
//!   a readable squashfs): the plan mapped through the image's own blocks (rdsquashfs, as the
//!   prefetch maps it, learn/prefetch/image/map.rs), gaps not counted;
//! - the install is packed and the image is current (`pack`): the same, through that image;
//! - otherwise an estimate: every block of `block_size` a planned read touches is read from the
//!   install file and compressed here with LZ4 (squashfs's `lz4`, which mksquashfs stores as is
//!   when it does not shrink), the tail block alone (as `-no-fragments` stores it). LZ4 because it
//!   is already in the host and fast (a second of CPU for a start's 160 MB); zstd (`pack`'s
//!   default) needs fewer bytes still (docs/benchmarks.md, "Packing formats"), so the estimate is
//!   an upper bound on what `pack` would need.
//!
//! On a compressed mount whose image this user may not read (a Snap), the compressed figure is
//! missing (`bytes_compressed` null, `left_off` says why), never guessed.
//!
//! The result is kept in the state folder (`packing.json`) under a key of the plan it came from,
//! so the page's status reads the install's blocks once per plan, not at every look; the blocks
//! are read with `O_DIRECT` where the filesystem has it, so that looking caches nothing of Firefox
//! (a start right after an evict stays cold).

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::firefox::compressed::{self, Compressed, LeftOff, Verdict};
use crate::firefox::packed::Packed;
use crate::learn::prefetch::{self, image, PrefetchPlan, Source};
use crate::state::StateDir;

/// The block size of the estimate (`pack`'s and a Snap's).
pub const BLOCK_SIZE: u32 = 128 * 1024;
/// The compressor of the estimate.
pub const ESTIMATE_COMPRESSOR: &str = "lz4";
const RECORD: &str = "packing.json";
const MAX_RECORD_BYTES: u64 = 64 * 1024;

/// Where the compressed figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The blocks compressed here ([`ESTIMATE_COMPRESSOR`]): what an image of that format needs.
    Estimate,
    /// A real image's own blocks (rdsquashfs): the install's compressed mount, or `pack`'s image.
    Image,
}

/// What this machine's traced start needs, plain and compressed (`desktop`'s `packing`,
/// `pack --status --json`'s `saving`; docs/PROTOCOL.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Saving {
    pub basis: Basis,
    /// mksquashfs's name of the compressor the figure is of (`lz4` for the estimate).
    pub compressor: String,
    pub block_size: u32,
    /// The build the traces are of (the install's now).
    pub build_id: Option<String>,
    pub traces: usize,
    /// Files of the install whose blocks were counted.
    pub files: u64,
    /// Bytes of the install's files the start needs (the traced plan's reads of them).
    pub bytes_plain: u64,
    /// The same, as whole blocks of `block_size` uncompressed (what an image decompresses);
    /// `None` where a real image was mapped.
    pub bytes_blocks: Option<u64>,
    /// Image bytes those blocks take compressed; `None` where it cannot be known (`left_off`).
    pub bytes_compressed: Option<u64>,
    /// Planned bytes of the install's files that could not be counted (a file replaced since the
    /// trace, a tail in a fragment block, a file the image does not hold).
    pub bytes_unmapped: u64,
    /// Planned bytes outside the install (system libraries, the profile): the same either way.
    pub bytes_outside: u64,
    /// Why `bytes_compressed` is missing (the install's image is not readable, or not mapped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_off: Option<LeftOff>,
}

impl Saving {
    /// `bytes_compressed / bytes_plain`, when both are known and the plain is not 0.
    #[must_use]
    pub fn ratio(&self) -> Option<f64> {
        let c = self.bytes_compressed?;
        (self.bytes_plain > 0).then(|| c as f64 / self.bytes_plain as f64)
    }

    /// The install's share of the start's planned bytes (the rest: system libraries, the profile).
    #[must_use]
    pub fn install_share(&self) -> Option<f64> {
        let all = self.bytes_plain + self.bytes_unmapped + self.bytes_outside;
        (all > 0).then(|| (self.bytes_plain + self.bytes_unmapped) as f64 / all as f64)
    }
}

/// The estimate: the plan's reads of files under `root` counted as whole blocks, each read with
/// `read_block(file index, offset, len)` and sized compressed by `compress` (stored as is when it
/// does not shrink, nothing for a block of zeros, as mksquashfs does). A file whose block cannot
/// be read has its planned bytes counted as unmapped. Reads outside `root` count as outside.
pub fn estimate(
    plan: &PrefetchPlan,
    root: &Path,
    block_size: u64,
    read_block: &mut dyn FnMut(usize, u64, u64) -> io::Result<Vec<u8>>,
    compress: &mut dyn FnMut(&[u8]) -> u64,
) -> (u64, u64, u64, u64, u64, u64) {
    use std::collections::{BTreeMap, BTreeSet};
    let mut blocks: BTreeMap<usize, BTreeSet<u64>> = BTreeMap::new();
    let mut planned: BTreeMap<usize, u64> = BTreeMap::new();
    let mut outside = 0;
    for read in plan.batches.iter().flatten() {
        if !plan.files[read.file].starts_with(root) {
            outside += read.len;
            continue;
        }
        *planned.entry(read.file).or_default() += read.len;
        let size = plan.identities[read.file].1;
        let end = (read.offset + read.len).min(size);
        if read.len == 0 || read.offset >= end {
            continue;
        }
        let set = blocks.entry(read.file).or_default();
        set.extend(read.offset / block_size..=(end - 1) / block_size);
    }
    let (mut files, mut plain, mut whole, mut packed, mut unmapped) = (0, 0, 0, 0, 0);
    for (file, bytes) in planned {
        let size = plan.identities[file].1;
        let mut file_whole = 0;
        let mut file_packed = 0;
        let mut ok = true;
        for &b in blocks.get(&file).into_iter().flatten() {
            let offset = b * block_size;
            let len = block_size.min(size - offset);
            match read_block(file, offset, len) {
                Ok(data) if data.len() as u64 == len => {
                    file_whole += len;
                    file_packed += if data.iter().all(|&x| x == 0) {
                        0
                    } else {
                        compress(&data).min(len)
                    };
                }
                _ => {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            files += 1;
            plain += bytes;
            whole += file_whole;
            packed += file_packed;
        } else {
            unmapped += bytes;
        }
    }
    (files, plain, whole, packed, unmapped, outside)
}

/// LZ4's block size of `data` (squashfs's `lz4` compressor, without `-Xhc`).
#[must_use]
pub fn lz4_size(data: &[u8]) -> u64 {
    lz4_flex::block::compress(data).len() as u64
}

/// Read `len` bytes at `offset` of `path`, the file still as planned (`identity`: inode, size),
/// past the page cache where the filesystem allows (`O_DIRECT`), else plainly.
fn read_block(path: &Path, identity: (u64, u64), offset: u64, len: u64) -> io::Result<Vec<u8>> {
    const ALIGN: usize = 4096;
    let open = |flags: i32| {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | flags)
            .open(path)
    };
    let same = |f: &File| {
        f.metadata()
            .is_ok_and(|m| m.is_file() && (m.ino(), m.len()) == identity)
    };
    let want = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    if offset % ALIGN as u64 == 0 {
        if let Ok(f) = open(libc::O_DIRECT) {
            if !same(&f) {
                return Err(io::Error::other("replaced since the trace"));
            }
            let span = want.div_ceil(ALIGN) * ALIGN;
            let mut buf = vec![0u8; span + ALIGN];
            let start = buf.as_ptr().align_offset(ALIGN);
            let aligned = &mut buf[start..start + span];
            let mut got = 0;
            while got < want {
                match f.read_at(&mut aligned[got..], offset + got as u64) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    // EINVAL: this filesystem has no direct I/O after all; read plainly.
                    Err(_) => {
                        got = usize::MAX;
                        break;
                    }
                }
            }
            if got != usize::MAX {
                return Ok(aligned[..got.min(want)].to_vec());
            }
        }
    }
    let f = open(0)?;
    if !same(&f) {
        return Err(io::Error::other("replaced since the trace"));
    }
    let mut buf = vec![0u8; want];
    f.read_exact_at(&mut buf, offset)?;
    Ok(buf)
}

/// Map `plan`'s reads under `root` through a real squashfs `image` (gaps not read through).
fn through_image(
    plan: &PrefetchPlan,
    root: &Path,
    image_path: &Path,
    block_size: u32,
) -> image::ImageOutcome {
    let mut out = image::ImageOutcome::default();
    let mut blocks_of = |rel: &Path| compressed::file_blocks(image_path, rel);
    image::map_plan(
        plan,
        root,
        u64::from(block_size),
        0,
        &mut blocks_of,
        &mut out,
    );
    out
}

/// The image's block size and compressor (its superblock), read as the prefetch reads it.
fn image_format(c: &Compressed) -> Option<(u32, String)> {
    let file = compressed::open_image(c.image.as_deref()?, &c.mount_point, c.format).ok()?;
    let mut head = [0u8; compressed::SUPERBLOCK_BYTES];
    file.read_exact_at(&mut head, 0).ok()?;
    let sb = compressed::Superblock::parse(&head)?;
    Some((sb.block_size, sb.compressor_name().to_owned()))
}

/// What the traced start of `install_dir` (canonical) needs plain and compressed, or `None`
/// without a traced plan of the install's build now. `on_mount`: the compressed mount the
/// install is on, if any; `packed`: `pack`'s record, used where its image is current.
pub fn saving(
    state: &StateDir,
    install_dir: &Path,
    on_mount: Option<&Compressed>,
    packed: Option<&Packed>,
) -> Option<Saving> {
    let launched = crate::learn::plan::profile::Launched::Default;
    let (plan, status) =
        prefetch::choose(install_dir, state, prefetch::Knobs::default(), &launched).ok()?;
    let plan =
        plan.filter(|_| status.source == Some(Source::Trace) && status.fallback.is_none())?;
    let reads: usize = plan.batches.iter().map(Vec::len).sum();
    let base = |basis, compressor: &str, block_size| Saving {
        basis,
        compressor: compressor.to_owned(),
        block_size,
        build_id: status.build_id.clone(),
        traces: status.traces,
        files: 0,
        bytes_plain: 0,
        bytes_blocks: None,
        bytes_compressed: None,
        bytes_unmapped: 0,
        bytes_outside: 0,
        left_off: None,
    };
    let from_image = |root: &Path, image_path: &Path, compressor: &str, block_size| {
        let out = through_image(&plan, root, image_path, block_size);
        Saving {
            files: out.files_mapped,
            bytes_plain: out.bytes_files_mapped,
            bytes_compressed: Some(out.bytes_image_planned),
            bytes_unmapped: out.bytes_unmapped,
            bytes_outside: out.bytes_outside,
            ..base(Basis::Image, compressor, block_size)
        }
    };
    let key = |what: &str| {
        format!(
            "{what}|{}|{}|{}|{}|{}",
            status.build_id.as_deref().unwrap_or(""),
            status.traces,
            plan.bytes_planned,
            plan.files.len(),
            reads
        )
    };
    if let Some(c) = on_mount {
        let root = c.mount_point.as_path();
        if c.verdict == Verdict::ImageRanges {
            if let Some((bs, comp)) = image_format(c) {
                let image_path = c.image.as_deref()?;
                let ino = std::fs::metadata(image_path).map(|m| m.ino()).unwrap_or(0);
                return cached(state, &key(&format!("mount:{ino}")), || {
                    from_image(root, image_path, &comp, bs)
                });
            }
        }
        // The image is not read here: the plain bytes alone, the compressed ones missing.
        let outside: u64 = plan
            .batches
            .iter()
            .flatten()
            .filter(|r| !plan.files[r.file].starts_with(root))
            .map(|r| r.len)
            .sum();
        let plain: u64 = plan.batches.iter().flatten().map(|r| r.len).sum::<u64>() - outside;
        return Some(Saving {
            bytes_plain: plain,
            bytes_outside: outside,
            left_off: Some(c.left_off.unwrap_or(LeftOff::NoImage)),
            ..base(Basis::Image, "unknown", 0)
        });
    }
    if let Some(p) = packed.filter(|p| crate::learn::pack::check(p, install_dir).is_ok()) {
        return cached(state, &key(&format!("pack:{}", p.image_ino)), || {
            from_image(install_dir, &p.image, &p.compressor, p.block_size)
        });
    }
    cached(
        state,
        &key(&format!("estimate:{ESTIMATE_COMPRESSOR}:{BLOCK_SIZE}")),
        || {
            let mut read = |file: usize, offset, len| {
                read_block(&plan.files[file], plan.identities[file], offset, len)
            };
            let (files, plain, whole, packed_bytes, unmapped, outside) = estimate(
                &plan,
                install_dir,
                u64::from(BLOCK_SIZE),
                &mut read,
                &mut lz4_size,
            );
            Saving {
                files,
                bytes_plain: plain,
                bytes_blocks: Some(whole),
                bytes_compressed: Some(packed_bytes),
                bytes_unmapped: unmapped,
                bytes_outside: outside,
                ..base(Basis::Estimate, ESTIMATE_COMPRESSOR, BLOCK_SIZE)
            }
        },
    )
}

#[derive(Serialize, Deserialize)]
struct Record {
    key: String,
    saving: Saving,
}

/// The saving kept under `key`, else made by `make` and kept.
fn cached(state: &StateDir, key: &str, make: impl FnOnce() -> Saving) -> Option<Saving> {
    let kept = state
        .read(RECORD, MAX_RECORD_BYTES)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice::<Record>(&b).ok())
        .filter(|r| r.key == key);
    if let Some(r) = kept {
        return Some(r.saving);
    }
    let saving = make();
    let record = Record {
        key: key.to_owned(),
        saving,
    };
    if let Ok(bytes) = serde_json::to_vec_pretty(&record) {
        let _ = state.write(RECORD, &bytes);
    }
    Some(record.saving)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::plan::Read;
    use crate::os::beneath::Folders;
    use std::path::PathBuf;

    fn plan(files: &[(&str, u64)], reads: Vec<(usize, u64, u64)>) -> PrefetchPlan {
        PrefetchPlan {
            files: files.iter().map(|f| PathBuf::from(f.0)).collect(),
            identities: files.iter().map(|f| (1, f.1)).collect(),
            profile_mtimes: vec![None; files.len()],
            batches: vec![reads
                .into_iter()
                .map(|(file, offset, len)| Read {
                    file,
                    offset,
                    len,
                    physical: None,
                })
                .collect()],
            bytes_planned: 0,
            profile: None,
            folders: Folders::default(),
        }
    }

    #[test]
    fn the_estimate_counts_whole_blocks_once_each_compressed_and_leaves_the_rest_apart() {
        let p = plan(
            &[
                ("/ff/libxul.so", 300_000),
                ("/usr/lib/libc.so.6", 2_000_000),
                ("/ff/omni.ja", 5_000),
                ("/ff/gone", 9_000),
                ("/ff/zeros", 1_000),
            ],
            vec![
                // libxul: blocks 0 and 2 (block 0 twice), the tail block is 37,856 bytes.
                (0, 0, 4096),
                (0, 8192, 4096),
                (0, 262_144, 8192),
                (1, 0, 4096),
                (2, 0, 4096),
                (3, 0, 4096),
                (4, 0, 1000),
            ],
        );
        let mut asked = Vec::new();
        let mut read = |file: usize, offset: u64, len: u64| {
            asked.push((file, offset, len));
            match file {
                3 => Err(io::Error::other("replaced since the trace")),
                4 => Ok(vec![0u8; len as usize]),
                _ => Ok(vec![1u8; len as usize]),
            }
        };
        // A compressor that halves every block, and one that never shrinks (stored as is).
        let (files, plain, whole, packed, unmapped, outside) =
            estimate(&p, Path::new("/ff"), 131_072, &mut read, &mut |d| {
                d.len() as u64 / 2
            });
        assert_eq!(
            asked,
            [
                (0, 0, 131_072),
                (0, 262_144, 37_856),
                (2, 0, 5_000),
                (3, 0, 9_000),
                (4, 0, 1_000)
            ]
        );
        assert_eq!(files, 3);
        assert_eq!(plain, 4096 * 2 + 8192 + 4096 + 1000);
        assert_eq!(whole, 131_072 + 37_856 + 5_000 + 1_000);
        // Zeros are stored as nothing (a sparse block).
        assert_eq!(packed, (131_072 + 37_856 + 5_000) / 2);
        assert_eq!(unmapped, 4096);
        assert_eq!(outside, 4096);
        let (_, _, _, stored, _, _) = estimate(
            &p,
            Path::new("/ff"),
            131_072,
            &mut |_, _, len| Ok(vec![7u8; len as usize]),
            &mut |d| d.len() as u64 + 10,
        );
        assert_eq!(
            stored,
            131_072 + 37_856 + 5_000 + 9_000 + 1_000,
            "never more than the block"
        );
    }

    #[test]
    fn lz4_sizes_what_compresses_and_what_does_not() {
        assert!(lz4_size(&vec![b'a'; 131_072]) < 1_000);
        // Bytes that do not compress come out a little larger; the estimate stores them as is.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let noise: Vec<u8> = (0..131_072)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        assert!(lz4_size(&noise) >= 131_072);
    }

    #[test]
    fn ratio_and_share_are_missing_rather_than_zero() {
        let s = Saving {
            basis: Basis::Image,
            compressor: "unknown".into(),
            block_size: 0,
            build_id: None,
            traces: 1,
            files: 0,
            bytes_plain: 300,
            bytes_blocks: None,
            bytes_compressed: None,
            bytes_unmapped: 0,
            bytes_outside: 100,
            left_off: Some(LeftOff::ImageNotReadable),
        };
        assert_eq!(s.ratio(), None);
        assert_eq!(s.install_share(), Some(0.75));
        let known = Saving {
            bytes_compressed: Some(150),
            ..s.clone()
        };
        assert_eq!(known.ratio(), Some(0.5));
        let empty = Saving {
            bytes_plain: 0,
            bytes_outside: 0,
            ..known
        };
        assert_eq!((empty.ratio(), empty.install_share()), (None, None));
    }

    #[test]
    fn a_block_is_read_past_the_cache_and_only_from_the_file_as_planned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        let id = (meta.ino(), meta.len());
        assert_eq!(
            read_block(&path, id, 262_144, 37_856).unwrap(),
            &data[262_144..]
        );
        assert_eq!(read_block(&path, id, 0, 10).unwrap(), &data[..10]);
        assert!(
            read_block(&path, (id.0, id.1 + 1), 0, 10).is_err(),
            "another size: replaced"
        );
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(
            read_block(&link, id, 0, 10).is_err(),
            "a symlink is not followed"
        );
    }
}
