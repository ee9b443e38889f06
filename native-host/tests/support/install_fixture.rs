//! A fake Firefox install folder on a real disk (not tmpfs: fadvise DONTNEED does not drop
//! tmpfs pages, which live only in memory), with files written and fsynced so their pages are
//! clean and can be evicted.

#![allow(dead_code)] // each test file uses part of it

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use about_startup_host::firefox::install;
use about_startup_host::os::beneath::Folder;

pub const APP_INI: &str =
    "[App]\nVendor=Mozilla\nName=Firefox\nVersion=153.7.0\nBuildID=20261103151912\n";

pub struct Fixture {
    /// Keeps the folder alive; removed on drop.
    pub root: tempfile::TempDir,
    /// root/ff: the install folder (canonical).
    pub ff: PathBuf,
    /// root/ff2/outside.bin: a sibling folder whose name starts like the install folder's.
    pub outside: PathBuf,
}

/// `size` bytes that do not compress to nothing (some filesystems would make zeros sparse).
pub fn write_file(path: &Path, size: usize) {
    let mut data = Vec::with_capacity(size);
    let mut x: u32 = 0x9e37_79b9;
    while data.len() < size {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        data.extend_from_slice(&x.to_le_bytes());
    }
    data.truncate(size);
    let mut f = File::create(path).unwrap();
    f.write_all(&data).unwrap();
    f.sync_all().unwrap();
}

/// Folders readable by every user (tempfile makes them 0700), so a test may run the binary as
/// `nobody` against them.
pub fn open_up(dir: &Path) {
    fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
}

impl Fixture {
    pub fn new() -> Self {
        Self::new_in(Path::new(env!("CARGO_TARGET_TMPDIR")))
    }

    /// The fixture in a folder of its own under `parent` (which must exist).
    pub fn new_in(parent: &Path) -> Self {
        let root = tempfile::Builder::new()
            .prefix("pagecache-")
            .tempdir_in(parent)
            .unwrap();
        open_up(root.path());
        let ff = root.path().join("ff");
        let ff2 = root.path().join("ff2");
        for d in [&ff, &ff.join("browser"), &ff2] {
            fs::create_dir_all(d).unwrap();
            open_up(d);
        }
        fs::write(ff.join("application.ini"), APP_INI).unwrap();
        write_file(&ff.join("libxul.so"), 4 << 20);
        write_file(&ff.join("browser/omni.ja"), 1 << 20);
        write_file(&ff.join("dependentlibs.list"), 10_000);
        write_file(&ff.join("empty"), 0);
        let outside = ff2.join("outside.bin");
        write_file(&outside, 1 << 20);
        std::os::unix::fs::symlink("../ff2/outside.bin", ff.join("escape")).unwrap();
        std::os::unix::fs::symlink("../../ff2", ff.join("browser/chrome")).unwrap();
        let ff = ff.canonicalize().unwrap();
        let outside = outside.canonicalize().unwrap();
        Self { root, ff, outside }
    }

    pub fn all(&self) -> Vec<PathBuf> {
        install::select(&self.ff, &[]).unwrap().files
    }

    /// The install folder held open, as a request holds it.
    pub fn folder(&self) -> Folder {
        Folder::open(&self.ff).unwrap()
    }
}

/// A FIFO at `path` (what a hostile user plants where an image or a file should be: opening it
/// for reading blocks until a writer comes, unless the opener asks not to).
pub fn mkfifo(path: &Path, mode: u32) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(mode),
        0,
    )
    .unwrap();
}
