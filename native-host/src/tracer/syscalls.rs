//! The last lock, once armed, confined and without capabilities: a seccomp-bpf allow-list (the
//! `seccompiler` crate) of the system calls the armed tracer makes, on every thread. Root's uid
//! is still 0, and Landlock does not govern what needs no path it covers (chmod and chown of a
//! descriptor, connect to an abstract socket, kill, setuid, mount…): those are not on the list.
//! An unlisted call fails with EPERM, as a refused call does, and is not fatal: an error path no
//! test reached then ends the session with its teardown, instead of killing a tracer with its
//! instances armed (docs/design/privilege.md).

use std::collections::BTreeMap;

use seccompiler::SeccompCmpArgLen::Dword;
use seccompiler::SeccompCmpOp::Eq;
use seccompiler::{BpfProgram, SeccompAction, SeccompCondition, SeccompFilter, SeccompRule};

/// What the armed tracer calls (strace of the root tests and the traced e2e launches,
/// docs/design/privilege.md): its descriptors, `/proc`, its own instances' removal, memory,
/// threads, signals to itself, clocks, the end.
const ALLOWED: &[libc::c_long] = &[
    libc::SYS_read,
    libc::SYS_write,
    libc::SYS_pread64,
    libc::SYS_close,
    libc::SYS_openat,
    libc::SYS_statx,
    libc::SYS_newfstatat,
    libc::SYS_lseek,
    libc::SYS_getdents64,
    libc::SYS_fcntl,
    libc::SYS_ppoll,
    libc::SYS_futex,
    libc::SYS_clock_gettime,
    libc::SYS_clock_nanosleep,
    libc::SYS_sched_yield,
    libc::SYS_mmap,
    libc::SYS_munmap,
    libc::SYS_mremap,
    libc::SYS_mprotect,
    libc::SYS_madvise,
    libc::SYS_brk,
    libc::SYS_rt_sigaction,
    libc::SYS_rt_sigprocmask,
    libc::SYS_rt_sigreturn,
    libc::SYS_sigaltstack,
    libc::SYS_clone,
    libc::SYS_clone3,
    libc::SYS_set_robust_list,
    libc::SYS_rseq,
    libc::SYS_gettid,
    libc::SYS_getpid,
    libc::SYS_getrandom,
    libc::SYS_sched_getaffinity,
    libc::SYS_pidfd_open,
    libc::SYS_unlinkat,
    libc::SYS_shutdown,
    libc::SYS_sendto,
    libc::SYS_recvfrom,
    libc::SYS_wait4,
    libc::SYS_exit,
    libc::SYS_exit_group,
    libc::SYS_restart_syscall,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_open,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_poll,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_rmdir,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_nanosleep,
];

/// The allow-list as a BPF program: `kill` is allowed for `child` alone (the sudo split's
/// parent passes SIGTERM on to it), `tgkill` for this process's own threads (abort), anything
/// else unlisted fails with EPERM.
pub fn program(child: Option<i32>) -> Result<BpfProgram, seccompiler::Error> {
    let arg0 = |v: i32| SeccompRule::new(vec![SeccompCondition::new(0, Dword, Eq, v as u64)?]);
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = ALLOWED.iter().map(|&n| (n, vec![])).collect();
    rules.insert(libc::SYS_tgkill, vec![arg0(std::process::id() as i32)?]);
    if let Some(child) = child {
        rules.insert(libc::SYS_kill, vec![arg0(child)?]);
    }
    let refuse = SeccompAction::Errno(libc::EPERM as u32);
    let arch = std::env::consts::ARCH.try_into()?;
    Ok(SeccompFilter::new(rules, refuse, SeccompAction::Allow, arch)?.try_into()?)
}

