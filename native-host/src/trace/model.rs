//! The trace data model: what `launch --trace --json` prints, what the state folder stores and
//! what an export carries. What a person reads of it (tables, charts, shares) is computed in
//! [`super::summary`]. Version `TRACE_VERSION` is documented in docs/export-format.md.

use serde::{Deserialize, Serialize};

/// Bumped when a member changes meaning; members are only ever added otherwise.
pub const TRACE_VERSION: u32 = 1;

/// Where a trace's figures came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A private tracefs instance (root): every page entering the page cache.
    Tracefs,
    /// What an ordinary user can see: `/proc/<pid>/io` and major faults of the tree, sampled.
    ProcSampler,
}

/// One recorded start.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trace {
    pub version: u32,
    pub source: Source,
    /// Per figure, where it came from ("tracefs filemap:mm_filemap_add_to_page_cache", …).
    pub field_sources: std::collections::BTreeMap<String, String>,
    /// The Firefox parent process and its start (clock ticks since boot, /proc/<pid>/stat
    /// field 22): together they name the process for its whole life.
    pub pid: i32,
    pub process_start_ticks: u64,
    pub install_dir: String,
    /// The exact bytes of `install_dir` when they are not UTF-8 (`install_dir` is then its
    /// display text): the encoding of every path (crate::path_text, docs/PROTOCOL.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_dir_b64: Option<String>,
    pub firefox_version: Option<String>,
    pub build_id: Option<String>,
    /// Wall clock (ms since the epoch) when recording began.
    pub recorded_at_ms: u64,
    /// Every `t` below is ms since the Firefox process started, on CLOCK_MONOTONIC (tracefs
    /// `trace_clock` "mono"; CLOCK_BOOTTIME, "boot", in traces without `zero_mono_ns`); `zero`
    /// says how that start was found.
    pub zero: String,
    /// Time zero on CLOCK_MONOTONIC, ns: what lines the trace up with a Firefox profile's
    /// `meta.startTimeAsClockMonotonicNanosecondsSinceBoot` (crate::export). Absent in traces of
    /// an older host, which recorded on the boot clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_mono_ns: Option<u64>,
    /// ms since the process start when recording began (> 0 for `trace --pid`: reads before it
    /// are missed) and ended.
    pub attached_ms: f64,
    pub ended_ms: f64,
    /// Why recording ended: "seconds", "quiet", "firefox exited", "interrupted" (English, for
    /// the CLI and older readers; `ended_by_code` is what to word).
    pub ended_by: String,
    /// `session_restored`, `quiet`, `seconds`, `limit`, `interrupted` or `firefox_exited`;
    /// absent in traces stored by an older host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by_code: Option<String>,
    /// Events the kernel dropped (ring-buffer overruns, `[LOST n EVENTS]`); never hidden.
    pub lost_events: u64,
    /// Sum of `read_bytes` (/proc/<pid>/io) over the Firefox tree during the recording.
    pub tree_read_bytes: Option<u64>,
    /// Bytes the trace saw entering the page cache for the tree from disk (written files left out).
    pub traced_read_bytes: u64,
    /// Bytes that entered the cache because files were created or written during the start.
    pub written_bytes: u64,
    /// The processes of the tree: pid and kind (parent, tab, gpu, rdd, socket, utility, …).
    pub processes: Vec<Process>,
    pub files: Vec<FileEntry>,
    /// The reads, in time order: runs of contiguous pages entering the cache.
    pub events: Vec<Read>,
    /// Block requests (reads) issued by the tree, where the block events exist.
    pub block: Vec<BlockRequest>,
    /// The sampler's series (always present; the only data without tracefs).
    pub samples: Vec<Sample>,
    /// Things a reader must know (missed time, exited Firefox, unresolved inodes, …), in
    /// English for the CLI and older readers; `note_codes` are the same notes as codes and
    /// params (crate::note), for the extension to word. Empty in traces of an older host.
    pub notes: Vec<String>,
    #[serde(default)]
    pub note_codes: Vec<crate::note::Note>,
    /// Of the traced pages: how many were then used, never used, or no longer tellable
    /// (/proc/kpageflags when the recording ended; absent without root or pfns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_counts: Option<UseCounts>,
    /// The code whose page faults read from disk (`exceptions:page_fault_user`): one entry per
    /// instruction, which reads point at with `c` (trace/code.rs). Empty without the event.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub code: Vec<CodeSite>,
    /// The start's milestones (ms since the process start) where the recording learned them:
    /// from Firefox's own profile (`launch --firefox-profile`), and `sessionRestored` as the
    /// about:startup extension sent it with `learn` (the launch prefetch leaves out what the start
    /// first needed after it); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub milestones: Option<std::collections::BTreeMap<String, f64>>,
    /// The user's profile the start used, where known (issue 31): absent in traces of an older
    /// host and where the recording did not learn it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<TraceProfile>,
    /// Whether the start reached sessionRestored while it was recorded, where something could
    /// tell: the checkpoints Firefox writes in the profile (`sessionCheckpoints.json`), the
    /// extension's `learn`, Firefox's own profile. `false`: it got to its profile and never
    /// restored the session (not a whole start: not stored as one). Absent where nothing could
    /// tell (`trace --pid`, a profile not found, traces of an older host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_restored_reached: Option<bool>,
}

