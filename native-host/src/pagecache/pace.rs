//! Pacing a background preload so that it yields the disk to everyone else.
//!
//! I/O priority classes do not do this: the `none` scheduler (the NVMe default) ignores them and
//! mq-deadline honours them little; measured here, a login-time preload at idle priority made a
//! user's file reads at login 38% slower (docs/benchmarks.md). So the preload yields by itself:
//! between slices of its reads it stops for a short *probe* and watches the kernel's I/O pressure
//! (`/proc/pressure/io`, PSI, the `some` total: microseconds during which at least one task
//! waited on I/O). The preload has no read in flight during the probe, so stall time that grows
//! then is somebody else waiting for the disk: the preload backs off (doubling pauses) until a
//! probe is quiet again. Without PSI (a kernel without CONFIG_PSI, or booted with psi=0) it
//! cannot tell, says so in its summary, and reads unpaced.
//!
//! The pacer holds no I/O itself: the pressure source and the sleep are parameters, so the
//! policy is tested with fakes.

use std::time::Duration;

/// The file the kernel reports I/O pressure in.
pub const PRESSURE_IO: &str = "/proc/pressure/io";

/// A probe that saw others stalled for more than this share of it means "someone is waiting".
/// 5%: a probe of 20 ms tolerates 1 ms of stall (timer slack, a stray metadata read).
const BUSY_SHARE: f64 = 0.05;
/// The probe is a quarter of the reading time since the last probe (so pacing costs ≤ 20% when
/// nobody else reads), within these bounds; short slices (a page or two, or pages copied from
/// the cache) are added up until they make one probe's worth, instead of a 5 ms probe after
/// each one.
const PROBE_MIN: Duration = Duration::from_millis(5);
const PROBE_MAX: Duration = Duration::from_millis(50);
/// Back-off pauses double from the first to the last while the disk stays busy.
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(2);

/// `some total=` of a PSI file's text, in microseconds (parsed by `procfs-core`). Pure.
#[must_use]
pub fn some_total_us(text: &[u8]) -> Option<u64> {
    use procfs_core::FromRead;
    procfs_core::IoPressure::from_read(text)
        .ok()
        .map(|p| p.some.total)
}

/// The system's I/O stall total now (µs), or `None` where the kernel has no PSI.
#[must_use]
pub fn read_pressure() -> Option<u64> {
    some_total_us(&crate::os::proc::read_system("pressure/io", crate::os::proc::SMALL_BYTES).ok()?)
}

/// What pacing did over a run, for the preload's summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct PaceReport {
    /// False where the kernel has no PSI: the run read unpaced.
    pub pressure_available: bool,
    /// Time spent probing (reading nothing, others not waiting).
    pub probed_ms: u64,
    /// Time spent backing off because others were waiting on I/O.
    pub yielded_ms: u64,
    /// How many probes found others waiting.
    pub busy_probes: u64,
}

/// Yields between slices of a preload's reads (see the module doc).
pub struct Pacer<P, S>
where
    P: FnMut() -> Option<u64>,
    S: FnMut(Duration),
{
    pressure: P,
    sleep: S,
    report: PaceReport,
    /// Reading time since the last probe.
    unprobed: Duration,
}