/// Apply `program` to every thread of this process (TSYNC), for good, each call it refuses
/// logged by the kernel (LOG: `audit: type=1326 … syscall=N` in the kernel's log, the trace of
/// an error path no test reached). seccompiler applies no LOG flag, hence the call itself.
pub fn lock(program: &BpfProgram) -> Result<(), String> {
    let prog = libc::sock_fprog {
        len: u16::try_from(program.len()).map_err(|_| "seccomp: program too long".to_owned())?,
        filter: program.as_ptr().cast_mut().cast(),
    };
    let flags = libc::SECCOMP_FILTER_FLAG_TSYNC | libc::SECCOMP_FILTER_FLAG_LOG;
    // SAFETY: `prog` points into `program`, alive for the call; seccompiler's sock_filter has
    // the kernel's layout. no_new_privs is set (confine.rs).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            flags,
            &raw const prog,
        )
    };
    match rc {
        0 => Ok(()),
        _ => Err(format!("seccomp: {}", std::io::Error::last_os_error())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    /// errno of a call that returned -1, else 0.
    fn rc(r: libc::c_long) -> i32 {
        if r == -1 {
            std::io::Error::last_os_error().raw_os_error().unwrap_or(-1)
        } else {
            0
        }
    }

    /// Every call below, without (first) and with the allow-list, in a forked child (the filter
    /// is for good): the errno of each, 0 when it worked.
    fn calls(locked: bool) -> Vec<i32> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let listener = std::os::unix::net::UnixListener::bind(dir.path().join("s")).unwrap();
        let c = |p: &std::path::Path| CString::new(p.as_os_str().as_bytes()).unwrap();
        let (file, sub, sock) = (c(&file), c(&sub), c(&dir.path().join("s")));
        let status = CString::new("/proc/self/status").unwrap();
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (d, s) in addr.sun_path.iter_mut().zip(sock.as_bytes()) {
            *d = *s as libc::c_char;
        }
        let mut sleeper = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let other = sleeper.id() as i32;
        let program = program(Some(other)).unwrap();
        let mut pipe = [0; 2];
        assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
        // SAFETY: the child makes only system calls (no allocation) and ends with _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe {
                let s = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
                let (uid, gid, parent) = (libc::getuid(), libc::getgid(), libc::getppid());
                if locked && lock(&program).is_err() {
                    libc::_exit(3);
                }
                let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
                let fd = libc::open(status.as_ptr(), libc::O_RDONLY);
                let mut buf = [0u8; 64];
                let mut ts: libc::timespec = std::mem::zeroed();
                let out: [i32; 13] = [
                    // Refused once locked.
                    rc(libc::chmod(file.as_ptr(), 0o600) as _),
                    rc(libc::chown(file.as_ptr(), uid, gid) as _),
                    rc(libc::connect(s, (&raw const addr).cast(), len) as _),
                    rc(libc::kill(parent, 0) as _),
                    rc(libc::setuid(uid) as _),
                    rc(libc::mount(
                        c"none".as_ptr(),
                        sub.as_ptr(),
                        c"about-startup-none".as_ptr(),
                        0,
                        std::ptr::null(),
                    ) as _),
                    // Allowed.
                    rc(fd as _),
                    rc(libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) as _),
                    rc(libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), 0) as _),
                    rc(libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) as _),
                    rc(libc::kill(other, 0) as _),
                    rc(libc::syscall(libc::SYS_pidfd_open, other, 0) as _),
                    rc(libc::rmdir(sub.as_ptr()) as _),
                ];
                let bytes = std::slice::from_raw_parts(out.as_ptr().cast::<u8>(), 13 * 4);
                libc::write(pipe[1], bytes.as_ptr().cast(), bytes.len());
                libc::_exit(0);
            }
        }
        unsafe { libc::close(pipe[1]) };
        let mut out = [0u8; 52];
        let n = unsafe { libc::read(pipe[0], out.as_mut_ptr().cast(), 52) };
        let mut st = 0;
        unsafe { libc::waitpid(pid, &mut st, 0) };
        unsafe { libc::close(pipe[0]) };
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        drop(listener);
        assert_eq!(n, 52, "the child said nothing (status {st})");
        out.chunks(4)
            .map(|b| i32::from_ne_bytes(b.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn chmod_chown_connect_kill_setuid_and_mount_fail_with_eperm_and_what_it_makes_works() {
        let free = calls(false);
        let locked = calls(true);
        let eperm = libc::EPERM;
        // chmod, chown (to its own owner), connect (to its own listener), kill of its parent
        // (signal 0), setuid (to its own uid) work unlocked; mount (of a file system that does
        // not exist) fails unlocked for another reason as root (ENODEV), with EPERM otherwise.
        assert_eq!(&free[..5], &[0, 0, 0, 0, 0], "{free:?}");
        if unsafe { libc::geteuid() } == 0 {
            assert_ne!(free[5], eperm, "mount as root: {free:?}");
        }
        assert_eq!(&locked[..6], &[eperm; 6], "{locked:?}");
        // What the armed tracer makes works locked: open and read /proc, pread, the clock,
        // kill of the one child it may signal, a pidfd, removing a folder.
        assert_eq!(&locked[6..], &[0; 7], "{locked:?}");
    }
}
