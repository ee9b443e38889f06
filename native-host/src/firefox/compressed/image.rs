//! The image behind a compressed mount, checked before anything reads it (a regular file reached
//! without a symlink, its squashfs superblock the mounted filesystem's), and where a file's
//! bytes lie in it (rdsquashfs `--stat`): the map the image prefetch and what packing would
//! save read through (learn/prefetch/image/, learn/packing.rs).

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

/// The compressed filesystems this module knows, by mountinfo's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// The kernel's squashfs (a Snap; `mount -o loop`).
    Squashfs,
    /// The kernel's EROFS (Android's system images).
    Erofs,
    /// squashfuse (`fuse.squashfuse`, `fuse.squashfuse_ll`): a squashfs image mounted by a user.
    Squashfuse,
    /// erofsfuse.
    Erofsfuse,
}

impl Format {
    /// The format of a mountinfo filesystem type, if compressed.
    #[must_use]
    pub fn of_fs_type(fs_type: &str) -> Option<Format> {
        match fs_type {
            "squashfs" => Some(Format::Squashfs),
            "erofs" => Some(Format::Erofs),
            "fuse.squashfuse" | "fuse.squashfuse_ll" | "squashfuse" => Some(Format::Squashfuse),
            "fuse.erofsfuse" | "erofsfuse" => Some(Format::Erofsfuse),
            _ => None,
        }
    }

    /// Whether the image is squashfs (its blocks can be mapped with rdsquashfs).
    #[must_use]
    pub fn is_squashfs(self) -> bool {
        matches!(self, Format::Squashfs | Format::Squashfuse)
    }

    /// In a sentence's words.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Format::Squashfs => "squashfs",
            Format::Erofs => "EROFS",
            Format::Squashfuse => "squashfuse (squashfs)",
            Format::Erofsfuse => "erofsfuse (EROFS)",
        }
    }
}

/// Whether this user may read the image, or why it is not used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "code")]
pub enum Access {
    /// Readable, a regular file, the filesystem that is mounted.
    Readable,
    /// The kernel refuses this user (a Snap's image is 0600 root).
    NotReadable,
    /// No image is known for this mount (a FUSE mount names none; a deleted backing file).
    Unknown,
    /// Something is at the image's path, but not the mounted image: refused (`why` in English).
    Refused { why: String },
}

/// Open the image for reading, refusing what is no image: a symlink as the last component, a
/// FIFO or device (opened non-blocking so a FIFO cannot hang the host), and, for squashfs, a
/// file whose superblock is not the mounted filesystem's.
pub fn open_image(image: &Path, mount_point: &Path, format: Format) -> Result<File, Access> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(image)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EACCES | libc::EPERM) => Access::NotReadable,
            Some(libc::ELOOP) => Access::Refused {
                why: format!(
                    "{} is a symbolic link, not the image the kernel mounted",
                    image.display()
                ),
            },
            Some(libc::ENOENT) => Access::Unknown,
            _ => Access::Refused {
                why: format!("{}: {e}", image.display()),
            },
        })?;
    let meta = file.metadata().map_err(|e| Access::Refused {
        why: format!("{}: {e}", image.display()),
    })?;
    if !meta.file_type().is_file() {
        return Err(Access::Refused {
            why: format!(
                "{} is not a regular file (a FIFO, a device or a folder)",
                image.display()
            ),
        });
    }
    if format.is_squashfs() {
        let head = read_head(&file, image).map_err(|e| Access::Refused {
            why: format!("{}: no squashfs superblock ({e})", image.display()),
        })?;
        let sb = Superblock::parse(&head).ok_or_else(|| Access::Refused {
            why: format!("{} is not a squashfs image", image.display()),
        })?;
        let vfs = rustix::fs::statvfs(mount_point).map_err(|e| Access::Refused {
            why: format!("statvfs {}: {e}", mount_point.display()),
        })?;
        if !sb.matches(vfs.f_bsize, vfs.f_blocks, vfs.f_files) {
            return Err(Access::Refused {
                why: format!(
                    "{} is not the filesystem mounted on {} (its superblock differs: planted or replaced)",
                    image.display(),
                    mount_point.display()
                ),
            });
        }
    }
    Ok(file)
}

/// The image's first bytes, read past the page cache (`O_DIRECT`) where the filesystem allows,
/// so that looking at an image (the page's install line, `residency`) caches none of it: a
/// residency report right after an evict must not find the image's first pages brought back by
/// the look itself. Falls back to a plain read (tmpfs has no direct I/O).
fn read_head(file: &File, image: &Path) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt as _;
    const ALIGN: usize = 4096;
    let direct = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(image)
        .ok()
        // The same file as the one checked (not one swapped in between the two opens).
        .filter(|d| {
            let (a, b) = (d.metadata().ok(), file.metadata().ok());
            a.zip(b).is_some_and(|(a, b)| {
                use std::os::unix::fs::MetadataExt as _;
                a.dev() == b.dev() && a.ino() == b.ino()
            })
        });
    if let Some(direct) = direct {
        let mut buf = vec![0u8; 2 * ALIGN];
        let start = buf.as_ptr().align_offset(ALIGN);
        let aligned = &mut buf[start..start + ALIGN];
        if let Ok(n) = direct.read_at(aligned, 0) {
            if n >= SUPERBLOCK_BYTES {
                return Ok(aligned[..SUPERBLOCK_BYTES].to_vec());
            }
        }
    }
    let mut head = vec![0u8; SUPERBLOCK_BYTES];
    file.read_exact_at(&mut head, 0)?;
    Ok(head)
}

