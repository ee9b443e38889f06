//! Pure parsers of the /proc formats the host reads (the bytes come from [`super`]'s reader):
//! `/proc/<pid>/stat` and `/proc/<pid>/io` by `procfs-core` (parsers only, no I/O of their own),
//! the rest a few lines each. None may panic on any input (`fuzz/fuzz_targets/proc.rs`).
//!
//! Measured against the hand-written parsers `procfs-core` replaced: a scan of every process's
//! stat took 780 µs against 746 µs (median of 200, 80 processes; docs/benchmarks.md), which does
//! not matter for a scan done once per request.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use procfs_core::FromRead;

/// The fields of /proc/<pid>/stat this crate uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub comm: String,
    pub ppid: i32,
    /// Field 12: major page faults (pages read from storage through faults).
    pub majflt: u64,
    /// Field 22: start time in clock ticks since boot.
    pub starttime: u64,
    /// Field 3: `R`, `S`, `D`, … `Z` for a process that has exited and waits to be reaped.
    pub state: char,
}

/// Parse a /proc/<pid>/stat line (`comm` may itself hold spaces and parentheses).
#[must_use]
pub fn parse_stat(line: &[u8]) -> Option<Stat> {
    // The kernel writes `pid (comm) state …`. procfs-core slices one byte before the first `(`
    // and two after the last `)` unchecked: anything else is refused here, not left to panic.
    let text = String::from_utf8_lossy(line);
    let text = text.trim().as_bytes();
    let open = text.iter().position(|b| *b == b'(')?;
    let close = text.iter().rposition(|b| *b == b')')?;
    if open == 0 || close < open || text[open - 1] != b' ' || text.get(close + 1) != Some(&b' ') {
        return None;
    }
    let stat = procfs_core::process::Stat::from_read(line).ok()?;
    Some(Stat {
        comm: stat.comm,
        ppid: stat.ppid,
        majflt: stat.majflt,
        starttime: stat.starttime,
        state: stat.state,
    })
}

/// `read_bytes` of a /proc/<pid>/io text.
#[must_use]
pub fn parse_io_read_bytes(text: &[u8]) -> Option<u64> {
    // The kernel writes it in ASCII; procfs-core cuts a byte off each field name unchecked, which
    // would panic inside any other character.
    if !text.is_ascii() {
        return None;
    }
    procfs_core::process::Io::from_read(text)
        .ok()
        .map(|io| io.read_bytes)
}

/// `btime` (boot time, seconds since the epoch) of /proc/stat.
#[must_use]
pub fn parse_btime(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// NUL-separated fields (`/proc/<pid>/cmdline`, `environ`), empty ones dropped.
#[must_use]
pub fn split_nul(bytes: &[u8]) -> Vec<OsString> {
    bytes
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| OsString::from_vec(f.to_vec()))
        .collect()
}

/// `NAME=value` fields of an environment block as pairs; a field without `=` is dropped.
#[must_use]
pub fn parse_environ(bytes: &[u8]) -> Vec<(OsString, OsString)> {
    bytes
        .split(|b| *b == 0)
        .filter_map(|f| {
            let eq = f.iter().position(|b| *b == b'=').filter(|i| *i > 0)?;
            Some((
                OsStr::from_bytes(&f[..eq]).to_os_string(),
                OsStr::from_bytes(&f[eq + 1..]).to_os_string(),
            ))
        })
        .collect()
}

/// The value of `name` in a NUL-separated environment block (the first one, as getenv).
#[must_use]
pub fn environ_var(environ: &[u8], name: &[u8]) -> Option<Vec<u8>> {
    environ.split(|b| *b == 0).find_map(|entry| {
        let rest = entry.strip_prefix(name)?;
        rest.strip_prefix(b"=").map(<[u8]>::to_vec)
    })
}

/// `PPid` and the four `Uid` values of a `/proc/<pid>/status` text.
#[must_use]
pub fn parse_status(text: &[u8]) -> Option<(i32, [u32; 4])> {
    let text = String::from_utf8_lossy(text);
    let mut ppid = None;
    let mut uids = None;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("PPid:") {
            ppid = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("Uid:") {
            let mut it = v.split_whitespace().map(str::parse::<u32>);
            let mut four = [0u32; 4];
            for slot in &mut four {
                *slot = it.next()?.ok()?;
            }
            uids = Some(four);
        }
    }
    Some((ppid?, uids?))
}

/// Who a process is, from its `/proc/<pid>/status`: its state, its parent, its four uids and four gids
/// (real, effective, saved, filesystem) and its effective capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Credentials {
    /// `R`, `S`, `D`, … `Z` for a process that has exited and waits to be reaped.
    pub state: char,
    pub ppid: i32,
    pub uids: [u32; 4],
    pub gids: [u32; 4],
    pub cap_eff: u64,
}

