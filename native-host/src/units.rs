//! How a figure is written for a person, the one rule of each: decimal megabytes with one
//! decimal, rounded half up (as the page's `Intl.NumberFormat` rounds, and as `du --si` and the
//! docs count). Float formatting (`{:.1}` of `bytes / 1e6`) rounds ties to even on the binary
//! value, so 250,000 bytes would be "0.2" here and "0.3" on the page: never use it for bytes.
//! And the one rule for a time someone gives in ms since Firefox's process start ([`check_ms`]:
//! the CLI's options and the protocol's fields alike).
//! A leaf of the floor: used by the CLI, the protocol, the exports and the trace's summaries,
//! using nothing.

/// Decimal megabytes with one decimal, rounded half up: 250,000 → "0.3", 308,500,000 → "308.5".
#[must_use]
pub fn megabytes(bytes: u64) -> String {
    let tenths = bytes.saturating_add(50_000) / 100_000;
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// [`megabytes`] with its unit: "308.5 MB".
#[must_use]
pub fn mb(bytes: u64) -> String {
    format!("{} MB", megabytes(bytes))
}

/// The longest time in ms a start can be given: a day (no start takes longer; the recording's
/// own bound is minutes).
pub const MAX_MS: f64 = 86_400_000.0;

/// A time in ms since Firefox's process start, as a person or the extension gives it: finite,
/// at least 0 and at most [`MAX_MS`]. `inf` or `NaN` would turn off every comparison made with
/// it (issue 29: `--seconds inf` turned off the recording's bound), a negative one means nothing.
pub fn check_ms(ms: f64) -> Result<f64, String> {
    if ms.is_finite() && (0.0..=MAX_MS).contains(&ms) {
        Ok(ms)
    } else {
        Err(format!(
            "give a time in ms from 0 to {MAX_MS} (a day), not {ms}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_ms_are_finite_and_within_a_day() {
        assert_eq!(check_ms(0.0), Ok(0.0));
        assert_eq!(check_ms(1351.5), Ok(1351.5));
        for bad in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1.0,
            MAX_MS + 1.0,
        ] {
            assert!(check_ms(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ties_round_up_as_intl_does_on_the_page() {
        // Intl.NumberFormat("en", {maximumFractionDigits: 1}).format(0.25) is "0.3" (ECMA-402:
        // "half expand"); Rust's `format!("{:.1}", 0.25)` is "0.2".
        assert_eq!(megabytes(250_000), "0.3");
        assert_eq!(megabytes(249_999), "0.2");
        assert_eq!(megabytes(0), "0.0");
        assert_eq!(megabytes(308_500_000), "308.5");
        assert_eq!(mb(1_050_000), "1.1 MB");
        // No overflow at the top (the sum saturates: the last tenth is cut, not rounded).
        assert_eq!(megabytes(u64::MAX), "18446744073709.5");
    }
}