pub(super) fn check_image(image: &Path, mount_point: &Path, format: Format) -> Access {
    match open_image(image, mount_point, format) {
        Ok(_) => Access::Readable,
        Err(access) => access,
    }
}

/// The squashfs superblock's size.
pub const SUPERBLOCK_BYTES: usize = 96;
const SQUASHFS_MAGIC: u32 = 0x7371_7368;

/// The fields of a squashfs 4.0 superblock that identify it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Superblock {
    pub inodes: u32,
    pub mkfs_time: u32,
    pub block_size: u32,
    pub compressor: u16,
    pub block_log: u16,
    pub bytes_used: u64,
}

impl Superblock {
    /// Parse the first 96 bytes of an image (little-endian squashfs 4.0), or `None`.
    #[must_use]
    pub fn parse(b: &[u8]) -> Option<Superblock> {
        let u32_at = |o: usize| Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?));
        let u16_at = |o: usize| Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?));
        let u64_at = |o: usize| Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?));
        if u32_at(0)? != SQUASHFS_MAGIC || u16_at(28)? != 4 {
            return None;
        }
        let sb = Superblock {
            inodes: u32_at(4)?,
            mkfs_time: u32_at(8)?,
            block_size: u32_at(12)?,
            compressor: u16_at(20)?,
            block_log: u16_at(22)?,
            bytes_used: u64_at(40)?,
        };
        (sb.block_log < 32 && sb.block_size == 1 << sb.block_log && sb.bytes_used > 0).then_some(sb)
    }

    /// Whether a mount's `statvfs` (block size, blocks, files) is this filesystem's, as the
    /// kernel's `squashfs_statfs` reports it.
    #[must_use]
    pub fn matches(&self, f_bsize: u64, f_blocks: u64, f_files: u64) -> bool {
        f_bsize == u64::from(self.block_size)
            && f_blocks == ((self.bytes_used - 1) >> self.block_log) + 1
            && f_files == u64::from(self.inodes)
    }

    /// The compressor's name (mksquashfs's `-comp`).
    #[must_use]
    pub fn compressor_name(&self) -> &'static str {
        match self.compressor {
            1 => "gzip",
            2 => "lzma",
            3 => "lzo",
            4 => "xz",
            5 => "lz4",
            6 => "zstd",
            _ => "unknown",
        }
    }
}

/// Where a file's data blocks lie in a squashfs image (rdsquashfs `--stat`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBlocks {
    pub file_size: u64,
    pub blocks_start: u64,
    /// On-disk size of each data block (0 = a sparse block: nothing stored).
    pub blocks: Vec<u64>,
    /// The file's tail is in a fragment block (not mapped here).
    pub fragment: bool,
}

/// Parse rdsquashfs's `--stat` text of one file, or `None` if it is not a regular file's.
#[must_use]
pub fn parse_stat(text: &str) -> Option<FileBlocks> {
    let mut file_size = None;
    let mut blocks_start = None;
    let mut fragment = false;
    let mut blocks = Vec::new();
    let mut is_file = false;
    for line in text.lines() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("Inode type:") {
            is_file = v.trim() == "file";
        } else if let Some(v) = line.strip_prefix("File size:") {
            file_size = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("Blocks start:") {
            blocks_start = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("Fragment index:") {
            fragment = !v.trim().eq_ignore_ascii_case("0xFFFFFFFF");
        } else if let Some(rest) = line.strip_prefix("Block #") {
            let size = rest.split_once("size:")?.1.split_whitespace().next()?;
            blocks.push(size.parse().ok()?);
        }
    }
    is_file.then_some(())?;
    Some(FileBlocks {
        file_size: file_size?,
        blocks_start: blocks_start?,
        blocks,
        fragment,
    })
}

impl FileBlocks {
    /// The image byte ranges `(offset, len)` holding the file's bytes `[offset, offset+len)`,
    /// whole compressed blocks, in image order; and the bytes of the range in the fragment tail
    /// (not mapped).
    #[must_use]
    pub fn image_ranges(&self, offset: u64, len: u64, block_size: u64) -> (Vec<(u64, u64)>, u64) {
        let end = (offset + len).min(self.file_size);
        if offset >= end || block_size == 0 {
            return (Vec::new(), 0);
        }
        let mapped_end = (self.blocks.len() as u64 * block_size).min(self.file_size);
        let unmapped = end.saturating_sub(offset.max(mapped_end));
        let mut out: Vec<(u64, u64)> = Vec::new();
        if offset < mapped_end {
            let first = offset / block_size;
            let last = (end.min(mapped_end) - 1) / block_size;
            let mut at = self.blocks_start + self.blocks[..first as usize].iter().sum::<u64>();
            for &size in &self.blocks[first as usize..=last as usize] {
                if size > 0 {
                    match out.last_mut() {
                        Some((o, l)) if *o + *l == at => *l += size,
                        _ => out.push((at, size)),
                    }
                }
                at += size;
            }
        }
        (out, unmapped)
    }
}

/// The blocks of `rel` (a path inside the image) from `rdsquashfs --stat`, run as this user on
/// an image already checked by [`open_image`].
pub fn file_blocks(image: &Path, rel: &Path) -> io::Result<FileBlocks> {
    let out = Command::new("rdsquashfs")
        .arg("--stat")
        .arg(rel)
        .arg(image)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("rdsquashfs --stat {}", rel.display()),
        ));
    }
    parse_stat(&String::from_utf8_lossy(&out.stdout)).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not a regular file in the image", rel.display()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // rdsquashfs 1.2.0 --stat of a file in an lzo image (mksquashfs -no-fragments), as printed.
    const STAT: &str = "Name: b.txt
