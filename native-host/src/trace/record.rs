//! Recording a start: evict (optional), arm a tracefs instance (root) or fall back to sampling
//! /proc (anyone), start Firefox as the invoking user or attach to a running one, stop when the
//! start is over, then resolve files, extents and ELF sections into a [`Trace`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;

use super::build::{self, Context, FileInfo};
use super::event::{lost_in_line, parse_line, Line};
use super::model::{Process, Sample, Source, Trace, TRACE_VERSION};
use super::tracefs::{self, Instance, TraceError};
use super::user::User;
use crate::firefox::install::Install;
use crate::firefox::process as firefox;
use crate::note::{self, Note};
use crate::pagecache::maps::parse_maps_line;

/// Per-CPU ring buffer: 32 MiB holds a cold start's ~100k events between 10 ms drains.
const BUFFER_KB: u32 = 32 * 1024;
/// The recording polls the pipe and /proc this often.
const TICK: Duration = Duration::from_millis(10);
/// /proc sampling period with tracefs (cheap, for read_bytes and quiet detection)…
const SAMPLE_TRACED: Duration = Duration::from_millis(50);
/// …and without (the only data then).
const SAMPLE_FALLBACK: Duration = Duration::from_millis(10);
/// The start is over when the tree has read nothing for this long (documented in README)…
pub const QUIET_MS: u64 = 3000;
/// …but never before this, nor after `MAX_SECONDS`.
const MIN_MS: u64 = 1500;
pub const MAX_SECONDS: f64 = 120.0;

/// How a recording ends.
#[derive(Debug, Clone, Copy)]
pub struct Stop {
    pub seconds: Option<f64>,
    pub quiet_ms: u64,
}

/// The file whose appearance means the extension recorded this start (see store::mark_recorded).
type Marker = Option<PathBuf>;

/// What `launch` starts.
#[derive(Debug)]
pub struct Launch {
    pub install: Install,
    pub binary: PathBuf,
    pub args: Vec<OsString>,
    pub cold: bool,
    pub trace: bool,
    pub user: Option<User>,
}

/// CLOCK_BOOTTIME now, ns (the tracefs "boot" clock and /proc starttime's clock).
#[must_use]
pub fn boot_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-parameter.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(ts.tv_nsec).unwrap_or(0)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0))
}