/// The profile of a traced start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceProfile {
    /// Its folder, as the recording found it (Firefox's `-profile` argument, or the
    /// `.parentlock` it holds). Left out of exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// In a trace exported without its profile's paths: the part of each file (parallel to
    /// `files`; `null` for a file outside the profile), whose `path` is then the part's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Vec<Option<crate::firefox::profile_parts::Part>>>,
}

/// One faulting instruction: the library file it is in, its offset in that file, and the ELF
/// section and symbol there (the symbol only where the file, or its debug file, has a .symtab).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CodeSite {
    /// The mapped file the instruction is in, or "[anon]" for JIT code and other anonymous memory.
    pub lib: String,
    /// File offset of the instruction (for "[anon]": the address).
    pub offset: u64,
    /// The instruction's address in the library's own numbering (the ELF virtual address:
    /// what `nm`, `readelf -S`'s Address column and `addr2line -e` use), where its section is
    /// known; absent in traces of an older host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
}

/// The part of one zip entry of omni.ja a start read (firefox/omni.rs, trace/entries.rs).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EntryRead {
    /// The entry's name in the archive ("modules/AppConstants.sys.mjs").
    pub name: String,
    /// Where the entry's bytes lie in the file (local header to the end of its data).
    pub offset: u64,
    pub len: u64,
    /// Bytes of those read from disk during the start, and when the first of them came in.
    pub bytes_read: u64,
    pub first_ms: f64,
    /// The first module Firefox evaluated from this entry and when (ms since the process
    /// start), from its own profile's `ModuleEvaluation`/`importESModule` markers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module_ms: Option<f64>,
}

/// Pages of the trace by what /proc/kpageflags said when the recording ended (trace/used.rs).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct UseCounts {
    pub used_pages: u64,
    pub unused_pages: u64,
    pub gone_pages: u64,
}

/// One process of the traced tree.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Process {
    pub pid: i32,
    /// Its role from its command line (`parent`, `tab`, `gpu`, `forkserver`, …), the program's
    /// file name for one that is not a Firefox role (`crashhelper`), or `process` where the
    /// recording never saw its command line (it ended first).
    pub kind: String,
    /// The file name of the program it runs (`/proc/<pid>/exe`, the last the sampler read);
    /// absent where it was never sampled (and in traces of an older host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exe: Option<String>,
    /// Its main thread's name as the trace's lines carried it last (the kernel's `comm`: the
    /// program's file name, cut to 15 bytes, unless it renamed itself); absent without tracefs
    /// lines of its main thread. With `exe`, what names a process the command line did not
    /// (export/view.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comm: Option<String>,
}

/// One file the start read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileEntry {
    /// The path, or "unnamed file (dev 254:0 inode 1234, …)" where it could not be resolved (older
    /// hosts: "dev 254:0 inode 1234"). A path that is not
    /// UTF-8 is its display text here and its exact bytes in `path_b64` (crate::path_text).
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_b64: Option<String>,
    pub resolved: bool,
    pub dev: String,
    pub ino: u64,
    pub size: Option<u64>,
    /// Modification time (ns since the epoch) when the trace resolved the file, with `size`
    /// and `ino` what a plan checks before reading a profile file (learn/plan/profile.rs): a
    /// file written since is not the one traced. Absent in traces of an older host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtime_ns: Option<i64>,
    pub bytes_read: u64,
    /// Runs of contiguous pages read (a readahead window, a fault, …).
    pub requests: u64,
    pub first_ms: f64,
    pub last_ms: f64,
    /// Created or written during the start: its pages are not disk reads.
    pub written: bool,
    /// ELF sections (file offset ranges), for libraries.
    pub sections: Vec<Section>,
    /// Physical extents (FIEMAP): `[file offset, disk byte, length]`.
    pub extents: Vec<[u64; 3]>,
    /// Page ranges `[first page, count]` read from disk during the start and then used (read or
    /// mapped; /proc/kpageflags); absent when the flags could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used: Option<Vec<[u64; 2]>>,
    /// For a zip archive (omni.ja, browser/omni.ja): the entries its reads covered, most bytes
    /// first; absent for other files and in older traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<EntryRead>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub offset: u64,
    pub size: u64,
}

