//! Startup milestones of past sessions from the profile's archived Telemetry pings, for basic
//! mode (Release: no experiment API, so no `Services.startup.getStartupInfo()`).
//!
//! Firefox archives its pings in the profile even with data upload off
//! (`toolkit.telemetry.archive.enabled`, true by default; checked on ESR 153 here with Debian's
//! `datareporting.healthreport.uploadEnabled` false and no network):
//! `<profile>/datareporting/archived/YYYY-MM/<ms>.<uuid>.main.jsonlz4`, one `main` ping per
//! session written at shutdown. Its `payload.simpleMeasurements` holds that session's startup
//! timestamps in ms since the process started (`main`, `sessionRestored`, on some builds
//! `firstPaint`, `start`, `selectProfile`, …: whatever numbers are there are reported).
//!
//! `mozLz4` ("jsonlz4"): the 8 bytes `mozLz40\0`, the decompressed size as u32 little-endian,
//! then one LZ4 block (lz4_flex decodes it, with bounds checks).
//!
//! Everything here is confined to the profile folder: the folder must belong to this user,
//! every ping is opened without following symlinks and must resolve inside
//! `<profile>/datareporting/archived/`, and sizes are capped before anything is decompressed.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::Error;

/// The magic of Mozilla's LZ4 container.
const MAGIC: &[u8; 8] = b"mozLz40\0";
/// Largest compressed ping read (a main ping is ~20–100 KB compressed).
const MAX_COMPRESSED: u64 = 8 * 1024 * 1024;
/// Largest decompressed size believed (the header's own claim is checked against this first).
const MAX_DECOMPRESSED: usize = 32 * 1024 * 1024;
/// Most pings read per request: the newest sessions.
pub const MAX_PINGS: usize = 20;

/// One past session's startup figures, from one archived main ping.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionPing {
    /// The ping file, relative to the profile folder.
    pub file: PathBuf,
    /// `creationDate` of the ping (ISO 8601): when the session ended.
    pub created: Option<String>,
    /// `payload.info.reason` (`shutdown`, `environment-change`, `daily`, …).
    pub reason: Option<String>,
    /// `payload.info.sessionStartDate`.
    pub session_start: Option<String>,
    pub version: Option<String>,
    pub build_id: Option<String>,
    /// The numeric entries of `payload.simpleMeasurements`, as they are (ms since the process
    /// started for the startup milestones; `totalTime`, `uptime` and others are in there too).
    pub simple_measurements: BTreeMap<String, f64>,
}

