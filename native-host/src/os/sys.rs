//! Thin wrappers around the Linux syscalls the page-cache modules need (mincore, fadvise,
//! readahead, ioprio_set, cachestat probe, FIEMAP). The only `unsafe` of the crate lives here.
//!
//! Every wrapper takes Rust types (`&File`, slices) and returns `io::Result`, so the callers stay
//! safe code. Nothing here reads through a mapping: a file truncated under us would otherwise
//! raise SIGBUS, and `mincore(2)` answers from the page tables and page cache without touching the
//! pages.

#[cfg(not(target_os = "linux"))]
compile_error!(
    "about-startup-host measures Linux's page cache through mincore(2) and /proc: it builds on Linux only"
);

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

/// `CAP_FOWNER` (linux/capability.h): lets mincore report exact residency of any file
/// (kernel mm/mincore.c `can_do_mincore` → `inode_owner_or_capable`).
const CAP_FOWNER: u32 = 3;

/// linux/ioprio.h: `IOPRIO_WHO_PROCESS` with `who == 0` means the calling *thread* (I/O priority
/// is per task), `IOPRIO_CLASS_IDLE` is `ionice -c3`.
const IOPRIO_WHO_PROCESS: libc::c_int = 1;
const IOPRIO_CLASS_IDLE: libc::c_int = 3;
const IOPRIO_CLASS_SHIFT: libc::c_int = 13;

/// cachestat(2) is syscall 451 on every architecture (unified syscall table, Linux ≥ 6.5).
const SYS_CACHESTAT: libc::c_long = 451;

/// A read-only shared mapping of the start of a file, unmapped on drop.
///
/// Only its address is ever used (for mincore); no reference into it is handed out.
struct Mapping {
    addr: *mut libc::c_void,
    len: usize,
}

impl Mapping {
    fn new(file: &File, len: usize) -> io::Result<Self> {
        // SAFETY: a NULL hint lets the kernel pick an unused address range, so no existing memory
        // is replaced; `len` is non-zero (checked by the caller) and the fd is open for reading,
        // as PROT_READ + MAP_SHARED require. rustix checks the result against MAP_FAILED.
        let addr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                rustix::mm::ProtFlags::READ,
                rustix::mm::MapFlags::SHARED,
                file,
                0,
            )
        }?;
        Ok(Self { addr, len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `addr`/`len` describe exactly the mapping created in `new`, which nothing else
        // refers to; unmapping it cannot invalidate any Rust reference. A failure (EINVAL) would
        // mean a bug in `new`; there is nothing to do about it in drop.
        let _ = unsafe { rustix::mm::munmap(self.addr, self.len) };
    }
}

