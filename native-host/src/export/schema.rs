//! The marker schemas this export adds, defined once and rendered for both formats: the
//! processed format through `fxprof-processed-profile`'s runtime schemas, the Gecko format as
//! `meta.markerSchema` JSON (firefox-devtools/profiler `src/types/gecko-profile.ts`,
//! `GeckoMetaMarkerSchema`: `data` holds the fields there, `format` uses the same names).

use fxprof_processed_profile::{
    MarkerFieldFlags, MarkerFieldFormat, MarkerLocations, RuntimeSchemaMarkerField,
    RuntimeSchemaMarkerSchema,
};
use serde_json::{json, Value};

/// A field's format, by the Profiler's own names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `file-path`: shown as a path, removed when a profile is shared without paths.
    FilePath,
    /// `string` (never sanitized: nothing personal goes here).
    Text,
    Bytes,
    Integer,
}

/// A field of a marker's data. Never keyed `type` or `cause`: the Profiler reads `data.cause`
/// as a stack (a string there breaks loading: "Could not find a stack when converting…").
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub key: &'static str,
    pub label: &'static str,
    pub format: Format,
}

#[derive(Debug, Clone, Copy)]
pub struct Schema {
    pub name: &'static str,
    pub tooltip: &'static str,
    pub table: &'static str,
    pub chart: &'static str,
    /// Also in the file-I/O strip of its thread's track.
    pub file_io: bool,
    /// Also in the timeline's overview (milestones).
    pub overview: bool,
    pub description: &'static str,
    pub fields: &'static [Field],
}

/// A read from disk, as the kernel saw it (one run of pages).
pub const DISK_READ: Schema = Schema {
    name: "AboutStartupDiskRead",
    tooltip: "Disk read (kernel): {marker.data.filename}",
    table: "{marker.data.how}: {marker.data.filename} {marker.data.size} {marker.data.region}",
    chart: "{marker.data.filename}",
    file_io: true,
    overview: false,
    description: "Pages of a file read from disk into the page cache for this process, from the kernel's trace events (about:startup)",
    fields: &[
        Field { key: "filename", label: "File", format: Format::FilePath },
        Field { key: "operation", label: "Operation", format: Format::Text },
        Field { key: "how", label: "How it came in", format: Format::Text },
        Field { key: "offset", label: "Offset", format: Format::Bytes },
        Field { key: "size", label: "Bytes", format: Format::Bytes },
        Field { key: "region", label: "Section or entries", format: Format::Text },
        Field { key: "used", label: "Used", format: Format::Text },
        Field { key: "code", label: "Faulting code", format: Format::Text },
        Field { key: "group", label: "File group", format: Format::Text },
        Field { key: "disk", label: "Disk time", format: Format::Text },
    ],
};

/// A startup milestone (Services.startup.getStartupInfo()), where known.
pub const MILESTONE: Schema = Schema {
    name: "AboutStartupMilestone",
    tooltip: "Milestone: {marker.data.milestone}",
    table: "{marker.data.milestone}",
    chart: "{marker.data.milestone}",
    file_io: false,
    overview: true,
    description: "A startup milestone of this start (about:startup)",
    fields: &[Field {
        key: "milestone",
        label: "Milestone",
        format: Format::Text,
    }],
};

/// The whole trace's figures, one marker over the recording.
pub const RECORDING: Schema = Schema {
    name: "AboutStartupTrace",
    tooltip: "about:startup trace: {marker.data.summary}",
    table: "{marker.data.summary}",
    chart: "{marker.data.summary}",
    file_io: false,
    overview: false,
    description: "What the kernel trace of this start recorded, and what it misses (about:startup)",
    fields: &[
        Field {
            key: "summary",
            label: "Summary",
            format: Format::Text,
        },
        Field {
            key: "notes",
            label: "Notes",
            format: Format::Text,
        },
    ],
};

