//! Parsing of tracefs text lines (`trace_pipe` with `options/record-tgid` on) into typed events.
//!
//! A line looks like
//! `  firefox-esr-1234  (   1234) [001] ..... 123.456789: mm_filemap_add_to_page_cache: dev 254:0 ino b9f90 pfn=0x1 ofs=4096 order=0`.
//! The task name may hold spaces and dashes, so the pid is taken before the CPU column `[NNN]`.
//! Formats were read from `events/*/*/format` on kernel 6.18 (docs/PROTOCOL.md "trace").

/// One parsed line: who (thread id, process id when the kernel recorded it), when (seconds on
/// the instance's `trace_clock`), and what.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub tid: i32,
    pub tgid: Option<i32>,
    pub ts_ns: u64,
    pub event: Event,
}

/// The events the recorder arms. Devices are (major, minor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `filemap:mm_filemap_add_to_page_cache`: a folio of 2^order pages at page `index` entered
    /// the page cache.
    PageAdd {
        dev: (u32, u32),
        ino: u64,
        index: u64,
        order: u32,
        /// The page frame of the folio's first page (`pfn=`): where /proc/kpageflags tells
        /// whether the page was used after it was read (trace/used.rs).
        pfn: Option<u64>,
    },
    /// `filemap:mm_filemap_fault`: a page fault on the file at byte `ofs`.
    Fault { dev: (u32, u32), ino: u64, ofs: u64 },
    /// `readahead:*`: a readahead window of `pages` pages from page `index`.
    Readahead {
        kind: RaKind,
        dev: (u32, u32),
        ino: u64,
        index: u64,
        pages: u64,
    },
    /// `block:block_rq_issue`: a request for `sectors` 512-byte sectors at `sector`.
    BlockIssue {
        dev: (u32, u32),
        read: bool,
        sector: u64,
        sectors: u64,
    },
    /// `block:block_rq_complete`.
    BlockComplete {
        dev: (u32, u32),
        sector: u64,
        sectors: u64,
    },
    /// `sched:sched_process_fork` (threads too): `parent` created `child`.
    Fork { parent: i32, child: i32 },
    /// `sched:sched_process_exec`.
    Exec { pid: i32, filename: String },
    /// `exceptions:page_fault_user`: the instruction at `ip` touched `address`, which was not
    /// mapped (or not writable) yet. Every user fault, anonymous memory too: the build keeps
    /// those followed by a `mm_filemap_fault` on the same thread.
    UserFault { address: u64, ip: u64 },
}

/// Which readahead path opened a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RaKind {
    /// `page_cache_sync_ra`: a miss (a read or a fault) found the page absent.
    Sync,
    /// `page_cache_async_ra`: a read hit the marker of the previous window.
    Async,
    /// `page_cache_ra_unbounded`: forced (readahead(2), fadvise WILLNEED, fault-around).
    Forced,
    /// `page_cache_ra_order`: a large-folio window.
    Order,
}

/// Parse one `trace_pipe` line; `None` for headers, `[LOST n EVENTS]` lines and other events.
#[must_use]
pub fn parse_line(line: &str) -> Option<Line> {
    let (head, tail) = split_at_cpu(line)?;
    let (tid, tgid) = parse_task(head)?;
    let mut rest = tail.trim_start();
    // Optional irq-info flags ("....."), then "123.456789:".
    let mut ts_ns = None;
    for _ in 0..2 {
        let (tok, after) = rest.split_once(char::is_whitespace)?;
        if let Some(ts) = tok.strip_suffix(':').and_then(parse_ts) {
            ts_ns = Some(ts);
            rest = after.trim_start();
            break;
        }
        rest = after.trim_start();
    }
    let ts_ns = ts_ns?;
    let (name, payload) = rest
        .split_once(": ")
        .unwrap_or((rest.trim_end_matches(':'), ""));
    let event = parse_event(name, payload)?;
    Some(Line {
        tid,
        tgid,
        ts_ns,
        event,
    })
}

