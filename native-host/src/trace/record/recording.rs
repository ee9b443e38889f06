//! The tracer's side of a recording (following the tree through a [`Link`], or why not) and the
//! loop that polls it and /proc until the start is over, with the code of each way it ends.

use super::link::{Link, Stopped};
use super::restored::Restored;
use super::sampler::Sampler;
use super::spec::{Marker, MIN_MS, SAMPLE_FALLBACK, SAMPLE_TRACED, TICK};
use crate::os::clock::clock_ns;
use crate::trace::event::{lost_in_line, main_thread_comm, parse_line, Line};
use crate::trace::record::{Stop, MAX_SECONDS};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

/// One recording in progress.
pub(super) struct Recording {
    link: Option<Link>,
    /// Why there is no exact trace: a `note::NO_TRACE_*` code and the error's English.
    pub(super) fallback_reason: Option<(&'static str, String)>,
    pub(super) lines: Vec<Line>,
    /// Each traced process's main-thread name, the last its lines carried (after an exec, the
    /// program it became: `crashhelper`, `glxtest`).
    pub(super) comms: std::collections::BTreeMap<i32, String>,
    pub(super) lost_lines: u64,
    pub(super) armed_ns: u64,
    pub(super) armed_wall: SystemTime,
    pub(super) traced: bool,
    /// Why the tracer ended before it was told to stop, in words (then the recording ends at
    /// once, and no trace is made of it: what Firefox read after that is missing).
    pub(super) tracer_ended: Option<String>,
}

impl Recording {
    /// A recording of the tree of `pid`: followed by the tracer if `tracer` is one, else /proc
    /// sampling with the reason (`(code, detail)`).
    pub(super) fn follow(
        tracer: Result<Link, (&'static str, String)>,
        pid: i32,
        faults: bool,
    ) -> Self {
        let mut rec = Recording {
            link: None,
            fallback_reason: None,
            lines: Vec::new(),
            comms: std::collections::BTreeMap::new(),
            lost_lines: 0,
            armed_ns: 0,
            armed_wall: SystemTime::now(),
            traced: false,
            tracer_ended: None,
        };
        match tracer {
            Ok(mut link) => match link.follow(pid, faults) {
                Ok(()) => {
                    rec.traced = true;
                    rec.link = Some(link);
                }
                Err(e) => rec.fallback_reason = Some((e.note_reason(), e.to_string())),
            },
            Err(why) => rec.fallback_reason = Some(why),
        }
        // The tracer said `Armed` just now (its events are recorded from a moment before).
        rec.armed_ns = clock_ns();
        rec.armed_wall = SystemTime::now();
        rec
    }

    fn take(&mut self, text: Vec<String>) {
        for l in text {
            if let Some(n) = lost_in_line(&l) {
                self.lost_lines += n;
            } else if let Some(parsed) = parse_line(&l) {
                if let Some((pid, comm)) = main_thread_comm(&l) {
                    if self.comms.get(&pid).map(String::as_str) != Some(comm) {
                        self.comms.insert(pid, comm.to_owned());
                    }
                }
                self.lines.push(parsed);
            }
        }
    }

    pub(super) fn pump(&mut self) {
        let Some(link) = self.link.as_mut() else {
            return;
        };
        let mut text = Vec::new();
        link.poll(&mut text);
        if let Some(ended) = link.ended {
            self.tracer_ended = Some(match &link.closed {
                Some(why) => {
                    format!("its end closed without a word ({why}): it was killed, or failed")
                }
                None => super::link::ended_early(ended).to_owned(),
            });
        }
        self.take(text);
    }

    /// Stop the tracer: the last lines in, the page frames' flags (by token) out, the counts
    /// added. `None` without a tracer.
    pub(super) fn stop(&mut self) -> Option<Stopped> {
        let link = self.link.take()?;
        let mut stopped = link.stop();
        self.take(std::mem::take(&mut stopped.lines));
        self.lost_lines += stopped.lost_lines + stopped.lost_events;
        // The system instance's completions come a drain after their issue: the kernel's order.
        self.lines.sort_by_key(|l| l.ts_ns);
        Some(stopped)
    }
}

/// How `run_loop` says the tracer ended first (Recorder::finish then fails with why).
pub(super) const TRACER_ENDED: &str = "the tracer ended";

/// The code of a `run_loop` ending (Trace::ended_by_code).
pub(super) fn ended_by_code(ended_by: &str) -> &'static str {
    match ended_by {
        "quiet" => "quiet",
        "seconds" => "seconds",
        "limit" => "limit",
        "interrupted" => "interrupted",
        e if e.starts_with("session restored") => "session_restored",
        _ => "firefox_exited",
    }
}

/// Why recording stopped. `exited`: whether the recorded process has ended (`Some` with the
/// words for it), polled every tick.
pub(super) fn run_loop(
    rec: &mut Recording,
    sampler: &mut Sampler,
    restored: &mut Restored,
    exited: &mut dyn FnMut() -> Option<String>,
    zero_ns: u64,
    stop: Stop,
    marker: &Marker,
) -> String {
    let interrupted = super::signal::interrupted();
    let started = Instant::now();
    let period = if rec.traced {
        SAMPLE_TRACED
    } else {
        SAMPLE_FALLBACK
    };
    let mut last_sample = Instant::now() - period;
    let mut last_full = Instant::now() - Duration::from_secs(1);
    let mut last_change = Instant::now();
    let mut last_totals = (u64::MAX, u64::MAX);
    let limit = stop.seconds.unwrap_or(MAX_SECONDS);
    loop {
        rec.pump();
        if last_sample.elapsed() >= period {
            let full = last_full.elapsed() >= Duration::from_millis(250);
            let t = (clock_ns().saturating_sub(zero_ns)) as f64 / 1e6;
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
            return "interrupted".into();
        }
        if rec.tracer_ended.is_some() {
            return TRACER_ENDED.into();
        }
        // The marker is taken (read for its sessionRestored, and removed) once the trace is made.
        if stop.seconds.is_none() && marker.as_ref().is_some_and(|(dir, m)| dir.exists(m)) {
            return "session restored (the extension recorded the start)".into();
        }
        let elapsed = started.elapsed().as_secs_f64();
        if elapsed >= limit {
            return if stop.seconds.is_some() {
                "seconds".into()
            } else {
                "limit".into()
            };
        }
        // Quiet is the end of a start only once its session is restored, where that can be
        // known: a start busy on the CPU reads nothing for seconds before it.
        if stop.seconds.is_none()
            && started.elapsed() >= Duration::from_millis(MIN_MS)
            && last_change.elapsed() >= Duration::from_millis(stop.quiet_ms)
            && restored.quiet_may_end()
        {
            return "quiet".into();
        }
        if let Some(words) = exited() {
            return words;
        }
        std::thread::sleep(TICK);
    }
}

#[cfg(test)]
mod tests {
    use super::ended_by_code;

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
}
