//! From a stopped recording to the [`Trace`]: stop the tracer (its last lines and the page
//! frames' flags by token), resolve files, extents and ELF sections, count used pages, and say in
//! notes and field sources what the trace is made of.

use super::files::{install_identity, owned_residency, resolve};
use super::recording::{ended_by_code, Recording};
use super::sampler::Sampler;
use crate::firefox::install::Install;
use crate::note::{self, Note};
use crate::os::beneath::Folder;
use crate::os::clock::{boot_to_clock, clock_ns, now_ms};
use crate::trace::build::{self, Context};
use crate::trace::model::{Source, Trace, TRACE_VERSION};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Finish: stop tracing, drain, remove the instance, build the trace.
#[allow(clippy::too_many_arguments)] // one call site each in launch/attach; a struct adds nothing
pub(super) fn finish(
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
    let ended_ns = clock_ns();
    let stopped = rec.stop();
    // A tracer that ended before it was told to stop handed over part of the start: no trace
    // is made of a part, and the user is told why (never a wait, never a trace that looks whole).
    let early = rec.tracer_ended.take().or_else(|| {
        let ended = stopped.as_ref()?.ended;
        match ended {
            Some(crate::tracer::protocol::Ended::Stop) => None,
            Some(e) => Some(super::link::ended_early(e).to_owned()),
            None => Some("it ended without its last word (Done)".to_owned()),
        }
    });
    if let Some(why) = early {
        anyhow::bail!(
            "the tracer ended its session before the start was over: {why}; what Firefox read \
             after that is in no trace, so none is made of this start"
        );
    }
    let lost = rec.lost_lines;
    let source = if rec.traced {
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
    // The tracer read the page frames' flags when it was told to stop, while Firefox (usually)
    // still ran; they come by token (the tracer hands over no physical address).
    let frames = stopped.map(|s| {
        if s.flags.is_empty() && s.ended != Some(crate::tracer::protocol::Ended::Stop) {
            Err(format!(
                "the tracer ended before it read {}",
                crate::trace::used::KPAGEFLAGS
            ))
        } else {
            Ok(s.flags)
        }
    });
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
    let ticks = crate::trace::store::process_start(pid);
    if let Some(ticks) = ticks {
        let proc_ns = boot_to_clock(ticks * (1_000_000_000 / crate::os::sys::clk_tck().max(1)));
        let diff = (proc_ns as f64 - zero.0 as f64) / 1e6;
        zero_desc.push_str(&format!(
            "; /proc/{pid}/stat starttime ({ticks} ticks) is {diff:+.1} ms from it"
        ));
    }
    // Each file opened once, and only if it is still the traced one: a path renamed to
    // another file since it was resolved (a race the user controls under sudo) gives nothing.
    let root = Folder::open(Path::new("/")).ok();
    for i in 0..built.files.len() {
        let f = &mut built.files[i];
        if !f.resolved {
            continue;
        }
        let Some(file) = root.as_ref().and_then(|r| open_traced(r, f)) else {
            continue;
        };
        if let Ok(ext) = crate::os::sys::fiemap(&file) {
            f.extents = ext
                .iter()
                .filter_map(|e| Some([e.logical, e.physical?, e.length]))
                .collect();
        }
        f.sections = crate::trace::elf::sections(&file);
        super::enrich::archive_entries(&mut built, i, &file, &mut notes); // issue 21
    }
    let use_counts = match frames {
        Some(Ok(flags)) if !built.pages.is_empty() => {
            let c =
                crate::trace::used::used_ranges(&built.pages, &mut |pfn| flags.get(&pfn).copied());
            for (i, f) in built.files.iter_mut().enumerate() {
                if !f.written {
                    let i = u32::try_from(i).unwrap_or(u32::MAX);
                    f.used = Some(c.used.get(&i).cloned().unwrap_or_default());
                }
            }
            Some(crate::trace::model::UseCounts {
                used_pages: c.used_pages,
                unused_pages: c.unused_pages,
                gone_pages: c.gone_pages,
            })
        }
        Some(Ok(_)) => {
            notes.push(
                Note::new(crate::note::PAGE_USE_UNKNOWN)
                    .with("reason", crate::note::PAGE_USE_NO_PFN)
                    .with("detail", "the trace events carry no page frame (pfn)"),
            );
            None
        }
        Some(Err(e)) => {
            notes.push(
                Note::new(crate::note::PAGE_USE_UNKNOWN)
                    .with("reason", crate::note::PAGE_USE_KPAGEFLAGS)
                    .with("detail", e),
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
    let code = super::enrich::code_sites(&built, &sampler);
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
    let processes =
        super::sampler::processes(&sampler.kinds, &sampler.exes, &rec.comms, &built.pids, pid);
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
        zero_mono_ns: Some(zero.0),
        code,
        milestones: None,
        // The profile's folder and whether the start reached sessionRestored: what the
        // recorder watched (record/restored.rs), filled in by Recorder::finish.
        profile: None,
        session_restored_reached: None,
    })
}

/// Open the file of `entry` beneath `root` (no symlink anywhere on its path, non-blocking, a
/// regular file) if it is the very file the trace saw (same device and inode); `None` if not.
fn open_traced(root: &Folder, entry: &crate::trace::model::FileEntry) -> Option<std::fs::File> {
    let path = crate::path_text::from_text(entry.path.clone(), entry.path_b64.as_deref()).ok()?;
    let (file, meta) = root.open_file(&path).ok()?;
    let dev = meta.dev();
    let same = format!("{}:{}", libc::major(dev), libc::minor(dev)) == entry.dev
        && meta.ino() == entry.ino;
    same.then_some(file)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;
    use crate::trace::model::FileEntry;

    fn entry_of(path: &Path) -> FileEntry {
        let meta = std::fs::metadata(path).unwrap();
        let dev = meta.dev();
        FileEntry {
            path: crate::path_text::display(path),
            path_b64: crate::path_text::b64(path),
            resolved: true,
            dev: format!("{}:{}", libc::major(dev), libc::minor(dev)),
            ino: meta.ino(),
            size: Some(meta.len()),
            mtime_ns: None,
            bytes_read: 0,
            requests: 0,
            first_ms: 0.0,
            last_ms: 0.0,
            written: false,
            sections: Vec::new(),
            extents: Vec::new(),
            used: None,
            entries: None,
        }
    }

    /// Issue 20 #5: `resolve` matched a path by stat, then FIEMAP and the ELF parser reopened it
    /// by path as root: renamed in between, a root-only file's extents and sections went into
    /// the user's trace. Now the file is opened once and must be the traced one.
    #[test]
    fn a_path_renamed_to_another_file_after_resolution_gives_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap();
        let traced = dir.join("libxul.so");
        std::fs::copy(std::env::current_exe().unwrap(), &traced).unwrap();
        let entry = entry_of(&traced);
        let root = Folder::open(Path::new("/")).unwrap();
        let file = open_traced(&root, &entry).expect("the traced file opens");
        assert!(crate::trace::elf::sections(&file)
            .iter()
            .any(|s| s.name == ".text"));
        // The race, made deterministic: the name now holds another (root-only) file.
        let secret = dir.join("secret.so");
        std::fs::copy(std::env::current_exe().unwrap(), &secret).unwrap();
        std::fs::rename(&secret, &traced).unwrap();
        assert!(
            open_traced(&root, &entry).is_none(),
            "another inode is not the traced one"
        );
        // A symlink in its place, or a FIFO, gives nothing either, at once.
        std::fs::remove_file(&traced).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", &traced).unwrap();
        assert!(open_traced(&root, &entry).is_none());
        std::fs::remove_file(&traced).unwrap();
        crate::os::mkfifo(&traced);
        assert!(open_traced(&root, &entry).is_none());
    }
}
