//! What a command did to the files of one folder, as the kernel saw it: the command run under
//! `strace -f -y` (every descriptor printed with the path it holds), and each call on a path in
//! the folder judged against "reading and nothing else" (issue 31, item 3: a profile Firefox may
//! be writing is opened read-only, read without moving its access time, never locked, never
//! advised out of the cache, never written).

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// `cmd` wrapped in `strace -ff -y -qq -o log`: run it as you would `cmd`. One log per process
/// (`log.PID`), so that no call is split across lines by another process's; [`read_log`] joins them.
pub fn under_strace(cmd: &Command, log: &Path) -> Command {
    let strace = Path::new("/usr/bin/strace");
    assert!(
        strace.exists(),
        "this test needs strace (apt-get install strace): it checks what the kernel was asked"
    );
    let mut traced = Command::new(strace);
    traced
        .args(["-ff", "-y", "-qq", "-o"])
        .arg(log)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => traced.env(k, v),
            None => traced.env_remove(k),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        traced.current_dir(dir);
    }
    traced
}

/// The logs [`under_strace`] wrote with the prefix `log`, each line led by its process's pid.
pub fn read_log(log: &Path) -> String {
    let name = log.file_name().unwrap().to_str().unwrap();
    let mut out = String::new();
    for entry in std::fs::read_dir(log.parent().unwrap()).unwrap() {
        let path = entry.unwrap().path();
        let Some(pid) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(name))
            .and_then(|n| n.strip_prefix('.'))
        else {
            continue;
        };
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            out.push_str(&format!("{pid} {line}\n"));
        }
    }
    assert!(
        !out.is_empty(),
        "strace wrote no log at {}.*",
        log.display()
    );
    out
}

/// What the log shows of the files below `dir`: every call that broke the rules, and how many
/// reads (`readahead`, `pread64`, `preadv`, `preadv2`, `read`) of each file there were, so that
/// a check that saw nothing cannot pass.
#[derive(Debug, Default)]
pub struct Verdict {
    pub broken: Vec<String>,
    pub reads: HashMap<String, u64>,
}

/// Judge the strace `log` for `dir` (a real path, no trailing slash).
pub fn judge(log: &str, dir: &str) -> Verdict {
    let mut out = Verdict::default();
    // (pid, fd) -> the flags the descriptor was opened with.
    let mut opened: HashMap<(String, String), String> = HashMap::new();
    let inside = |s: &str| s.contains(&format!("{dir}/")) || s.contains(&format!("{dir}>"));
    for line in log.lines() {
        let Some((pid, call)) = line.split_once(' ') else {
            continue;
        };
        let call = call.trim_start(); // strace pads the pid column
        if !inside(call) {
            continue;
        }
        let name = call.split('(').next().unwrap_or("");
        let first_fd = || fd_of(call.split_once('(').map_or("", |(_, rest)| rest));
        let mut bad = |why: &str| out.broken.push(format!("{why}: {line}"));
        match name {
            "open" | "openat" | "openat2" => {
                let flags = flags_of(call);
                if ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"]
                    .iter()
                    .any(|f| flags.split('|').any(|g| g == *f))
                {
                    bad("opened for writing");
                }
                if let Some(fd) = call.rsplit_once("= ").and_then(|(_, r)| fd_of(r)) {
                    opened.insert((pid.to_owned(), fd), flags);
                }
            }
            "readahead" | "pread64" | "preadv" | "preadv2" | "read" | "mmap" => {
                let fd = if name == "mmap" {
                    // mmap(addr, len, prot, flags, fd<path>, offset)
                    if call.contains("PROT_WRITE") {
                        bad("mapped writable");
                    }
                    call.split(", ").nth(4).and_then(fd_of)
                } else {
                    first_fd()
                };
                let Some(fd) = fd else { continue };
                let flags = opened.get(&(pid.to_owned(), fd.clone()));
                if !flags.is_some_and(|f| f.contains("O_NOATIME")) {
                    bad("read through a descriptor opened without O_NOATIME");
                }
                if name != "mmap" {
                    let file = path_of(call).unwrap_or_default();
                    *out.reads.entry(file).or_default() += 1;
                }
            }
            "fcntl" | "fcntl64" => {
                let cmd = call.split(", ").nth(1).unwrap_or("");
                let cmd = cmd.trim_end_matches(')').split(')').next().unwrap_or(cmd);
                if !["F_GETFD", "F_SETFD", "F_GETFL", "F_DUPFD_CLOEXEC"]
                    .iter()
                    .any(|ok| cmd.starts_with(ok))
                {
                    bad("fcntl other than descriptor flags (a lock?)");
                }
            }
            "fadvise64" => {
                if !call.contains("POSIX_FADV_RANDOM") && !call.contains("POSIX_FADV_WILLNEED") {
                    bad("fadvise other than RANDOM or WILLNEED (DONTNEED drops Firefox's pages)");
                }
            }
            "ioctl" => {
                if !call.contains("FS_IOC_FIEMAP") {
                    bad("ioctl other than FIEMAP");
                }
            }
            "close" | "statx" | "newfstatat" | "fstat" | "readlink" | "readlinkat" | "lseek"
            | "getdents64" | "munmap" => {}
            _ => bad("a call that is not reading"),
        }
    }
    out
}

/// The descriptor number at the start of `s` (`9</path>` -> `9`).
fn fd_of(s: &str) -> Option<String> {
    let digits: String = s.trim().chars().take_while(char::is_ascii_digit).collect();
    (!digits.is_empty() && s.trim()[digits.len()..].starts_with('<')).then_some(digits)
}

/// The path of the first descriptor in `call` (`9</p/places.sqlite>` -> `/p/places.sqlite`).
fn path_of(call: &str) -> Option<String> {
    let start = call.find('<')? + 1;
    let end = start + call[start..].find('>')?;
    Some(call[start..end].to_owned())
}

/// The open flags of an `open`/`openat`/`openat2` call.
fn flags_of(call: &str) -> String {
    if let Some((_, rest)) = call.split_once("flags=") {
        return rest.split([',', '}']).next().unwrap_or("").to_owned();
    }
    call.split(", ")
        .find(|a| a.starts_with("O_"))
        .unwrap_or("")
        .trim_end_matches(')')
        .to_owned()
}
