//! `costs FILE`: where a recorded start's time went beyond the disk (issue 40), from the file the
//! page's Export writes (or a benchmark's output: the same format): each add-on's startup and
//! background page load, and session restore's figures, each with its source or why it is
//! missing, exactly as the page's history holds them (the record's `costs`,
//! docs/export-format.md). The figures are read, never re-derived: `--json` prints the record's
//! `costs` unchanged, so the CLI, the page and the export say the same numbers
//! (tests/e2e/test.start-costs.js checks the three against each other).
//!
//! Why a file and not the live history: the page keeps its history in Firefox's storage.local
//! (an IndexedDB database inside the profile, snappy-compressed structured clones), which only
//! Firefox reads; the export is that history written out.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::render::{megabytes, print_json, print_table, Row};

#[derive(Debug, Args)]
pub(super) struct CostsArgs {
    /// The file the page's Export wrote (about-startup-YYYY-MM-DD-HHMM.json), or a benchmark's
    /// records (the same format).
    #[arg(value_name = "EXPORT")]
    pub(super) file: PathBuf,
    /// The start to show, by its record id (the history's `id`, e.g. full-1795898845477)
    /// [default: the export's current start, else its latest].
    #[arg(long, value_name = "ID")]
    pub(super) start: Option<String>,
    /// Print one JSON object on stdout instead of tables: the record's `costs` as exported.
    #[arg(long)]
    pub(super) json: bool,
}

/// One figure of a record: a value with its source, or why it is missing (never 0).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub(super) enum Figure {
    Value { value: f64, source: String },
    Missing { missing: String },
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Addon {
    id: String,
    name: Option<String>,
    version: Option<String>,
    #[serde(default)]
    built_in: bool,
    #[serde(default, rename = "self")]
    is_self: bool,
    startup_ms: Figure,
    background_page_load_ms: Figure,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Costs {
    Unavailable {
        unavailable: String,
        /// Firefox's reason for starting about:startup where it was not APP_STARTUP.
        #[serde(default, rename = "startupReason")]
        startup_reason: Option<String>,
    },
    Ready {
        addons: Vec<Addon>,
        #[serde(rename = "sessionRestore")]
        session_restore: serde_json::Map<String, Value>,
    },
}

/// The export's parts `costs` reads.
#[derive(Debug, Deserialize)]
struct Export {
    format: String,
    version: u64,
    #[serde(default)]
    current: Option<Value>,
    #[serde(default)]
    history: Vec<Value>,
}

const FORMAT: &str = "about-startup-export";
/// The export format versions this reads (extension/lib/models/export.js FORMAT_VERSION).
const FORMAT_VERSION: u64 = 1;

/// What `--json` prints.
#[derive(Debug, Serialize)]
pub(super) struct StartCosts {
    pub(super) file: String,
    pub(super) start: Value,
    pub(super) costs: Value,
}

/// Session restore's rows: the record's field, its words, and whether it is bytes, a count or ms
/// (the page's order, extension/page/costs.js).
const SESSION_ROWS: [(&str, &str, Unit); 11] = [
    ("fileSizeBytes", "session file size", Unit::Bytes),
    ("readFileMs", "reading the session file", Unit::Ms),
    ("initMs", "session store init", Unit::Ms),
    (
        "onloadInitialWindowMs",
        "first window's load to session init",
        Unit::Ms,
    ),
    ("restoreWindowMs", "restoring the window", Unit::Ms),
    ("tabsRestored", "tabs restored", Unit::Count),
    (
        "eagerTabsRestored",
        "tabs restored at once (not on demand)",
        Unit::Count,
    ),
    (
        "untilEagerTabsRestoredMs",
        "until the tabs restored at once were restored",
        Unit::Ms,
    ),
    (
        "restoringAtMs",
        "restoring began (ms since the process began)",
        Unit::Ms,
    ),
    ("restoringMs", "from restoring to sessionRestored", Unit::Ms),
    (
        "selectedTabsRestoredAtMs",
        "restored windows' selected tabs loaded (ms since the process began)",
        Unit::Ms,
    ),
];

#[derive(Clone, Copy)]
enum Unit {
    Bytes,
    Count,
    Ms,
}

pub(super) fn costs_cmd(args: &CostsArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.file).map_err(|e| {
        anyhow::anyhow!(
            "{}: {e}; name the file the page's Export wrote",
            args.file.display()
        )
    })?;
    let found = start_costs(&text, args.start.as_deref())
        .map_err(|why| anyhow::anyhow!("{}: {why}", args.file.display()))?;
    let shown = StartCosts {
        file: args.file.display().to_string(),
        ..found
    };
    if args.json {
        return print_json(&shown);
    }
    print_tables(&shown)
}

