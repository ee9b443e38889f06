//! The files a recording names: dev+inode resolved to paths (the install folder, the profile,
//! what the tree maps or holds open), the install's identity, and without tracefs the pages a
//! cold start left resident in the install's files this user owns.

use super::sampler::Sampler;
use crate::trace::build::FileInfo;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Files to resolve dev+inode against: the install folder, the profile, and what the tree maps
/// or holds open; each with its identity. Files born after `since` were written by the start.
pub(super) fn resolve(
    install: &Path,
    sampler: &Sampler,
    extra: &[PathBuf],
    since: SystemTime,
) -> HashMap<((u32, u32), u64), FileInfo> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    walk(install, 6, &mut candidates);
    if let Some(p) = &sampler.profile {
        walk(p, 4, &mut candidates);
    }
    for p in extra {
        walk(p, 4, &mut candidates);
    }
    candidates.extend(sampler.paths.iter().cloned());
    let mut out = HashMap::new();
    for path in candidates {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let dev = meta.dev();
        let key = ((libc::major(dev), libc::minor(dev)), meta.ino());
        let written = meta.created().is_ok_and(|b| b >= since);
        out.entry(key).or_insert(FileInfo {
            path: crate::path_text::display(&path),
            path_b64: crate::path_text::b64(&path),
            size: Some(meta.len()),
            mtime_ns: Some(mtime_ns(&meta)),
            written,
        });
    }
    out
}

/// The modification time of `meta` in ns since the epoch (what a plan compares: learn/plan/profile.rs).
fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.mtime()
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.mtime_nsec())
}

fn walk(dir: &Path, depth: u32, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() && depth > 0 {
            walk(&e.path(), depth - 1, out);
        } else if ft.is_file() {
            out.push(e.path());
        }
    }
}

/// The identity of application.ini, to notice the install changing under the recording.
pub(super) fn install_identity(dir: &Path) -> Option<(u64, u64, i64)> {
    let m = std::fs::metadata(dir.join("application.ini")).ok()?;
    Some((m.dev(), m.ino(), m.mtime()))
}

/// Without tracefs, after a cold start: the install's files this user owns (the kernel reports
/// their page-cache state exactly, see NOTES) with the pages now resident, i.e. what the start
/// read. Times are unknown, so first/last are the end of the recording and there are no events.
pub(super) fn owned_residency(install: &Path, t_end: f64) -> Vec<crate::trace::model::FileEntry> {
    let euid = crate::os::sys::geteuid();
    let Ok(files) = crate::firefox::install::list_files(install) else {
        return Vec::new();
    };
    // Opened beneath the held install folder: no symlink, no FIFO, one open per file.
    let Ok(folder) = crate::os::beneath::Folder::open(install) else {
        return Vec::new();
    };
    let mut vec = Vec::new();
    let mut out = Vec::new();
    for path in files {
        let Ok((file, meta)) = folder.open_file(&path) else {
            continue;
        };
        if meta.uid() != euid {
            continue;
        }
        if crate::os::sys::mincore_file(&file, meta.len(), &mut vec).is_err() {
            continue;
        }
        let resident = vec.iter().filter(|b| **b & 1 == 1).count() as u64;
        if resident == 0 {
            continue;
        }
        let dev = meta.dev();
        out.push(crate::trace::model::FileEntry {
            path: crate::path_text::display(&path),
            path_b64: crate::path_text::b64(&path),
            resolved: true,
            dev: format!("{}:{}", libc::major(dev), libc::minor(dev)),
            ino: meta.ino(),
            size: Some(meta.len()),
            mtime_ns: Some(mtime_ns(&meta)),
            bytes_read: resident * crate::os::sys::page_size() as u64,
            requests: 0,
            first_ms: t_end,
            last_ms: t_end,
            written: false,
            sections: Vec::new(),
            extents: Vec::new(),
            used: None,
            entries: None,
        });
    }
    out
}
