//! The trace as the Firefox Profiler will show it, before any format: per process, one I/O
//! marker per read (a run of pages: a readahead window, Firefox's own readahead(2), a fault);
//! the milestones; bytes read over time per file group; and the summaries a person looks for
//! first (the code that faulted in the most pages, the omni.ja entries read the most). Pure over
//! the [`Trace`], so both writers (processed and Gecko) and the page's summary agree.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::trace::code::label;
use crate::trace::disk_time::{self, DiskTime};
use crate::trace::model::{Process, Read, Trace};
use crate::trace::summary::code;
use crate::units::megabytes;

/// One read, ready to be a marker.
#[derive(Debug, Clone, PartialEq)]
pub struct IoMarker {
    /// ms since the Firefox process started (the trace's axis).
    pub t: f64,
    pub path: String,
    /// Byte offset and length in the file.
    pub offset: u64,
    pub bytes: u64,
    /// How it came in (see [`how`]).
    pub how: &'static str,
    /// The ELF section or the omni.ja entries it covers ("" when neither).
    pub region: String,
    /// "12 of 32 pages then used", or "" when unknown.
    pub used: String,
    /// The code whose fault caused it ("" when not traced or not a fault).
    pub cause: String,
    /// The file group of the bytes-over-time tracks.
    pub group: &'static str,
    /// When the disk was busy with it (its block requests' issue to completion), where the
    /// trace shows it (crate::trace::disk_time).
    pub disk: Option<DiskTime>,
}

impl IoMarker {
    /// The marker's start and end: its block requests' issue to their completion where the
    /// trace has them, else the moment its pages entered the cache (zero length; its "Disk
    /// time" field then says unknown).
    #[must_use]
    pub fn span(&self) -> (f64, f64) {
        self.disk.map_or((self.t, self.t), |d| (d.issued, d.done))
    }
}

/// One process's share.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessView {
    pub pid: i32,
    /// parent, tab, gpu, rdd, socket, utility, … (or "process" where unknown).
    pub kind: String,
    /// Its name in the profile ([`process_name`]): its role, or the program it ran.
    pub name: String,
    pub markers: Vec<IoMarker>,
}

/// Bytes read per group in one time bucket.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub group: &'static str,
    /// (bucket start ms, bytes in the bucket, reads in the bucket)
    pub points: Vec<(f64, u64, u32)>,
}

/// Everything both writers draw.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub processes: Vec<ProcessView>,
    pub milestones: Vec<(String, f64)>,
    pub series: Vec<Series>,
    /// (code region, bytes its faults read), most first.
    pub top_code: Vec<(String, u64)>,
    /// (archive, entry, bytes read), most first.
    pub top_entries: Vec<(String, String, u64)>,
    pub total_bytes: u64,
}

/// The category of the I/O markers (and of the recording's own), in both writers.
pub const IO_CATEGORY: &str = "Disk I/O (kernel)";
/// The category of the milestone markers: Firefox's moments, not disk I/O (issue 39 #7).
pub const MILESTONE_CATEGORY: &str = "Startup milestones";
/// The name of the thread that carries a process's I/O markers where Firefox's profile has none.
pub const IO_THREAD: &str = "Disk reads (kernel)";

/// The width of the bytes-over-time buckets.
pub const BUCKET_MS: f64 = 10.0;
/// How many code regions and entries the summaries keep.
pub const TOP: usize = 20;

/// The words for a read's kind (`Read::k`).
#[must_use]
pub fn how(kind: &str) -> &'static str {
    match kind {
        "sync" => "readahead window (a miss)",
        "async" => "readahead window (ahead of use)",
        "forced" => "Firefox's own readahead(2)",
        "order" => "large-folio readahead window",
        "fault" => "page fault without a window",
        _ => "read",
    }
}

