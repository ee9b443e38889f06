//! Beside the start, or first: when the prefetch reads beside a starting Firefox, every page
//! Firefox faults in before the prefetch reached it is read by the kernel with its readahead
//! window around it. At 128 KiB (Debian's default) that costs little, and reading beside the
//! start is the fastest launch (0.42x cold on the 30 MiB/s benchmark disk, against 0.45x for the
//! plan read first). At 8 MiB each such fault brings 8 MiB: Firefox read 128 MB itself beside
//! the prefetcher's 121 MB, and the launch took 0.83x cold against 0.68x with the plan read
//! first (docs/benchmarks.md). So by default the plan is read first where the window of the disk
//! holding Firefox is larger than [`FIRST_ABOVE_KB`]; the window is the disk's, read from sysfs
//! (the same for every user), not ours to change.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Read the plan first above this readahead window: 1 MiB, the prefetch's own chunk. The two
/// measured windows are 128 KiB (beside wins) and 8 MiB (first wins); between them, a fault
/// brings no more than the chunk the prefetcher would have read there anyway.
pub const FIRST_ABOVE_KB: u64 = 1024;

/// What a launch does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Firefox starts at once; the prefetcher reads beside it.
    Beside,
    /// The plan is read first (bounded by [`FIRST_TIME_LIMIT`]), then Firefox starts.
    First,
}

/// What the user asked for (`launch --strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Choice {
    /// First where the disk's readahead window is over 1 MiB, else beside.
    #[default]
    Auto,
    /// Start Firefox at once and read beside it.
    Beside,
    /// Read the plan, then start Firefox (30 s at most).
    First,
}

/// A prefetch read first never holds Firefox back longer than this: then Firefox starts, and
/// what is left is read by Firefox itself.
pub const FIRST_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Why a launch reads beside the start or first: said on the CLI and in the session log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// `--strategy beside` or `first`, whatever the disk.
    Asked,
    /// `auto`, and the disk's window (KiB) is over [`FIRST_ABOVE_KB`]: first.
    LargeWindow(u64),
    /// `auto`, and the window is small or unknown: beside.
    SmallWindow,
    /// `auto`, and the install is on a compressed mount: beside, whatever the window. The
    /// prefetch there reads the image raw (learn/prefetch/image/), which takes nothing from
    /// the mount's decompressor; read first, it held a CPU-bound start back by its whole time
    /// (2.5 s for 73 MB of a zstd image on the 30 MiB/s disk, the loop device's window 2,560
    /// KiB: docs/benchmarks.md, issue 41).
    Compressed,
}

/// The strategy for `choice` on a disk whose readahead window is `window_kb` (unknown: beside,
/// the launch that never holds Firefox back), and why. Pure.
#[must_use]
pub fn decide(choice: Choice, window_kb: Option<u64>) -> (Strategy, Reason) {
    decide_for(choice, window_kb, false)
}

/// [`decide`] for an install that is (`compressed`) or is not on a compressed mount. Pure.
#[must_use]
pub fn decide_for(choice: Choice, window_kb: Option<u64>, compressed: bool) -> (Strategy, Reason) {
    match (choice, window_kb) {
        (Choice::Beside, _) => (Strategy::Beside, Reason::Asked),
        (Choice::First, _) => (Strategy::First, Reason::Asked),
        (Choice::Auto, _) if compressed => (Strategy::Beside, Reason::Compressed),
        (Choice::Auto, Some(kb)) if kb > FIRST_ABOVE_KB => {
            (Strategy::First, Reason::LargeWindow(kb))
        }
        (Choice::Auto, _) => (Strategy::Beside, Reason::SmallWindow),
    }
}

/// The readahead window (KiB) of the block device holding `path`: its queue's `read_ahead_kb`,
/// or its disk's for a partition. `None` where the file system has no block device of its own
/// (btrfs subvolumes, overlays, tmpfs) or sysfs is not there.
#[must_use]
pub fn window_kb(path: &Path) -> Option<u64> {
    let dev = std::fs::metadata(path).ok()?.dev();
    let dev = format!("{}:{}", libc::major(dev), libc::minor(dev));
    let base = Path::new("/sys/dev/block").join(dev);
    // `<partition>/..` is its disk: the kernel resolves `..` after following the link.
    ["queue/read_ahead_kb", "../queue/read_ahead_kb"]
        .iter()
        .find_map(|rel| std::fs::read_to_string(base.join(rel)).ok())
        .and_then(|text| text.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_reads_first_only_on_a_large_window() {
        let small = (Strategy::Beside, Reason::SmallWindow);
        assert_eq!(decide(Choice::Auto, Some(128)), small);
        assert_eq!(decide(Choice::Auto, Some(1024)), small);
        assert_eq!(
            decide(Choice::Auto, Some(8192)),
            (Strategy::First, Reason::LargeWindow(8192))
        );
        // Unknown window: never hold Firefox back on a guess.
        assert_eq!(decide(Choice::Auto, None), small);
        // Asked for: as asked, whatever the disk, and said to be asked.
        assert_eq!(
            decide(Choice::First, Some(128)),
            (Strategy::First, Reason::Asked)
        );
        assert_eq!(
            decide(Choice::First, Some(8192)),
            (Strategy::First, Reason::Asked)
        );
        assert_eq!(
            decide(Choice::Beside, Some(8192)),
            (Strategy::Beside, Reason::Asked)
        );
        // A compressed install: beside, whatever the window, unless asked.
        assert_eq!(
            decide_for(Choice::Auto, Some(8192), true),
            (Strategy::Beside, Reason::Compressed)
        );
        assert_eq!(
            decide_for(Choice::First, Some(128), true),
            (Strategy::First, Reason::Asked)
        );
    }

    /// The readahead window (KiB) of the device `dev` (MAJ:MIN) as util-linux reports it, not
    /// by the host's sysfs rule: `lsblk`'s RA column, and `blockdev --getra` (the BLKRAGET
    /// ioctl, 512-byte sectors) where this process may open the device node. (On the project's
    /// test machine it may not, even as root: opening /dev/vda is EPERM there, so lsblk alone.)
    fn util_linux_window_kb(dev: &str, exe: &Path) -> Option<u64> {
        let lsblk = std::process::Command::new("lsblk")
            .args(["-rno", "MAJ:MIN,RA"])
            .output()
            .expect("lsblk (util-linux) runs");
        let ra: u64 = String::from_utf8_lossy(&lsblk.stdout)
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{dev} ")))?
            .trim()
            .parse()
            .unwrap();
        let source = std::process::Command::new("findmnt")
            .args(["-no", "SOURCE", "--target"])
            .arg(exe)
            .output()
            .unwrap();
        let node = String::from_utf8_lossy(&source.stdout).trim().to_owned();
        let getra = std::process::Command::new("blockdev")
            .args(["--getra", &node])
            .output();
        if let Some(out) = getra.ok().filter(|o| o.status.success()) {
            let sectors: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
            assert_eq!(sectors / 2, ra, "blockdev --getra {node} and lsblk agree");
        }
        Some(ra)
    }

    #[test]
    fn the_window_is_the_one_util_linux_reports_for_the_disk_holding_the_file() {
        let exe = std::env::current_exe().unwrap();
        let dev = std::fs::metadata(&exe).unwrap().dev();
        let dev = format!("{}:{}", libc::major(dev), libc::minor(dev));
        assert_eq!(window_kb(&exe), util_linux_window_kb(&dev, &exe));
        // /proc has no block device.
        assert_eq!(window_kb(Path::new("/proc/self/stat")), None);
    }
}
