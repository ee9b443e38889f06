//! The clocks: the wall clock (ms since the epoch, what records and status files carry) and the
//! monotonic and boot clocks a recording lines events up on. One home, so every part of the host
//! reads the same time the same way.

use std::time::{SystemTime, UNIX_EPOCH};

use rustix::time::ClockId;

/// Milliseconds since the epoch.
#[must_use]
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The recording's clock now, ns: CLOCK_MONOTONIC, the tracefs "mono" clock and the clock of a
/// Firefox profile's `meta.startTimeAsClockMonotonicNanosecondsSinceBoot` (issue 21).
#[must_use]
pub fn clock_ns() -> u64 {
    ns(ClockId::Monotonic)
}

fn ns(clock: ClockId) -> u64 {
    let ts = rustix::time::clock_gettime(clock);
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(ts.tv_nsec).unwrap_or(0)
}

/// A CLOCK_BOOTTIME instant (/proc starttime's clock) on CLOCK_MONOTONIC: the two differ by the
/// time the machine was suspended, which is the same now as at any moment since `boot_ns`
/// unless it suspended in between.
#[must_use]
pub fn boot_to_clock(boot_ns: u64) -> u64 {
    let boot_now = ns(ClockId::Boottime);
    boot_ns.saturating_sub(boot_now.saturating_sub(clock_ns()))
}