/// The Firefox executable of an install folder.
#[must_use]
pub fn firefox_binary(dir: &Path) -> Option<PathBuf> {
    ["firefox", "firefox-esr", "firefox-bin"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

/// The kind of a Firefox process from its command line (`-contentproc … tab`, `gpu`, …).
#[must_use]
pub fn process_kind(cmdline: &[String], is_root: bool) -> String {
    if is_root {
        return "parent".into();
    }
    // The fork server rewrites argv into one string ("… browser 3 tab"): its last word is the
    // kind either way.
    let joined = cmdline.join(" ");
    if joined.contains("-contentproc") || joined.contains(" browser ") {
        return joined
            .split_whitespace()
            .last()
            .filter(|k| k.chars().all(|c| c.is_ascii_alphabetic()))
            .map_or_else(|| "content".into(), str::to_owned);
    }
    cmdline
        .first()
        .and_then(|p| Path::new(p).file_name())
        .map_or_else(|| "other".into(), |n| n.to_string_lossy().into_owned())
}

fn read_cmdline(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The /proc side of a recording: the tree, its threads, read_bytes and faults per process (the
/// last value seen, so processes that exit keep their share), and the paths they hold.
#[derive(Default)]
struct Sampler {
    root: i32,
    kinds: BTreeMap<i32, String>,
    tids: HashMap<i32, i32>,
    read_bytes: HashMap<i32, u64>,
    majflt: HashMap<i32, u64>,
    baseline: HashMap<i32, (u64, u64)>,
    paths: HashSet<PathBuf>,
    profile: Option<PathBuf>,
    samples: Vec<Sample>,
}

impl Sampler {
    fn sample(&mut self, t_ms: f64, full: bool) {
        let tree = firefox::process_tree(self.root);
        for &pid in &tree {
            if !self.kinds.contains_key(&pid) {
                let cmd = read_cmdline(pid);
                if cmd.is_empty() {
                    continue;
                }
                self.kinds.insert(pid, process_kind(&cmd, pid == self.root));
            }
            if let Some(rb) = firefox::read_bytes(pid) {
                self.read_bytes.insert(pid, rb);
            }
            if let Some(st) = firefox::read_stat(pid) {
                self.majflt.insert(pid, st.majflt);
            }
            if full {
                self.scan_tasks_and_paths(pid);
            }
        }
        let (rb, mf) = self.totals();
        self.samples.push(Sample {
            t: t_ms,
            read_bytes: rb,
            majflt: mf,
        });
    }

    fn scan_tasks_and_paths(&mut self, pid: i32) {
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in tasks.flatten() {
                if let Some(tid) = t.file_name().to_str().and_then(|s| s.parse().ok()) {
                    self.tids.insert(tid, pid);
                }
            }
        }
        if let Ok(maps) = std::fs::read(format!("/proc/{pid}/maps")) {
            for l in maps.split(|b| *b == b'\n') {
                if let Some(m) = parse_maps_line(l) {
                    if let Some(p) = m.path.filter(|p| p.is_absolute()) {
                        self.paths.insert(p);
                    }
                }
            }
        }
        if let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
            for fd in fds.flatten() {
                if let Ok(target) = std::fs::read_link(fd.path()) {
                    if target.is_absolute() {
                        if target.file_name().is_some_and(|n| n == ".parentlock") {
                            self.profile = target.parent().map(Path::to_path_buf);
                        }
                        self.paths.insert(target);
                    }
                }
            }
        }
    }

    /// Tree totals since the baseline.
    fn totals(&self) -> (u64, u64) {
        let rb = self
            .read_bytes
            .iter()
            .map(|(p, v)| v.saturating_sub(self.baseline.get(p).map_or(0, |b| b.0)))
            .sum();
        let mf = self
            .majflt
            .iter()
            .map(|(p, v)| v.saturating_sub(self.baseline.get(p).map_or(0, |b| b.1)))
            .sum();
        (rb, mf)
    }
}

/// Files to resolve dev+inode against: the install folder, the profile, and what the tree maps
/// or holds open; each with its identity. Files born after `since` were written by the start.
fn resolve(
    install: &Path,
    sampler: &Sampler,
    extra: &[PathBuf],
    since: SystemTime,
) -> HashMap<((u32, u32), u64), FileInfo> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    walk(install, 6, &mut candidates);
    if let Some(p) = &sampler.profile {
        walk(p, 4, &mut candidates);
    }
    for p in extra {
        walk(p, 4, &mut candidates);
    }
    candidates.extend(sampler.paths.iter().cloned());
    let mut out = HashMap::new();
    for path in candidates {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let dev = meta.dev();
        let key = ((libc::major(dev), libc::minor(dev)), meta.ino());
        let written = meta.created().is_ok_and(|b| b >= since);
        out.entry(key).or_insert(FileInfo {
            path: crate::path_text::display(&path),
            path_b64: crate::path_text::b64(&path),
            size: Some(meta.len()),
            written,
        });
    }
    out
}

fn walk(dir: &Path, depth: u32, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() && depth > 0 {
            walk(&e.path(), depth - 1, out);
        } else if ft.is_file() {
            out.push(e.path());
        }
    }
}

/// The identity of application.ini, to notice the install changing under the recording.
fn install_identity(dir: &Path) -> Option<(u64, u64, i64)> {
    let m = std::fs::metadata(dir.join("application.ini")).ok()?;
    Some((m.dev(), m.ino(), m.mtime()))
}

