//! The trace as a profile the Firefox Profiler loads (issue 21), fed by the trace's model:
//!
//! - [`view`]: the trace as markers, milestones, bytes-over-time series and summaries (pure);
//! - [`error`]: why an export failed;
//! - [`schema`]: our marker schemas, defined once for both formats;
//! - [`processed`]: a trace alone, as a processed profile (`fxprof-processed-profile`);
//! - [`gecko`]: a trace merged into Firefox's own startup profile (Gecko format), on one clock.
//!
//! [`firefox_profiler`] picks: with Firefox's profile the merge, without it the trace alone.
//! Used by the CLI (`trace export`, `launch --firefox-profile`) and the host (`trace_profile`).

pub mod error;
pub mod gecko;
pub mod processed;
pub mod schema;
#[cfg(test)]
mod test_support;
pub mod view;

use std::collections::BTreeMap;

use crate::trace::model::Trace;
use serde::Serialize;

pub use error::ExportError;
pub use view::summary_line;

/// What an export says about itself (the CLI prints it, the page shows it).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    /// "merged" (Firefox's profile with the trace) or "trace" (the trace alone).
    pub kind: &'static str,
    pub processes: usize,
    pub markers: usize,
    pub bytes: u64,
    pub milestones: usize,
    /// (code region, bytes), most first.
    pub top_code: Vec<(String, u64)>,
    /// (archive, entry, bytes), most first.
    pub top_entries: Vec<(String, String, u64)>,
    /// What the export lacks, in English (no Firefox profile, no fault sites, …).
    pub missing: Vec<String>,
}

/// One exported profile: the JSON bytes and what is in them.
#[derive(Debug)]
pub struct Exported {
    pub json: Vec<u8>,
    pub summary: Summary,
}

/// `trace` (with `milestones` where known, ms since the process start) as a Firefox Profiler
/// profile: merged into `firefox` (Firefox's own Gecko profile of the same start) when given,
/// else alone. A Firefox profile that cannot be merged is an error: the caller may export the
/// trace alone and say why.
pub fn firefox_profiler(
    trace: &Trace,
    firefox: Option<serde_json::Value>,
    milestones: &BTreeMap<String, f64>,
) -> Result<Exported, ExportError> {
    // The profile's files go by their part and add-on names only (issue 31): no path of the
    // profile, which can carry a site's name, leaves in a profile.
    let ctx = crate::trace::summary::profile::ProfileContext::locate(trace);
    let parts = crate::trace::summary::profile::parts_of(trace, &ctx);
    let trace = &crate::trace::summary::redact::redacted(trace, &parts);
    let mut known = trace.milestones.clone().unwrap_or_default();
    known.extend(milestones.iter().map(|(k, v)| (k.clone(), *v)));
    let v = view::view(trace, &known);
    let mut missing = Vec::new();
    if trace.source == crate::trace::model::Source::ProcSampler {
        missing.push("no per-file trace (no root or no tracefs): /proc figures only".to_owned());
    }
    if trace.code.is_empty() {
        missing
            .push("no fault sites (the trace has no exceptions:page_fault_user events)".to_owned());
    }
    if known.is_empty() {
        missing
            .push("no milestones (the trace does not carry them; the page adds them)".to_owned());
    }
    let (json, kind) = match firefox {
        Some(mut gecko) => {
            gecko::merge(&mut gecko, trace, &v)?;
            (serde_json::to_vec(&gecko)?, "merged")
        }
        None => {
            missing
                .push("Firefox's own profile (record with `launch --firefox-profile`)".to_owned());
            (processed::write(trace, &v)?, "trace")
        }
    };
    Ok(Exported {
        json,
        summary: Summary {
            kind,
            processes: v.processes.len(),
            markers: v.processes.iter().map(|p| p.markers.len()).sum(),
            bytes: v.total_bytes,
            milestones: v.milestones.len(),
            top_code: v.top_code,
            top_entries: v.top_entries,
            missing,
        },
    })
}

/// What `trace_profile` replies: the export of a stored trace, written for `trace_profile_fetch`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StoredExport {
    pub trace: String,
    /// The file written (`<state>/profiles/page/<id>.json`), its size, and what it holds.
    pub file: String,
    pub bytes: u64,
    pub summary: Summary,
    /// Why Firefox's stored profile was left out (it could not be merged), if it was.
    pub firefox_profile_error: Option<String>,
}

/// Export stored trace `id` of `traces` (merged with its Firefox profile stored in `profiles`
/// when there is one and it merges; else alone, saying why) into `profiles/page/<id>.json`,
/// for the page to fetch in pages.
pub fn stored(
    traces: &crate::state::StateDir,
    profiles: &crate::state::StateDir,
    id: &str,
) -> Result<StoredExport, crate::Error> {
    let io = |what: &str, e: std::io::Error| crate::Error::io(what.to_owned(), e);
    let (trace, set_aside) = crate::trace::store::read_or_set_aside(traces, id);
    let trace = trace.ok_or_else(|| match &set_aside {
        Some(note) => io(
            &crate::trace::store::unread_error(traces, id, Some(note)),
            std::io::ErrorKind::InvalidData.into(),
        ),
        None => io(
            &format!("no stored trace {id}"),
            std::io::ErrorKind::NotFound.into(),
        ),
    })?;
    let mut firefox_profile_error = None;
    let gecko = match crate::trace::profiles::read(
        profiles,
        id,
        crate::firefox::startup_profile::MAX_BYTES,
    ) {
        Ok(Some(bytes)) => crate::firefox::startup_profile::parse(&bytes)
            .map_err(|e| firefox_profile_error = Some(e))
            .ok(),
        Ok(None) => None,
        Err(e) => {
            firefox_profile_error = Some(e.to_string());
            None
        }
    };
    let exported = match firefox_profiler(&trace, gecko, &BTreeMap::new()) {
        Ok(e) => e,
        Err(e) => {
            firefox_profile_error = Some(e.to_string());
            firefox_profiler(&trace, None, &BTreeMap::new())
                .map_err(|e| io("export the trace", std::io::Error::other(e)))?
        }
    };
    let page = crate::trace::profiles::page(profiles)?;
    let name = format!("{id}.json");
    page.write(&name, &exported.json)?;
    crate::trace::profiles::prune(profiles, traces, crate::trace::profiles::MAX_PROFILES);
    Ok(StoredExport {
        trace: id.to_owned(),
        file: crate::path_text::display(&page.path_of(&name)),
        bytes: exported.json.len() as u64,
        summary: exported.summary,
        firefox_profile_error,
    })
}
