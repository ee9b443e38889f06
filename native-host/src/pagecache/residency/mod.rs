//! Page-cache residency, page by page (mincore), with the kernel's blind spot made explicit:
//! since Linux 5.2 mincore reports every page resident for files the caller neither owns nor may
//! write, so those files are `hidden`, never 100%.
//!
//! Here: what this host can measure ([`capabilities`]) and what a scan reports, per file and per
//! group, with the ranges' budget in a reply. `scan.rs` is the scan itself ([`scan`]),
//! `proc_maps.rs` which pages of a file a process has mapped (pagemap, smaps as a fallback),
//! also used by learn/workingset.

mod proc_maps;
mod report;
mod scan;
pub(crate) use proc_maps::ProcMaps;
pub use scan::{scan, ScanOptions};

pub(crate) use report::MAX_RANGES;
pub use report::{
    cached_bytes, capabilities, Capabilities, FileReport, Group, GroupTotals, Mapped, Status,
    Summary, HIDDEN_REASON,
};