/// Fill `vec` with one byte per page of the first `len` bytes of `file`; bit 0 set means the
/// page is in the page cache. `vec` is reused between calls to avoid per-file allocations.
///
/// Beware (Linux ≥ 5.2): for a file the caller neither owns nor may write, the kernel reports
/// every page resident. Callers decide first whether the answer is exact (see `residency`).
pub fn mincore_file(file: &File, len: u64, vec: &mut Vec<u8>) -> io::Result<()> {
    vec.clear();
    if len == 0 {
        // mmap refuses a zero length; an empty file has no pages.
        return Ok(());
    }
    let len = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    vec.resize(len.div_ceil(page_size()), 0);
    let map = Mapping::new(file, len)?;
    // SAFETY: `map` is a live mapping of `len` bytes and `vec` holds one byte per page of it,
    // which is the buffer size mincore(2) writes.
    let rc = unsafe { libc::mincore(map.addr, map.len, vec.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A whole file mapped once, for many [`FileMap::resident`] questions (the launch prefetch asks
/// per range, while Firefox fills the cache). Same caveat as [`mincore_file`] for others' files.
pub struct FileMap(Option<Mapping>);

impl FileMap {
    pub fn new(file: &File, len: u64) -> io::Result<Self> {
        let len = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        Ok(FileMap(if len == 0 {
            None
        } else {
            Some(Mapping::new(file, len)?)
        }))
    }

    /// One byte per page of `[offset, offset + len)` (clipped to the mapping) into `vec`; bit 0
    /// set means resident. `offset` is rounded down to a page.
    pub fn resident(&self, offset: u64, len: u64, vec: &mut Vec<u8>) -> io::Result<()> {
        vec.clear();
        let Some(map) = &self.0 else { return Ok(()) };
        let page = page_size();
        let start = usize::try_from(offset).unwrap_or(usize::MAX) / page * page;
        let end = usize::try_from(offset.saturating_add(len))
            .unwrap_or(usize::MAX)
            .min(map.len);
        if start >= end {
            return Ok(());
        }
        vec.resize((end - start).div_ceil(page), 0);
        // SAFETY: `start` is page-aligned and `start..end` lies inside the live mapping `map`;
        // `vec` holds one byte per page of that range, which is what mincore(2) writes.
        let rc = unsafe {
            libc::mincore(
                map.addr.cast::<u8>().add(start).cast(),
                end - start,
                vec.as_mut_ptr(),
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// `preadv2(…, RWF_NOWAIT)` of `buf.len()` bytes at `offset`: the bytes if they are cached,
/// `WouldBlock` if not. Not free of side effects: a miss starts the read of what was asked
/// (NOTES.md), which is what a prefetcher about to read it wants anyway.
pub fn pread_nowait(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut bufs = [io::IoSliceMut::new(buf)];
    Ok(rustix::io::preadv2(
        file,
        &mut bufs,
        offset,
        rustix::io::ReadWriteFlags::NOWAIT,
    )?)
}

/// The `posix_fadvise(2)` hints this crate gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    /// Drop clean, unmapped pages of the range from the page cache.
    DontNeed,
    /// Queue reads of the range (the kernel's `force_page_cache_readahead`).
    WillNeed,
    /// Double the readahead window for sequential `read(2)`s.
    Sequential,
    /// No readahead around reads: read exactly what is asked.
    Random,
}

/// `posix_fadvise(fd, offset, len, advice)`; `len == 0` means "to the end of the file".
pub fn fadvise(file: &File, offset: u64, len: u64, advice: Advice) -> io::Result<()> {
    let advice = match advice {
        Advice::DontNeed => rustix::fs::Advice::DontNeed,
        Advice::WillNeed => rustix::fs::Advice::WillNeed,
        Advice::Sequential => rustix::fs::Advice::Sequential,
        Advice::Random => rustix::fs::Advice::Random,
    };
    // Out-of-range values are refused here, as before, rather than wrapped by the kernel ABI.
    to_off(offset)?;
    to_off(len)?;
    // rustix's `None` length is the kernel's 0: to the end of the file.
    rustix::fs::fadvise(file, offset, std::num::NonZeroU64::new(len), advice)?;
    Ok(())
}

/// `readahead(2)`: queue reads of `len` bytes at `offset` into the page cache.
pub fn readahead(file: &File, offset: u64, len: u64) -> io::Result<()> {
    let offset = to_off(offset)?;
    let len = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: plain syscall on a valid fd owned by `file`; no memory is passed.
    let rc = unsafe { libc::readahead(file.as_raw_fd(), offset, len) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// One extent of a file (`struct fiemap_extent`): `length` bytes at file offset `logical` lie at
/// byte `physical` of the device. `physical` is `None` where the filesystem does not know it yet
/// (delayed allocation, FIEMAP_EXTENT_UNKNOWN) or it means nothing (inline data, encoded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub logical: u64,
    pub physical: Option<u64>,
    pub length: u64,
}

/// linux/fs.h `FS_IOC_FIEMAP` = `_IOWR('f', 11, struct fiemap)` (a 32-byte header).
#[cfg(target_os = "linux")]
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
/// linux/fiemap.h extent flags.
const FIEMAP_EXTENT_LAST: u32 = 0x1;
const FIEMAP_EXTENT_UNKNOWN: u32 = 0x2;
const FIEMAP_EXTENT_ENCODED: u32 = 0x8;
const FIEMAP_EXTENT_DATA_INLINE: u32 = 0x200;
/// Extents asked for per ioctl call.
const FIEMAP_BATCH: usize = 256;
/// `struct fiemap` is 4 u64 words; each `struct fiemap_extent` is 7 (56 bytes).
const FIEMAP_HEADER_WORDS: usize = 4;
const FIEMAP_EXTENT_WORDS: usize = 7;

/// The extents of `file` (ioctl `FS_IOC_FIEMAP`), in file order. Filesystems without FIEMAP
/// (tmpfs, some network and FUSE filesystems) answer `EOPNOTSUPP`: the caller then keeps file
/// order.
#[cfg(target_os = "linux")]
pub fn fiemap(file: &File) -> io::Result<Vec<Extent>> {
    let mut out = Vec::new();
    // u64 words keep the buffer 8-byte aligned, as the kernel's structs are.
    let mut buf = vec![0u64; FIEMAP_HEADER_WORDS + FIEMAP_BATCH * FIEMAP_EXTENT_WORDS];
    let mut start = 0u64;
    loop {
        buf.fill(0);
        buf[0] = start; // fm_start
        buf[1] = u64::MAX - start; // fm_length: to the end
                                   // fm_flags = 0 (no FIEMAP_FLAG_SYNC: only clean, allocated files are read here),
                                   // fm_mapped_extents = 0 (out), then fm_extent_count: little-endian word halves are
                                   // not portable, so write the u32s through their byte offsets.
        set_u32(&mut buf, 20, 0);
        set_u32(&mut buf, 24, FIEMAP_BATCH as u32);
        // SAFETY: `buf` is a live, 8-byte aligned buffer as large as the header plus
        // `fm_extent_count` extents, which is all the kernel writes; the fd is valid.
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP, buf.as_mut_ptr()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let mapped = get_u32(&buf, 20) as usize;
        if mapped == 0 {
            return Ok(out);
        }
        let mut last = false;
        for i in 0..mapped.min(FIEMAP_BATCH) {
            let e = FIEMAP_HEADER_WORDS + i * FIEMAP_EXTENT_WORDS;
            let flags = get_u32(&buf, (e + 5) * 8);
            let unknown = FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_INLINE;
            let extent = Extent {
                logical: buf[e],
                physical: (flags & unknown == 0).then_some(buf[e + 1]),
                length: buf[e + 2],
            };
            start = extent.logical + extent.length;
            out.push(extent);
            last |= flags & FIEMAP_EXTENT_LAST != 0;
        }
        if last {
            return Ok(out);
        }
    }
}

/// The native-endian u32 at byte `offset` of a word buffer.
fn get_u32(buf: &[u64], offset: usize) -> u32 {
    let word = buf[offset / 8].to_ne_bytes();
    let at = offset % 8;
    u32::from_ne_bytes([word[at], word[at + 1], word[at + 2], word[at + 3]])
}

fn set_u32(buf: &mut [u64], offset: usize, value: u32) {
    let mut word = buf[offset / 8].to_ne_bytes();
    let at = offset % 8;
    word[at..at + 4].copy_from_slice(&value.to_ne_bytes());
    buf[offset / 8] = u64::from_ne_bytes(word);
}

/// Put the calling thread in the idle I/O class (`ionice -c3`): its reads are served only
/// when no other task wants the disk.
pub fn ioprio_set_idle_thread() -> io::Result<()> {
    let prio = IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT;
    // SAFETY: ioprio_set takes three integers; `who == 0` targets the calling thread only.
    let rc = unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, prio) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether the kernel has `cachestat(2)` (Linux ≥ 6.5).
///
/// Probed with an invalid fd, so no file is touched: the kernel checks the fd first and answers
/// EBADF when the syscall exists, ENOSYS when it does not (or when a seccomp filter hides it).
#[must_use]
pub fn cachestat_available() -> bool {
    // struct cachestat_range { __u64 off, len; } and struct cachestat { 6 × __u64 }.
    let range = [0u64; 2];
    let mut out = [0u64; 6];
    // SAFETY: both pointers refer to live buffers of the sizes the kernel's structs have; the
    // fd is invalid on purpose, so the call cannot act on any file.
    let rc = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            libc::c_uint::MAX,
            range.as_ptr(),
            out.as_mut_ptr(),
            0 as libc::c_uint,
        )
    };
    rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ENOSYS)
}

/// How many of the pages of `file`'s first `len` bytes are in the page cache, by `cachestat(2)`
/// (Linux ≥ 6.5): one walk over the cache's folios, where mincore looks each page up alone.
/// `Ok(None)` when the kernel lacks it. Like mincore it answers only for files this user owns or
/// may write (EPERM otherwise), so callers ask only where mincore would be exact.
pub fn cached_pages(file: &File, len: u64) -> io::Result<Option<u64>> {
    if len == 0 {
        return Ok(Some(0));
    }
    Ok(cachestat(file, 0, len)?.map(|c| c.cached))
}

/// `cachestat(2)`'s answer for a range of a file, in pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStat {
    /// In the page cache now.
    pub cached: u64,
    pub dirty: u64,
    pub writeback: u64,
    /// Not cached, but the kernel keeps a shadow entry for them: they were in the cache and
    /// reclaim (memory pressure, DAMON's pageout, `MADV_PAGEOUT`) took them out. A drop by
    /// `POSIX_FADV_DONTNEED` or truncation leaves none (checked on 6.18: it clears the shadows).
    pub evicted: u64,
    /// Of `evicted`, those whose return would count as a refault of the working set.
    pub recently_evicted: u64,
}

/// `cachestat(2)` (Linux ≥ 6.5) of the bytes `[offset, offset + len)` of `file` (`len` 0: to
/// the end). `Ok(None)` when the kernel lacks it; EPERM for a file this user neither owns nor
/// may write, as mincore.
pub fn cachestat(file: &File, offset: u64, len: u64) -> io::Result<Option<CacheStat>> {
    // struct cachestat_range { __u64 off, len; }; struct cachestat { __u64 nr_cache, nr_dirty,
    // nr_writeback, nr_evicted, nr_recently_evicted; } (one spare word).
    let range = [offset, len];
    let mut out = [0u64; 6];
    // SAFETY: both pointers refer to live buffers at least as large as the kernel's structs;
    // the fd is valid for the call's length; flags must be 0.
    let rc = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            range.as_ptr(),
            out.as_mut_ptr(),
            0 as libc::c_uint,
        )
    };
    if rc == 0 {
        return Ok(Some(CacheStat {
            cached: out[0],
            dirty: out[1],
            writeback: out[2],
            evicted: out[3],
            recently_evicted: out[4],
        }));
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOSYS) => Ok(None),
        _ => Err(e),
    }
}

/// Whether the effective user may open `file` for writing, as the kernel's `file_permission(…,
/// MAY_WRITE)` in mincore's check would decide: `faccessat2(fd, "", W_OK, AT_EACCESS |
/// AT_EMPTY_PATH)` on the open file (so it is the very inode we map), falling back to the path
/// on kernels before 5.8. A read-only filesystem answers EROFS: not writable.
#[must_use]
pub fn writable(file: &File, path: &Path) -> bool {
    let empty = c"";
    // SAFETY: `empty` is a NUL-terminated string that outlives the call; the fd is valid.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_faccessat2,
            file.as_raw_fd(),
            empty.as_ptr(),
            libc::W_OK,
            libc::AT_EACCESS | libc::AT_EMPTY_PATH,
        )
    };
    if rc == 0 {
        return true;
    }
    match io::Error::last_os_error().raw_os_error() {
        Some(libc::ENOSYS | libc::EINVAL) => writable_by_path(path),
        _ => false,
    }
}

