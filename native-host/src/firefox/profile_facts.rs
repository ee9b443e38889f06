//! What a profile says about itself that a start's reads need to be told apart and explained:
//! its add-ons' names (`extensions.json`) and internal UUIDs (the pref
//! `extensions.webextensions.uuids`), and its session: how many windows and tabs a start
//! restores (`sessionstore.jsonlz4` and its backups: counts only, no URL or title is kept), and
//! whether Firefox restores them on demand (`browser.sessionstore.restore_on_demand`, default
//! true; `restore_pinned_tabs_on_demand`, default false) or at all (`browser.startup.page` 3).
//!
//! Read as the profile's owner would: every file is opened beneath the held profile folder with
//! no symlink on the way ([`Folder`]), must be a regular file owned by the folder's owner (a
//! host run as root never reads a file another user put there), and is read up to a bound.
//! Parsing is pure ([`parse_extensions_json`], [`parse_prefs`], [`count_session`]).

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::mozlz4::decode_mozlz4;
use super::profile_parts::Addons;
use crate::os::beneath::Folder;

/// The largest `extensions.json` or `prefs.js` read (a profile with hundreds of add-ons has an
/// `extensions.json` of a few MB).
const MAX_TEXT: u64 = 32 * 1024 * 1024;
/// The largest compressed session file read (its decoded size is bounded by the decoder).
const MAX_SESSION: u64 = 16 * 1024 * 1024;

/// A profile's session, counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SessionFacts {
    pub windows: u64,
    pub tabs: u64,
    pub pinned: u64,
    /// `browser.sessionstore.restore_on_demand`: only each window's selected tab loads at the
    /// start (Firefox's default, true).
    pub restore_on_demand: bool,
    /// `browser.sessionstore.restore_pinned_tabs_on_demand` (default false: pinned tabs load).
    pub restore_pinned_on_demand: bool,
    /// `browser.startup.page` is 3: the session is restored at every start (otherwise only
    /// after a crash or a restart).
    pub restores_at_start: bool,
}

/// What [`read`] found; absent members could not be read (the reason is in `problems`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    pub addons: Addons,
    pub session: Option<SessionFacts>,
    /// What could not be read, in English: `[file, why]`.
    pub problems: Vec<[String; 2]>,
}

/// The prefs a start's explanation needs, from `prefs.js` (`user_pref` lines: only prefs that
/// differ from Firefox's defaults are there).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prefs {
    pub uuids: HashMap<String, String>,
    pub restore_on_demand: Option<bool>,
    pub restore_pinned_on_demand: Option<bool>,
    pub startup_page: Option<i64>,
}

/// Reads what the profile folder `dir` says (as its owner; see the module's doc).
#[must_use]
pub fn read(dir: &Path) -> Facts {
    let mut facts = Facts::default();
    let folder = match Folder::open(dir) {
        Ok(f) => f,
        Err(e) => {
            facts
                .problems
                .push([dir.display().to_string(), e.to_string()]);
            return facts;
        }
    };
    let owner = match std::fs::metadata(folder.path()) {
        Ok(m) => m.uid(),
        Err(e) => {
            facts
                .problems
                .push([dir.display().to_string(), e.to_string()]);
            return facts;
        }
    };
    let mut file = |name: &str, max: u64| match read_owned(&folder, owner, name, max) {
        Ok((bytes, _)) => Some(bytes),
        Err(e) => {
            if e.kind() != std::io::ErrorKind::NotFound {
                facts.problems.push([name.to_owned(), e.to_string()]);
            }
            None
        }
    };
    let names = file("extensions.json", MAX_TEXT).map(|b| parse_extensions_json(&b));
    let prefs = file("prefs.js", MAX_TEXT)
        .map(|b| parse_prefs(&String::from_utf8_lossy(&b)))
        .unwrap_or_default();
    // The session a start restores: sessionstore.jsonlz4 while Firefox is not running; while it
    // runs, the file it read was moved to previous.jsonlz4 and recovery.jsonlz4 is its session
    // now. The newest of them is taken.
    let session = [
        "sessionstore.jsonlz4",
        "sessionstore-backups/recovery.jsonlz4",
        "sessionstore-backups/previous.jsonlz4",
    ]
    .into_iter()
    .filter_map(|name| {
        let modified = folder.stat(Path::new(name)).ok()?.mtime();
        Some((modified, name))
    })
    .max_by_key(|(modified, _)| *modified)
    .and_then(|(_, name)| {
        let bytes = file(name, MAX_SESSION)?;
        let json = decode_mozlz4(&bytes).ok()?;
        count_session(&json)
    });
    facts.addons = Addons {
        ids_by_uuid: prefs.uuids.clone(),
        names: names.unwrap_or_default(),
    };
    facts.session = session.map(|(windows, tabs, pinned)| SessionFacts {
        windows,
        tabs,
        pinned,
        restore_on_demand: prefs.restore_on_demand.unwrap_or(true),
        restore_pinned_on_demand: prefs.restore_pinned_on_demand.unwrap_or(false),
        restores_at_start: prefs.startup_page == Some(3),
    });
    facts
}

