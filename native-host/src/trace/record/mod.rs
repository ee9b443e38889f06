//! Recording a start, as the user: the tracer (root's part, reached through a [`Link`]) follows
//! the Firefox tree and hands over its lines, or /proc is sampled without it; when the start is
//! over, files, extents and ELF sections are resolved into a [`Trace`]. Who starts Firefox and
//! how the tracer is reached is the launch pipeline's (launch/): a [`Recorder`] is what it
//! drives.
//!
//! Here: [`Recorder`]; `spec.rs` when a recording ends ([`Stop`]) and its pace; `link.rs` the
//! user's side of the tracer's protocol; `sampler.rs` the /proc side (also the fallback);
//! `recording.rs` the tracer's side and the loop that decides when the start is over;
//! `restored.rs` whether the start reached sessionRestored (Firefox's own checkpoints);
//! `finish.rs` the step from a stopped recording to the [`Trace`]; `files.rs` which files the
//! trace names (dev+inode resolved to paths, and the residency fallback without the tracer);
//! `enrich.rs` what issue 21 adds (the code behind each fault, omni.ja's entries behind each
//! read); `signal.rs` what Ctrl-C and SIGTERM do.

use std::path::Path;
use std::time::SystemTime;

use super::model::Trace;
use crate::firefox::install::Install;
use crate::note::Note;

mod enrich;
mod files;
mod finish;
mod link;
mod recording;
mod restored;
mod sampler;
pub mod signal;
mod spec;

pub use link::{Link, LinkError, Stopped};
pub use sampler::process_kind;
pub use spec::{Marker, Stop, MAX_SECONDS, QUIET_MS};

/// One recording of the tree of a process, from [`Recorder::follow`] to [`Recorder::finish`].
pub struct Recorder {
    rec: recording::Recording,
    sampler: sampler::Sampler,
    pid: i32,
    install_id: Option<(u64, u64, i64)>,
    restored: restored::Restored,
}

impl Recorder {
    /// Record the tree of `pid` (a held launcher, or a running Firefox): the tracer follows it
    /// if `tracer` is a link (and accepts), else /proc is sampled and the trace says why
    /// (`(note::NO_TRACE_* code, detail)`). `install`: the Firefox install it runs, named as it
    /// is now (a change during the recording is noted).
    #[must_use]
    pub fn follow(
        tracer: Result<Link, (&'static str, String)>,
        pid: i32,
        faults: bool,
        install: &Path,
    ) -> Recorder {
        let install_id = files::install_identity(install);
        let rec = recording::Recording::follow(tracer, pid, faults);
        Recorder {
            rec,
            sampler: sampler::Sampler {
                root: pid,
                ..sampler::Sampler::default()
            },
            pid,
            install_id,
            restored: restored::Restored::off(),
        }
    }

    /// Watch the start for sessionRestored (a launch: `since` is when it was started; `profile`
    /// its `-profile` folder where given, else found on the process): until the checkpoints
    /// Firefox writes in its profile say the session is restored, quiet does not end the
    /// recording, and the trace says whether the start got there.
    pub fn watch_start(&mut self, profile: Option<std::path::PathBuf>, since: SystemTime) {
        self.restored = restored::Restored::watch(self.pid, profile, since);
    }

    /// The install is another one than [`Recorder::follow`] was told (an attached process was
    /// still a launcher that exec'd Firefox since): compare with that one at the end.
    pub fn install_is(&mut self, install: &Path) {
        self.install_id = files::install_identity(install);
    }

    /// Whether the tracer follows the tree (else /proc is sampled).
    #[must_use]
    pub fn traced(&self) -> bool {
        self.rec.traced
    }

    /// When recording began (CLOCK_MONOTONIC ns).
    #[must_use]
    pub fn armed_ns(&self) -> u64 {
        self.rec.armed_ns
    }

    /// For a process that ran before the recording: what it had read so far is the baseline,
    /// not part of the trace.
    pub fn baseline(&mut self) {
        let s = &mut self.sampler;
        s.sample(0.0, true);
        s.baseline = s
            .read_bytes
            .iter()
            .map(|(p, rb)| (*p, (*rb, s.majflt.get(p).copied().unwrap_or(0))))
            .collect();
        s.samples.clear();
    }

    /// Record until the start is over; why it ended. `exited` tells whether the process ended
    /// (the words for it), `zero_ns` is time zero, `marker` the extension's "recorded" file.
    pub fn run(
        &mut self,
        exited: &mut dyn FnMut() -> Option<String>,
        zero_ns: u64,
        stop: Stop,
        marker: &Marker,
    ) -> String {
        recording::run_loop(
            &mut self.rec,
            &mut self.sampler,
            &mut self.restored,
            exited,
            zero_ns,
            stop,
            marker,
        )
    }

    /// Stop and build the trace: `zero` (CLOCK_MONOTONIC ns, and what it is), how it ended,
    /// the notes so far, whether the start was cold.
    pub fn finish(
        mut self,
        install: &Install,
        zero: (u64, String),
        ended_by: String,
        notes: Vec<Note>,
        cold: bool,
    ) -> anyhow::Result<Trace> {
        let reached = self.restored.reached();
        let profile = self.restored.profile.take();
        let mut trace = finish::finish(
            self.rec,
            self.sampler,
            install,
            self.pid,
            zero,
            ended_by,
            notes,
            self.install_id,
            cold,
        )?;
        trace.session_restored_reached = reached;
        if let Some(dir) = profile {
            trace.profile = Some(crate::trace::model::TraceProfile {
                dir: Some(crate::path_text::display(&dir)),
                parts: None,
            });
        }
        Ok(trace)
    }
}

#[cfg(test)]
mod tests;