/// Without tracefs, after a cold start: the install's files this user owns (the kernel reports
/// their page-cache state exactly, see NOTES) with the pages now resident, i.e. what the start
/// read. Times are unknown, so first/last are the end of the recording and there are no events.
fn owned_residency(install: &Path, t_end: f64) -> Vec<super::model::FileEntry> {
    let euid = crate::pagecache::sys::geteuid();
    let Ok(files) = crate::firefox::install::list_files(install) else {
        return Vec::new();
    };
    let mut vec = Vec::new();
    let mut out = Vec::new();
    for path in files {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.uid() != euid || !meta.is_file() {
            continue;
        }
        let Ok(file) = std::fs::File::open(&path) else {
            continue;
        };
        if crate::pagecache::sys::mincore_file(&file, meta.len(), &mut vec).is_err() {
            continue;
        }
        let resident = vec.iter().filter(|b| **b & 1 == 1).count() as u64;
        if resident == 0 {
            continue;
        }
        let dev = meta.dev();
        out.push(super::model::FileEntry {
            path: crate::path_text::display(&path),
            path_b64: crate::path_text::b64(&path),
            resolved: true,
            dev: format!("{}:{}", libc::major(dev), libc::minor(dev)),
            ino: meta.ino(),
            size: Some(meta.len()),
            bytes_read: resident * crate::pagecache::sys::page_size() as u64,
            requests: 0,
            first_ms: t_end,
            last_ms: t_end,
            written: false,
            sections: Vec::new(),
            extents: Vec::new(),
            used: None,
        });
    }
    out
}

/// One recording in progress.
struct Recording {
    instance: Option<Instance>,
    /// Why there is no exact trace: a `note::NO_TRACE_*` code and the error's English.
    fallback_reason: Option<(&'static str, String)>,
    raw: Vec<u8>,
    lines: Vec<Line>,
    lost_lines: u64,
    armed_ns: u64,
    armed_wall: SystemTime,
}

impl Recording {
    fn arm(trace: bool) -> Self {
        let mut rec = Recording {
            instance: None,
            fallback_reason: None,
            raw: Vec::new(),
            lines: Vec::new(),
            lost_lines: 0,
            armed_ns: 0,
            armed_wall: SystemTime::now(),
        };
        if trace {
            let name = format!("about-startup-{}", std::process::id());
            match Instance::create(&name, BUFFER_KB) {
                Ok(i) => rec.instance = Some(i),
                Err(e) => {
                    let code = match e {
                        TraceError::InstanceTaken(_) => note::NO_TRACE_INSTANCE_TAKEN,
                        TraceError::NotRoot => note::NO_TRACE_NOT_ROOT,
                        TraceError::NoTracefs(_) => note::NO_TRACE_NO_TRACEFS,
                        TraceError::Io { .. } => note::NO_TRACE_IO,
                    };
                    rec.fallback_reason = Some((code, e.to_string()));
                }
            }
        } else {
            rec.fallback_reason = Some((note::NO_TRACE_NOT_ASKED, "--trace not given".into()));
        }
        rec.armed_ns = boot_ns();
        rec.armed_wall = SystemTime::now();
        rec
    }

    fn pump(&mut self) -> anyhow::Result<()> {
        let Some(inst) = self.instance.as_mut() else {
            return Ok(());
        };
        inst.drain(&mut self.raw)?;
        if let Some(last_nl) = self.raw.iter().rposition(|b| *b == b'\n') {
            let text = String::from_utf8_lossy(&self.raw[..=last_nl]).into_owned();
            for l in text.lines() {
                if let Some(n) = lost_in_line(l) {
                    self.lost_lines += n;
                } else if let Some(parsed) = parse_line(l) {
                    self.lines.push(parsed);
                }
            }
            self.raw.drain(..=last_nl);
        }
        Ok(())
    }
}

/// The code of a `run_loop` ending (Trace::ended_by_code).
fn ended_by_code(ended_by: &str) -> &'static str {
    match ended_by {
        "quiet" => "quiet",
        "seconds" => "seconds",
        "limit" => "limit",
        "interrupted" => "interrupted",
        e if e.starts_with("session restored") => "session_restored",
        _ => "firefox_exited",
    }
}