impl<P, S> Pacer<P, S>
where
    P: FnMut() -> Option<u64>,
    S: FnMut(Duration),
{
    /// A pacer over a pressure source (`read_pressure` in real runs) and a sleep.
    pub fn new(mut pressure: P, sleep: S) -> Self {
        let pressure_available = pressure().is_some();
        Pacer {
            pressure,
            sleep,
            report: PaceReport {
                pressure_available,
                ..PaceReport::default()
            },
            unprobed: Duration::ZERO,
        }
    }

    /// Called after each slice of reading, with the time that slice took: once the reading since
    /// the last probe is worth a probe, probes, and backs off while others wait on I/O. Returns
    /// once a probe is quiet (or at once without PSI, or before a probe is due).
    pub fn after_slice(&mut self, slice: Duration) {
        if !self.report.pressure_available {
            return;
        }
        self.unprobed += slice;
        if self.unprobed < PROBE_MIN * 4 {
            return;
        }
        let probe = (self.unprobed / 4).clamp(PROBE_MIN, PROBE_MAX);
        self.unprobed = Duration::ZERO;
        let mut backoff = BACKOFF_FIRST;
        loop {
            let Some(before) = (self.pressure)() else {
                return;
            };
            (self.sleep)(probe);
            self.report.probed_ms += millis(probe);
            let Some(after) = (self.pressure)() else {
                return;
            };
            let stalled_us = after.saturating_sub(before);
            #[allow(clippy::cast_precision_loss)] // µs over a probe of ≤ 50 ms: exact in an f64
            let busy = stalled_us as f64 > probe.as_micros() as f64 * BUSY_SHARE;
            if !busy {
                return;
            }
            self.report.busy_probes += 1;
            (self.sleep)(backoff);
            self.report.yielded_ms += millis(backoff);
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
    }

    #[must_use]
    pub fn report(&self) -> PaceReport {
        self.report
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn some_total_is_read_from_the_kernels_format() {
        let text = "some avg10=0.17 avg60=0.53 avg300=0.38 total=10110013\n\
                    full avg10=0.10 avg60=0.37 avg300=0.28 total=8354221\n";
        assert_eq!(some_total_us(text.as_bytes()), Some(10_110_013));
        assert_eq!(some_total_us(b"full avg10=0 total=5\n"), None);
        assert_eq!(some_total_us(b"some avg10=0 total=lots\n"), None);
        assert_eq!(some_total_us(b""), None);
        assert!(read_pressure().is_some() || !std::path::Path::new(PRESSURE_IO).exists());
    }

    /// A fake clock: each sleep advances it; the stall total grows by `stall(t)` µs per ms slept.
    fn run(slice: Duration, busy_until_ms: u64) -> (PaceReport, Vec<Duration>) {
        let now_ms = RefCell::new(0u64);
        let total = RefCell::new(0u64);
        let sleeps = RefCell::new(Vec::new());
        let report = {
            let mut pacer = Pacer::new(
                || Some(*total.borrow()),
                |d: Duration| {
                    let ms = millis(d);
                    let start = *now_ms.borrow();
                    // Someone else waits on I/O the whole time until busy_until_ms.
                    let busy = busy_until_ms.saturating_sub(start).min(ms);
                    *total.borrow_mut() += busy * 1000;
                    *now_ms.borrow_mut() += ms;
                    sleeps.borrow_mut().push(d);
                },
            );
            pacer.after_slice(slice);
            pacer.report()
        };
        (report, sleeps.into_inner())
    }

    #[test]
    fn a_quiet_disk_costs_one_short_probe() {
        let (report, sleeps) = run(Duration::from_millis(40), 0);
        assert_eq!(sleeps, [Duration::from_millis(10)]);
        assert_eq!(report.yielded_ms, 0);
        assert_eq!(report.busy_probes, 0);
        assert!(report.pressure_available);
        // The probe stays within its bounds for long slices; a short one is not worth a probe.
        assert_eq!(run(Duration::from_secs(3), 0).1, [PROBE_MAX]);
        assert_eq!(run(Duration::from_micros(100), 0).1, []);
    }

    #[test]
    fn short_slices_add_up_to_one_probe_of_a_quarter_of_their_time() {
        // 200 slices of 0.1 ms (pages copied from the cache): one 5 ms probe, not 200.
        let slept = RefCell::new(Vec::new());
        let mut pacer = Pacer::new(|| Some(0), |d: Duration| slept.borrow_mut().push(d));
        for _ in 0..200 {
            pacer.after_slice(Duration::from_micros(100));
        }
        assert_eq!(*slept.borrow(), [PROBE_MIN]);
        assert_eq!(pacer.report().probed_ms, 5);
    }

    #[test]
    fn others_waiting_make_it_back_off_with_doubling_pauses_until_quiet() {
        // Busy for the first 1.5 s: probe (busy), 100 ms, probe, 200 ms, probe, 400 ms, probe,
        // 800 ms, then a quiet probe.
        let (report, sleeps) = run(Duration::from_millis(40), 1500);
        let ms: Vec<u64> = sleeps.iter().map(|d| millis(*d)).collect();
        assert_eq!(ms, [10, 100, 10, 200, 10, 400, 10, 800, 10]);
        assert_eq!(report.busy_probes, 4);
        assert_eq!(report.yielded_ms, 1500);
        // The pauses stop doubling at the cap.
        let (_, long) = run(Duration::from_millis(40), 20_000);
        assert!(long.iter().all(|d| *d <= BACKOFF_MAX));
        assert!(long.contains(&BACKOFF_MAX));
    }

    #[test]
    fn without_psi_it_reads_unpaced_and_says_so() {
        let slept = std::cell::Cell::new(0);
        let mut pacer = Pacer::new(|| None, |_| slept.set(slept.get() + 1));
        pacer.after_slice(Duration::from_millis(40));
        assert!(!pacer.report().pressure_available);
        assert_eq!(slept.get(), 0);
    }
}
