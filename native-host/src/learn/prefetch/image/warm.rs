//! Decompress ahead on a FUSE mount (squashfuse): as each batch of image ranges is read, the
//! plan's file ranges whose image bytes it completes (map.rs [`Warm`]) are read through the mount,
//! in another thread, so that the mount's daemon decompresses them into the page cache (it keeps
//! it across opens: `keep_cache`) while Firefox still waits on the disk, and Firefox then finds
//! them decompressed. Measured on the 30:150 throttle (docs/benchmarks.md): the daemon, one
//! thread, sat mostly idle while the image came in and decompressed Firefox's faults one FUSE
//! request at a time after. Never on the kernel's mount (a Snap, root's loop mount): there the
//! mount has one decompressor and reading through it made the start slower (issue 41).
//! Only ranges whose image bytes are read: the daemon never waits on the disk for this.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;

use super::map::Warm;
use crate::os::beneath::Folders;

/// What the warming did.
#[derive(Debug, Default)]
pub struct Warmed {
    pub bytes: u64,
    pub errors: Vec<String>,
}

/// Reads through the mount, in its own thread: each batch's [`Warm`] blocks once `progress` says
/// their image bytes are read (`(batch, offset)`: batches before `batch` read, and `batch` read
/// in image order up to `offset`; the sender dropped = no more), until all are read or `stop` is
/// set. `files`, `identities` and `folders` are the plan's: a file is opened beneath its held
/// folder as every planned file is (no symlink, never a FIFO or device), and one that is not the
/// one planned (inode, size) is not read. Each read is one block: one FUSE request, so that a fault of Firefox waits
/// behind at most one block's decompression in the daemon's queue (1 MiB reads queued several
/// requests at once).
pub fn run(
    folders: &Folders,
    files: &[PathBuf],
    identities: &[(u64, u64)],
    warm: &[Vec<Warm>],
    progress: &Receiver<(usize, u64)>,
    stop: &AtomicBool,
) -> Warmed {
    let mut out = Warmed::default();
    let mut open: HashMap<usize, Option<File>> = HashMap::new();
    let mut buf = Vec::new();
    // The next block: list `i`, item `j`.
    let (mut i, mut j) = (0, 0);
    while i < warm.len() {
        let Ok((batch, at)) = progress.recv() else {
            break;
        };
        while let Some(w) = warm.get(i).and_then(|list| list.get(j)) {
            if i > batch || (i == batch && w.ready > at) {
                break;
            }
            if stop.load(Ordering::Relaxed) {
                return out;
            }
            let file = open.entry(w.file).or_insert_with(|| {
                match open_planned(folders, &files[w.file], identities.get(w.file).copied()) {
                    Ok(f) => Some(f),
                    Err(e) => {
                        if out.errors.len() < super::MAX_ERRORS {
                            out.errors.push(format!("{}: {e}", files[w.file].display()));
                        }
                        None
                    }
                }
            });
            if let Some(file) = file {
                out.bytes += read_range(file, w.offset, w.len, &mut buf, stop);
            }
            j += 1;
            while warm.get(i).is_some_and(|list| j >= list.len()) {
                (i, j) = (i + 1, 0);
            }
        }
        while warm.get(i).is_some_and(|list| j >= list.len()) {
            (i, j) = (i + 1, 0);
        }
    }
    out
}

/// Open a plan's file on the mount, checked to be the one planned (`(inode, size)`; `(0, 0)`:
/// not known), with no readahead around what is read (only ranges whose image bytes are read
/// are asked for).
fn open_planned(
    folders: &Folders,
    path: &std::path::Path,
    identity: Option<(u64, u64)>,
) -> std::io::Result<File> {
    let (f, meta) = folders.open_file(path)?;
    if let Some((ino, size)) = identity.filter(|&i| i != (0, 0)) {
        if (meta.ino(), meta.size()) != (ino, size) {
            return Err(std::io::Error::other("replaced since planned"));
        }
    }
    let _ = crate::os::sys::fadvise(&f, 0, 0, crate::os::sys::Advice::Random);
    Ok(f)
}

