//! An install served from a compressed read-only mount (a Snap's squashfs on a loop device, an
//! EROFS image, a squashfuse mount such as `pack` makes), and what a prefetch may do there.
//!
//! Reading the install's files through such a mount decompresses them, and this kernel gives a
//! squashfs mount one decompressor (`SQUASHFS_DECOMP_SINGLE`, docs/design/compressed.md):
//! a prefetch through the mount makes Firefox wait its turn behind it (measured: 1.04x and 1.09x
//! the cold start, issue 41). So a prefetch of a compressed install either reads the *image's*
//! ranges raw (where this user may read the image, and the host can map files to image blocks),
//! or does nothing at all and says why ([`Verdict`]).
//!
//! The image is checked before anything reads it: a regular file (a FIFO or a device is
//! refused), reached by its last component without a symlink, and the same filesystem as the one
//! mounted (its squashfs superblock against the mount's `statvfs`: block size, blocks, inodes),
//! so a file planted at the path the kernel names is never taken for the image.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use crate::firefox::mount::{self, MountEntry};

mod image;
use image::check_image;
pub use image::{
    file_blocks, open_image, parse_stat, Access, FileBlocks, Format, Superblock, SUPERBLOCK_BYTES,
};

/// What a prefetch does on this install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Read the image's needed ranges raw, batch by batch in first-use order (image order inside a
    /// batch).
    ImageRanges,
    /// Nothing that reads through the mount: left off.
    LeftOff,
}

/// Why a prefetch is left off (a code for the page; the CLI words it in [`Compressed::line`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeftOff {
    /// The user may not read the image (a Snap).
    ImageNotReadable,
    /// No image known behind the mount.
    NoImage,
    /// The image was refused (not a regular file, a symlink, another filesystem).
    ImageRefused,
    /// The loop device reads its image with direct I/O: reading the image warms nothing.
    DirectIo,
    /// EROFS: the host cannot map its files to image blocks yet.
    NoBlockMap,
    /// rdsquashfs (squashfs-tools-ng) is missing: no map from files to image blocks.
    NoRdsquashfs,
}

/// A compressed install: its mount, its image, and what a prefetch does there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compressed {
    pub format: Format,
    #[serde(flatten, with = "crate::path_text::mount_point")]
    pub mount_point: PathBuf,
    /// The image file, when known (a loop device's backing file, or `pack`'s own image).
    #[serde(flatten, with = "crate::path_text::image")]
    pub image: Option<PathBuf>,
    pub access: Access,
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_off: Option<LeftOff>,
}

impl Compressed {
    /// One sentence for the CLI and the session log.
    #[must_use]
    pub fn line(&self) -> String {
        let on = format!(
            "this install is on a compressed {} mount ({})",
            self.format.words(),
            self.mount_point.display()
        );
        let Some(why) = self.left_off else {
            return format!(
                "{on}: the prefetch reads its image {} raw, in batches in the order the start needs them, not the files through the mount",
                self.image.as_deref().unwrap_or(Path::new("?")).display()
            );
        };
        let because = match why {
            LeftOff::ImageNotReadable => "you may not read its image (a Snap's is root's, mode 0600)".to_owned(),
            LeftOff::NoImage => "no image file is known behind the mount".to_owned(),
            LeftOff::ImageRefused => match &self.access {
                Access::Refused { why } => format!("its image was refused: {why}"),
                _ => "its image was refused".to_owned(),
            },
            LeftOff::DirectIo => "its loop device reads the image with direct I/O, so reading the image warms nothing".to_owned(),
            LeftOff::NoBlockMap => "the host cannot yet map EROFS files to image blocks".to_owned(),
            LeftOff::NoRdsquashfs => "rdsquashfs (apt install squashfs-tools-ng) is missing to map files to image blocks".to_owned(),
        };
        format!(
            "{on}: a prefetch through the mount would decompress on its one decompressor, and {because}; left off"
        )
    }
}

/// The facts [`judge`] decides from (gathered by [`detect`], or made up by a test).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub format: Format,
    pub mount_point: PathBuf,
    pub image: Option<PathBuf>,
    pub direct_io: bool,
    pub access: Access,
    pub rdsquashfs: bool,
}