/// A process's name in the profile: what it is, from what the trace knows of it (issue 39 #7:
/// three processes, two crash helpers and glxtest, were all "Firefox process").
/// - the traced process (`root`) is Firefox's parent, and the fork server is named so;
/// - a process running a program that is not Firefox's own binary (`exe`, else its main
///   thread's `comm` where the sampler never saw it: `crashhelper`, `glxtest`) by that program;
/// - a Firefox process with a role from its command line (`tab`, `gpu`, `rdd`, `socket`, …) by
///   that role;
/// - one the recording never named says so, with its pid, so no two read alike.
#[must_use]
pub fn process_name(p: &Process, root: i32) -> String {
    let firefox_binary = |name: &str| name.starts_with("firefox");
    let (pid, kind) = (p.pid, p.kind.as_str());
    if pid == root || kind == "parent" {
        return "Firefox parent process".to_owned();
    }
    if kind == "forkserver" {
        return "Firefox fork server".to_owned();
    }
    let unseen = kind.is_empty() || kind == "process";
    let program = match (&p.exe, &p.comm) {
        (Some(exe), _) => Some(exe.as_str()),
        (None, Some(comm)) if unseen => Some(comm.as_str()),
        _ => None,
    };
    match program {
        Some(program) if !firefox_binary(program) => format!("{program} (started by Firefox)"),
        _ if unseen || firefox_binary(kind) => format!("Firefox process {pid} (role not seen)"),
        _ => format!("Firefox {kind} process"),
    }
}

/// The earliest moment the view draws (ms since the process start), if it draws anything.
#[must_use]
pub fn earliest(v: &View) -> Option<f64> {
    v.processes
        .iter()
        .flat_map(|p| p.markers.iter().map(|m| m.t))
        .chain(v.milestones.iter().map(|(_, t)| *t))
        .chain(v.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)))
        .min_by(f64::total_cmp)
}

/// The file group of `path`: libxul.so, omni.ja, other libraries, the rest of the install,
/// anything else.
#[must_use]
pub fn group(path: &str, install_dir: &str) -> &'static str {
    let name = Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if name == "libxul.so" {
        "libxul.so"
    } else if name == "omni.ja" {
        "omni.ja"
    } else if name.ends_with(".so") || name.contains(".so.") {
        "other libraries"
    } else if !install_dir.is_empty() && path.starts_with(install_dir) {
        "other install files"
    } else {
        "profile and other files"
    }
}

const GROUPS: [&str; 5] = [
    "libxul.so",
    "omni.ja",
    "other libraries",
    "other install files",
    "profile and other files",
];

fn region(trace: &Trace, e: &Read) -> String {
    let Some(file) = trace.files.get(e.f as usize) else {
        return String::new();
    };
    let (from, to) = (e.o * 4096, (e.o + e.n) * 4096);
    if let Some(entries) = &file.entries {
        let mut hit: Vec<&str> = entries
            .iter()
            .filter(|x| x.offset < to && from < x.offset + x.len)
            .map(|x| x.name.as_str())
            .collect();
        hit.sort_unstable();
        return match hit.len() {
            0 => String::new(),
            1..=3 => hit.join(", "),
            n => format!("{}, … ({n} entries)", hit[..2].join(", ")),
        };
    }
    let names: Vec<&str> = file
        .sections
        .iter()
        .filter(|s| s.offset < to && from < s.offset + s.size)
        .map(|s| s.name.as_str())
        .collect();
    names.join(", ")
}

fn used(trace: &Trace, e: &Read) -> String {
    let Some(ranges) = trace.files.get(e.f as usize).and_then(|f| f.used.as_ref()) else {
        return String::new();
    };
    let (a, b) = (e.o, e.o + e.n);
    let used: u64 = ranges
        .iter()
        .map(|[first, n]| (first + n).min(b).saturating_sub((*first).max(a)))
        .sum();
    format!("{used} of {} pages then used", e.n)
}

