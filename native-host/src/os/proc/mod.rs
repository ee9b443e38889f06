//! The one reader of `/proc`: every file the host reads there goes through here, bounded (a
//! process chooses its command line, environment and mapped file names, so nothing is read
//! without a limit) and opened with `O_NOFOLLOW` (a process's file is never reached through a
//! link it could have planted; `exe`, `cwd` and `fd/N` are read as links, never opened).
//! The formats are parsed by pure functions over the bytes read: [`parse`] (stat, io, status,
//! environment, `/proc/stat`) and [`maps`] (`/proc/<pid>/maps` lines), fuzzed by
//! `fuzz/fuzz_targets/proc.rs`.

pub mod maps;
pub mod parse;

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use rustix::fs::{Mode, OFlags};

pub use parse::Stat;

/// The most read of a small /proc file (`stat`, `io`, `status`, `comm`, a sysctl): each is at
/// most a few KiB.
pub const SMALL_BYTES: u64 = 64 * 1024;
/// The most read of a command line or an environment, and of `/proc/stat` (one line per CPU
/// and per interrupt): a few KiB to some hundred KiB in practice.
pub const LARGE_BYTES: u64 = 1024 * 1024;
/// The most of a `/proc/<pid>/maps` that is read: a Firefox maps a few thousand regions (a few
/// hundred KiB); the kernel allows 65,530 regions with names up to 4 KiB each, so a process that
/// maps a file of a long name many times could make it hundreds of MB.
pub const MAX_MAPS_BYTES: u64 = 32 * 1024 * 1024;
/// The most of a `/proc/<pid>/smaps` that is read: about eight times its maps (some twenty
/// lines per region instead of one).
pub const MAX_SMAPS_BYTES: u64 = 8 * MAX_MAPS_BYTES;

fn open_path(path: &str) -> io::Result<File> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::empty(),
    )?;
    Ok(File::from(fd))
}

fn read_path(path: &str, limit: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    open_path(path)?.take(limit).read_to_end(&mut out)?;
    Ok(out)
}

/// `/proc/<pid>/<name>` open for reading (a `pagemap`, read at offsets).
pub fn open(pid: i32, name: &str) -> io::Result<File> {
    open_path(&format!("/proc/{pid}/{name}"))
}

/// `/proc/<name>` open for reading (`kpageflags`, read at offsets).
pub fn open_system(name: &str) -> io::Result<File> {
    open_path(&format!("/proc/{name}"))
}

/// `/proc/<pid>/<name>`, at most `limit` bytes.
pub fn read(pid: i32, name: &str, limit: u64) -> io::Result<Vec<u8>> {
    read_path(&format!("/proc/{pid}/{name}"), limit)
}

/// `/proc/<name>` (`stat`, `pressure/io`, `self/mountinfo`, `sys/kernel/osrelease`), at most
/// `limit` bytes.
pub fn read_system(name: &str, limit: u64) -> io::Result<Vec<u8>> {
    read_path(&format!("/proc/{name}"), limit)
}

/// A line-oriented `/proc/<pid>/<name>` (maps, smaps), at most `limit` bytes, cut at the last
/// whole line when the limit was reached.
pub fn read_lines(pid: i32, name: &str, limit: u64) -> io::Result<Vec<u8>> {
    let mut out = read(pid, name, limit)?;
    if out.len() as u64 >= limit {
        let end = out.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        out.truncate(end);
    }
    Ok(out)
}

/// `/proc/<pid>/maps`, at most [`MAX_MAPS_BYTES`] (cut at the last whole line).
pub fn read_maps(pid: i32) -> io::Result<Vec<u8>> {
    read_lines(pid, "maps", MAX_MAPS_BYTES)
}

/// The target of the link `/proc/<pid>/<name>` (`exe`, `cwd`) as the kernel gives it.
pub fn read_link(pid: i32, name: &str) -> io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/{name}"))
}

/// The real path of a process's executable (`/proc/<pid>/exe`), without the " (deleted)" the
/// kernel appends once an update replaced the file.
pub fn exe(pid: i32) -> io::Result<PathBuf> {
    let link = read_link(pid, "exe")?;
    let s = link.to_string_lossy();
    Ok(match s.strip_suffix(" (deleted)") {
        Some(stripped) => PathBuf::from(stripped),
        None => link,
    })
}