/// What a prefetch does, from the facts alone.
#[must_use]
pub fn judge(f: &Facts) -> Compressed {
    let left_off = match &f.access {
        Access::NotReadable => Some(LeftOff::ImageNotReadable),
        Access::Unknown => Some(LeftOff::NoImage),
        Access::Refused { .. } => Some(LeftOff::ImageRefused),
        Access::Readable if f.direct_io => Some(LeftOff::DirectIo),
        Access::Readable if !f.format.is_squashfs() => Some(LeftOff::NoBlockMap),
        Access::Readable if !f.rdsquashfs => Some(LeftOff::NoRdsquashfs),
        Access::Readable => None,
    };
    Compressed {
        format: f.format,
        mount_point: f.mount_point.clone(),
        image: f.image.clone(),
        access: f.access.clone(),
        verdict: if left_off.is_some() {
            Verdict::LeftOff
        } else {
            Verdict::ImageRanges
        },
        left_off,
    }
}

/// The compressed mount holding `dir` (canonical), if any, judged. `known_image`: the image the
/// caller knows is behind it (`pack`'s own, for a FUSE mount that names none).
#[must_use]
pub fn detect(dir: &Path, known_image: Option<&Path>) -> Option<Compressed> {
    let entry = mount::find(dir)?;
    detect_in(&entry, Path::new("/sys/block"), known_image)
}

/// [`detect`] for a given mount entry, the loop image read from `sys_block`.
#[must_use]
pub fn detect_in(
    entry: &MountEntry,
    sys_block: &Path,
    known_image: Option<&Path>,
) -> Option<Compressed> {
    let format = Format::of_fs_type(&entry.fs_type)?;
    let loop_image = mount::loop_image(sys_block, &entry.source);
    let image = loop_image
        .as_ref()
        .map(|l| l.image.clone())
        .or_else(|| known_image.map(Path::to_path_buf));
    let access = match &image {
        None => Access::Unknown,
        Some(image) => check_image(image, &entry.mount_point, format),
    };
    Some(judge(&Facts {
        format,
        mount_point: entry.mount_point.clone(),
        image,
        direct_io: loop_image.is_some_and(|l| l.direct_io),
        access,
        rdsquashfs: rdsquashfs_found(),
    }))
}

/// Whether `rdsquashfs` runs here.
fn rdsquashfs_found() -> bool {
    Command::new("rdsquashfs")
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(access: Access) -> Facts {
        Facts {
            format: Format::Squashfs,
            mount_point: "/snap/firefox/5000".into(),
            image: Some("/var/lib/snapd/snaps/firefox_5000.snap".into()),
            direct_io: false,
            access,
            rdsquashfs: true,
        }
    }

    #[test]
    fn the_prefetch_reads_the_image_only_where_it_may_and_can() {
        let c = judge(&facts(Access::Readable));
        assert_eq!((c.verdict, c.left_off), (Verdict::ImageRanges, None));
        let snap = judge(&facts(Access::NotReadable));
        assert_eq!(
            (snap.verdict, snap.left_off),
            (Verdict::LeftOff, Some(LeftOff::ImageNotReadable))
        );
        assert!(
            snap.line()
                .contains("a prefetch through the mount would decompress on its one decompressor"),
            "{}",
            snap.line()
        );
        assert!(snap.line().ends_with("left off"));
        let refused = judge(&facts(Access::Refused {
            why: "x is a FIFO".into(),
        }));
        assert_eq!(refused.left_off, Some(LeftOff::ImageRefused));
        assert!(refused.line().contains("x is a FIFO"));
        assert_eq!(
            judge(&facts(Access::Unknown)).left_off,
            Some(LeftOff::NoImage)
        );
        let dio = Facts {
            direct_io: true,
            ..facts(Access::Readable)
        };
        assert_eq!(judge(&dio).left_off, Some(LeftOff::DirectIo));
        let erofs = Facts {
            format: Format::Erofs,
            ..facts(Access::Readable)
        };
        assert_eq!(judge(&erofs).left_off, Some(LeftOff::NoBlockMap));
        let bare = Facts {
            rdsquashfs: false,
            ..facts(Access::Readable)
        };
        assert_eq!(judge(&bare).left_off, Some(LeftOff::NoRdsquashfs));
    }

    #[test]
    fn filesystem_types_name_the_format() {
        assert_eq!(Format::of_fs_type("squashfs"), Some(Format::Squashfs));
        assert_eq!(
            Format::of_fs_type("fuse.squashfuse"),
            Some(Format::Squashfuse)
        );
        assert_eq!(Format::of_fs_type("erofs"), Some(Format::Erofs));
        assert_eq!(Format::of_fs_type("ext4"), None);
        assert_eq!(Format::of_fs_type("fuse.sshfs"), None);
    }
}
