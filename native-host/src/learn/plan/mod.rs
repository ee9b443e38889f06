//! The preload plan: from the merged working set (learn/workingset/), the byte ranges to read
//! per file, joined across small gaps, in physical disk order (FIEMAP), and the reader that reads
//! exactly those ranges (`preload --plan`).
//!
//! Files that changed since they were learned (a Firefox update) and install files the set does
//! not know are read whole; install files the set knows but no start touched are skipped.

mod make;
pub mod profile;
mod read;
mod status;
#[cfg(test)]
mod tests;
mod traced;
pub use read::{preload_planned, run};
pub use status::{status, status_of, PlanStatus, Uncached};
pub use traced::{make_traced, traced_plan};

pub use make::{
    byte_ranges, make, make_with, order_reads, split_by_extents, Knobs, Order, Plan, PlanSource,
    Read, GAP_BYTES, TRACE_GAP_BYTES,
};
pub(in crate::learn) use make::{empty_plan, is_system_file};
