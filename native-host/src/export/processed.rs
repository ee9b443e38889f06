//! A trace alone as a processed profile, written by `fxprof-processed-profile` (samply's crate,
//! the Profiler's format without hand-written JSON): one process per Firefox process of the
//! trace, each with a "Disk reads (kernel)" thread carrying its I/O markers (file-path field,
//! file-I/O strip), the milestones and the trace's own summary on the parent's thread, and one
//! bytes-read track per file group (Bandwidth counters of the parent).
//!
//! Times: the profile's zero is the Firefox process start (the trace's axis), its reference the
//! wall-clock moment of that start.

use fxprof_processed_profile::{
    CategoryColor, CategoryHandle, Marker, MarkerTiming, MarkerTypeHandle, Profile,
    ReferenceTimestamp, SamplingInterval, StringHandle, Timestamp,
};

use super::schema::{self, Format, Schema};
use super::view::View;
use crate::trace::disk_time;
use crate::trace::model::Trace;

/// One marker of one of our schemas, its field values in schema order.
struct SchemaMarker {
    ty: MarkerTypeHandle,
    name: StringHandle,
    category: CategoryHandle,
    strings: Vec<Option<StringHandle>>,
    numbers: Vec<f64>,
}

impl Marker for SchemaMarker {
    fn marker_type(&self, _: &mut Profile) -> MarkerTypeHandle {
        self.ty
    }
    fn name(&self, _: &mut Profile) -> StringHandle {
        self.name
    }
    fn category(&self, _: &mut Profile) -> CategoryHandle {
        self.category
    }
    fn string_field_value(&self, field_index: u32) -> StringHandle {
        self.strings[field_index as usize].unwrap_or(self.name)
    }
    fn number_field_value(&self, field_index: u32) -> f64 {
        self.numbers[field_index as usize]
    }
}

/// A field value: text or number.
pub enum V<'a> {
    S(&'a str),
    N(f64),
}

struct Writer {
    profile: Profile,
    category: CategoryHandle,
    /// The milestones' own category: they are Firefox's moments, not disk I/O.
    milestones: CategoryHandle,
    types: Vec<MarkerTypeHandle>,
}

impl Writer {
    fn marker(&mut self, schema: &Schema, name: &str, values: &[V]) -> SchemaMarker {
        let i = schema::ALL
            .iter()
            .position(|s| s.name == schema.name)
            .unwrap_or(0);
        let mut strings = Vec::with_capacity(values.len());
        let mut numbers = Vec::with_capacity(values.len());
        for (field, v) in schema.fields.iter().zip(values) {
            match (field.format, v) {
                (Format::FilePath | Format::Text, V::S(s)) => {
                    strings.push(Some(self.profile.intern_string(s)));
                    numbers.push(0.0);
                }
                (_, V::N(n)) => {
                    strings.push(None);
                    numbers.push(*n);
                }
                (_, V::S(_)) => {
                    strings.push(None);
                    numbers.push(0.0);
                }
            }
        }
        SchemaMarker {
            ty: self.types[i],
            name: self.profile.intern_string(name),
            category: if schema.name == schema::MILESTONE.name {
                self.milestones
            } else {
                self.category
            },
            strings,
            numbers,
        }
    }
}

fn ts(ms: f64) -> Timestamp {
    Timestamp::from_millis_since_reference(ms.max(0.0))
}

