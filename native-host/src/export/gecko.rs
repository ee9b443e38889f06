//! The trace merged into Firefox's own startup profile (Gecko format, `meta.version` 34 on ESR
//! 153). `fxprof-processed-profile` builds processed profiles from scratch and cannot read or
//! extend a Gecko profile, and converting Firefox's profile into the processed format is the
//! Profiler's own job (its `processGeckoProfile`, in JavaScript); so this module adds to the
//! Gecko profile as Firefox wrote it, through `serde_json::Value`, touching nothing of Firefox's:
//!
//! - our marker schemas appended to every process's `meta.markerSchema`, and a "Disk I/O
//!   (kernel)" category appended to `meta.categories`;
//! - per Firefox process, the I/O markers appended to its GeckoMain thread (so they sit in that
//!   track's file-I/O strip and marker chart beside Firefox's own FileIO and module markers); a
//!   process the profile lacks gets a thread of its own;
//! - the milestones and the trace's summary on the parent's GeckoMain, and one Bandwidth
//!   counter per file group in the parent's `counters` (bytes read over time);
//! - each add-on's startup and background page load as a span on the parent's GeckoMain,
//!   paired from Firefox's own `TimingDistribution::start`/`::stop` instant markers of
//!   Glean's `extensions.timing.*_by_addonid` (ESR 153 writes them as instants: the Profiler
//!   shows no span), on the profile's own clock ([`addon_spans`]).
//!
//! One clock: the trace's times are ms since the process start on CLOCK_MONOTONIC
//! (`Trace::zero_mono_ns`), a Gecko profile's are ms since its `meta.startTime`, whose
//! CLOCK_MONOTONIC value is `meta.startTimeAsClockMonotonicNanosecondsSinceBoot` (each
//! subprocess has its own meta); [`offset_ms`] is the difference.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::error::ExportError;
use super::schema;
use super::view::{IoMarker, View};
use crate::trace::model::Trace;

/// The Gecko-format versions this merge was written against (ESR 153 writes 34; the Profiler
/// upgrades older ones, and a newer one may have moved what is added here).
pub const VERSIONS: std::ops::RangeInclusive<u64> = 20..=40;

/// ms to add to a trace time (since the process start) to get a time of the (sub)process
/// profile whose start is `meta_mono_ns` on CLOCK_MONOTONIC.
#[must_use]
pub fn offset_ms(zero_mono_ns: u64, meta_mono_ns: u64) -> f64 {
    (zero_mono_ns as f64 - meta_mono_ns as f64) / 1e6
}

fn mono(meta: &Value) -> Option<u64> {
    meta.get("startTimeAsClockMonotonicNanosecondsSinceBoot")?
        .as_f64()
        .filter(|v| *v > 0.0)
        .map(|v| v as u64)
}

/// Where the times of a (sub)process profile `p` stand on the trace's axis (zero at
/// `zero_mono_ns`): add this to them. `None` where the profile names no start on the clock.
fn offset_of(p: &Value, zero_mono_ns: u64) -> Option<f64> {
    p.get("meta")
        .and_then(mono)
        .map(|m| offset_ms(zero_mono_ns, m))
}

/// Whether thread `t` is its process's main thread (Firefox names it GeckoMain).
fn is_gecko_main(t: &Value) -> bool {
    t.get("name").and_then(Value::as_str) == Some("GeckoMain")
}

/// The markers of thread `t` that have a name, with it: a row is `[name, start, end, phase,
/// category, data]`, the name an index into the thread's string table. A thread lacking either
/// has none.
fn named_markers(t: &Value) -> impl Iterator<Item = (&str, &Value)> {
    let strings = t.get("stringTable").and_then(Value::as_array);
    let rows = t.pointer("/markers/data").and_then(Value::as_array);
    let (strings, rows) = match (strings, rows) {
        (Some(strings), Some(rows)) => (strings.as_slice(), rows.as_slice()),
        _ => (&[][..], &[][..]),
    };
    rows.iter().filter_map(move |r| {
        let name = r
            .get(0)?
            .as_u64()
            .and_then(|i| strings.get(usize::try_from(i).ok()?))?
            .as_str()?;
        Some((name, r))
    })
}