/// Why recording stopped.
fn run_loop(
    rec: &mut Recording,
    sampler: &mut Sampler,
    child: Option<&mut Child>,
    zero_ns: u64,
    stop: Stop,
    marker: &Marker,
) -> anyhow::Result<String> {
    let interrupted = tracefs::interrupted();
    let started = Instant::now();
    let period = if rec.instance.is_some() {
        SAMPLE_TRACED
    } else {
        SAMPLE_FALLBACK
    };
    let mut last_sample = Instant::now() - period;
    let mut last_full = Instant::now() - Duration::from_secs(1);
    let mut last_change = Instant::now();
    let mut last_totals = (u64::MAX, u64::MAX);
    let mut child = child;
    let limit = stop.seconds.unwrap_or(MAX_SECONDS);
    loop {
        rec.pump()?;
        if last_sample.elapsed() >= period {
            let full = last_full.elapsed() >= Duration::from_millis(250);
            let t = (boot_ns().saturating_sub(zero_ns)) as f64 / 1e6;
            sampler.sample(t, full);
            if full {
                last_full = Instant::now();
            }
            last_sample = Instant::now();
            let totals = sampler.totals();
            if totals != last_totals {
                last_totals = totals;
                last_change = Instant::now();
            }
        }
        if interrupted.load(Ordering::SeqCst) {
            return Ok("interrupted".into());
        }
        if stop.seconds.is_none() && marker.as_ref().is_some_and(|m| m.exists()) {
            if let Some(m) = marker {
                let _ = std::fs::remove_file(m);
            }
            return Ok("session restored (the extension recorded the start)".into());
        }
        let elapsed = started.elapsed().as_secs_f64();
        if elapsed >= limit {
            return Ok(if stop.seconds.is_some() {
                "seconds".into()
            } else {
                "limit".into()
            });
        }
        if stop.seconds.is_none()
            && started.elapsed() >= Duration::from_millis(MIN_MS)
            && last_change.elapsed() >= Duration::from_millis(stop.quiet_ms)
        {
            return Ok("quiet".into());
        }
        if let Some(c) = child.as_deref_mut() {
            if let Some(status) = c.try_wait()? {
                return Ok(format!("firefox exited ({status})"));
            }
        } else if !Path::new(&format!("/proc/{}", sampler.root)).exists() {
            return Ok("firefox exited".into());
        }
        std::thread::sleep(TICK);
    }
}