/// An add-on's startup (or background page load) span, paired from Firefox's own
/// `TimingDistribution::start`/`::stop` instant markers of Glean's per-add-on metrics.
pub const ADDON_SPAN: Schema = Schema {
    name: "AboutStartupAddonSpan",
    tooltip: "Add-on {marker.data.what}: {marker.data.addon}",
    table: "{marker.data.what}: {marker.data.addon}",
    chart: "{marker.data.addon}",
    file_io: false,
    overview: false,
    description: "An add-on's startup or background page load on the main thread, from the start and stop markers Firefox's Glean writes for extensions.timing (about:startup pairs them)",
    fields: &[
        Field {
            key: "addon",
            label: "Add-on",
            format: Format::Text,
        },
        Field {
            key: "what",
            label: "What",
            format: Format::Text,
        },
        Field {
            key: "metric",
            label: "Glean metric",
            format: Format::Text,
        },
    ],
};

pub const ALL: [Schema; 4] = [DISK_READ, MILESTONE, RECORDING, ADDON_SPAN];

impl Format {
    fn gecko(self) -> &'static str {
        match self {
            Format::FilePath => "file-path",
            Format::Text => "string",
            Format::Bytes => "bytes",
            Format::Integer => "integer",
        }
    }

    fn processed(self) -> MarkerFieldFormat {
        match self {
            Format::FilePath => MarkerFieldFormat::FilePath,
            // The crate's `String` is the Profiler's "unique-string" (interned); plain text
            // goes there, never paths.
            Format::Text => MarkerFieldFormat::String,
            Format::Bytes => MarkerFieldFormat::Bytes,
            Format::Integer => MarkerFieldFormat::Integer,
        }
    }
}

impl Schema {
    fn locations(&self) -> MarkerLocations {
        let mut l = MarkerLocations::MARKER_CHART | MarkerLocations::MARKER_TABLE;
        if self.file_io {
            l |= MarkerLocations::TIMELINE_FILEIO;
        }
        if self.overview {
            l |= MarkerLocations::TIMELINE_OVERVIEW;
        }
        l
    }

    /// The schema as `meta.markerSchema` holds it in a Gecko profile.
    #[must_use]
    pub fn gecko(&self) -> Value {
        let mut display = vec!["marker-chart", "marker-table"];
        if self.file_io {
            display.push("timeline-fileio");
        }
        if self.overview {
            display.push("timeline-overview");
        }
        json!({
            "name": self.name,
            "tooltipLabel": self.tooltip,
            "tableLabel": self.table,
            "chartLabel": self.chart,
            "display": display,
            "description": self.description,
            "data": self.fields.iter().map(|f| json!({
                "key": f.key, "label": f.label, "format": f.format.gecko(),
            })).collect::<Vec<_>>(),
        })
    }

    /// The schema for `fxprof-processed-profile`.
    #[must_use]
    pub fn processed(&self) -> RuntimeSchemaMarkerSchema {
        RuntimeSchemaMarkerSchema {
            type_name: self.name.into(),
            description: Some(self.description.into()),
            locations: self.locations(),
            chart_label: Some(self.chart.into()),
            tooltip_label: Some(self.tooltip.into()),
            table_label: Some(self.table.into()),
            fields: self
                .fields
                .iter()
                .map(|f| RuntimeSchemaMarkerField {
                    key: f.key.into(),
                    label: f.label.into(),
                    format: f.format.processed(),
                    flags: MarkerFieldFlags::SEARCHABLE,
                })
                .collect(),
            graphs: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_read_schema_has_a_file_path_field_and_the_file_io_display() {
        let g = DISK_READ.gecko();
        assert!(g["display"]
            .as_array()
            .unwrap()
            .contains(&json!("timeline-fileio")));
        assert_eq!(
            g["data"][0],
            json!({"key": "filename", "label": "File", "format": "file-path"})
        );
        let p = DISK_READ.processed();
        assert!(p.locations.contains(MarkerLocations::TIMELINE_FILEIO));
        assert_eq!(p.fields[0].format, MarkerFieldFormat::FilePath);
        assert!(MILESTONE
            .processed()
            .locations
            .contains(MarkerLocations::TIMELINE_OVERVIEW));
        for s in ALL {
            assert!(
                s.fields.iter().all(|f| !["type", "cause"].contains(&f.key)),
                "{}",
                s.name
            );
        }
    }
}