/// The chosen start of an export's text and its `costs` as recorded; `Err` says what is wrong
/// with the file in words that name the fix.
pub(super) fn start_costs(text: &str, start: Option<&str>) -> Result<StartCosts, String> {
    let export: Export =
        serde_json::from_str(text).map_err(|e| format!("not an about:startup export ({e})"))?;
    if export.format != FORMAT {
        return Err(format!(
            "not an about:startup export (its format is {:?}, not {FORMAT:?})",
            export.format
        ));
    }
    if export.version > FORMAT_VERSION {
        return Err(format!(
            "export version {} is newer than this host reads ({FORMAT_VERSION}): update about-startup-host",
            export.version
        ));
    }
    let mut records = export.history;
    if let Some(current) = export.current.filter(|c| !c.is_null()) {
        if !records.iter().any(|r| r["id"] == current["id"]) {
            records.push(current.clone());
        }
        if start.is_none() {
            return Ok(of_record(&current));
        }
    }
    let record = match start {
        Some(id) => records.iter().find(|r| r["id"] == id).ok_or_else(|| {
            let ids: Vec<&str> = records.iter().filter_map(|r| r["id"].as_str()).collect();
            format!(
                "no start {id:?} in it (its starts: {})",
                if ids.is_empty() {
                    "none".to_owned()
                } else {
                    ids.join(", ")
                }
            )
        })?,
        None => records
            .iter()
            .max_by(|a, b| {
                let at = |r: &Value| r["processStart"].as_f64().unwrap_or(f64::MIN);
                at(a).total_cmp(&at(b))
            })
            .ok_or_else(|| "it holds no start".to_owned())?,
    };
    Ok(of_record(record))
}

fn of_record(record: &Value) -> StartCosts {
    StartCosts {
        file: String::new(),
        start: serde_json::json!({
            "id": record["id"],
            "processStart": record["processStart"],
            "firefoxVersion": record["firefox"]["version"],
            "buildId": record["firefox"]["buildId"],
        }),
        // Absent: a start recorded before about:startup read these figures.
        costs: record.get("costs").cloned().unwrap_or(Value::Null),
    }
}

/// Why a whole start has no figures, in the page's words (extension/_locales/en: costsUnavailable*).
fn unavailable_words(code: &str) -> String {
    match code {
        "no-experiment-api" => "not available in basic mode: Firefox's Glean metrics are readable only by the full flavour's experiment API".into(),
        "read-failed" => "Firefox did not return its metrics for this start".into(),
        "addon-started-later" => "about:startup was installed or enabled after this Firefox started: the start's figures cannot be told from earlier ones".into(),
        "glean-off" => "Firefox did not record these figures: it keeps them only while \"Allow Firefox to send technical and interaction data\" is on (Debian's firefox-esr turns it off)".into(),
        other => format!("unavailable ({other})"),
    }
}

/// A figure's two cells: its value and its source, or "missing" and why.
fn figure_cells(figure: &Figure, unit: Unit) -> [String; 2] {
    match figure {
        Figure::Value { value, source } => {
            let shown = match unit {
                Unit::Ms => format!("{value:.1}"),
                Unit::Count => format!("{value}"),
                Unit::Bytes => bytes(*value),
            };
            [shown, source.clone()]
        }
        Figure::Missing { missing } => ["missing".into(), missing.clone()],
    }
}

/// A session file's size: kB below a megabyte (most are), else MB as the other tables.
fn bytes(value: f64) -> String {
    if value < 1e6 {
        format!("{:.1} kB", value / 1e3)
    } else {
        format!("{} MB", megabytes(value as u64))
    }
}

/// The legend under the tables: each source and reason the figures name.
const LEGEND: &str = "glean: Firefox's Glean metric, its only sample; glean-delta: the sample new \
    since the previous start's reading; startup-timeline: sessionRestored less when session \
    restore began restoring; session-store-events: about:startup's watch of SSTabRestored (each \
    restored window's selected tab loaded). missing: no-sample (nothing to measure: no \
    background page, no session file), no-new-sample, several-samples (which is this start's \
    cannot be told), still-starting, read-error, no-milestone (no sessionRestored after \
    restoring began), no-restored-tab (no restored selected tab loaded while it waited)";