/// Finish: stop tracing, drain, remove the instance, build the trace.
#[allow(clippy::too_many_arguments)] // one call site each in launch/attach; a struct adds nothing
fn finish(
    mut rec: Recording,
    mut sampler: Sampler,
    install: &Install,
    pid: i32,
    zero: (u64, String),
    ended_by: String,
    mut notes: Vec<Note>,
    install_id: Option<(u64, u64, i64)>,
    cold: bool,
) -> anyhow::Result<Trace> {
    let ended_ns = boot_ns();
    let mut lost = rec.lost_lines;
    if let Some(inst) = rec.instance.as_ref() {
        inst.stop()?;
    }
    rec.pump()?;
    if let Some(inst) = rec.instance.as_ref() {
        lost += inst.lost_events();
    }
    let source = if rec.instance.is_some() {
        Source::Tracefs
    } else {
        Source::ProcSampler
    };
    if let Some((reason, detail)) = rec.fallback_reason.take() {
        notes.push(
            Note::new(note::NO_EXACT_TRACE)
                .with("reason", reason)
                .with("detail", detail),
        );
    }
    // The pages' flags now, while Firefox (usually) still runs and before the slower resolution
    // below: a frame freed and reused later would say nothing about this start.
    let frames = (source == Source::Tracefs).then(|| read_frame_flags(&rec.lines));
    drop(rec.instance.take()); // rmdir now, before the slower resolution below
    let t_end = (ended_ns.saturating_sub(zero.0)) as f64 / 1e6;
    sampler.sample(t_end, true);
    if install_identity(&install.dir) != install_id {
        notes.push(Note::new(note::INSTALL_CHANGED));
    }
    let files = resolve(&install.dir, &sampler, &[], rec.armed_wall);
    let ctx = Context {
        root: pid,
        known_tids: sampler.tids.clone(),
        zero_ns: zero.0,
        files,
    };
    let mut built = build::build(&rec.lines, &ctx);
    let mut field_note_owned = false;
    let mut zero_desc = zero.1;
    let ticks = super::store::process_start(pid);
    if let Some(ticks) = ticks {
        let proc_ns = ticks * (1_000_000_000 / crate::pagecache::sys::clk_tck().max(1));
        let diff = (proc_ns as f64 - zero.0 as f64) / 1e6;
        zero_desc.push_str(&format!(
            "; /proc/{pid}/stat starttime ({ticks} ticks) is {diff:+.1} ms from it"
        ));
    }
    for f in &mut built.files {
        if !f.resolved {
            continue;
        }
        let path = Path::new(&f.path);
        if let Ok(file) = std::fs::File::open(path) {
            if let Ok(ext) = crate::pagecache::sys::fiemap(&file) {
                f.extents = ext
                    .iter()
                    .filter_map(|e| Some([e.logical, e.physical?, e.length]))
                    .collect();
            }
        }
        f.sections = super::elf::sections(path);
    }
    let use_counts = match frames {
        Some(Ok(flags)) if !built.pages.is_empty() => {
            let c = super::used::used_ranges(&built.pages, &mut |pfn| flags.get(&pfn).copied());
            for (i, f) in built.files.iter_mut().enumerate() {
                if !f.written {
                    let i = u32::try_from(i).unwrap_or(u32::MAX);
                    f.used = Some(c.used.get(&i).cloned().unwrap_or_default());
                }
            }
            Some(super::model::UseCounts {
                used_pages: c.used_pages,
                unused_pages: c.unused_pages,
                gone_pages: c.gone_pages,
            })
        }
        Some(Ok(_)) => {
            notes.push(
                Note::new(crate::note::PAGE_USE_UNKNOWN)
                    .with("detail", "the trace events carry no page frame (pfn)"),
            );
            None
        }
        Some(Err(e)) => {
            notes.push(
                Note::new(crate::note::PAGE_USE_UNKNOWN)
                    .with("detail", format!("{} ({e})", super::used::KPAGEFLAGS)),
            );
            None
        }
        None => None,
    };
    if source == Source::ProcSampler && cold {
        built.files = owned_residency(&install.dir, t_end);
        if !built.files.is_empty() {
            field_note_owned = true;
        }
    }
    let unresolved = built.files.iter().filter(|f| !f.resolved).count();
    if unresolved > 0 {
        notes.push(Note::new(note::UNRESOLVED_FILES).with("count", unresolved));
    }
    if lost > 0 {
        notes.push(Note::new(note::LOST_EVENTS).with("count", lost));
    }
    let (tree_rb, _) = sampler.totals();
    let mut field_sources = BTreeMap::new();
    field_sources.insert(
        "tree_read_bytes".into(),
        "/proc/<pid>/io read_bytes, summed over the tree, sampled".into(),
    );
    field_sources.insert(
        "samples".into(),
        "/proc/<pid>/io and /proc/<pid>/stat majflt".into(),
    );
    if field_note_owned {
        field_sources.insert(
            "files".into(),
            "mincore after the cold start, for the install's files you own (which pages came in, not when)".into(),
        );
    }
    if source == Source::Tracefs {
        for (k, v) in [
            ("events", "tracefs filemap:mm_filemap_add_to_page_cache (+ readahead:*, filemap:mm_filemap_fault for the kind)"),
            ("files", "tracefs dev+inode resolved by stat of the install folder, the profile and the tree's maps and open files"),
            ("block", "tracefs block:block_rq_issue / block_rq_complete"),
            ("extents", "FIEMAP"),
            ("used", "/proc/kpageflags (REFERENCED, ACTIVE, MMAP) of the traced page frames when the recording ended"),
            ("sections", "ELF section headers (object crate)"),
        ] {
            field_sources.insert(k.into(), v.into());
        }
    }
    let processes = sampler
        .kinds
        .iter()
        .map(|(p, k)| Process {
            pid: *p,
            kind: k.clone(),
        })
        .collect();
    Ok(Trace {
        version: TRACE_VERSION,
        source,
        field_sources,
        pid,
        process_start_ticks: ticks.unwrap_or(0),
        install_dir: crate::path_text::display(&install.dir),
        install_dir_b64: crate::path_text::b64(&install.dir),
        firefox_version: install.version.clone(),
        build_id: install.build_id.clone(),
        recorded_at_ms: now_ms(),
        zero: zero_desc,
        attached_ms: (rec.armed_ns as f64 - zero.0 as f64) / 1e6,
        ended_ms: t_end,
        ended_by_code: Some(ended_by_code(&ended_by).to_owned()),
        ended_by,
        lost_events: lost,
        tree_read_bytes: Some(tree_rb),
        traced_read_bytes: built.traced_read_bytes,
        written_bytes: built.written_bytes,
        processes,
        files: built.files,
        events: built.events,
        block: built.block,
        samples: sampler.samples,
        notes: notes.iter().map(Note::english).collect(),
        note_codes: notes,
        use_counts,
    })
}