/// A `/proc/<pid>/status` text's [`Credentials`]; `None` if a line is missing or malformed.
/// Each key is taken from the first line that starts with it: the kernel escapes the one free
/// text in the file (`Name:`, the process's own name), so no line can be forged there.
#[must_use]
pub fn parse_credentials(text: &[u8]) -> Option<Credentials> {
    let text = String::from_utf8_lossy(text);
    let first = |key: &str| text.lines().find_map(|l| l.strip_prefix(key));
    let four = |key: &str| -> Option<[u32; 4]> {
        let mut it = first(key)?.split_whitespace().map(str::parse::<u32>);
        let mut out = [0u32; 4];
        for slot in &mut out {
            *slot = it.next()?.ok()?;
        }
        Some(out)
    };
    Some(Credentials {
        state: first("State:")?.trim().chars().next()?,
        ppid: first("PPid:")?.trim().parse().ok()?,
        uids: four("Uid:")?,
        gids: four("Gid:")?,
        cap_eff: u64::from_str_radix(first("CapEff:")?.trim(), 16).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_tricky_comm() {
        let line = "4242 (Web Content (x)) S 4100 4100 4100 0 -1 4194560 12345 0 77 0 \
                    100 20 0 0 20 0 30 0 123456 2000000000 50000 18446744073709551615 \
                    1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";
        let stat = parse_stat(line.as_bytes()).unwrap();
        assert_eq!(stat.comm, "Web Content (x)");
        assert_eq!(stat.ppid, 4100);
        assert_eq!(stat.majflt, 77);
        assert_eq!(stat.starttime, 123_456);
        assert_eq!(parse_stat(b"1 (init) S 0"), None);
    }

    /// Found by the `proc` fuzz target: procfs-core slices `stat` around the parentheses and
    /// cuts the last byte off each `io` field name unchecked, so texts the kernel never writes
    /// made it panic instead of failing.
    #[test]
    fn texts_the_kernel_never_writes_are_none_not_a_panic() {
        for text in [
            &b")(=\x06"[..],
            "\u{e9}(x) S 1".as_bytes(),
            b"(x) S 1",
            b"1 (x)",
        ] {
            assert_eq!(
                parse_stat(text),
                None,
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
        assert_eq!(parse_io_read_bytes("\u{c}\u{fffd} \u{c}8".as_bytes()), None);
    }

    #[test]
    fn io_and_btime() {
        let io =
            b"rchar: 10\nwchar: 2\nsyscr: 1\nsyscw: 1\nread_bytes: 301989888\nwrite_bytes: 0\n\
                   cancelled_write_bytes: 0\n";
        assert_eq!(parse_io_read_bytes(io), Some(301_989_888));
        assert_eq!(parse_io_read_bytes(b"rchar: 1\n"), None);
        let stat = "cpu  1 2 3\nintr 5\nbtime 1763768000\nprocesses 9\n";
        assert_eq!(parse_btime(stat), Some(1_763_768_000));
    }

    #[test]
    fn nul_fields_and_environ_parse_as_proc_writes_them() {
        assert_eq!(
            split_nul(b"/usr/lib/firefox-esr/firefox-esr\0-profile\0/tmp/p q\0"),
            ["/usr/lib/firefox-esr/firefox-esr", "-profile", "/tmp/p q"].map(OsString::from)
        );
        assert_eq!(
            parse_environ(b"HOME=/home/u\0EMPTY=\0NOEQUALS\0=x\0A=b=c\0"),
            [("HOME", "/home/u"), ("EMPTY", ""), ("A", "b=c")].map(|(k, v)| (k.into(), v.into()))
        );
    }

    #[test]
    fn status_and_environ_parse_what_proc_gives() {
        let own = std::fs::read("/proc/self/status").unwrap();
        let (ppid, uids) = parse_status(&own).unwrap();
        assert_eq!(
            ppid,
            i32::try_from(std::os::unix::process::parent_id()).unwrap()
        );
        assert_eq!(uids[1], crate::os::sys::geteuid());
        assert_eq!(parse_status(b"Name:\tx\nUid:\t1\t2\n"), None);
        let env = b"A=1\0XDG_STATE_HOME=/s/t\0XDG_STATE_HOME_X=no\0XDG_STATE_HOME=/second\0";
        assert_eq!(environ_var(env, b"XDG_STATE_HOME").unwrap(), b"/s/t");
        assert_eq!(environ_var(env, b"B"), None);
        assert_eq!(environ_var(b"XDG_STATE_HOME", b"XDG_STATE_HOME"), None);
    }

    /// Recorded with `cat /proc/self/status` as root and, through setpriv, as nobody
    /// (tests/fixtures/tracer/).
    #[test]
    fn credentials_from_recorded_status_files() {
        let nobody = parse_credentials(include_bytes!(
            "../../../tests/fixtures/tracer/status-nobody.txt"
        ))
        .unwrap();
        assert_eq!(nobody.uids, [65534; 4]);
        assert_eq!(nobody.gids, [65534; 4]);
        assert_eq!(nobody.cap_eff, 0);
        assert_eq!(nobody.state, 'R');
        let root = parse_credentials(include_bytes!(
            "../../../tests/fixtures/tracer/status-root.txt"
        ))
        .unwrap();
        assert_eq!(root.uids, [0; 4]);
        assert_ne!(root.cap_eff, 0);
        // A name that looks like a Uid line is escaped by the kernel; a text without the lines
        // is no answer.
        assert_eq!(parse_credentials(b"Name:\tx\nUid: 0 0 0 0\n"), None);
    }
}