/// A run of `n` pages from page `o` of file `f` (index into `files`) entering the cache at `t`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Read {
    pub t: f64,
    pub f: u32,
    pub o: u64,
    pub n: u64,
    /// The process (tgid) that caused it.
    pub p: i32,
    /// "sync" (a miss opened a readahead window), "async" (readahead marker hit), "forced"
    /// (readahead(2)/WILLNEED), "order" (large-folio window), "fault" (a page fault without a
    /// window), "read" (neither seen: kept only where the kernel traced no windows, else such a
    /// page was written and is not a read; traces of an older host have them).
    pub k: String,
    /// The faulting instruction that caused it (an index into `code`), when the fault was traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BlockRequest {
    pub t: f64,
    /// Byte position on the device and length in bytes.
    pub pos: u64,
    pub len: u64,
    /// Issue to completion, ms; `None` when the completion was not seen.
    pub lat_ms: Option<f64>,
    pub p: i32,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    pub t: f64,
    pub read_bytes: u64,
    pub majflt: u64,
}

impl Trace {
    /// Whether Firefox failed while this start was recorded: it exited with an error or a
    /// signal (the `start_incomplete` note). The host no longer stores such a trace (issue 39
    /// #3); one an older host stored is no start to plan from.
    #[must_use]
    pub fn firefox_failed(&self) -> bool {
        self.note_codes.iter().any(|n| {
            n.code == crate::note::START_INCOMPLETE
                && n.params
                    .get("status")
                    .and_then(|s| s.as_str())
                    .is_some_and(|s| !matches!(s, "exit status 0" | "exit status: 0"))
        })
    }

    /// The traced start's sessionRestored, ms since the process start, if the recording learned it.
    #[must_use]
    pub fn session_restored(&self) -> Option<f64> {
        self.milestones.as_ref()?.get("sessionRestored").copied()
    }

    /// Keep `ms` as the start's sessionRestored (from the extension's `learn`); a value
    /// Firefox's own profile gave already is kept. Either way the start reached it.
    pub fn note_session_restored(&mut self, ms: Option<f64>) {
        if let Some(ms) = ms {
            self.session_restored_reached = Some(true);
            self.milestones
                .get_or_insert_with(Default::default)
                .entry("sessionRestored".to_owned())
                .or_insert(ms);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn fake() -> Trace {
        Trace {
            version: TRACE_VERSION,
            source: Source::Tracefs,
            field_sources: Default::default(),
            pid: 10,
            process_start_ticks: 100,
            install_dir: "/ff".into(),
            install_dir_b64: None,
            firefox_version: Some("153.0".into()),
            build_id: None,
            recorded_at_ms: 0,
            zero: "fork".into(),
            attached_ms: 0.0,
            ended_ms: 100.0,
            ended_by: "seconds".into(),
            ended_by_code: Some("seconds".into()),
            lost_events: 0,
            tree_read_bytes: Some(16384),
            traced_read_bytes: 16384,
            written_bytes: 4096,
            processes: vec![],
            files: vec![
                file("/ff/libxul.so", Some(40960), 12288, 2, false),
                file("/p/new.sqlite", Some(4096), 4096, 1, true),
                file("/ff/omni.ja", None, 4096, 1, false),
            ],
            events: vec![
                read(5.0, 0, 0, 1),
                read(95.0, 0, 8, 2),
                read(10.0, 1, 0, 1),
                read(20.0, 2, 0, 1),
            ],
            block: vec![],
            samples: vec![],
            notes: vec![],
            use_counts: None,
            note_codes: vec![],
            zero_mono_ns: Some(1_000_000_000),
            code: vec![],
            milestones: None,
            profile: None,
            session_restored_reached: None,
        }
    }

    fn file(path: &str, size: Option<u64>, bytes: u64, requests: u64, written: bool) -> FileEntry {
        FileEntry {
            path: path.into(),
            path_b64: None,
            resolved: true,
            dev: "254:0".into(),
            ino: 1,
            size,
            mtime_ns: None,
            bytes_read: bytes,
            requests,
            first_ms: 0.0,
            last_ms: 0.0,
            written,
            sections: vec![],
            extents: vec![],
            used: None,
            entries: None,
        }
    }

    fn read(t: f64, f: u32, o: u64, n: u64) -> Read {
        Read {
            t,
            f,
            o,
            n,
            p: 10,
            k: "sync".into(),
            c: None,
        }
    }
}
