//! The parts of a Firefox profile a start reads (issue 31): which file is the session store,
//! history and bookmarks, favicons, an add-on (by id, and by name where the profile names it),
//! the startup cache, site or add-on storage, cookies, prefs, or something else. Pure: paths
//! in, parts out; what the profile says about its add-ons and session is read by
//! [`super::profile_facts`].
//!
//! Which file is what comes from Firefox's own layout of a profile (ESR 153: a fresh profile
//! after one start, and a profile `scripts/profile/make.mjs` made; the paths are in
//! `native-host/tests/fixtures/profile/`):
//! - `sessionstore.jsonlz4`, `sessionstore-backups/`, `sessionCheckpoints.json`: the session;
//! - `places.sqlite*` (history and bookmarks), `favicons.sqlite*`, `cookies.sqlite*`;
//! - `prefs.js`, `user.js`: prefs;
//! - `startupCache/`: Firefox's startup cache, in the profile's *local* folder, which is the
//!   profile folder itself for `-profile DIR` and `~/.cache/mozilla/firefox/<name>` for a
//!   profile under `~/.mozilla/firefox/`;
//! - `extensions/<id>.xpi` (or an unpacked `extensions/<id>/`), `browser-extension-data/<id>/`
//!   and `storage/<kind>/moz-extension+++<uuid>…/` (an add-on's IndexedDB, its internal UUID
//!   mapped to its id by the pref `extensions.webextensions.uuids`): that add-on;
//! - `storage/`, `storage.sqlite`, `webappsstore.sqlite*`, `storage-sync-v2.sqlite*`: storage,
//!   but `storage/permanent/chrome/`, Firefox's own IndexedDB, which is "other".

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// One part of a profile.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Part {
    /// The session store: the tabs and windows Firefox restores.
    Session,
    /// `places.sqlite`: history and bookmarks.
    Places,
    Favicons,
    /// An add-on's package and its storage. `name` is what the profile's `extensions.json`
    /// calls it (absent where it does not say).
    Extension {
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    StartupCache,
    /// Sites' storage (IndexedDB, localStorage), and add-on storage whose add-on is unknown.
    Storage,
    Cookies,
    Prefs,
    Other,
}

impl Part {
    /// The part in English, for the CLI and the Profiler's markers: never a file name of the
    /// profile (a storage folder is named after a site), only the role and an add-on's name.
    #[must_use]
    pub fn label(&self) -> String {
        match self {
            Part::Session => "session store".into(),
            Part::Places => "history and bookmarks (places)".into(),
            Part::Favicons => "favicons".into(),
            Part::Extension {
                id,
                name: Some(name),
            } => format!("add-on {name} ({id})"),
            Part::Extension { id, name: None } => format!("add-on {id}"),
            Part::StartupCache => "startup cache".into(),
            Part::Storage => "site storage (IndexedDB, localStorage)".into(),
            Part::Cookies => "cookies".into(),
            Part::Prefs => "prefs".into(),
            Part::Other => "other profile files".into(),
        }
    }
}

/// What the profile says about its add-ons: internal UUID → id (`extensions.webextensions.uuids`)
/// and id → name (`extensions.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Addons {
    pub ids_by_uuid: HashMap<String, String>,
    pub names: HashMap<String, String>,
}

impl Addons {
    fn extension(&self, id: &str) -> Part {
        Part::Extension {
            id: id.to_owned(),
            name: self.names.get(id).cloned(),
        }
    }
}

/// The part of the file at `rel`, a path relative to the profile folder (or its local folder),
/// `/`-separated.
#[must_use]
pub fn classify(rel: &str, addons: &Addons) -> Part {
    let mut parts = rel.split('/');
    let top = parts.next().unwrap_or_default();
    let second = parts.next();
    let db = |name: &str| top == name || top.strip_prefix(name).is_some_and(|r| r.starts_with('-'));
    match top {
        "sessionstore.jsonlz4"
        | "sessionstore.js"
        | "sessionstore-backups"
        | "sessionCheckpoints.json" => return Part::Session,
        "prefs.js" | "user.js" => return Part::Prefs,
        "startupCache" => return Part::StartupCache,
        "extensions" => {
            if let Some(file) = second {
                let id = file.strip_suffix(".xpi").unwrap_or(file);
                if !id.is_empty() {
                    return addons.extension(id);
                }
            }
            return Part::Other;
        }
        "browser-extension-data" => {
            return second.map_or(Part::Other, |id| addons.extension(id));
        }
        "storage" => {
            // storage/default/moz-extension+++<uuid>^userContextId=…/idb/…
            let origin = parts.next().unwrap_or_default();
            // storage/permanent/chrome/: Firefox's own IndexedDB, no site's.
            if second == Some("permanent") && origin == "chrome" {
                return Part::Other;
            }
            if let Some(rest) = origin.strip_prefix("moz-extension+++") {
                let uuid = rest.split(['^', '+']).next().unwrap_or_default();
                if let Some(id) = addons.ids_by_uuid.get(uuid) {
                    return addons.extension(id);
                }
            }
            return Part::Storage;
        }
        _ => {}
    }
    if db("places.sqlite") {
        Part::Places
    } else if db("favicons.sqlite") {
        Part::Favicons
    } else if db("cookies.sqlite") {
        Part::Cookies
    } else if db("storage.sqlite") || db("webappsstore.sqlite") || db("storage-sync-v2.sqlite") {
        Part::Storage
    } else {
        Part::Other
    }
}