/// `[LOST n EVENTS]` lines that trace_pipe writes where its ring buffer overflowed.
#[must_use]
pub fn lost_in_line(line: &str) -> Option<u64> {
    let start = line.find("[LOST ")? + 6;
    let rest = &line[start..];
    rest.split_whitespace().next()?.parse().ok()
}

/// Split at the CPU column: the first `[` followed by digits and `]`.
fn split_at_cpu(line: &str) -> Option<(&str, &str)> {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'[' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            if j > i + 1 && j < bytes.len() && bytes[j] == b']' {
                return Some((&line[..i], &line[j + 1..]));
            }
        }
        i += 1;
    }
    None
}

/// The process and the name of its main thread, from a line whose task is a process's main
/// thread (its tid is its tgid): `(pid, comm)`. The kernel's `comm` of a main thread is the file
/// name of the program it runs (cut to 15 bytes), unless the program renamed it (Firefox's
/// children do: "Web Content", "Socket Process"). `None` for a thread's line or a line without
/// a tgid.
#[must_use]
pub fn main_thread_comm(line: &str) -> Option<(i32, &str)> {
    let (head, _) = split_at_cpu(line)?;
    let head = head.trim();
    let h = head.strip_suffix(')')?;
    let open = h.rfind('(')?;
    let tgid: i32 = h[open + 1..].trim().parse().ok()?;
    let (comm, tid) = h[..open].trim_end().rsplit_once('-')?;
    (tid.parse::<i32>().ok()? == tgid).then_some((tgid, comm.trim_start()))
}

/// `comm-tid (tgid)` or `comm-tid`; a tgid of `-------` is unknown.
fn parse_task(head: &str) -> Option<(i32, Option<i32>)> {
    let head = head.trim();
    let (task, tgid) = match head.strip_suffix(')') {
        Some(h) => {
            let open = h.rfind('(')?;
            (h[..open].trim_end(), h[open + 1..].trim().parse().ok())
        }
        None => (head, None),
    };
    let (_, tid) = task.rsplit_once('-')?;
    Some((tid.parse().ok()?, tgid))
}

/// "123.456789" (seconds, up to 9 decimals) to nanoseconds.
fn parse_ts(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    let secs: u64 = secs.parse().ok()?;
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut padded = frac.to_owned();
    while padded.len() < 9 {
        padded.push('0');
    }
    // A seconds field beyond u64 nanoseconds (~584 years of uptime) is not a timestamp.
    secs.checked_mul(1_000_000_000)?
        .checked_add(padded.parse::<u64>().unwrap_or(0))
}

/// `key=value` and `key value` pairs of a payload, in order.
fn fields(payload: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut toks = payload.split_whitespace();
    while let Some(tok) = toks.next() {
        if let Some((k, v)) = tok.split_once('=') {
            out.push((k, v));
        } else if let Some(v) = toks.next() {
            out.push((tok, v));
        }
    }
    out
}

