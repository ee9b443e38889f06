//! The page cache, kernel-facing: which pages of a file are resident (`mincore` over a read-only
//! mapping, [`view`]), the residency scan of a set of files and of what a process maps
//! ([`residency`], over `os::proc::maps`), reading files into the cache ([`preload`], paced by [`pace`]) and
//! dropping them ([`evict`]), each file opened beneath a folder's descriptor
//! ([`crate::os::beneath`]), with the syscalls in [`crate::os::sys`]. This folder knows nothing of
//! Firefox, plans or the protocol: it takes paths and returns figures, so everything else may
//! depend on it and it depends only on the ground floor (`os`, `error`, `note`, `path_text`).

pub mod evict;
pub mod pace;
pub mod preload;
pub mod problem;
pub mod residency;
pub mod view;

/// Which cache a `preload` or `evict` acts on. A plain install has one: its files' pages. A
/// squashfs install (a Snap) has two: the decompressed pages of its files and the compressed
/// pages of the image file behind its loop device; dropping one leaves the other (checked here
/// with `fincore`: evicting libxul.so from the mount left 66.8 MB of the image cached).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cache {
    /// The install's files (for a squashfs install: the decompressed pages).
    #[default]
    Files,
    /// Only the image behind the install's loop device (the compressed pages).
    Image,
    /// Both: the files and, where there is one, the image.
    All,
}

/// For `skip_serializing_if`: the `*_omitted` counts of bounded reply lists appear only when
/// something was left out, so every reply that was complete before stays byte for byte the same.
#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes a reference
pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}