/// The flags of every page frame the trace saw entering the cache (any process: the tree is
/// told apart later), read from /proc/kpageflags.
fn read_frame_flags(lines: &[Line]) -> std::io::Result<HashMap<u64, u64>> {
    let flags = super::used::KPageFlags::open()?;
    let mut out = HashMap::new();
    for l in lines {
        if let super::event::Event::PageAdd { pfn: Some(pfn), .. } = l.event {
            if let std::collections::hash_map::Entry::Vacant(e) = out.entry(pfn) {
                if let Some(f) = flags.get(pfn) {
                    e.insert(f);
                }
            }
        }
    }
    Ok(out)
}

/// `launch`: evict if asked, arm, start Firefox (as the invoking user), record until the start
/// is over. Returns the trace and the running Firefox (left running: it is the user's).
pub fn launch(opts: &Launch, stop: Stop) -> anyhow::Result<(Trace, Child)> {
    let mut notes = Vec::new();
    if opts.cold {
        let selected = crate::firefox::install::select(&opts.install.dir, &[])?;
        let summary = crate::pagecache::evict::evict(&selected.folder, &selected.files);
        notes.push(
            Note::new(note::COLD_EVICTED)
                .with("files", selected.files.len())
                .with("pages", summary.pages_dropped),
        );
    }
    let install_id = install_identity(&opts.install.dir);
    let mut rec = Recording::arm(opts.trace);
    let mut cmd = Command::new(&opts.binary);
    cmd.args(&opts.args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(u) = &opts.user {
        cmd.env("HOME", &u.home)
            .env("USER", &u.name)
            .env("LOGNAME", &u.name)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("SUDO_UID")
            .env_remove("SUDO_GID")
            .env_remove("SUDO_USER")
            .env_remove("PKEXEC_UID");
        let (uid, gid, groups) = (u.uid, u.gid, u.groups.clone());
        // SAFETY: only async-signal-safe syscalls between fork and exec; `groups` was built
        // before the fork.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setgroups(groups.len(), groups.as_ptr()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    } else if crate::pagecache::sys::geteuid() == 0 {
        notes.push(Note::new(note::STARTED_AS_ROOT));
    }
    let spawn_ns = boot_ns();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("start {}", opts.binary.display()))?;
    let pid = i32::try_from(child.id()).unwrap_or(0);
    let mut sampler = Sampler {
        root: pid,
        ..Sampler::default()
    };
    // With the about:startup extension in that Firefox, its `learn` after sessionRestored leaves
    // a marker in the state folder of the user Firefox runs as.
    let marker = super::store::process_start(pid).and_then(|ticks| {
        super::user::state_dir(opts.user.as_ref())
            .ok()
            .map(|d| super::store::recorded_marker(&d, pid, ticks))
    });
    let ended_by = match run_loop(
        &mut rec,
        &mut sampler,
        Some(&mut child),
        spawn_ns,
        stop,
        &marker,
    ) {
        Ok(e) => e,
        Err(e) => {
            drop(rec);
            return Err(e);
        }
    };
    if ended_by.starts_with("firefox exited") {
        // `status` is Rust's wording of the exit status: for the English note only.
        let status = ended_by
            .trim_start_matches("firefox exited")
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')');
        notes.push(Note::new(note::START_INCOMPLETE).with("status", status));
    }
    // Time zero: the fork as traced if seen (exact), else the spawn call.
    let probe = build::build(
        &rec.lines,
        &Context {
            root: pid,
            ..Context::default()
        },
    )
    .fork_ns;
    let zero = match probe {
        Some(ns) => (
            ns,
            "the traced fork of the Firefox process (CLOCK_BOOTTIME)".to_owned(),
        ),
        None => (
            spawn_ns,
            "the host's spawn call (CLOCK_BOOTTIME)".to_owned(),
        ),
    };
    let trace = finish(
        rec,
        sampler,
        &opts.install,
        pid,
        zero,
        ended_by,
        notes,
        install_id,
        opts.cold,
    )?;
    Ok((trace, child))
}