/// Read `len` bytes at `offset` (fewer at the file's end) in one read; the bytes read.
fn read_range(file: &File, offset: u64, len: u64, buf: &mut Vec<u8>, stop: &AtomicBool) -> u64 {
    let Ok(want) = usize::try_from(len) else {
        return 0;
    };
    if stop.load(Ordering::Relaxed) {
        return 0;
    }
    buf.resize(want, 0);
    file.read_at(buf, offset).map_or(0, |n| n as u64)
}

/// A warmer started beside the image read: the sender that says which batch is read, the flag
/// that stops it, and its thread.
pub struct Warmer {
    pub done: std::sync::mpsc::Sender<(usize, u64)>,
    pub stop: Arc<AtomicBool>,
    pub thread: std::thread::JoinHandle<Warmed>,
}

/// Start the warming thread for `warm` (the plan's `folders`, `files` and `identities`).
pub fn start(
    folders: Folders,
    files: Vec<PathBuf>,
    identities: Vec<(u64, u64)>,
    warm: Vec<Vec<Warm>>,
) -> std::io::Result<Warmer> {
    let (done, rx) = std::sync::mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let thread = std::thread::Builder::new()
        .name("warm".into())
        .spawn(move || {
            // Ask for a block only when a CPU is idle, so that the daemon's decompression for it
            // does not take CPU Firefox's start was using: at normal priority (three runs a
            // side, busy machine, 29 Nov 14:27) the warming held Firefox's early start back
            // (createTopLevelWindow ~0.4 s later) about as much as it saved after it.
            let _ = crate::os::sys::sched_idle_this_thread();
            run(&folders, &files, &identities, &warm, &rx, &flag)
        })?;
    Ok(Warmer { done, stop, thread })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_read_once_their_image_bytes_are_and_not_after_a_stop() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, vec![1u8; 10_000]).unwrap();
        let files = vec![a, dir.path().join("gone")];
        let mut folders = Folders::default();
        folders.push(crate::os::beneath::Folder::open(dir.path()).unwrap());
        let w = |file, offset, len, ready| Warm {
            file,
            offset,
            len,
            ready,
        };
        let warm = vec![
            vec![w(0, 0, 4096, 100)],
            vec![w(1, 0, 10, 0), w(0, 8192, 8192, 500)],
        ];
        let said = |steps: &[(usize, u64)]| {
            let (tx, rx) = std::sync::mpsc::channel();
            for &s in steps {
                tx.send(s).unwrap();
            }
            rx
        };
        let stop = AtomicBool::new(false);
        let ids = [(0, 0), (0, 0)];
        let out = run(
            &folders,
            &files,
            &ids,
            &warm,
            &said(&[(0, 100), (1, 500)]),
            &stop,
        );
        // 4096 + the file's last 1808 bytes; the missing file said.
        assert_eq!(out.bytes, 4096 + 1808);
        assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
        // Batch 0 read short of the first block's end: nothing.
        assert_eq!(
            run(&folders, &files, &ids, &warm, &said(&[(0, 99)]), &stop).bytes,
            0
        );
        // Batch 1 begun: batch 0's block, and batch 1's whose bytes earlier batches hold; the
        // last waits for 500.
        let out = run(&folders, &files, &ids, &warm, &said(&[(1, 499)]), &stop);
        assert_eq!((out.bytes, out.errors.len()), (4096, 1));
        // A file that is not the one planned is not read.
        let out = run(
            &folders,
            &files,
            &[(1, 10_000), (0, 0)],
            &warm,
            &said(&[(0, 100)]),
            &stop,
        );
        assert_eq!((out.bytes, out.errors.len()), (0, 1));
        // A FIFO planted where a planned file was is refused at once, never waited on.
        std::fs::remove_file(&files[0]).unwrap();
        crate::os::mkfifo(&files[0]);
        let out = run(&folders, &files, &ids, &warm, &said(&[(0, 100)]), &stop);
        assert_eq!((out.bytes, out.errors.len()), (0, 1));
        stop.store(true, Ordering::Relaxed);
        assert_eq!(
            run(&folders, &files, &ids, &warm, &said(&[(1, 500)]), &stop).bytes,
            0
        );
    }
}