/// Every process id in /proc now (empty if /proc cannot be listed).
#[must_use]
pub fn pids() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// The effective uid process `pid` runs as (`/proc/<pid>` belongs to it); `None` once it is gone.
#[must_use]
pub fn owner(pid: i32) -> Option<u32> {
    std::fs::metadata(format!("/proc/{pid}"))
        .ok()
        .map(|m| m.uid())
}

/// Whether process `pid` exists (a zombie still does).
#[must_use]
pub fn exists(pid: i32) -> bool {
    std::fs::symlink_metadata(format!("/proc/{pid}")).is_ok()
}

/// Whether process `pid` still runs: it exists and is not a zombie (`Z`, exited and not yet
/// reaped by its parent, as a Firefox the host started is until the host waits for it) nor
/// dead (`X`). Waiting on a process means waiting on this, never on [`exists`].
#[must_use]
pub fn alive(pid: i32) -> bool {
    stat(pid).is_some_and(|s| !matches!(s.state, 'Z' | 'X'))
}

/// The thread ids of process `pid` (`/proc/<pid>/task`).
pub fn tasks(pid: i32) -> io::Result<Vec<i32>> {
    Ok(std::fs::read_dir(format!("/proc/{pid}/task"))?
        .filter_map(Result::ok)
        .filter_map(|t| t.file_name().to_str()?.parse().ok())
        .collect())
}

/// What each open descriptor of `pid` points at (`/proc/<pid>/fd/N`), as the kernel names it;
/// empty where the folder is not readable (another user's process).
#[must_use]
pub fn fd_targets(pid: i32) -> Vec<PathBuf> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .collect()
}

/// The stat of process `pid`; `None` once it has exited.
#[must_use]
pub fn stat(pid: i32) -> Option<Stat> {
    parse::parse_stat(&read(pid, "stat", SMALL_BYTES).ok()?)
}

/// `read_bytes` of `/proc/<pid>/io`: bytes really fetched from storage. The file needs ptrace
/// read access, so another user's process gives `None`.
#[must_use]
pub fn read_bytes(pid: i32) -> Option<u64> {
    parse::parse_io_read_bytes(&read(pid, "io", SMALL_BYTES).ok()?)
}

/// The command line of `pid`, NUL-separated as the kernel keeps it.
pub fn cmdline(pid: i32) -> io::Result<Vec<u8>> {
    read(pid, "cmdline", LARGE_BYTES)
}

/// This boot's random id (`/proc/sys/kernel/random/boot_id`): what was cached before another
/// boot is not cached now.
#[must_use]
pub fn boot_id() -> Option<String> {
    let text = read_system("sys/kernel/random/boot_id", 128).ok()?;
    let id = String::from_utf8_lossy(&text).trim().to_owned();
    (!id.is_empty()).then_some(id)
}

/// The boot time, seconds since the epoch (`btime` of /proc/stat).
#[must_use]
pub fn boot_time() -> Option<u64> {
    let text = read_system("stat", LARGE_BYTES).ok()?;
    parse::parse_btime(&String::from_utf8_lossy(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> i32 {
        i32::try_from(std::process::id()).unwrap()
    }

    #[test]
    fn stat_of_self_parses() {
        let stat = stat(me()).unwrap();
        assert_eq!(
            i64::from(stat.ppid),
            i64::from(std::os::unix::process::parent_id())
        );
    }

    #[test]
    fn own_figures_are_readable() {
        assert!(read_bytes(me()).is_some());
        assert!(boot_time().is_some());
        assert!(pids().contains(&me()));
        assert_eq!(owner(me()), Some(crate::os::sys::geteuid()));
        assert!(tasks(me()).unwrap().contains(&me()));
        assert_eq!(exe(me()).unwrap(), std::env::current_exe().unwrap());
    }

    #[test]
    fn reads_are_bounded_and_cut_at_a_whole_line() {
        let whole = read(me(), "maps", MAX_MAPS_BYTES).unwrap();
        assert!(whole.len() > 200, "this process maps its own binary");
        assert_eq!(read(me(), "maps", 100).unwrap().len(), 100);
        let cut = read_lines(me(), "maps", 200).unwrap();
        assert!(cut.len() <= 200 && cut.ends_with(b"\n"), "{cut:?}");
        assert!(whole.starts_with(&cut));
    }

    #[test]
    fn a_link_is_not_followed() {
        // /proc/<pid>/exe is a link: reading it as a file is refused, reading the link works.
        let e = read(me(), "exe", SMALL_BYTES).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP), "{e}");
        assert!(read_link(me(), "exe").is_ok());
    }
}