/// `trace --pid`: attach to a running Firefox; what it read before is missed (said in notes).
pub fn attach(pid: i32, install: &Install, trace: bool, stop: Stop) -> anyhow::Result<Trace> {
    let stat = firefox::read_stat(pid).with_context(|| format!("no process {pid}"))?;
    let zero_ns = stat.starttime * (1_000_000_000 / crate::pagecache::sys::clk_tck().max(1));
    let install_id = install_identity(&install.dir);
    let mut rec = Recording::arm(trace);
    let mut sampler = Sampler {
        root: pid,
        ..Sampler::default()
    };
    sampler.sample(0.0, true);
    sampler.baseline = sampler
        .read_bytes
        .iter()
        .map(|(p, rb)| (*p, (*rb, sampler.majflt.get(p).copied().unwrap_or(0))))
        .collect();
    sampler.samples.clear();
    let ended_by = run_loop(&mut rec, &mut sampler, None, zero_ns, stop, &None)?;
    // Attached right after a spawn, the pid may still have been a wrapper (a cgroup or sandbox
    // launcher) that exec'd Firefox since: name the install by what the process is now.
    let now_install = crate::firefox::install::locate(None, Some(pid)).ok();
    let install_id = match &now_install {
        Some(now) if now.dir != install.dir => install_identity(&now.dir),
        _ => install_id,
    };
    let install = now_install.as_ref().unwrap_or(install);
    let attached = (rec.armed_ns.saturating_sub(zero_ns)) as f64 / 1e6;
    let notes = vec![Note::new(note::ATTACHED_LATE).with("ms", attached.round())];
    finish(
        rec,
        sampler,
        install,
        pid,
        (
            zero_ns,
            "/proc/<pid>/stat starttime (CLOCK_BOOTTIME, clock-tick resolution)".into(),
        ),
        ended_by,
        notes,
        install_id,
        false,
    )
}

#[cfg(test)]
mod tests {
    use super::{ended_by_code, process_kind};

    #[test]
    fn every_ending_has_its_code() {
        for (ended_by, code) in [
            (
                "session restored (the extension recorded the start)",
                "session_restored",
            ),
            ("quiet", "quiet"),
            ("seconds", "seconds"),
            ("limit", "limit"),
            ("interrupted", "interrupted"),
            ("firefox exited (exit status: 0)", "firefox_exited"),
            ("firefox exited", "firefox_exited"),
        ] {
            assert_eq!(ended_by_code(ended_by), code, "{ended_by}");
        }
    }

    #[test]
    fn kinds_from_cmdline() {
        let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(process_kind(&s(&["/ff/firefox-esr"]), true), "parent");
        assert_eq!(
            process_kind(
                &s(&["/ff/firefox-esr", "-contentproc", "-ipcHandle", "0", "tab"]),
                false
            ),
            "tab"
        );
        assert_eq!(
            process_kind(
                &s(&["/ff/firefox-esr", "-contentproc", "{x-y}", "12"]),
                false
            ),
            "content"
        );
        assert_eq!(
            process_kind(&s(&["/ff/crashhelper", "1"]), false),
            "crashhelper"
        );
    }
}