/// The view of `trace`, with `milestones` (ms since the process start) where known.
#[must_use]
pub fn view(trace: &Trace, milestones: &BTreeMap<String, f64>) -> View {
    let known: HashMap<i32, &crate::trace::model::Process> =
        trace.processes.iter().map(|p| (p.pid, p)).collect();
    let mut by_pid: BTreeMap<i32, Vec<IoMarker>> = BTreeMap::new();
    let mut buckets: HashMap<(&'static str, i64), (u64, u32)> = HashMap::new();
    let mut total = 0u64;
    // The last read's time: no point of a track lies after it (below).
    let mut last_read = f64::NEG_INFINITY;
    let disk = disk_time::of_reads(trace);
    for (e, disk) in trace.events.iter().zip(disk) {
        let Some(file) = trace.files.get(e.f as usize) else {
            continue;
        };
        if file.written {
            continue;
        }
        let bytes = e.n * 4096;
        total += bytes;
        last_read = last_read.max(e.t);
        let g = group(&file.path, &trace.install_dir);
        #[allow(clippy::cast_possible_truncation)] // ms / 10 of a recording fits
        let b = buckets
            .entry((g, (e.t / BUCKET_MS).floor() as i64))
            .or_default();
        b.0 += bytes;
        b.1 += 1;
        let cause =
            e.c.and_then(|c| trace.code.get(c as usize))
                .map(label)
                .unwrap_or_default();
        by_pid.entry(e.p).or_default().push(IoMarker {
            t: e.t,
            path: file.path.clone(),
            offset: e.o * 4096,
            bytes,
            how: how(&e.k),
            region: region(trace, e),
            used: used(trace, e),
            cause,
            group: g,
            disk,
        });
    }
    let processes = by_pid
        .into_iter()
        .map(|(pid, mut markers)| {
            markers.sort_by(|a, b| a.t.total_cmp(&b.t));
            let unseen = Process {
                pid,
                kind: "process".into(),
                exe: None,
                comm: None,
            };
            let process = known.get(&pid).copied().unwrap_or(&unseen);
            ProcessView {
                pid,
                kind: process.kind.clone(),
                name: process_name(process, trace.pid),
                markers,
            }
        })
        .collect();
    let mut series: Vec<Series> = GROUPS
        .iter()
        .filter_map(|&g| {
            let mut filled: Vec<(i64, u64, u32)> = buckets
                .iter()
                .filter(|((bg, _), _)| *bg == g)
                .map(|((_, i), (bytes, n))| (*i, *bytes, *n))
                .collect();
            filled.sort_unstable_by_key(|b| b.0);
            // A rate counter's sample holds what came since the previous one: each bucket's
            // bytes sit at its end, after a zero at its start where the bucket before was empty
            // (else the Profiler has no start for the first, and drops it from its totals).
            // The last bucket's end is no later than the last read: the Profiler sums only the
            // samples inside the profile's range, which ends with the last marker (a read's
            // marker ends at or after its read), and reads that ran to the recording's end (a
            // pageout kdamond beside the start) put that bucket's end past it: its bytes were
            // missing from the track's total (test.profiler.js under load: 63 pages short).
            let mut points = Vec::with_capacity(filled.len() * 2);
            let mut prev: Option<i64> = None;
            for (i, bytes, n) in filled {
                if prev != Some(i - 1) {
                    points.push((i as f64 * BUCKET_MS, 0, 0));
                }
                points.push((((i + 1) as f64 * BUCKET_MS).min(last_read), bytes, n));
                prev = Some(i);
            }
            (!points.is_empty()).then_some(Series { group: g, points })
        })
        .collect();
    if trace.events.is_empty() && trace.samples.len() > 1 {
        // Without tracefs (an ordinary user): the tree's /proc read_bytes, sampled.
        let points = std::iter::once((trace.samples[0].t, 0, 0))
            .chain(
                trace
                    .samples
                    .windows(2)
                    .map(|w| (w[1].t, w[1].read_bytes.saturating_sub(w[0].read_bytes), 1)),
            )
            .collect();
        series.push(Series {
            group: "whole tree (/proc read_bytes)",
            points,
        });
    }
    // The regions and entries as the page and the CLI name them (trace/summary/code.rs).
    let top_code = code::top_code(trace, TOP)
        .into_iter()
        .map(|r| (r.label, r.bytes))
        .collect();
    let top_entries = code::top_entries(trace, TOP)
        .into_iter()
        .map(|r| (r.archive, r.name, r.bytes_read))
        .collect();
    let mut ms: Vec<(String, f64)> = milestones.iter().map(|(k, v)| (k.clone(), *v)).collect();
    ms.sort_by(|a, b| a.1.total_cmp(&b.1));
    View {
        processes,
        milestones: ms,
        series,
        top_code,
        top_entries,
        total_bytes: total,
    }
}

/// The line the profile's own summary marker carries.
#[must_use]
pub fn summary_line(trace: &Trace, view: &View) -> String {
    format!(
        "{} MB read from disk in {} reads by {} processes, {:.0}–{:.0} ms after the process start{}",
        megabytes(view.total_bytes),
        view.processes.iter().map(|p| p.markers.len()).sum::<usize>(),
        view.processes.len(),
        trace.attached_ms.max(0.0),
        trace.ended_ms,
        if trace.lost_events > 0 {
            format!("; {} trace events lost", trace.lost_events)
        } else {
            String::new()
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::model::tests::fake;
    use crate::trace::model::{CodeSite, EntryRead, Process};

    /// Issue 39 #7: each process is named by what it is, and no two unknown ones alike.
    #[test]
    fn processes_are_named_by_role_or_program() {
        let p = |pid: i32, kind: &str, exe: Option<&str>, comm: Option<&str>| Process {
            pid,
            kind: kind.into(),
            exe: exe.map(Into::into),
            comm: comm.map(Into::into),
        };
        let name = |p: Process| process_name(&p, 10);
        assert_eq!(name(p(10, "process", None, None)), "Firefox parent process");
        assert_eq!(
            name(p(11, "forkserver", Some("firefox-esr"), None)),
            "Firefox fork server"
        );
        assert_eq!(
            name(p(12, "tab", Some("firefox-esr"), Some("Isolated Web Co"))),
            "Firefox tab process"
        );
        assert_eq!(
            name(p(13, "firefox-esr", Some("crashhelper"), None)),
            "crashhelper (started by Firefox)",
            "a fork seen before its exec is named by what it became"
        );
        assert_eq!(
            name(p(14, "process", None, Some("glxtest"))),
            "glxtest (started by Firefox)",
            "one the sampler never saw, by its main thread's name in the trace"
        );
        assert_eq!(
            name(p(15, "process", None, None)),
            "Firefox process 15 (role not seen)"
        );
        assert_eq!(
            name(p(16, "process", None, Some("firefox-esr"))),
            "Firefox process 16 (role not seen)"
        );
        // A trace of an older host (neither): the role, as before.
        assert_eq!(name(p(17, "rdd", None, None)), "Firefox rdd process");

        // The view names each process that read from what the trace knows of it.
        let mut t = fake();
        t.processes = vec![
            p(12, "process", None, Some("crashhelper")),
            p(13, "tab", Some("firefox-esr"), None),
        ];
        // Reads 0 and 1 are of libxul.so, 2 of a written file, 3 of omni.ja (fake()).
        let mut crash = t.events[0].clone();
        crash.p = 12;
        t.events.push(crash);
        t.events[1].p = 13;
        t.events[3].p = 14;
        let names: Vec<(i32, String)> = view(&t, &BTreeMap::new())
            .processes
            .into_iter()
            .map(|p| (p.pid, p.name))
            .collect();
        assert_eq!(
            names,
            [
                (10, "Firefox parent process".to_owned()),
                (12, "crashhelper (started by Firefox)".to_owned()),
                (13, "Firefox tab process".to_owned()),
                (14, "Firefox process 14 (role not seen)".to_owned()),
            ]
        );
    }

    #[test]
    fn markers_per_process_with_how_region_use_and_cause() {
        let mut t = fake();
        t.processes = vec![Process {
            pid: 10,
            kind: "parent".into(),
            exe: None,
            comm: None,
        }];
        t.files[0].sections = vec![crate::trace::model::Section {
            name: ".text".into(),
            offset: 0,
            size: 40960,
        }];
        t.files[0].used = Some(vec![[8, 1]]);
        t.files[2].entries = Some(vec![EntryRead {
            name: "modules/A.sys.mjs".into(),
            offset: 0,
            len: 4000,
            bytes_read: 4000,
            first_ms: 20.0,
            module: None,
            module_ms: None,
        }]);
        t.code = vec![CodeSite {
            lib: "/ff/libxul.so".into(),
            offset: 0x12345,
            address: Some(0x13345),
            section: Some(".text".into()),
            symbol: None,
        }];
        t.events[1].c = Some(0);
        t.events[1].k = "fault".into();
        let v = view(
            &t,
            &BTreeMap::from([
                ("sessionRestored".to_owned(), 90.0),
                ("main".to_owned(), 3.0),
            ]),
        );
        assert_eq!(v.processes.len(), 1);
        let m = &v.processes[0].markers;
        // The written file's read is left out; time order.
        assert_eq!(m.len(), 3);
        assert_eq!(m.iter().map(|m| m.t).collect::<Vec<_>>(), [5.0, 20.0, 95.0]);
        assert_eq!(m[2].how, "page fault without a window");
        assert_eq!(m[2].region, ".text");
        assert_eq!(m[2].used, "1 of 2 pages then used");
        assert_eq!(m[2].cause, "libxul.so 0x13345 (.text)");
        assert_eq!(m[1].region, "modules/A.sys.mjs");
        assert_eq!(m[1].group, "omni.ja");
        assert_eq!(v.total_bytes, 4 * 4096);
        assert_eq!(
            v.top_code,
            [("libxul.so 0x10000–0x1ffff (64 KiB block)".to_owned(), 8192)]
        );
        assert_eq!(v.top_entries[0].1, "modules/A.sys.mjs");
        assert_eq!(v.milestones[0].0, "main");
        let libxul = v.series.iter().find(|s| s.group == "libxul.so").unwrap();
        // Each bucket's bytes at its end, after a zero at its start (the bucket before empty);
        // the last bucket's end no later than the last read (95 ms), where the profile ends.
        assert_eq!(
            libxul.points,
            [(0.0, 0, 0), (10.0, 4096, 1), (90.0, 0, 0), (95.0, 8192, 1)]
        );
    }

    #[test]
    fn without_tracefs_the_proc_samples_are_the_series() {
        let mut t = fake();
        t.events.clear();
        t.samples = vec![
            crate::trace::model::Sample {
                t: 0.0,
                read_bytes: 0,
                majflt: 0,
            },
            crate::trace::model::Sample {
                t: 10.0,
                read_bytes: 4096,
                majflt: 1,
            },
            crate::trace::model::Sample {
                t: 20.0,
                read_bytes: 6144,
                majflt: 1,
            },
        ];
        let v = view(&t, &BTreeMap::new());
        assert!(v.processes.is_empty());
        assert_eq!(v.series[0].group, "whole tree (/proc read_bytes)");
        assert_eq!(
            v.series[0].points,
            [(0.0, 0, 0), (10.0, 4096, 1), (20.0, 2048, 1)]
        );
    }

    #[test]
    fn groups() {
        assert_eq!(group("/ff/libxul.so", "/ff"), "libxul.so");
        assert_eq!(group("/ff/browser/omni.ja", "/ff"), "omni.ja");
        assert_eq!(group("/ff/libnss3.so", "/ff"), "other libraries");
        assert_eq!(
            group("/usr/lib/x86_64-linux-gnu/libgtk-3.so.0", "/ff"),
            "other libraries"
        );
        assert_eq!(group("/ff/application.ini", "/ff"), "other install files");
        assert_eq!(
            group("/home/a/p/prefs.js", "/ff"),
            "profile and other files"
        );
    }
}
