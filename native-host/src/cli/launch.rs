//! `launch --prefetch`: Firefox at once, the prefetcher beside it (launch/prefetch.rs).

use crate::launch::prefetch;
use crate::learn::prefetch::{self as learned, Sizes};

use super::args::LaunchArgs;

pub(super) fn prefetch_cmd(args: &LaunchArgs) -> anyhow::Result<()> {
    let (dir, binary, found_by) = prefetch::firefox_of(args.firefox.as_deref())?;
    eprintln!(
        "about-startup-host: starting {} ({})",
        binary.display(),
        chosen_by(&found_by)
    );
    let defaults = Sizes::default();
    let sizes = args.batches.map_or(defaults, |(first, max)| Sizes {
        first: first << 20,
        max: max << 20,
    });
    let req = prefetch::Request {
        dir,
        binary,
        args: args.args.clone(),
        cold: args.cold,
        strategy: args.strategy.unwrap_or_default().into(),
        paced: args.idle,
        knobs: learned::Knobs {
            sizes,
            ahead: args.ahead_mib.map_or(learned::AHEAD, |m| m << 20),
            gap: args.gap_kib.map_or(learned::GAP, |k| k << 10),
            until_ms: args.until_ms,
            warm: !args.no_warm,
            ..learned::Knobs::default()
        },
    };
    Err(prefetch::run(&req))
}

/// How `launch` chose the Firefox it starts, in words: named with `--firefox`, else the
/// installed one (install::to_launch), saying that a running Firefox is not what it starts.
pub(super) fn chosen_by(found_by: &str) -> String {
    if found_by == "--firefox" {
        "named with --firefox".to_owned()
    } else {
        format!("the installed Firefox, found by {found_by}; not a running one's copy: --firefox DIR starts another")
    }
}
