//! The startup benchmark's channel into the host (`npm run bench`, docs/benchmarks.md).
//!
//! The benchmark starts Firefox with [`BENCH_OUT_ENV`] naming a file; Firefox passes its
//! environment on to this host, and the extension sends the record it made of the start with
//! `bench_record`. The host writes it there, atomically (a temporary file in the same folder,
//! then a rename), so the benchmark never reads half a record. Without the variable the command
//! is refused with `not_benchmarking`: an ordinary start has nowhere to send it.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::host::protocol::{BenchWritten, ErrorCode, ReplyError};
use crate::Error;

/// The environment variable that names the file a benchmarked start's record goes to.
pub const BENCH_OUT_ENV: &str = "ABOUT_STARTUP_BENCH_OUT";

/// The file named by [`BENCH_OUT_ENV`] in this process's environment, if any (empty = none).
#[must_use]
pub fn out_from_env() -> Option<PathBuf> {
    std::env::var_os(BENCH_OUT_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Write `record` as JSON to `out`; `not_benchmarking` when there is no `out`.
pub fn write_record(
    out: Option<&Path>,
    record: &Map<String, Value>,
) -> Result<BenchWritten, ReplyError> {
    let Some(out) = out else {
        return Err(ReplyError::new(
            ErrorCode::NotBenchmarking,
            format!(
                "no benchmark is running: {BENCH_OUT_ENV} is not set in Firefox's environment, so \
                 the record has nowhere to go (only `npm run bench` sets it)"
            ),
            json!({ "variable": BENCH_OUT_ENV }),
        ));
    };
    // A uniquely named temporary file beside `out` (removed if anything fails), renamed over it.
    let write = || -> std::io::Result<()> {
        let dir = out
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut tmp = tempfile::Builder::new()
            .prefix(".bench-record-")
            .tempfile_in(dir)?;
        serde_json::to_writer(&mut tmp, record)?;
        tmp.write_all(b"\n")?;
        tmp.as_file().sync_all()?;
        tmp.persist(out).map_err(|e| e.error)?;
        Ok(())
    };
    write().map_err(|source| {
        ReplyError::from(Error::io(
            format!("writing the record to {}", out.display()),
            source,
        ))
    })?;
    Ok(BenchWritten {
        path: out.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn record() -> Map<String, Value> {
        let Value::Object(map) = json!({"id": "full-1", "milestones": {"sessionRestored": 1905}})
        else {
            unreachable!()
        };
        map
    }

    #[test]
    fn without_a_file_it_is_refused() {
        let err = write_record(None, &record()).unwrap_err();
        assert_eq!(err.code, ErrorCode::NotBenchmarking);
        assert!(err.message.contains(BENCH_OUT_ENV), "{}", err.message);
        assert_eq!(err.params, json!({"variable": BENCH_OUT_ENV}));
    }

    #[test]
    fn writes_the_record_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run-1.json");
        let written = write_record(Some(&out), &record()).unwrap();
        assert_eq!(written.path, out);
        let back: Value = serde_json::from_slice(&fs::read(&out).unwrap()).unwrap();
        assert_eq!(back, Value::Object(record()));
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("run-1.json")]);
    }

    #[test]
    fn an_unwritable_place_is_an_io_error() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("missing-folder").join("run.json");
        let err = write_record(Some(&out), &record()).unwrap_err();
        assert_eq!(err.code, ErrorCode::IoError);
        assert!(err.message.contains("missing-folder"), "{}", err.message);
    }
}