fn print_tables(shown: &StartCosts) -> anyhow::Result<()> {
    println!(
        "start {} (Firefox {}): where its time went beyond the disk, from Firefox's own Glean \
         metrics as the page recorded them",
        shown.start["id"].as_str().unwrap_or("?"),
        shown.start["firefoxVersion"].as_str().unwrap_or("?"),
    );
    if shown.costs.is_null() {
        println!("no figures: recorded by an older about:startup, which did not read them");
        return Ok(());
    }
    let costs: Costs = serde_json::from_value(shown.costs.clone())
        .map_err(|e| anyhow::anyhow!("{}: this start's costs are malformed ({e})", shown.file))?;
    let (addons, session) = match costs {
        Costs::Unavailable {
            unavailable,
            startup_reason,
        } => {
            let reason = startup_reason
                .map(|r| format!(" (Firefox started about:startup with reason {r})"))
                .unwrap_or_default();
            println!("no figures: {}{reason}", unavailable_words(&unavailable));
            return Ok(());
        }
        Costs::Ready {
            addons,
            session_restore,
        } => (addons, session_restore),
    };
    println!(
        "busy times in ms, not savings: add-ons start side by side and beside Firefox's own work"
    );
    let rows: Vec<Row> = addons
        .iter()
        .map(|a| {
            let kind = if a.is_self {
                "about:startup"
            } else if a.built_in {
                "built in"
            } else {
                "installed"
            };
            let mut cells = vec![
                a.name.clone().unwrap_or_else(|| a.id.clone()),
                a.version.clone().unwrap_or_else(|| "?".into()),
                kind.into(),
            ];
            cells.extend(figure_cells(&a.startup_ms, Unit::Ms));
            cells.extend(figure_cells(&a.background_page_load_ms, Unit::Ms));
            Row { cells, extra: None }
        })
        .collect();
    print_table(
        &[
            "add-on",
            "version",
            "kind",
            "startup",
            "source",
            "background page",
            "source",
        ],
        &rows,
    );
    println!();
    let rows: Vec<Row> = SESSION_ROWS
        .iter()
        .map(|(field, words, unit)| {
            let figure = session
                .get(*field)
                .and_then(|v| serde_json::from_value::<Figure>(v.clone()).ok())
                .unwrap_or(Figure::Missing {
                    missing: "not recorded".into(),
                });
            let [value, source] = figure_cells(&figure, *unit);
            Row {
                cells: vec![(*words).to_owned(), value, source],
                extra: None,
            }
        })
        .collect();
    print_table(&["session restore", "figure", "source"], &rows);
    println!("\n{LEGEND}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The export the extension's model makes of three recorded starts
    /// (tests/unit/costs-export.js; tests/unit/lib/models/test.costs-export.js keeps it current).
    const EXPORT: &str = include_str!("../../../tests/fixtures/start-costs/export.json");

    fn parsed() -> Value {
        serde_json::from_str(EXPORT).unwrap()
    }

    #[test]
    fn the_current_start_is_shown_with_its_costs_as_recorded() {
        let doc = parsed();
        let shown = start_costs(EXPORT, None).unwrap();
        assert_eq!(shown.start["id"], doc["current"]["id"]);
        // Unchanged: every figure, source and reason as the page's record holds it.
        assert_eq!(shown.costs, doc["current"]["costs"]);
    }

    #[test]
    fn a_named_start_gets_its_own_figures_not_another_starts() {
        let doc = parsed();
        let history = doc["history"].as_array().unwrap();
        for record in history {
            let id = record["id"].as_str().unwrap();
            let shown = start_costs(EXPORT, Some(id)).unwrap();
            assert_eq!(shown.start["id"], id);
            assert_eq!(shown.costs, record["costs"], "{id}");
        }
        // The starts' figures differ (each its own sample), so a mix-up would show.
        assert_ne!(history[1]["costs"], history[2]["costs"]);
        let err = start_costs(EXPORT, Some("full-1")).err().unwrap();
        assert!(
            err.starts_with("no start \"full-1\" in it (its starts: full-"),
            "{err}"
        );
    }

    #[test]
    fn every_recorded_figure_parses_as_a_value_with_its_source_or_a_reason() {
        let doc = parsed();
        for record in doc["history"].as_array().unwrap() {
            let costs: Costs = serde_json::from_value(record["costs"].clone()).unwrap();
            let Costs::Ready {
                addons,
                session_restore,
            } = costs
            else {
                panic!("the fixture's starts all have figures");
            };
            assert!(!addons.is_empty());
            for figure in session_restore.values() {
                serde_json::from_value::<Figure>(figure.clone()).unwrap();
            }
        }
    }

    #[test]
    fn not_an_export_says_so() {
        let err = start_costs(r#"{"format": "other", "version": 1}"#, None)
            .err()
            .unwrap();
        assert!(err.contains("not an about:startup export"), "{err}");
        let err = start_costs(
            r#"{"format": "about-startup-export", "version": 9, "history": []}"#,
            None,
        )
        .err()
        .unwrap();
        assert!(err.contains("newer than this host reads"), "{err}");
        let err = start_costs(
            r#"{"format": "about-startup-export", "version": 1, "current": null, "history": []}"#,
            None,
        )
        .err()
        .unwrap();
        assert_eq!(err, "it holds no start");
    }

    #[test]
    fn a_missing_figure_is_missing_with_its_reason_never_zero() {
        let cells = figure_cells(
            &Figure::Missing {
                missing: "no-sample".into(),
            },
            Unit::Ms,
        );
        assert_eq!(cells, ["missing".to_owned(), "no-sample".to_owned()]);
        let cells = figure_cells(
            &Figure::Value {
                value: 1636.0,
                source: "glean-delta".into(),
            },
            Unit::Ms,
        );
        assert_eq!(cells[0], "1636.0");
    }
}