/// The processed profile of `trace` as drawn by `view`, serialised.
pub fn write(trace: &Trace, view: &View) -> serde_json::Result<Vec<u8>> {
    // The recording ended `ended_ms` after the process start, at about `recorded_at_ms`.
    let start_wall = trace.recorded_at_ms as f64 - trace.ended_ms.max(0.0);
    let mut profile = Profile::new(
        &format!(
            "Firefox {} startup I/O (about:startup trace)",
            trace.firefox_version.as_deref().unwrap_or("?")
        ),
        ReferenceTimestamp::from_millis_since_unix_epoch(start_wall),
        SamplingInterval::from_millis(1),
    );
    profile.set_os_name("Linux");
    let category = profile.add_category(super::view::IO_CATEGORY, CategoryColor::Orange);
    let milestones = profile.add_category(super::view::MILESTONE_CATEGORY, CategoryColor::Green);
    let types = schema::ALL
        .iter()
        .map(|s| profile.register_marker_type(s.processed()))
        .collect();
    let mut w = Writer {
        profile,
        category,
        milestones,
        types,
    };
    let mut parent_thread = None;
    let mut parent_process = None;
    let mut pids: Vec<(i32, String)> = view
        .processes
        .iter()
        .map(|p| (p.pid, p.name.clone()))
        .collect();
    if !pids.iter().any(|(p, _)| *p == trace.pid) {
        pids.insert(
            0,
            (
                trace.pid,
                super::view::process_name(
                    &crate::trace::model::Process {
                        pid: trace.pid,
                        kind: "parent".into(),
                        exe: None,
                        comm: None,
                    },
                    trace.pid,
                ),
            ),
        );
    }
    for (pid, name) in pids {
        let process = w
            .profile
            .add_process(&name, u32::try_from(pid).unwrap_or(0), ts(0.0));
        let thread = w
            .profile
            .add_thread(process, u32::try_from(pid).unwrap_or(0), ts(0.0), true);
        w.profile.set_thread_name(thread, super::view::IO_THREAD);
        w.profile.set_thread_show_markers_in_timeline(thread, true);
        if pid == trace.pid {
            parent_thread = Some(thread);
            parent_process = Some(process);
        }
        let Some(pv) = view.processes.iter().find(|p| p.pid == pid) else {
            continue;
        };
        for m in &pv.markers {
            let marker = w.marker(
                &schema::DISK_READ,
                "Disk read",
                &[
                    V::S(&m.path),
                    V::S("read"),
                    V::S(m.how),
                    V::N(m.offset as f64),
                    V::N(m.bytes as f64),
                    V::S(&m.region),
                    V::S(&m.used),
                    V::S(&m.cause),
                    V::S(m.group),
                    V::S(&disk_time::words(m.disk)),
                ],
            );
            let (from, to) = m.span();
            w.profile
                .add_marker(thread, MarkerTiming::Interval(ts(from), ts(to)), marker);
        }
    }
    if let (Some(thread), Some(process)) = (parent_thread, parent_process) {
        for (name, t) in &view.milestones {
            let marker = w.marker(&schema::MILESTONE, name, &[V::S(name)]);
            w.profile
                .add_marker(thread, MarkerTiming::Instant(ts(*t)), marker);
        }
        let summary = super::view::summary_line(trace, view);
        let notes = trace.notes.join("; ");
        let marker = w.marker(
            &schema::RECORDING,
            "about:startup trace",
            &[V::S(&summary), V::S(&notes)],
        );
        w.profile.add_marker(
            thread,
            MarkerTiming::Interval(ts(trace.attached_ms), ts(trace.ended_ms)),
            marker,
        );
        for s in &view.series {
            let counter = w.profile.add_counter(
                process,
                &format!("Disk reads: {}", s.group),
                "Bandwidth",
                &format!(
                    "Bytes read from disk into the page cache for {} (kernel trace)",
                    s.group
                ),
            );
            for (t, bytes, n) in &s.points {
                w.profile
                    .add_counter_sample(counter, ts(*t), *bytes as f64, *n);
            }
        }
    }
    let mut profile = serde_json::to_value(&w.profile)?;
    name_tracks(&mut profile);
    serde_json::to_vec(&profile)
}