/// The pid of a (sub)process profile: its GeckoMain thread's, else its first thread's.
fn pid_of(p: &Value) -> Option<i64> {
    let threads = p.get("threads")?.as_array()?;
    threads
        .iter()
        .find(|t| is_gecko_main(t))
        .or_else(|| threads.first())?
        .get("pid")?
        .as_i64()
}

/// Check `gecko` is Firefox's profile of the trace's process and the two can share a clock.
pub fn check(gecko: &Value, trace: &Trace) -> Result<(u64, u64), ExportError> {
    let version = gecko
        .pointer("/meta/version")
        .and_then(Value::as_u64)
        .ok_or_else(|| ExportError::NotGecko("no meta.version".into()))?;
    if !VERSIONS.contains(&version) {
        return Err(ExportError::NotGecko(format!(
            "Gecko profile version {version}, outside the {}–{} this host merges",
            VERSIONS.start(),
            VERSIONS.end()
        )));
    }
    let zero = trace.zero_mono_ns.ok_or(ExportError::OldClock)?;
    let meta_mono = gecko.get("meta").and_then(mono).ok_or_else(|| {
        ExportError::NotGecko("no meta.startTimeAsClockMonotonicNanosecondsSinceBoot".into())
    })?;
    let pid = pid_of(gecko).unwrap_or(-1);
    if pid != i64::from(trace.pid) {
        return Err(ExportError::OtherProcess {
            profile_pid: pid,
            trace_pid: trace.pid,
        });
    }
    // Firefox's profiler starts with its process: a start more than a minute away from the
    // traced process start is another boot or another start.
    let off = offset_ms(zero, meta_mono);
    if off.abs() > 60_000.0 {
        return Err(ExportError::OtherProcess {
            profile_pid: pid,
            trace_pid: trace.pid,
        });
    }
    Ok((zero, meta_mono))
}

/// The category of our counters in a merged (Gecko-format) profile.
pub const COUNTER_CATEGORY: &str = "Bytes read from disk";

fn push_str(thread: &mut Value, s: &str) -> usize {
    let table = thread
        .as_object_mut()
        .map(|t| t.entry("stringTable").or_insert_with(|| json!([])));
    match table {
        Some(Value::Array(a)) => {
            a.push(json!(s));
            a.len() - 1
        }
        _ => 0,
    }
}

fn push_marker(
    thread: &mut Value,
    name: usize,
    start: f64,
    end: Option<f64>,
    cat: usize,
    data: Value,
) {
    if let Some(Value::Array(rows)) = thread.pointer_mut("/markers/data") {
        // [name, startTime, endTime, phase (0 instant, 1 interval), category, data]
        rows.push(json!([
            name,
            start,
            end,
            i32::from(end.is_some()),
            cat,
            data
        ]));
    }
}

fn io_data(m: &IoMarker) -> Value {
    json!({
        "type": schema::DISK_READ.name,
        "filename": m.path,
        "operation": "read",
        "how": m.how,
        "offset": m.offset,
        "size": m.bytes,
        "region": m.region,
        "used": m.used,
        "code": m.cause,
        "group": m.group,
        "disk": crate::trace::disk_time::words(m.disk),
    })
}

/// A thread of our own for a process the profile lacks (or has no GeckoMain for), shaped like
/// `like` (a thread of the same profile: same table schemas).
fn own_thread(like: &Value, pid: i32, name: &str) -> Value {
    let schema_of = |key: &str| {
        like.pointer(&format!("/{key}/schema"))
            .cloned()
            .unwrap_or(json!({}))
    };
    json!({
        "processType": "default",
        "name": super::view::IO_THREAD,
        "processName": format!("{name} (not in Firefox's profile)"),
        "registerTime": 0,
        "unregisterTime": null,
        "pid": pid,
        // Firefox's tids are Linux tids (< 2^22); this one cannot collide.
        "tid": 1_i64 << 40 | i64::from(pid),
        "samples": {"schema": schema_of("samples"), "data": []},
        "markers": {"schema": schema_of("markers"), "data": []},
        "stackTable": {"schema": schema_of("stackTable"), "data": []},
        "frameTable": {"schema": schema_of("frameTable"), "data": []},
        "stringTable": [],
    })
}

