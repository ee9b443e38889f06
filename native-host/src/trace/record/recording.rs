//! The tracefs side of a recording (armed, or why not) and the loop that polls it and /proc
//! until the start is over, with the code of each way it ends.

use super::sampler::Sampler;
use super::spec::{Marker, BUFFER_KB, MIN_MS, SAMPLE_FALLBACK, SAMPLE_TRACED, TICK};
use crate::note;
use crate::os::clock::clock_ns;
use crate::trace::event::{lost_in_line, parse_line, Line};
use crate::trace::record::{Stop, MAX_SECONDS};
use crate::trace::tracefs::{self, Instance, TraceError};
use std::process::Child;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

/// One recording in progress.
pub(super) struct Recording {
    pub(super) instance: Option<Instance>,
    /// Why there is no exact trace: a `note::NO_TRACE_*` code and the error's English.
    pub(super) fallback_reason: Option<(&'static str, String)>,
    raw: Vec<u8>,
    pub(super) lines: Vec<Line>,
    pub(super) lost_lines: u64,
    pub(super) armed_ns: u64,
    pub(super) armed_wall: SystemTime,
}

impl Recording {
    pub(super) fn arm(trace: bool, faults: bool) -> Self {
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
            match Instance::create(&name, BUFFER_KB, faults) {
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
        rec.armed_ns = clock_ns();
        rec.armed_wall = SystemTime::now();
        rec
    }

    pub(super) fn pump(&mut self) -> anyhow::Result<()> {
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

/// Why recording stopped.
pub(super) fn run_loop(
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
            return Ok("interrupted".into());
        }
        // The marker is taken (read for its sessionRestored, and removed) once the trace is made.
        if stop.seconds.is_none() && marker.as_ref().is_some_and(|(dir, m)| dir.exists(m)) {
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
        } else if !crate::os::proc::exists(sampler.root) {
            return Ok("firefox exited".into());
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