/// Give each of our counters its own track name. The Profiler names a counter's track by its
/// `display.label`; a processed profile older than version 62 (the crate writes 55) gets that
/// from the category alone ("Bandwidth" for every bytes counter), so five tracks would all read
/// "Bandwidth". The crate has no setter for it: the object the Profiler's own upgrader would
/// make for a Bandwidth counter (firefox-devtools/profiler, processed-profile upgrader 62) is
/// written here with the counter's name as its label, which that upgrader then leaves alone
/// (and the next one adds the tooltip rows of a bytes counter).
fn name_tracks(profile: &mut serde_json::Value) {
    let Some(counters) = profile
        .get_mut("counters")
        .and_then(serde_json::Value::as_array_mut)
    else {
        return;
    };
    for c in counters {
        if c.get("category").and_then(serde_json::Value::as_str) != Some("Bandwidth") {
            continue;
        }
        let label = c.get("name").cloned().unwrap_or_default();
        c["display"] = serde_json::json!({
            "graphType": "line-rate",
            "unit": "bytes",
            "color": "blue",
            "markerSchemaLocation": null,
            "sortWeight": 10,
            "label": label,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::{cold_trace, disk_read_schema};
    use crate::export::view::view;
    use std::collections::BTreeMap;

    #[test]
    fn the_trace_alone_is_a_processed_profile_with_our_schemas_markers_and_counters() {
        let t = cold_trace();
        let v = view(
            &t,
            &BTreeMap::from([("sessionRestored".to_owned(), 5139.5)]),
        );
        let p: serde_json::Value = serde_json::from_slice(&write(&t, &v).unwrap()).unwrap();
        assert!(p["meta"]["preprocessedProfileVersion"].as_u64().unwrap() >= 50);
        let read = disk_read_schema(&p);
        assert!(read.to_string().contains("file-path"));
        // The fixture's counts, by hand and by `jq '[.events[] | .p] | group_by(.) | map(length)'`:
        // 26 reads by three processes (21 + 3 + 2), no file written.
        let threads = p["threads"].as_array().unwrap();
        assert_eq!(threads.len(), 3);
        let markers: usize = threads
            .iter()
            .map(|t| t["markers"]["length"].as_u64().unwrap() as usize)
            .sum();
        assert_eq!(markers, 26 + 2, "every read, the milestone, the summary");
        // Issue 39 #7: each process named by what it is (--trace-only said "Firefox process"
        // three times), and the milestone in a category of its own, not the disk's.
        let mut names: Vec<&str> = threads
            .iter()
            .map(|t| t["processName"].as_str().unwrap())
            .collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "Firefox parent process",
                "Firefox rdd process",
                "Firefox socket process"
            ]
        );
        let categories: Vec<&str> = p["meta"]["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        let index = |name: &str| categories.iter().position(|c| *c == name).unwrap() as u64;
        let in_category = |category: u64| -> usize {
            threads
                .iter()
                .flat_map(|t| t["markers"]["category"].as_array().unwrap())
                .filter(|c| c.as_u64() == Some(category))
                .count()
        };
        assert_eq!(in_category(index("Startup milestones")), 1, "the milestone");
        assert_eq!(
            in_category(index("Disk I/O (kernel)")),
            26 + 1,
            "the reads, the summary"
        );
        // One track per file group of the fixture's files (firefox-esr, nine other libraries,
        // libxul.so, omni.ja), each labelled by its own name where the Profiler looks for it
        // (test.profiler.js reads the labels back with the Profiler's loader).
        let mut labels: Vec<&str> = p["counters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["display"]["label"].as_str().unwrap())
            .collect();
        labels.sort_unstable();
        assert_eq!(
            labels,
            [
                "Disk reads: libxul.so",
                "Disk reads: omni.ja",
                "Disk reads: other install files",
                "Disk reads: other libraries"
            ]
        );
    }

    /// The bytes of every counter as the Profiler's loader sums them (profiler-cli 0.10's
    /// `counter info`): only samples inside the profile's root range, `[start, end)`, where
    /// (no `meta.profilingStartTime`) the range spans each thread's samples, or for a thread
    /// without samples its markers, plus one `meta.interval` at the end.
    fn loader_sum(p: &serde_json::Value) -> f64 {
        let interval = p["meta"]["interval"].as_f64().unwrap();
        let (mut start, mut end) = (f64::INFINITY, f64::NEG_INFINITY);
        for t in p["threads"].as_array().unwrap() {
            assert_eq!(
                t["samples"]["length"].as_u64(),
                Some(0),
                "our threads have no samples"
            );
            let m = &t["markers"];
            for i in 0..m["length"].as_u64().unwrap() as usize {
                let (s, e) = (m["startTime"][i].as_f64(), m["endTime"][i].as_f64());
                for x in [s, e].into_iter().flatten() {
                    start = start.min(x);
                    end = end.max(x + interval);
                }
            }
        }
        let mut sum = 0.0;
        for c in p["counters"].as_array().unwrap() {
            let mut time = 0.0;
            let samples = &c["samples"];
            for (d, n) in samples["timeDeltas"]
                .as_array()
                .unwrap()
                .iter()
                .zip(samples["count"].as_array().unwrap())
            {
                time += d.as_f64().unwrap();
                if time >= start && time < end {
                    sum += n.as_f64().unwrap();
                }
            }
        }
        sum
    }

    #[test]
    fn every_byte_of_the_tracks_lies_inside_the_profile_even_when_reads_run_to_the_end() {
        // As recorded, the loader's sum is the trace's.
        let mut t = cold_trace();
        let bytes = |p: &[u8]| loader_sum(&serde_json::from_slice(p).unwrap());
        let v = view(&t, &BTreeMap::new());
        assert_eq!(bytes(&write(&t, &v).unwrap()), t.traced_read_bytes as f64);
        // Reads up to the recording's end (a pageout kdamond made Firefox read again until the
        // last moment; test.profiler.js, under load: 63 pages short): the last read 2 ms into
        // its 10 ms bucket, the recording ended 0.5 ms after it. A bucket's bytes drawn at the
        // bucket's end (9010 ms) fall after the profile's last moment (9003.5 ms), and the
        // Profiler leaves them out of its totals.
        let last = (0..t.events.len())
            .filter(|&i| !t.files[t.events[i].f as usize].written)
            .max_by(|&a, &b| t.events[a].t.total_cmp(&t.events[b].t))
            .unwrap();
        t.events[last].t = 9002.0;
        t.ended_ms = 9002.5;
        let v = view(&t, &BTreeMap::new());
        assert_eq!(bytes(&write(&t, &v).unwrap()), t.traced_read_bytes as f64);
    }
}