/// What every (sub)process gets from the merge.
struct Merge<'a> {
    trace: &'a Trace,
    view: &'a View,
    zero: u64,
    category_index: usize,
    by_pid: BTreeMap<i32, &'a super::view::ProcessView>,
}

impl Merge<'_> {
    /// Add to one (sub)process profile `p`: schemas, category, its markers, and for the parent
    /// the milestones, the summary and the counters.
    fn process(&mut self, p: &mut Value) {
        let off = offset_of(p, self.zero);
        let Some(meta) = p.get_mut("meta").and_then(Value::as_object_mut) else {
            return;
        };
        if let Some(Value::Array(schemas)) = meta.get_mut("markerSchema") {
            for s in schema::ALL {
                if !schemas
                    .iter()
                    .any(|x| x.get("name").and_then(Value::as_str) == Some(s.name))
                {
                    schemas.push(s.gecko());
                }
            }
        }
        if let Some(Value::Array(cats)) = meta.get_mut("categories") {
            if cats.len() == self.category_index {
                cats.push(json!({"name": super::view::IO_CATEGORY, "color": "orange", "subcategories": ["Other"]}));
                cats.push(json!({"name": super::view::MILESTONE_CATEGORY, "color": "green", "subcategories": ["Other"]}));
            }
        }
        let Some(off) = off else { return };
        let Some(pid) = pid_of(p).and_then(|x| i32::try_from(x).ok()) else {
            return;
        };
        let cat = self.category_index;
        let Some(main) = p
            .get_mut("threads")
            .and_then(Value::as_array_mut)
            .and_then(|ts| ts.iter_mut().find(|t| is_gecko_main(t)))
        else {
            return;
        };
        if let Some(pv) = self.by_pid.remove(&pid) {
            let name = push_str(main, "Disk read");
            for m in &pv.markers {
                let (from, to) = m.span();
                push_marker(main, name, from + off, Some(to + off), cat, io_data(m));
            }
        }
        if pid != self.trace.pid {
            return;
        }
        for (ms_name, t) in &self.view.milestones {
            let name = push_str(main, ms_name);
            let data = json!({"type": schema::MILESTONE.name, "milestone": ms_name});
            push_marker(main, name, t + off, None, cat + 1, data);
        }
        // Each add-on's spans, on this very thread's clock (no offset: Firefox's own markers).
        for span in addon_spans(main) {
            let name = push_str(main, &format!("Add-on {}: {}", span.what, span.addon));
            let data = json!({
                "type": schema::ADDON_SPAN.name,
                "addon": span.addon,
                "what": span.what,
                "metric": format!("extensions.timing.{}", span.metric),
            });
            push_marker(main, name, span.start, Some(span.end), cat + 1, data);
        }
        let name = push_str(main, "about:startup trace");
        let data = json!({
            "type": schema::RECORDING.name,
            "summary": super::view::summary_line(self.trace, self.view),
            "notes": self.trace.notes.join("; "),
        });
        let (from, to) = (self.trace.attached_ms + off, self.trace.ended_ms + off);
        push_marker(main, name, from, Some(to), cat, data);
        let counters = p
            .as_object_mut()
            .map(|o| o.entry("counters").or_insert_with(|| json!([])));
        if let Some(Value::Array(counters)) = counters {
            for s in &self.view.series {
                counters.push(json!({
                    "name": format!("Disk reads: {}", s.group),
                    // Not "Bandwidth": the Profiler labels every Gecko-format counter of that
                    // category "Bandwidth" whatever its name (it makes the track's display from
                    // the category alone), so the five file groups' tracks could not be told
                    // apart. Any other category is labelled by the counter's name, its values
                    // shown as plain numbers: bytes, as the name says.
                    "category": COUNTER_CATEGORY,
                    "description": format!("Bytes read from disk into the page cache for {} (kernel trace, about:startup)", s.group),
                    "samples": {
                        "schema": {"time": 0, "count": 1, "number": 2},
                        "data": s.points.iter().map(|(t, b, n)| json!([t + off, b, n])).collect::<Vec<_>>(),
                    },
                }));
            }
        }
    }
}