/// `name` beneath `folder`: a regular file owned by `owner`, at most `max` bytes; with its
/// metadata (firefox::checkpoints looks at when it was written).
pub(crate) fn read_owned(
    folder: &Folder,
    owner: u32,
    name: &str,
    max: u64,
) -> std::io::Result<(Vec<u8>, std::fs::Metadata)> {
    let (file, meta) = folder.open_file(Path::new(name))?;
    if meta.uid() != owner {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "owned by uid {}, not by the profile's owner (uid {owner}): not read",
                meta.uid()
            ),
        ));
    }
    if meta.len() > max {
        return Err(std::io::Error::other(format!(
            "{} bytes, more than the {max} read",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max).read_to_end(&mut bytes)?;
    Ok((bytes, meta))
}

/// id → name of every add-on in an `extensions.json` (`addons[].id`, `defaultLocale.name`);
/// empty for a file that is not one.
#[must_use]
pub fn parse_extensions_json(bytes: &[u8]) -> HashMap<String, String> {
    let Ok(doc) = serde_json::from_slice::<Value>(bytes) else {
        return HashMap::new();
    };
    doc.get("addons")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|a| {
            let id = a.get("id")?.as_str()?;
            let name = a.pointer("/defaultLocale/name")?.as_str()?;
            Some((id.to_owned(), name.to_owned()))
        })
        .collect()
}

/// The prefs [`Prefs`] names, from the text of a `prefs.js`. Each line is
/// `user_pref("name", value);` with the name and a string value written as JSON strings
/// (Firefox escapes `"`, `\` and control characters), so the two arguments parse as a JSON list.
#[must_use]
pub fn parse_prefs(text: &str) -> Prefs {
    let mut prefs = Prefs::default();
    for line in text.lines() {
        let Some(args) = line
            .trim()
            .strip_prefix("user_pref(")
            .and_then(|rest| rest.strip_suffix(");"))
        else {
            continue;
        };
        let Ok((name, value)) = serde_json::from_str::<(String, Value)>(&format!("[{args}]"))
        else {
            continue;
        };
        match name.as_str() {
            "extensions.webextensions.uuids" => {
                if let Some(map) = value
                    .as_str()
                    .and_then(|s| serde_json::from_str::<HashMap<String, String>>(s).ok())
                {
                    prefs.uuids = map.into_iter().map(|(id, uuid)| (uuid, id)).collect();
                }
            }
            "browser.sessionstore.restore_on_demand" => prefs.restore_on_demand = value.as_bool(),
            "browser.sessionstore.restore_pinned_tabs_on_demand" => {
                prefs.restore_pinned_on_demand = value.as_bool();
            }
            "browser.startup.page" => prefs.startup_page = value.as_i64(),
            _ => {}
        }
    }
    prefs
}

/// (windows, tabs, pinned tabs) of a session file's JSON (`windows[].tabs[]`, `pinned`);
/// `None` for JSON that is not a session.
#[must_use]
pub fn count_session(json: &[u8]) -> Option<(u64, u64, u64)> {
    let doc: Value = serde_json::from_slice(json).ok()?;
    let windows = doc.get("windows")?.as_array()?;
    let tabs = windows
        .iter()
        .filter_map(|w| w.get("tabs").and_then(Value::as_array));
    let (mut n, mut pinned) = (0u64, 0u64);
    for tab in tabs.flatten() {
        n += 1;
        pinned += u64::from(tab.get("pinned").and_then(Value::as_bool) == Some(true));
    }
    Some((windows.len() as u64, n, pinned))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefs_js_lines_as_firefox_writes_them() {
        let p = parse_prefs(PREFS);
        assert_eq!(
            p.uuids
                .get("1ddbe93f-ea47-454e-b21b-196761b9a623")
                .map(String::as_str),
            Some("password-manager@synthetic.profile.test")
        );
        assert_eq!(p.startup_page, Some(3));
        assert_eq!(p.restore_on_demand, None, "not set: Firefox's default");
        let p = parse_prefs("// Mozilla User Preferences\nuser_pref(\"browser.sessionstore.restore_on_demand\", false);\nuser_pref(\"broken\", );\n");
        assert_eq!(p.restore_on_demand, Some(false));
    }

    #[test]
    fn a_session_is_counted_never_kept() {
        let json = br#"{"windows":[{"tabs":[{"entries":[{"url":"https://a.example/","title":"A"}],"pinned":true},{"entries":[]}]},{"tabs":[{"entries":[]}]}],"_closedWindows":[{"tabs":[{}]}]}"#;
        assert_eq!(count_session(json), Some((2, 3, 1)));
        assert_eq!(count_session(b"[]"), None);
        assert_eq!(count_session(b"not json"), None);
    }

    const PREFS: &str = include_str!("../../tests/fixtures/profile/made-small-seed1-prefs.js.txt");

    /// A profile folder holding the made profile's prefs.js.
    fn folder_with_prefs() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("prefs.js"), PREFS).unwrap();
        dir
    }

    #[test]
    fn a_profile_folder_read_as_its_owner() {
        let dir = folder_with_prefs();
        let p = dir.path();
        std::fs::write(
            p.join("extensions.json"),
            include_str!("../../tests/fixtures/profile/made-small-seed1-extensions.json"),
        )
        .unwrap();
        let session = br#"{"windows":[{"tabs":[{},{},{"pinned":true}]}]}"#;
        std::fs::write(
            p.join("sessionstore.jsonlz4"),
            crate::firefox::mozlz4::tests::mozlz4(session),
        )
        .unwrap();
        let facts = read(p);
        assert_eq!(facts.problems, Vec::<[String; 2]>::new());
        assert_eq!(
            facts
                .addons
                .names
                .get("content-blocker@synthetic.profile.test")
                .map(String::as_str),
            Some("Synthetic Content Blocker")
        );
        assert_eq!(facts.addons.ids_by_uuid.len(), 10);
        let s = facts.session.unwrap();
        assert_eq!((s.windows, s.tabs, s.pinned), (1, 3, 1));
        assert!(s.restore_on_demand && !s.restore_pinned_on_demand && s.restores_at_start);
        // A symlink in the profile is never followed (it could point anywhere as root).
        std::fs::remove_file(p.join("prefs.js")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", p.join("prefs.js")).unwrap();
        let facts = read(p);
        assert!(
            facts.problems.iter().any(|[f, _]| f == "prefs.js"),
            "{:?}",
            facts.problems
        );
        assert!(facts.addons.ids_by_uuid.is_empty());
    }

    #[test]
    #[ignore = "gives a file to another user: needs root (the root-only stage runs it)"]
    fn a_file_another_user_owns_is_not_read() {
        let dir = folder_with_prefs();
        let p = dir.path();
        assert_eq!(
            read(p).addons.ids_by_uuid.len(),
            10,
            "read while the folder's owner owns it"
        );
        let me = rustix::process::geteuid().as_raw();
        std::os::unix::fs::chown(p.join("prefs.js"), Some(me.wrapping_add(1)), None).unwrap();
        let facts = read(p);
        assert!(
            facts
                .problems
                .iter()
                .any(|[f, why]| f == "prefs.js" && why.contains("not by the profile's owner")),
            "{:?}",
            facts.problems
        );
    }
}