fn field<'a>(f: &[(&'a str, &'a str)], key: &str) -> Option<&'a str> {
    f.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

fn num(f: &[(&str, &str)], key: &str) -> Option<u64> {
    field(f, key)?.parse().ok()
}

fn hex(f: &[(&str, &str)], key: &str) -> Option<u64> {
    u64::from_str_radix(field(f, key)?, 16).ok()
}

fn dev(s: &str, sep: char) -> Option<(u32, u32)> {
    let (a, b) = s.split_once(sep)?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn parse_event(name: &str, payload: &str) -> Option<Event> {
    match name {
        "mm_filemap_add_to_page_cache" => {
            let f = fields(payload);
            Some(Event::PageAdd {
                dev: dev(field(&f, "dev")?, ':')?,
                ino: hex(&f, "ino")?,
                index: num(&f, "ofs")? / 4096,
                order: u32::try_from(num(&f, "order").unwrap_or(0)).ok()?,
                pfn: field(&f, "pfn")
                    .and_then(|v| u64::from_str_radix(v.trim_start_matches("0x"), 16).ok()),
            })
        }
        "mm_filemap_fault" => {
            let f = fields(payload);
            Some(Event::Fault {
                dev: dev(field(&f, "dev")?, ':')?,
                ino: hex(&f, "ino")?,
                ofs: field(&f, "ofs")?.parse().ok()?,
            })
        }
        "page_cache_sync_ra"
        | "page_cache_async_ra"
        | "page_cache_ra_order"
        | "page_cache_ra_unbounded" => {
            let f = fields(payload);
            let kind = match name {
                "page_cache_sync_ra" => RaKind::Sync,
                "page_cache_async_ra" => RaKind::Async,
                "page_cache_ra_order" => RaKind::Order,
                _ => RaKind::Forced,
            };
            let pages = num(&f, "size").or_else(|| num(&f, "nr_to_read"))?;
            Some(Event::Readahead {
                kind,
                dev: dev(field(&f, "dev")?, ':')?,
                ino: hex(&f, "ino")?,
                index: num(&f, "index")?,
                pages,
            })
        }
        "block_rq_issue" | "block_rq_complete" => parse_block(name == "block_rq_issue", payload),
        "page_fault_user" => {
            let f = fields(payload);
            // `%ps` of a user address prints it in hex ("0x7f3a…").
            let addr = |k| u64::from_str_radix(field(&f, k)?.trim_start_matches("0x"), 16).ok();
            Some(Event::UserFault {
                address: addr("address")?,
                ip: addr("ip")?,
            })
        }
        "sched_process_fork" => {
            let f = fields(payload);
            Some(Event::Fork {
                parent: field(&f, "pid")?.parse().ok()?,
                child: field(&f, "child_pid")?.parse().ok()?,
            })
        }
        "sched_process_exec" => {
            let f = fields(payload);
            Some(Event::Exec {
                pid: field(&f, "pid")?.parse().ok()?,
                filename: field(&f, "filename")?.to_owned(),
            })
        }
        _ => None,
    }
}

/// `254,0 R 4096 () 123456 + 8 none,0,0 [comm]` (issue) or `254,0 R () 123456 + 8 none,0,0 [0]`
/// (complete): the sector is the token before `+`.
fn parse_block(issue: bool, payload: &str) -> Option<Event> {
    let toks: Vec<&str> = payload.split_whitespace().collect();
    let d = dev(toks.first()?, ',')?;
    let rwbs = toks.get(1)?;
    let plus = toks.iter().position(|t| *t == "+")?;
    let sector = toks.get(plus.checked_sub(1)?)?.parse().ok()?;
    let sectors = toks.get(plus + 1)?.parse().ok()?;
    Some(if issue {
        Event::BlockIssue {
            dev: d,
            read: rwbs.contains('R'),
            sector,
            sectors,
        }
    } else {
        Event::BlockComplete {
            dev: d,
            sector,
            sectors,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `tracefs_lines` fuzz target: a timestamp of 20 digits overflowed.
    #[test]
    fn a_timestamp_too_large_for_nanoseconds_is_not_one() {
        assert_eq!(parse_ts("18446744073.709551615"), Some(u64::MAX));
        assert_eq!(parse_ts("18446744074.0"), None);
        assert_eq!(parse_ts("99999999999999999999"), None);
    }

    #[test]
    fn a_main_threads_line_names_its_process() {
        assert_eq!(
            main_thread_comm("     crashhelper-25943 (  25943) [001] ..... 3.0: mm_filemap_fault: dev 254:0 ino 1 ofs=0"),
            Some((25943, "crashhelper"))
        );
        assert_eq!(
            main_thread_comm(
                " Web Content-7-8 (   7) [000] ..... 3.0: mm_filemap_fault: dev 254:0 ino 1 ofs=0"
            ),
            None,
            "a thread's line"
        );
        assert_eq!(
            main_thread_comm("  Socket Process-9   (  9) [000] ..... 3.0: x: y"),
            Some((9, "Socket Process"))
        );
        assert_eq!(
            main_thread_comm("glxtest-5 [000] ..... 3.0: x: y"),
            None,
            "no tgid"
        );
    }

    #[test]
    fn page_add_with_tgid_and_dashes_in_comm() {
        let l = parse_line(
            " Isolated Web-Co-4321  (   4300) [001] d..1.  3523.451835: mm_filemap_add_to_page_cache: dev 254:0 ino b9f90 pfn=0x1a2b ofs=52428800 order=2",
        )
        .unwrap();
        assert_eq!(l.tid, 4321);
        assert_eq!(l.tgid, Some(4300));
        assert_eq!(l.ts_ns, 3_523_451_835_000);
        assert_eq!(
            l.event,
            Event::PageAdd {
                dev: (254, 0),
                ino: 0xb9f90,
                index: 12800,
                order: 2,
                pfn: Some(0x1a2b),
            }
        );
    }

    #[test]
    fn unknown_tgid_and_no_flags() {
        let l =
            parse_line("cat-77 (-------) [000] 12.5: mm_filemap_fault: dev=254:0 ino=10 ofs=8192")
                .unwrap();
        assert_eq!((l.tid, l.tgid, l.ts_ns), (77, None, 12_500_000_000));
        assert_eq!(
            l.event,
            Event::Fault {
                dev: (254, 0),
                ino: 16,
                ofs: 8192
            }
        );
    }

    #[test]
    fn readahead_windows() {
        let l = parse_line("ff-1 [000] ..... 1.000001: page_cache_sync_ra: dev=254:0 ino=a index=5 req_count=1 order=0 size=32 async_size=16 ra_pages=2048 mmap_miss=0 prev_pos=-1").unwrap();
        assert_eq!(
            l.event,
            Event::Readahead {
                kind: RaKind::Sync,
                dev: (254, 0),
                ino: 10,
                index: 5,
                pages: 32
            }
        );
        let l = parse_line("ff-1 [000] ..... 1.000002: page_cache_ra_unbounded: dev=254:0 ino=a index=0 nr_to_read=2048 lookahead_size=0").unwrap();
        assert!(matches!(
            l.event,
            Event::Readahead {
                kind: RaKind::Forced,
                pages: 2048,
                ..
            }
        ));
    }

    #[test]
    fn block_requests() {
        let l = parse_line("ff-9 (9) [001] ..... 2.000000: block_rq_issue: 254,0 RA 131072 () 123456 + 256 none,0,0 [firefox-esr]").unwrap();
        assert_eq!(
            l.event,
            Event::BlockIssue {
                dev: (254, 0),
                read: true,
                sector: 123_456,
                sectors: 256
            }
        );
        let l = parse_line("<idle>-0 (-------) [001] d.h1. 2.001000: block_rq_complete: 254,0 RA () 123456 + 256 none,0,0 [0]").unwrap();
        assert_eq!(
            l.event,
            Event::BlockComplete {
                dev: (254, 0),
                sector: 123_456,
                sectors: 256
            }
        );
    }

    #[test]
    fn user_faults() {
        let l = parse_line("firefox-esr-30025 (  30025) [001] d....  6690.392385: page_fault_user: address=0x7f8e41b2ee06 ip=0x7f8e41b167ad error_code=0x6").unwrap();
        assert_eq!((l.tid, l.tgid), (30025, Some(30025)));
        assert_eq!(
            l.event,
            Event::UserFault {
                address: 0x7f8e_41b2_ee06,
                ip: 0x7f8e_41b1_67ad
            }
        );
        assert!(parse_line(
            "x-1 (1) [000] d.... 1.0: page_fault_user: address=zz ip=0x1 error_code=0x6"
        )
        .is_none());
    }

    #[test]
    fn fork_exec_and_junk() {
        let l = parse_line("bash-5 (5) [000] ..... 3.0: sched_process_fork: comm=bash pid=5 child_comm=bash child_pid=6").unwrap();
        assert_eq!(
            l.event,
            Event::Fork {
                parent: 5,
                child: 6
            }
        );
        assert!(parse_line("# tracer: nop").is_none());
        assert!(parse_line("x-1 [000] ..... 3.0: sched_switch: prev_comm=a").is_none());
        assert_eq!(lost_in_line("CPU:1 [LOST 42 EVENTS]"), Some(42));
        assert_eq!(lost_in_line("nothing"), None);
    }
}