/// Merge `view` of `trace` into `gecko` (checked with [`check`] first).
pub fn merge(gecko: &mut Value, trace: &Trace, view: &View) -> Result<(), ExportError> {
    let (zero, parent_mono) = check(gecko, trace)?;
    let mut m = Merge {
        trace,
        view,
        zero,
        category_index: gecko
            .pointer("/meta/categories")
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
        by_pid: view.processes.iter().map(|p| (p.pid, p)).collect(),
    };
    let like = gecko.pointer("/threads/0").cloned().unwrap_or(json!({}));
    // The parent, then each subprocess (taken out and put back: one borrow at a time).
    let mut subs = gecko
        .as_object_mut()
        .and_then(|o| o.remove("processes"))
        .unwrap_or_else(|| json!([]));
    m.process(gecko);
    if let Value::Array(list) = &mut subs {
        list.iter_mut().for_each(|p| m.process(p));
    }
    // Processes Firefox's profile does not have (the fork server, a crash helper, one that
    // exited before the dump): a thread of their own in the parent's list, on its clock.
    let off = offset_ms(zero, parent_mono);
    let mut extra = Vec::new();
    for (pid, pv) in std::mem::take(&mut m.by_pid) {
        let mut t = own_thread(&like, pid, &pv.name);
        let name = push_str(&mut t, "Disk read");
        for mk in &pv.markers {
            let (from, to) = mk.span();
            push_marker(
                &mut t,
                name,
                from + off,
                Some(to + off),
                m.category_index,
                io_data(mk),
            );
        }
        extra.push(t);
    }
    if let Some(o) = gecko.as_object_mut() {
        if let Some(Value::Array(threads)) = o.get_mut("threads") {
            threads.extend(extra);
        }
        o.insert("processes".into(), subs);
    }
    // The Profiler shows nothing before `meta.profilingStartTime` (the Gecko profiler's own
    // start, a few ms into the process): the kernel saw the dynamic loader's reads before it,
    // so the recording's start moves back to the earliest of them.
    let first = super::view::earliest(view)
        .into_iter()
        .chain([trace.attached_ms.max(0.0)])
        .min_by(f64::total_cmp)
        .map(|t| t + off);
    if let (Some(first), Some(meta)) = (first, gecko.get_mut("meta").and_then(Value::as_object_mut))
    {
        let start = meta.get("profilingStartTime").and_then(Value::as_f64);
        // Negative when the process started before the Gecko profiler's zero: it loads so.
        if start.is_some_and(|s| first < s) {
            meta.insert("profilingStartTime".into(), json!(first));
        }
    }
    Ok(())
}

/// The module loads of Firefox's profile (`ChromeUtils.importESModule` markers of every
/// GeckoMain, and `ModuleEvaluation` ones where they name their module: on ESR 153 they carry
/// no URL), as (URL, ms on the trace's axis): what omni.ja's entries are lined up with
/// (crate::trace::entries::line_up).
#[must_use]
pub fn module_loads(gecko: &Value, zero_mono_ns: u64) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    let mut visit = |p: &Value| {
        let Some(off) = offset_of(p, zero_mono_ns) else {
            return;
        };
        let Some(threads) = p.get("threads").and_then(Value::as_array) else {
            return;
        };
        for t in threads.iter().filter(|t| is_gecko_main(t)) {
            for (name, r) in named_markers(t) {
                if !matches!(name, "ModuleEvaluation" | "ChromeUtils.importESModule") {
                    continue;
                }
                let (Some(start), Some(url)) = (
                    r.get(1).and_then(Value::as_f64),
                    r.pointer("/5/name")
                        .and_then(Value::as_str)
                        .filter(|u| !u.is_empty()),
                ) else {
                    continue;
                };
                out.push((url.to_owned(), start - off));
            }
        }
    };
    visit(gecko);
    if let Some(subs) = gecko.get("processes").and_then(Value::as_array) {
        subs.iter().for_each(&mut visit);
    }
    out.sort_by(|a, b| a.1.total_cmp(&b.1));
    out
}