Inode type: file
Inode number: 3
Access: 0644
UID: 0 (index = 0)
GID: 0 (index = 0)
Last modified: Sat, 28 Nov 2026 19:25:34 +0000 (1795893934)
Fragment index: 0xFFFFFFFF
Fragment offset: 0
File size: 300000
Blocks start: 300096
Block count: 3
\tBlock #0 size: 70860 (compressed)
\tBlock #1 size: 0 (compressed)
\tBlock #2 size: 37856 (uncompressed)
";

    #[test]
    fn rdsquashfs_stat_parses() {
        let b = parse_stat(STAT).unwrap();
        assert_eq!(b.file_size, 300_000);
        assert_eq!(b.blocks_start, 300_096);
        assert_eq!(b.blocks, [70860, 0, 37856]);
        assert!(!b.fragment);
        assert_eq!(
            parse_stat(&STAT.replace("Inode type: file", "Inode type: directory")),
            None
        );
        let tail = STAT.replace("0xFFFFFFFF", "0x00000002");
        assert!(parse_stat(&tail).unwrap().fragment);
    }

    #[test]
    fn file_ranges_map_to_whole_compressed_blocks_in_image_order() {
        let bs = 131_072;
        let b = parse_stat(STAT).unwrap();
        // The first byte: block 0 whole.
        assert_eq!(b.image_ranges(0, 1, bs), (vec![(300_096, 70860)], 0));
        // Blocks 0..=2: block 1 is sparse (stored as nothing), so 0 and 2 are adjacent on disk.
        assert_eq!(
            b.image_ranges(0, 300_000, bs),
            (vec![(300_096, 70860 + 37856)], 0)
        );
        // Only block 2.
        assert_eq!(
            b.image_ranges(262_144, 10, bs),
            (vec![(300_096 + 70860, 37856)], 0)
        );
        // Past the end: nothing.
        assert_eq!(b.image_ranges(300_000, 10, bs), (vec![], 0));
        // A tail in a fragment: the bytes past the last block are counted, not mapped.
        let frag = FileBlocks {
            file_size: 140_000,
            blocks_start: 96,
            blocks: vec![50_000],
            fragment: true,
        };
        assert_eq!(
            frag.image_ranges(100_000, 40_000, bs),
            (vec![(96, 50_000)], 8_928)
        );
        assert_eq!(frag.image_ranges(135_000, 5_000, bs), (vec![], 5_000));
    }

    #[test]
    fn superblocks_parse_and_match_statvfs() {
        let mut b = [0u8; 96];
        b[0..4].copy_from_slice(&SQUASHFS_MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&7u32.to_le_bytes());
        b[12..16].copy_from_slice(&131_072u32.to_le_bytes());
        b[20..22].copy_from_slice(&3u16.to_le_bytes());
        b[22..24].copy_from_slice(&17u16.to_le_bytes());
        b[28..30].copy_from_slice(&4u16.to_le_bytes());
        b[40..48].copy_from_slice(&300_000u64.to_le_bytes());
        let sb = Superblock::parse(&b).unwrap();
        assert_eq!(sb.compressor_name(), "lzo");
        assert!(sb.matches(131_072, 3, 7));
        assert!(
            !sb.matches(131_072, 3, 8),
            "another inode count: another image"
        );
        assert!(!sb.matches(4096, 3, 7));
        let mut bad = b;
        bad[0] = b'x';
        assert_eq!(Superblock::parse(&bad), None);
        let mut odd = b;
        odd[22..24].copy_from_slice(&16u16.to_le_bytes());
        assert_eq!(
            Superblock::parse(&odd),
            None,
            "block_log must match block_size"
        );
        assert_eq!(Superblock::parse(&b[..44]), None, "cut short");
    }
}