fn writable_by_path(path: &Path) -> bool {
    let Ok(cpath) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `cpath` is NUL-terminated and outlives the call.
    let rc =
        unsafe { libc::faccessat(libc::AT_FDCWD, cpath.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    rc == 0
}

/// Let a write to a closed pipe end the process quietly, as it does for `cat` (CLI mode only).
///
/// Rust starts programs with SIGPIPE ignored, so `about-startup-host residency | head` would get
/// EPIPE from every later `println!` and panic. Host mode keeps the Rust default: there a closed
/// stdout means Firefox went away, which the host reports on stderr before exiting.
pub fn default_sigpipe() {
    // SAFETY: setting a signal's disposition to SIG_DFL installs no handler and touches no memory.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The page size the kernel uses for the page cache and mincore (4096 on x86-64).
#[must_use]
pub fn page_size() -> usize {
    static PAGE: OnceLock<usize> = OnceLock::new();
    *PAGE.get_or_init(rustix::param::page_size)
}

/// Clock ticks per second (`USER_HZ`), the unit of /proc/<pid>/stat times.
#[must_use]
pub fn clk_tck() -> u64 {
    // From the auxiliary vector (AT_CLKTCK), as glibc's sysconf(_SC_CLK_TCK) does.
    Some(rustix::param::clock_ticks_per_second())
        .filter(|&n| n > 0)
        .unwrap_or(100)
}

/// Take an exclusive `flock(2)` on `file`, waiting for other holders; released when the file
/// is closed.
pub fn flock_exclusive(file: &File) -> io::Result<()> {
    loop {
        // SAFETY: flock takes a descriptor we own (borrowed from `file`) and a flag; no memory.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// The effective user id.
#[must_use]
pub fn geteuid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Whether this process has CAP_FOWNER in its effective set (then mincore is exact for every
/// file). Read from /proc/self/status so no capability library is needed.
#[must_use]
pub fn has_cap_fowner() -> bool {
    super::proc::read_system("self/status", super::proc::SMALL_BYTES)
        .ok()
        .and_then(|s| cap_eff(&String::from_utf8_lossy(&s)))
        .is_some_and(|caps| caps & (1 << CAP_FOWNER) != 0)
}

/// This process's user namespace's id maps, or `None` in the initial namespace (where every id
/// is mapped). CAP_FOWNER in a user namespace counts, for the kernel
/// (`capable_wrt_inode_uidgid`), only on inodes whose owner and group are mapped in it.
#[must_use]
pub fn user_namespace() -> Option<IdMaps> {
    let read = |p: &str| {
        let bytes = super::proc::read_system(p, super::proc::SMALL_BYTES).ok()?;
        String::from_utf8(bytes).ok()
    };
    let overflow = |p: &str| read(p).and_then(|s| s.trim().parse().ok()).unwrap_or(65534);
    IdMaps::parse(
        &read("self/uid_map")?,
        &read("self/gid_map")?,
        overflow("sys/kernel/overflowuid"),
        overflow("sys/kernel/overflowgid"),
    )
}

/// The uid and gid maps of a user namespace (`inside outside count` lines), as ranges of the
/// ids seen inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdMaps {
    uids: Vec<(u32, u32)>,
    gids: Vec<(u32, u32)>,
    overflow_uid: u32,
    overflow_gid: u32,
}

impl IdMaps {
    /// `None` for the initial namespace's identity maps (`0 0 4294967295`).
    #[must_use]
    pub fn parse(
        uid_map: &str,
        gid_map: &str,
        overflow_uid: u32,
        overflow_gid: u32,
    ) -> Option<Self> {
        let ranges = |text: &str| -> Vec<(u32, u32)> {
            text.lines()
                .filter_map(|l| {
                    let f: Vec<u64> = l
                        .split_whitespace()
                        .filter_map(|x| x.parse().ok())
                        .collect();
                    let (&inside, &count) = (f.first()?, f.get(2)?);
                    Some((
                        u32::try_from(inside).ok()?,
                        u32::try_from(count).unwrap_or(u32::MAX),
                    ))
                })
                .collect()
        };
        let identity =
            |text: &str| text.split_whitespace().collect::<Vec<_>>() == ["0", "0", "4294967295"];
        if identity(uid_map) && identity(gid_map) {
            return None;
        }
        Some(IdMaps {
            uids: ranges(uid_map),
            gids: ranges(gid_map),
            overflow_uid,
            overflow_gid,
        })
    }

    /// Whether a file that `stat` shows as `uid:gid` from inside the namespace has both mapped.
    /// An unmapped id shows as the overflow id, so that id counts as unmapped even where a
    /// range covers it: "hidden" in doubt, never a made-up "exact".
    #[must_use]
    pub fn maps(&self, uid: u32, gid: u32) -> bool {
        let inside = |ranges: &[(u32, u32)], id: u32| {
            ranges.iter().any(|&(first, count)| {
                id >= first && u64::from(id) < u64::from(first) + u64::from(count)
            })
        };
        uid != self.overflow_uid
            && gid != self.overflow_gid
            && inside(&self.uids, uid)
            && inside(&self.gids, gid)
    }
}

/// The `CapEff:` hex mask of a /proc/<pid>/status text.
fn cap_eff(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
}

/// The running kernel's release (`uname -r`), from /proc so no unsafe is needed.
#[must_use]
pub fn kernel_release() -> String {
    super::proc::read_system("sys/kernel/osrelease", super::proc::SMALL_BYTES)
        .map(|s| String::from_utf8_lossy(&s).trim().to_owned())
        .unwrap_or_default()
}

/// Split a Linux `dev_t` into (major, minor) as glibc's `gnu_dev_major`/`gnu_dev_minor` do; this
/// is how /proc/<pid>/maps prints the device.
#[must_use]
pub fn dev_major_minor(dev: u64) -> (u32, u32) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    // Both fit in 32 bits by construction of the encoding (12+20 and 8+24 bits).
    (
        u32::try_from(major).unwrap_or(u32::MAX),
        u32::try_from(minor).unwrap_or(u32::MAX),
    )
}

fn to_off(n: u64) -> io::Result<libc::off_t> {
    libc::off_t::try_from(n).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

#[cfg(test)]
#[path = "sys_tests.rs"]
mod tests;

/// Move the calling thread to `SCHED_IDLE`: it runs only when a CPU has nothing else to run.
/// Any user may lower their own thread's priority so.
pub fn sched_idle_this_thread() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param for the call.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
