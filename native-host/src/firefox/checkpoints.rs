//! Whether a start of Firefox reached sessionRestored, from Firefox itself and without the
//! extension: Firefox keeps its startup and shutdown checkpoints in the profile's
//! `sessionCheckpoints.json`, rewritten at each one. Checked on ESR 153 here: a start writes
//! `{"profile-after-change":true,"final-ui-startup":true}` seconds in, and adds
//! `"sessionstore-windows-restored":true` (the notification Firefox's `sessionRestored`
//! milestone is taken at) when the session is restored; the file of the session before stays
//! until the new start's first checkpoint replaces it, so only a file written since the start
//! counts.
//!
//! Read as the profile's owner would (firefox::profile_facts: beneath the held folder, a regular
//! file of the folder's owner, bounded). Parsing is pure ([`parse`]).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::os::beneath::Folder;

/// The file, in the profile folder.
pub const FILE: &str = "sessionCheckpoints.json";
/// The checkpoint of a restored session (`sessionRestored`).
pub const RESTORED: &str = "sessionstore-windows-restored";
/// The file holds a handful of names; anything larger is not Firefox's.
const MAX_BYTES: u64 = 64 * 1024;

/// What the profile says of the start that began at some moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checkpoints {
    /// No checkpoint written since the start (not yet at its profile, or no such file here,
    /// or not readable): nothing known.
    NotWritten,
    /// The start got to its profile and has not restored the session yet.
    Started,
    /// The session is restored: the start reached sessionRestored.
    Restored,
}

/// The checkpoints of the profile folder `profile` written at or after `since` (the start's
/// launch, wall clock).
#[must_use]
pub fn read(profile: &Path, since: SystemTime) -> Checkpoints {
    let Ok(folder) = Folder::open(profile) else {
        return Checkpoints::NotWritten;
    };
    let Ok(owner) = std::fs::metadata(folder.path()).map(|m| m.uid()) else {
        return Checkpoints::NotWritten;
    };
    let Ok((bytes, meta)) =
        crate::firefox::profile_facts::read_owned(&folder, owner, FILE, MAX_BYTES)
    else {
        return Checkpoints::NotWritten;
    };
    let written = u64::try_from(meta.mtime()).ok().map(|s| {
        UNIX_EPOCH
            + Duration::from_secs(s)
            + Duration::from_nanos(u64::try_from(meta.mtime_nsec()).unwrap_or(0))
    });
    // The file systems' clock may trail the wall clock by a tick: a file older than the start
    // by less than that is this start's (the session before never ends in the same instant
    // its successor starts).
    if written.is_none_or(|w| w + Duration::from_millis(20) < since) {
        return Checkpoints::NotWritten;
    }
    if parse(&bytes) {
        Checkpoints::Restored
    } else {
        Checkpoints::Started
    }
}

/// Whether `sessionCheckpoints.json`'s text has the restored checkpoint set. Pure.
#[must_use]
pub fn parse(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(bytes)
        .is_ok_and(|m| m.get(RESTORED) == Some(&serde_json::Value::Bool(true)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts ESR 153 wrote during one headless start (module doc), and what is not one.
    #[test]
    fn the_restored_checkpoint_is_read_from_firefoxs_text() {
        assert!(!parse(
            br#"{"profile-after-change":true,"final-ui-startup":true}"#
        ));
        assert!(parse(
            br#"{"profile-after-change":true,"final-ui-startup":true,"sessionstore-windows-restored":true}"#
        ));
        for other in [
            &b""[..],
            b"[]",
            b"{",
            br#"{"sessionstore-windows-restored":1}"#,
        ] {
            assert!(!parse(other), "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn only_a_file_written_since_the_start_counts() {
        let dir = tempfile::tempdir().unwrap();
        let since = SystemTime::now();
        assert_eq!(read(dir.path(), since), Checkpoints::NotWritten);
        let file = dir.path().join(FILE);
        std::fs::write(&file, br#"{"profile-after-change":true}"#).unwrap();
        assert_eq!(read(dir.path(), since), Checkpoints::Started);
        std::fs::write(
            &file,
            br#"{"profile-after-change":true,"sessionstore-windows-restored":true}"#,
        )
        .unwrap();
        assert_eq!(read(dir.path(), since), Checkpoints::Restored);
        // The session before's file, left from an hour ago, is not this start's.
        let old = std::fs::File::options().write(true).open(&file).unwrap();
        old.set_modified(since - Duration::from_secs(3600)).unwrap();
        assert_eq!(read(dir.path(), since), Checkpoints::NotWritten);
        // Not a regular file: never opened (a FIFO would block).
        std::fs::remove_file(&file).unwrap();
        crate::os::mkfifo(&file);
        assert_eq!(read(dir.path(), since), Checkpoints::NotWritten);
    }
}