/// The `startup_pings` reply.
#[derive(Debug, Clone, Serialize)]
pub struct Pings {
    pub profile: PathBuf,
    /// Newest first, at most [`MAX_PINGS`].
    pub pings: Vec<SessionPing>,
    /// Ping files that could not be read (per file, the others still count), with the reason.
    pub errors: Vec<PingError>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PingError {
    pub file: PathBuf,
    pub error: String,
}

/// Decompress a mozLz4 file's bytes.
pub fn decode_mozlz4(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let rest = bytes
        .strip_prefix(MAGIC.as_slice())
        .ok_or("not a mozLz4 file (no mozLz40 magic)")?;
    let (size, block) = rest.split_at_checked(4).ok_or("truncated mozLz4 header")?;
    let size = u32::from_le_bytes(size.try_into().map_err(|_| "truncated mozLz4 header")?);
    let size = usize::try_from(size).map_err(|_| "size does not fit")?;
    if size > MAX_DECOMPRESSED {
        return Err(format!(
            "claims {size} bytes decompressed, more than {MAX_DECOMPRESSED}"
        ));
    }
    let out =
        lz4_flex::block::decompress(block, size).map_err(|e| format!("bad LZ4 block: {e}"))?;
    if out.len() != size {
        return Err(format!(
            "decompressed to {} bytes, the header says {size}",
            out.len()
        ));
    }
    Ok(out)
}

/// The figures of one decoded main ping; `None` if it is not a main ping.
#[must_use]
pub fn parse_main_ping(json: &Value, file: PathBuf) -> Option<SessionPing> {
    if json.get("type").and_then(Value::as_str) != Some("main") {
        return None;
    }
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let payload = json.get("payload");
    let info = payload.and_then(|p| p.get("info"));
    let app = json.get("application");
    let simple_measurements = payload
        .and_then(|p| p.get("simpleMeasurements"))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    Some(SessionPing {
        file,
        created: text(json.get("creationDate")),
        reason: text(info.and_then(|i| i.get("reason"))),
        session_start: text(info.and_then(|i| i.get("sessionStartDate"))),
        version: text(app.and_then(|a| a.get("version"))),
        build_id: text(app.and_then(|a| a.get("buildId"))),
        simple_measurements,
    })
}

/// The newest archived main pings of `profile` (at most `limit`, newest first). The profile
/// folder must be a real folder owned by `euid` (a host run as root never reads another user's
/// files on someone's say-so).
pub fn read_profile(profile: &Path, euid: u32, limit: usize) -> Result<Pings, Error> {
    use std::os::unix::fs::MetadataExt;
    let root = profile
        .canonicalize()
        .map_err(|e| Error::io(format!("cannot resolve {}", profile.display()), e))?;
    let meta = std::fs::metadata(&root)
        .map_err(|e| Error::io(format!("cannot stat {}", root.display()), e))?;
    if !meta.is_dir() || meta.uid() != euid {
        return Err(Error::io(
            format!(
                "{} is not a profile folder of this user (uid {euid})",
                root.display()
            ),
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        ));
    }
    let archive = root.join("datareporting").join("archived");
    let mut files = main_ping_files(&archive);
    // <ms>.<uuid>.main.jsonlz4: the name's leading number is the ping's creation time.
    files.sort_by_key(|(ms, _)| std::cmp::Reverse(*ms));
    let mut pings = Vec::new();
    let mut errors = Vec::new();
    for (_, path) in files {
        if pings.len() >= limit.min(MAX_PINGS) {
            break;
        }
        let rel = path.strip_prefix(&root).unwrap_or(&path).to_path_buf();
        match read_ping(&path, &archive) {
            Ok(Some(ping)) => pings.push(SessionPing { file: rel, ..ping }),
            Ok(None) => {}
            Err(error) => errors.push(PingError { file: rel, error }),
        }
    }
    Ok(Pings {
        profile: root,
        pings,
        errors,
    })
}

/// `(ms, path)` of every `*.main.jsonlz4` in the month folders of `archive` (not following
/// symlinks: a link is neither entered nor read).
fn main_ping_files(archive: &Path) -> Vec<(u64, PathBuf)> {
    let Ok(months) = std::fs::read_dir(archive) else {
        return Vec::new();
    };
    months
        .filter_map(Result::ok)
        .filter(|m| m.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|m| std::fs::read_dir(m.path()).ok())
        .flatten()
        .filter_map(Result::ok)
        .filter(|f| f.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|f| {
            let name = f.file_name().to_str()?.to_owned();
            let stem = name.strip_suffix(".main.jsonlz4")?;
            let ms = stem.split('.').next()?.parse().ok()?;
            Some((ms, f.path()))
        })
        .collect()
}

fn read_ping(path: &Path, archive: &Path) -> Result<Option<SessionPing>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| format!("cannot open: {e}"))?;
    // The month folder could have been swapped for a link since it was listed: check where the
    // opened file really is.
    let real = std::fs::read_link(format!("/proc/self/fd/{}", {
        use std::os::fd::AsRawFd;
        file.as_raw_fd()
    }))
    .map_err(|e| format!("cannot resolve: {e}"))?;
    let archive_real = archive.canonicalize().map_err(|e| e.to_string())?;
    if !real.starts_with(&archive_real) {
        return Err(format!(
            "resolves outside the ping archive: {}",
            real.display()
        ));
    }
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() || meta.len() > MAX_COMPRESSED {
        return Err(format!(
            "not a regular file of at most {MAX_COMPRESSED} bytes"
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_COMPRESSED)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    let json = decode_mozlz4(&bytes)?;
    let value: Value = serde_json::from_slice(&json).map_err(|e| format!("not JSON: {e}"))?;
    Ok(parse_main_ping(&value, PathBuf::new()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn mozlz4(value: &Value) -> Vec<u8> {
        let raw = serde_json::to_vec(value).unwrap();
        let mut out = MAGIC.to_vec();
        out.extend(u32::try_from(raw.len()).unwrap().to_le_bytes());
        out.extend(lz4_flex::block::compress(&raw));
        out
    }

    fn main_ping(session_restored: u64) -> Value {
        json!({
            "type": "main",
            "creationDate": "2026-11-23T09:00:00.000Z",
            "application": {"version": "153.7.0", "buildId": "20261103151912"},
            "payload": {
                "info": {"reason": "shutdown", "sessionStartDate": "2026-11-23T00:00:00.0+00:00"},
                "simpleMeasurements": {"main": 52, "sessionRestored": session_restored,
                                        "totalTime": 4, "addonManager": {"x": 1}}
            }
        })
    }

    #[test]
    fn mozlz4_round_trips_and_refuses_garbage() {
        let value = main_ping(1351);
        let decoded = decode_mozlz4(&mozlz4(&value)).unwrap();
        assert_eq!(serde_json::from_slice::<Value>(&decoded).unwrap(), value);
        assert!(decode_mozlz4(b"mozLz40").unwrap_err().contains("magic"));
        assert!(decode_mozlz4(b"mozLz40\0\x01")
            .unwrap_err()
            .contains("truncated"));
        let mut huge = MAGIC.to_vec();
        huge.extend(u32::MAX.to_le_bytes());
        assert!(decode_mozlz4(&huge).unwrap_err().contains("claims"));
        let mut lying = MAGIC.to_vec();
        lying.extend(1000u32.to_le_bytes());
        lying.extend([0x10, b'a']);
        assert!(decode_mozlz4(&lying).is_err());
    }

    #[test]
    fn main_pings_give_their_numeric_simple_measurements() {
        let ping = parse_main_ping(&main_ping(1351), "p".into()).unwrap();
        assert_eq!(ping.simple_measurements.get("main"), Some(&52.0));
        assert_eq!(
            ping.simple_measurements.get("sessionRestored"),
            Some(&1351.0)
        );
        assert!(!ping.simple_measurements.contains_key("addonManager"));
        assert_eq!(ping.reason.as_deref(), Some("shutdown"));
        assert_eq!(ping.build_id.as_deref(), Some("20261103151912"));
        assert_eq!(parse_main_ping(&json!({"type": "event"}), "p".into()), None);
    }

    #[test]
    fn the_newest_pings_of_the_profile_are_read_and_links_are_not_followed() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let profile = tmp.path().join("profile");
        let month = profile.join("datareporting/archived/2026-11");
        std::fs::create_dir_all(&month).unwrap();
        for (ms, restored) in [(1000u64, 900u64), (3000, 700), (2000, 800)] {
            std::fs::write(
                month.join(format!("{ms}.abc.main.jsonlz4")),
                mozlz4(&main_ping(restored)),
            )
            .unwrap();
        }
        std::fs::write(month.join("4000.abc.event.jsonlz4"), b"x").unwrap();
        std::fs::write(month.join("5000.bad.main.jsonlz4"), b"not lz4").unwrap();
        let outside = tmp.path().join("secret.main.jsonlz4");
        std::fs::write(&outside, mozlz4(&main_ping(1))).unwrap();
        symlink(&outside, month.join("6000.link.main.jsonlz4")).unwrap();
        symlink(tmp.path(), profile.join("datareporting/archived/2099-01")).unwrap();
        let euid = crate::pagecache::sys::geteuid();
        let pings = read_profile(&profile, euid, 2).unwrap();
        let restored: Vec<f64> = pings
            .pings
            .iter()
            .map(|p| p.simple_measurements["sessionRestored"])
            .collect();
        assert_eq!(restored, [700.0, 800.0]);
        assert_eq!(
            pings.pings[0].file,
            Path::new("datareporting/archived/2026-11/3000.abc.main.jsonlz4")
        );
        assert_eq!(pings.errors.len(), 1, "{:?}", pings.errors);
        assert!(pings.errors[0].error.contains("magic"));
        // Another user's folder is refused.
        assert!(read_profile(&profile, euid + 1, 2).is_err());
        // No archive at all: no pings, no error.
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(read_profile(&empty, euid, 5).unwrap().pings.is_empty());
    }
}