/// The startup milestones Firefox's profile marks on the parent's GeckoMain (`selectProfile`,
/// `sessionRestored`, … as markers of those names), ms on the trace's axis.
#[must_use]
pub fn milestones(gecko: &Value, zero_mono_ns: u64, names: &[&str]) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let Some(off) = offset_of(gecko, zero_mono_ns) else {
        return out;
    };
    let Some(main) = gecko
        .get("threads")
        .and_then(Value::as_array)
        .and_then(|ts| ts.iter().find(|t| is_gecko_main(t)))
    else {
        return out;
    };
    for (name, r) in named_markers(main) {
        if let Some(t) = r.get(1).and_then(Value::as_f64) {
            if names.contains(&name) {
                out.entry(name.to_owned()).or_insert(t - off);
            }
        }
    }
    out
}

/// Glean's per-add-on timing distributions whose start and stop Firefox marks, and what each
/// span is called.
const ADDON_METRICS: [(&str, &str); 2] = [
    ("extension_startup_by_addonid", "startup"),
    ("background_page_load_by_addonid", "background page load"),
];

/// One add-on's span on a thread's own clock.
#[derive(Debug, Clone, PartialEq)]
pub struct AddonSpan {
    pub addon: String,
    pub what: &'static str,
    pub metric: &'static str,
    pub start: f64,
    pub end: f64,
}

/// The add-on spans of thread `t` (Firefox's parent GeckoMain): each `TimingDistribution::start`
/// marker of an `extensions.timing` metric in [`ADDON_METRICS`] paired with the `::stop` of the
/// same metric, label (the add-on id) and timer id. A start without its stop (the add-on was
/// still starting when the profile was written) or a stop without a start gives no span.
#[must_use]
pub fn addon_spans(t: &Value) -> Vec<AddonSpan> {
    let strings = t
        .get("stringTable")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    // `cat`, `id` and `label` are "unique-string" fields: indexes into the thread's string
    // table (a plain string is taken as it is); `timer_id` is a number.
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => n
            .as_u64()
            .and_then(|i| strings.get(usize::try_from(i).ok()?))
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    };
    let mut open: BTreeMap<(String, String, String), f64> = BTreeMap::new();
    let mut out = Vec::new();
    for (name, r) in named_markers(t) {
        let stop = match name {
            "TimingDistribution::start" => false,
            "TimingDistribution::stop" => true,
            _ => continue,
        };
        let field = |k: &str| r.get(5).and_then(|d| d.get(k)).and_then(text);
        if field("cat").as_deref() != Some("extensions.timing") {
            continue;
        }
        let (Some(id), Some(label), Some(at)) = (
            field("id"),
            field("label"),
            r.get(1).and_then(Value::as_f64),
        ) else {
            continue;
        };
        let Some(&(metric, what)) = ADDON_METRICS.iter().find(|(m, _)| *m == id) else {
            continue;
        };
        let timer = r
            .pointer("/5/timer_id")
            .map(Value::to_string)
            .unwrap_or_default();
        let key = (id, label.clone(), timer);
        if !stop {
            open.insert(key, at);
        } else if let Some(start) = open.remove(&key) {
            out.push(AddonSpan {
                addon: label,
                what,
                metric,
                start,
                end: at,
            });
        }
    }
    out.sort_by(|a, b| a.start.total_cmp(&b.start));
    out
}

/// Keep only what is ours in an object (used by tests to read a merged profile back).
#[must_use]
pub fn our_markers(thread: &Value) -> Vec<Map<String, Value>> {
    thread
        .pointer("/markers/data")
        .and_then(Value::as_array)
        .map(|rows| {
            rows.iter()
                .filter_map(|r| r.get(5)?.as_object().cloned())
                .filter(|d| {
                    d.get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|t| t.starts_with("AboutStartup"))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "gecko_tests.rs"]
mod tests;