/// The folders a profile's files live in: the profile folder and its local folder (the startup
/// cache, the network cache), which differ for a profile under `~/.mozilla/firefox/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    pub profile: String,
    pub local: Option<String>,
}

impl Roots {
    /// The roots of the profile folder `profile` (an absolute path, no trailing `/`).
    #[must_use]
    pub fn of(profile: &str) -> Roots {
        let profile = profile.trim_end_matches('/').to_owned();
        Roots {
            local: local_dir(&profile),
            profile,
        }
    }

    /// `path` relative to the profile (or its local folder), or `None` outside both.
    #[must_use]
    pub fn relative<'a>(&self, path: &'a str) -> Option<&'a str> {
        let under = |root: &str| {
            path.strip_prefix(root)
                .and_then(|r| r.strip_prefix('/'))
                .filter(|r| !r.is_empty())
        };
        under(&self.profile).or_else(|| self.local.as_deref().and_then(under))
    }
}

/// The local folder Firefox gives a profile under `…/.mozilla/firefox/<name>`:
/// `…/.cache/mozilla/firefox/<name>` (nsXREDirProvider: the profile's path below the user
/// app-data folder, re-rooted in the cache folder); `None` for any other profile, whose local
/// folder is itself.
#[must_use]
pub fn local_dir(profile: &str) -> Option<String> {
    const DATA: &str = "/.mozilla/firefox/";
    let at = profile.find(DATA)?;
    let name = &profile[at + DATA.len()..];
    (!name.is_empty()).then(|| format!("{}/.cache/mozilla/firefox/{name}", &profile[..at]))
}

/// Files only a profile folder holds at its top (Firefox writes them into every profile): a
/// folder holding two of them, among the files a start read or wrote, is that start's profile.
const MARKERS: &[&str] = &[
    "prefs.js",
    "times.json",
    "compatibility.ini",
    "places.sqlite",
    "favicons.sqlite",
    "cookies.sqlite",
    "permissions.sqlite",
    "extensions.json",
    "addonStartup.json.lz4",
    "sessionstore.jsonlz4",
    "sessionCheckpoints.json",
    "xulstore.json",
    "cert9.db",
    "key4.db",
    "storage.sqlite",
    "content-prefs.sqlite",
    "containers.json",
    "handlers.json",
    "search.json.mozlz4",
];

/// The profile folder of a start, from the paths of the files it read or wrote: the folder with
/// the most of [`MARKERS`] (at least two; with subfolders such as `sessionstore-backups/`
/// counting for their parent), `None` where no folder has two.
#[must_use]
pub fn infer_dir<'a>(paths: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut seen: HashMap<&str, Vec<&str>> = HashMap::new();
    for path in paths {
        let Some((dir, name)) = path.rsplit_once('/') else {
            continue;
        };
        let (dir, name) = match dir.rsplit_once('/') {
            Some((parent, "sessionstore-backups")) => (parent, "sessionstore-backups"),
            _ => (dir, name),
        };
        // A database's journal speaks for it (a start writes places.sqlite-wal).
        let name = ["-wal", "-shm", "-journal"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .unwrap_or(name);
        if (MARKERS.contains(&name) || name == "sessionstore-backups") && !dir.is_empty() {
            let names = seen.entry(dir).or_default();
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    seen.into_iter()
        .filter(|(_, names)| names.len() >= 2)
        .max_by(|a, b| a.1.len().cmp(&b.1.len()).then(b.0.cmp(a.0)))
        .map(|(dir, _)| dir.to_owned())
}

#[cfg(test)]
#[path = "profile_parts_tests.rs"]
mod tests;
