//! The page cache, kernel-facing: which pages of a file are resident (`mincore` over a read-only
//! mapping, [`view`]), the residency scan of a set of files and of what a process maps
//! ([`residency`], [`maps`]), reading files into the cache ([`preload`], paced by [`pace`]) and
//! dropping them ([`evict`]), every file opened beneath a folder's descriptor ([`beneath`]),
//! with FIEMAP and the other syscalls in [`sys`], the only place with
//! `unsafe`. This folder knows nothing of Firefox, plans or the protocol: it takes paths and
//! returns figures, so everything else may depend on it and it depends on nothing but `Error`.

pub mod beneath;
pub mod evict;
pub mod maps;
pub mod pace;
pub mod preload;
pub mod residency;
pub mod sys;
pub mod view;

/// For `skip_serializing_if`: the `*_omitted` counts of bounded reply lists appear only when
/// something was left out, so every reply that was complete before stays byte for byte the same.
#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes a reference
pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}
