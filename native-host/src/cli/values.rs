//! The values of options that are not plain strings or numbers: parsers that refuse what would
//! turn off a bound (`--seconds inf`), and the CLI's names for library choices, so the library
//! needs no clap.

use crate::learn::plan;
use crate::learn::prefetch::strategy;
use crate::pagecache::preload::Method;
use crate::pagecache::Cache;
/// `--batches FIRST:MAX` in MiB.
pub(super) fn parse_batches(text: &str) -> Result<(u64, u64), String> {
    let bad =
        || format!("{text:?}: give two sizes in MiB, the first and the largest batch, e.g. 4:32");
    let (first, max) = text.split_once(':').ok_or_else(bad)?;
    let (first, max): (u64, u64) = (
        first.parse().map_err(|_| bad())?,
        max.parse().map_err(|_| bad())?,
    );
    if first == 0 || max < first || max > 4096 {
        return Err(format!(
            "{text:?}: the sizes must be 1 ≤ FIRST ≤ MAX ≤ 4096 MiB"
        ));
    }
    Ok((first, max))
}

/// `--seconds N`: a finite number of seconds above zero (`inf`, `NaN` and negative values would
/// turn off the recording's only bound). Whole days are more than any start takes.
pub(super) fn parse_seconds(text: &str) -> Result<f64, String> {
    let n: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !n.is_finite() || n <= 0.0 || n > 86_400.0 {
        return Err(format!(
            "{text:?}: give a number of seconds above 0 and at most 86400"
        ));
    }
    Ok(n)
}

/// A time in ms since Firefox's process start (`--axis-end`, `--until-ms`): finite, at least 0
/// and at most a day ([`crate::units::check_ms`], the protocol's rule too).
pub(super) fn parse_ms(text: &str) -> Result<f64, String> {
    let n: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of ms"))?;
    crate::units::check_ms(n).map_err(|e| format!("{text:?}: {e}"))
}

/// `launch --strategy`'s values: the CLI's names for [`strategy::Choice`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum StrategyArg {
    /// First where the disk's readahead window is over 1 MiB, else beside.
    #[default]
    Auto,
    /// Start Firefox at once and read beside it.
    Beside,
    /// Read the plan, then start Firefox (30 s at most).
    First,
}

impl From<StrategyArg> for strategy::Choice {
    fn from(arg: StrategyArg) -> Self {
        match arg {
            StrategyArg::Auto => strategy::Choice::Auto,
            StrategyArg::Beside => strategy::Choice::Beside,
            StrategyArg::First => strategy::Choice::First,
        }
    }
}

/// `--cache` of preload and evict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CacheArg {
    /// The install's files (a squashfs install: their decompressed pages).
    Files,
    /// The compressed image behind a squashfs install's loop device.
    Image,
    /// Both.
    All,
}

impl From<CacheArg> for Cache {
    fn from(arg: CacheArg) -> Self {
        match arg {
            CacheArg::Files => Cache::Files,
            CacheArg::Image => Cache::Image,
            CacheArg::All => Cache::All,
        }
    }
}

/// `--source`'s values: the CLI's names for [`plan::PlanSource`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SourceArg {
    Learned,
    Trace,
    TraceReads,
}

impl From<SourceArg> for plan::PlanSource {
    fn from(arg: SourceArg) -> Self {
        match arg {
            SourceArg::Learned => plan::PlanSource::Learned,
            SourceArg::Trace => plan::PlanSource::Trace,
            SourceArg::TraceReads => plan::PlanSource::TraceReads,
        }
    }
}

/// `--method`'s values: the CLI's names for [`Method`], so the library needs no clap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MethodArg {
    /// The method measured fastest (docs/benchmarks.md).
    Auto,
    /// Large read(2) calls into a reused buffer, like `cat`.
    Read,
    /// readahead(2) over the whole file.
    Readahead,
    /// posix_fadvise(POSIX_FADV_WILLNEED).
    Fadvise,
}

impl From<MethodArg> for Method {
    fn from(arg: MethodArg) -> Self {
        match arg {
            MethodArg::Auto => Method::Auto,
            MethodArg::Read => Method::Read,
            MethodArg::Readahead => Method::Readahead,
            MethodArg::Fadvise => Method::Fadvise,
        }
    }
}
